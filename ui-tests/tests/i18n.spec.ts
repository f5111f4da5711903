/**
 * JupyterLab in Simplified Chinese (the zh_CN language pack installed, the locale selected in the
 * settings): the panel, the Run dialog and the notifications speak Chinese through the extension's own
 * catalogue (jupyterlab_notebook_bcc/locale/zh_CN), the engine's and the planner client's messages too,
 * and so do the extension's settings in the Settings Editor. The planner's words (stage names, goals) and
 * what the system said (a cause, a URL) stay as they were written.
 */
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';
import * as path from 'path';
import {
  capturePanel,
  cellSources,
  commandMode,
  expect,
  panel,
  PLUGIN,
  reloadPage,
  SCREENSHOTS,
  settingsFor,
  startRun,
  stateLine,
  test,
  uploadHousing
} from './helpers';

const TRANSLATION_PLUGIN = '@jupyterlab/translation-extension:plugin';

test.use({
  mockSettings: settingsFor('normal'),
  viewport: { width: 1400, height: 900 }
});

/**
 * The user's choice in Settings > Language, through the settings API. Galata serves that API from the
 * test's own values (mockSettings), so the locale ends with this test: other specs stay English.
 */
async function speakChinese(page: IJupyterLabPageFixture): Promise<void> {
  await page.evaluate(
    ([id, raw]) => window.jupyterapp.serviceManager.settings.save(id, raw),
    [TRANSLATION_PLUGIN, JSON.stringify({ locale: 'zh_CN' })]
  );
  await reloadPage(page);
  // JupyterLab itself is in Chinese: the language pack is used.
  await expect(page.locator('#jp-menu-panel')).toContainText('文件');
}

