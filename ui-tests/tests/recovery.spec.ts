import {
  capturePanel,
  cellSources,
  clickControl,
  command,
  expect,
  modelCellCount,
  panel,
  reloadPage,
  settingsFor,
  SIDEBAR,
  startHousingRun,
  stateLine,
  test
} from './helpers';

const TASK = 'What drives the sale price of houses (SalePrice)?';

test.describe('A run survives a page reload', () => {
  test.use({
    mockSettings: settingsFor('normal'),
    viewport: { width: 1400, height: 900 }
  });

  test('after a reload the panel shows where the saved run stands and Resume continues it', async ({
    page,
    tmpPath
  }, testInfo) => {
    await startHousingRun(page, tmpPath, 'reload.ipynb', TASK);
    const cleaning = panel(page).locator('.jp-bcc-stage.jp-bcc-mod-current', {
      hasText: 'Data cleaning'
    });
    await expect(cleaning).toBeVisible({ timeout: 60000 });
    await command(page, 'notebook-bcc:pause');
    await expect(stateLine(page)).toHaveText('Paused');
    const before = await cellSources(page);

    // The restored layout has the notebook, not the launcher galata's reload waits for.
    await reloadPage(page);
    await expect(
      page.getByRole('main').getByRole('tab', { name: 'reload.ipynb' })
    ).toBeVisible();
    await command(page, 'notebook-bcc:open');
    await expect(stateLine(page)).toHaveText(/^Stopped at step /);
    await expect(panel(page).locator('.jp-bcc-hint')).toContainText(
      'Resume continues it'
    );
    await expect(
      panel(page).locator('.jp-bcc-stage.jp-bcc-mod-completed', {
        hasText: 'Data loading'
      })
    ).toBeVisible();
    expect(await cellSources(page)).toEqual(before);
    await capturePanel(page, testInfo, 'panel-light-saved-run');

    await clickControl(page, 'Resume');
    await expect(stateLine(page)).not.toHaveText(/^Stopped/);
    await expect
      .poll(() => modelCellCount(page), { timeout: 60000 })
      .toBeGreaterThan(before.length + 2);
    const after = await cellSources(page);
    expect(after.slice(0, before.length)).toEqual(before);
    const headings = after.filter(source => source.startsWith('### '));
    expect(new Set(headings).size).toBe(headings.length);

    await command(page, 'notebook-bcc:stop', { interruptKernel: false });
    await expect(stateLine(page)).toHaveText(/^Stopped at step /);
  });
});

test.describe('A planner error', () => {
  test.use({
    mockSettings: settingsFor('failing'),
    viewport: { width: 1400, height: 900 }
  });

  test('shows in the panel with Retry, and Retry recovers', async ({
    page,
    tmpPath
  }, testInfo) => {
    await startHousingRun(page, tmpPath, 'failing.ipynb', TASK);

    await expect(stateLine(page)).toHaveText(
      'Stopped by an error: the planner could not write the next cells',
      { timeout: 60000 }
    );
    const error = page.locator(`${SIDEBAR} .jp-bcc-error`);
    await expect(error).toContainText('500');
    await expect(
      page.locator('.jp-Notification-Toast-error, .Toastify__toast--error')
    ).toContainText('Workflow failed');
    const failed = await modelCellCount(page);
    await capturePanel(page, testInfo, 'panel-light-error');

    await clickControl(page, 'Retry');
    await expect(error).toHaveCount(0);
    await expect
      .poll(() => modelCellCount(page), { timeout: 60000 })
      .toBeGreaterThan(failed + 2);
    await expect(stateLine(page)).not.toHaveText(/^Error/);

    await command(page, 'notebook-bcc:stop', { interruptKernel: false });
    await expect(stateLine(page)).toHaveText(/^Stopped at step /);
  });
});
