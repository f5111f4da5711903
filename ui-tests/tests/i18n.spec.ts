/**
 * JupyterLab in Simplified Chinese (the zh_CN language pack installed, the locale selected in the
 * settings): the panel, the Run dialog and the notifications speak Chinese through the extension's own
 * catalogue (jupyterlab_notebook_bcc/locale/zh_CN), the engine's messages too. The planner's words (stage
 * names, goals) stay as the planner wrote them.
 */
import * as path from 'path';
import {
  capturePanel,
  cellSources,
  expect,
  panel,
  reloadPage,
  SCREENSHOTS,
  settingsFor,
  stateLine,
  test,
  uploadHousing
} from './helpers';

const TRANSLATION_PLUGIN = '@jupyterlab/translation-extension:plugin';

test.use({
  mockSettings: settingsFor('normal'),
  viewport: { width: 1400, height: 900 }
});

test.describe('Simplified Chinese', () => {
  test.setTimeout(300 * 1000);

  test('the Run dialog and the panel are in Chinese from the first step to the end of the demo run', async ({
    page,
    tmpPath
  }, testInfo) => {
    await uploadHousing(page, tmpPath);
    // The user's choice in Settings > Language, through the settings API. Galata serves that API from
    // the test's own values (mockSettings), so the locale ends with this test: other specs stay English.
    await page.evaluate(
      ([id, raw]) => window.jupyterapp.serviceManager.settings.save(id, raw),
      [TRANSLATION_PLUGIN, JSON.stringify({ locale: 'zh_CN' })]
    );
    await reloadPage(page);
    // JupyterLab itself is in Chinese: the language pack is used.
    await expect(page.locator('#jp-menu-panel')).toContainText('文件');

    await page.evaluate(
      async cwd =>
        window.jupyterapp.commands.execute('notebook:create-new', {
          cwd,
          kernelName: 'python3'
        }),
      tmpPath
    );
    await page.evaluate(() =>
      window.jupyterapp.commands.execute('notebook-bcc:open')
    );
    await expect(panel(page)).toBeVisible();
    await expect(stateLine(page)).toHaveText('未开始');

    await page
      .locator('.jp-NotebookPanel-toolbar [data-command="notebook-bcc:run"]')
      .click();
    const dialog = page.locator('.jp-Dialog');
    await expect(dialog.locator('.jp-Dialog-header')).toHaveText(
      /^在 \S*Untitled\d*\.ipynb 中运行工作流$/
    );
    await expect(dialog).toContainText('任务');
    await expect(dialog).toContainText('数据文件（可选）');
    await expect(dialog).toContainText('无：使用“添加数据文件…”来选择。');
    await expect(
      dialog.getByLabel('单步模式：每个行为执行后暂停')
    ).not.toBeChecked();
    await expect(dialog.locator('textarea')).toHaveAttribute(
      'placeholder',
      '希望分析得出什么结论？例如：housing.csv 中哪些因素影响房价？'
    );
    await dialog
      .locator('textarea')
      .fill('房价（SalePrice）受哪些因素影响？请使用 housing.csv。');

    await dialog.getByRole('button', { name: '添加数据文件…' }).click();
    const picker = page
      .locator('.jp-Dialog')
      .filter({ has: page.locator('.jp-DirListing') });
    await picker
      .locator('.jp-DirListing-item', { hasText: 'housing.csv' })
      .click();
    await picker.locator('.jp-Dialog-button.jp-mod-accept').click();
    await expect(page.locator('.jp-bcc-file-name')).toHaveText('housing.csv');
    await expect(
      dialog.getByRole('button', { name: '移除 housing.csv' })
    ).toBeVisible();
    await expect(dialog.getByRole('button', { name: '取消' })).toBeVisible();
    await dialog
      .locator('.jp-Dialog-content')
      .screenshot({ path: path.join(SCREENSHOTS, 'zh-run-dialog.png') });
    await dialog.getByRole('button', { name: '运行', exact: true }).click();

    // Mid-run: the cleaning stage is under way.
    await expect(
      panel(page).locator('.jp-bcc-stage.jp-bcc-mod-current', {
        hasText: 'Data cleaning'
      })
    ).toBeVisible({ timeout: 120000 });
    await expect(stateLine(page)).toHaveText(
      /^(正在运行步骤 .+ 的行为 \d+|正在等待规划器…)$/
    );
    await expect(
      panel(page).getByRole('button', { name: '暂停' })
    ).toBeVisible();
    await expect(
      panel(page).getByRole('button', { name: '停止' })
    ).toBeVisible();
    await expect(panel(page)).toContainText('任务：');
    await expect(panel(page)).toContainText('进度');
    await expect(
      panel(page).getByRole('tree', { name: '工作流进度' })
    ).toBeVisible();
    await expect(panel(page)).toContainText(/已执行 \d+ 个行为/);
    await capturePanel(page, testInfo, 'zh-panel-mid-run');

    await expect(stateLine(page)).toHaveText('已完成', { timeout: 240000 });
    const sources = await cellSources(page);
    expect(sources.some(source => source.startsWith('## Findings'))).toBe(true);
    await expect(
      panel(page).locator('.jp-bcc-stage.jp-bcc-mod-completed')
    ).toHaveCount(4);
    await expect(panel(page)).toContainText('输出');
    await expect(panel(page)).toContainText('最新效果');
    await expect(
      panel(page).locator('.jp-bcc-output[data-status="produced"]', {
        hasText: 'findings_report'
      })
    ).toContainText('已产出');
    const toast = page.locator(
      '.jp-Notification-Toast-success, .Toastify__toast--success'
    );
    await expect(toast).toContainText(/Untitled\d*\.ipynb 中的工作流已完成/);
    // The toast closes by itself; the screenshot shows the panel alone.
    await expect(toast).toBeHidden({ timeout: 15000 });
    // Nothing of the panel's own wording is left in English.
    const chrome = await panel(page)
      .locator('.jp-bcc-state, .jp-bcc-label, button, h2, h3')
      .allInnerTexts();
    for (const english of ['Not started', 'Completed', 'Progress', 'Run']) {
      expect(chrome).not.toContain(english);
    }
    await capturePanel(page, testInfo, 'zh-panel-completed');

    const status = page.locator('.jp-bcc-status-button');
    await expect(status).toContainText('已完成');
  });
});