test.describe('Simplified Chinese', () => {
  test.setTimeout(300 * 1000);

  test('the Run dialog and the panel are in Chinese from the first step to the end of the demo run', async ({
    page,
    tmpPath
  }, testInfo) => {
    await uploadHousing(page, tmpPath);
    await speakChinese(page);

    await page.evaluate(async cwd => {
      await window.jupyterapp.commands.execute('notebook:create-new', {
        cwd,
        kernelName: 'python3'
      });
    }, tmpPath);
    await page.evaluate(async () => {
      await window.jupyterapp.commands.execute('notebook-bcc:open');
    });
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
      '希望分析得出什么结论？例如：housing.csv 中哪些因素影响房价（SalePrice）？'
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
    // The task, written in Chinese, named its target column: the analysis relates the columns to it.
    expect(
      sources.some(source => source.includes('TARGET = "SalePrice"'))
    ).toBe(true);
    await expect(
      panel(page).locator('.jp-bcc-stage.jp-bcc-mod-completed')
    ).toHaveCount(4);
    await expect(panel(page)).toContainText('输出');
    await expect(panel(page)).toContainText('最新的单元格输出');
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

test.describe('Simplified Chinese, with no planner at the configured URL', () => {
  // Nothing listens on port 9: the relay cannot reach the planner.
  test.use({
    mockSettings: settingsFor('normal', { baseUrl: 'http://127.0.0.1:9' })
  });

  test("the settings, the toolbar button and a shortcut; the planner client's messages in Chinese", async ({
    page,
    tmpPath
  }, testInfo) => {
    await speakChinese(page);

    // The settings' titles and descriptions, translated in the page (docs/translations.md#settings).
    // The command resolves with the editor widget, which Playwright cannot send back: return nothing.
    await page.evaluate(async () => {
      await window.jupyterapp.commands.execute('settingeditor:open', {
        query: 'Notebook-BCC'
      });
    });
    await page.locator(`.jp-PluginList-entry[data-id="${PLUGIN}"]`).click();
    const form = page.locator('.jp-SettingsPanel');
    await expect(form).toContainText(
      '规划器在哪里，以及运行如何进行。规划器和交互模式排在最前'
    );
    await expect(form).toContainText('规划器 URL');
    // Option values too.
    await expect(form).toContainText('通过 Jupyter 服务器（推荐）');
    await expect(form).toContainText('等待规划器开始响应（秒）');
    await expect(form).toContainText('规划器是 LLM 服务，可能要先思考几分钟');
    for (const english of ['Planner URL', 'Interactive mode']) {
      await expect(form).not.toContainText(english);
    }
    await form.screenshot({
      path: path.join(SCREENSHOTS, 'zh-settings.png')
    });

    // The toolbar button and the keyboard shortcuts still come from the extension's schemas.
    await page.evaluate(async cwd => {
      await window.jupyterapp.commands.execute('notebook:create-new', {
        cwd,
        kernelName: 'python3'
      });
    }, tmpPath);
    await expect(
      page.locator(
        '.jp-NotebookPanel-toolbar [data-command="notebook-bcc:run"]'
      )
    ).toBeVisible();
    await commandMode(page);
    await page.keyboard.press('Control+Alt+B');
    await expect(panel(page)).toBeVisible();
    await expect(stateLine(page)).toHaveText('未开始');

    // Test connection: the planner client's sentences in Chinese, the relay's cause as it said it.
    // JupyterLab shows at most 140 characters of a notification, so only its start is read here; the Run
    // dialog below and the panel show the whole message.
    await panel(page).getByRole('button', { name: '测试连接' }).click();
    const toast = page.locator(
      '.jp-Notification-Toast-error, .Toastify__toast--error'
    );
    await expect(toast).toContainText(
      /^测试连接：Notebook-BCC 无法连接位于 http:\/\/127\.0\.0\.1:9 的规划器：/
    );

    // The Run dialog's planner check, whole.
    await page
      .locator('.jp-NotebookPanel-toolbar [data-command="notebook-bcc:run"]')
      .click();
    const dialog = page.locator('.jp-Dialog');
    await dialog.locator('textarea').fill('房价受哪些因素影响？');
    await dialog.getByRole('button', { name: '运行', exact: true }).click();
    // The planner's dialog: the cause first, the whole chain under Details.
    await expect(dialog.locator('.jp-bcc-problem-summary')).toHaveText(
      /^Notebook-BCC 无法连接位于 http:\/\/127\.0\.0\.1:9 的规划器：.+。$/
    );
    await expect(dialog.locator('.jp-bcc-problem-details pre')).toHaveText(
      /^无法连接到规划器（Jupyter 服务器的中继（http:\/\/\S+\/notebook-bcc\/relay））：GET \S+ 失败：Jupyter 服务器无法连接到规划器：Planner at http:\/\/127\.0\.0\.1:9 is unreachable: .+。请启动规划器，或在“设置 > Notebook-BCC”中设置其 URL。$/
    );
    await dialog.getByRole('button', { name: '关闭' }).click();

    // A run started anyway: the client's retries are warnings, its failure is inside the run's error.
    await startRun(page, '房价受哪些因素影响？', { dataFiles: [] });
    await expect(panel(page).locator('.jp-bcc-error-message')).toHaveText(
      /^Notebook-BCC 无法连接位于 http:\/\/127\.0\.0\.1:9 的规划器：.+。$/,
      { timeout: 60000 }
    );
    await expect(panel(page).locator('.jp-bcc-warning-list')).toContainText(
      '；1 秒后重试（第 1 次，共 3 次）'
    );
    // The failed run's notification, in Chinese; it follows the panel's error, once the run's state is
    // saved.
    await expect(
      toast.filter({
        hasText:
          /Untitled\d*\.ipynb 中的工作流失败：Notebook-BCC 无法连接位于 http:\/\/127\.0\.0\.1:9 的规划器/
      })
    ).toHaveCount(1, { timeout: 30000 });
    // The notifications (Test connection, the failed run) would cover the panel.
    await page.evaluate(async () => {
      await window.jupyterapp.commands.execute(
        'apputils:dismiss-notification',
        {}
      );
    });
    await expect(toast).toHaveCount(0);
    await capturePanel(page, testInfo, 'zh-panel-planner-unreachable');
  });
});
