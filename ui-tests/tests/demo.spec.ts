import {
  capturePanel,
  cellSources,
  expect,
  newNotebook,
  panel,
  settingsFor,
  startRun,
  stateLine,
  test,
  uploadHousing
} from './helpers';

test.use({
  mockSettings: settingsFor('normal'),
  viewport: { width: 1400, height: 900 }
});

test.describe('Full demo run', () => {
  test.setTimeout(300 * 1000);

  test('a run on the sample data reaches the findings report; the panel in light and dark themes', async ({
    page,
    tmpPath
  }, testInfo) => {
    await uploadHousing(page, tmpPath);
    await newNotebook(page, 'demo.ipynb');
    await startRun(page, 'What drives the sale price of houses (SalePrice)?');

    // Mid-run, in the light theme, once the cleaning stage is under way.
    const cleaning = panel(page).locator('.jp-bcc-stage.jp-bcc-mod-current', {
      hasText: 'Data cleaning'
    });
    await expect(cleaning).toBeVisible({ timeout: 120000 });
    await capturePanel(page, testInfo, 'panel-light-mid-run');

    await page.evaluate(() =>
      window.jupyterapp.commands.execute('apputils:change-theme', {
        theme: 'JupyterLab Dark'
      })
    );
    await expect(page.locator('body')).toHaveAttribute(
      'data-jp-theme-light',
      'false'
    );
    const exploring = panel(page).locator('.jp-bcc-stage.jp-bcc-mod-current', {
      hasText: 'Exploratory analysis'
    });
    await expect(exploring).toBeVisible({ timeout: 120000 });
    await capturePanel(page, testInfo, 'panel-dark-mid-run');

    await expect(stateLine(page)).toHaveText('Completed', { timeout: 240000 });
    const sources = await cellSources(page);
    expect(sources.some(source => source.startsWith('## Findings'))).toBe(true);
    await expect(
      panel(page).locator('.jp-bcc-output[data-status="produced"]', {
        hasText: 'findings_report'
      })
    ).toBeVisible();
    await expect(
      panel(page).locator('.jp-bcc-stage.jp-bcc-mod-completed')
    ).toHaveCount(4);
    await expect(
      page.locator('.jp-Notification-Toast-success, .Toastify__toast--success')
    ).toContainText('Workflow completed');
    await capturePanel(page, testInfo, 'panel-dark-completed');

    // The run trace, written beside the notebook.
    await panel(page)
      .getByRole('button', { name: 'Export the run trace' })
      .click();
    await expect
      .poll(() => page.contents.fileExists(`${tmpPath}/demo.bcc-trace.jsonl`))
      .toBe(true);

    // The progress tree is navigable with the keyboard.
    const tree = panel(page).getByRole('tree');
    const items = tree.getByRole('treeitem');
    await items.first().focus();
    await page.keyboard.press('ArrowDown');
    await expect(items.nth(1)).toBeFocused();
    await expect(items.nth(1)).toHaveAttribute('aria-expanded', 'false');
    await page.keyboard.press('ArrowRight');
    await expect(items.nth(1)).toHaveAttribute('aria-expanded', 'true');
    await expect(
      items.nth(1).locator('.jp-bcc-step.jp-bcc-mod-completed')
    ).toHaveCount(2);

    // The status bar names the state; a click opens the panel.
    await page.evaluate(() =>
      window.jupyterapp.commands.execute('application:toggle-right-area')
    );
    await expect(panel(page)).toBeHidden();
    const status = page.locator('.jp-bcc-status-button');
    await expect(status).toContainText('Completed');
    await status.click();
    await expect(panel(page)).toBeVisible();
  });
});
