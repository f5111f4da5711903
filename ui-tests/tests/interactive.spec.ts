import {
  cellSources,
  configure,
  expect,
  newNotebook,
  panel,
  settingsFor,
  startRun,
  stateLine,
  test,
  uploadHousing
} from './helpers';

test.use({ viewport: { width: 1400, height: 900 } });

test.describe('Interactive mode', () => {
  test.use({ mockSettings: settingsFor('normal', { interactive: true }) });

  test('each behavior waits for approval: run one, skip one, stop', async ({
    page,
    tmpPath
  }) => {
    await uploadHousing(page, tmpPath);
    await newNotebook(page, 'interactive.ipynb');
    await startRun(page, 'What drives the sale price of houses (SalePrice)?');

    const approval = page.locator('.jp-Dialog', {
      hasText: 'wants to add and run this code'
    });
    await expect(approval).toBeVisible({ timeout: 60000 });
    await expect(stateLine(page)).toHaveText(
      'Waiting for your approval of behavior 1'
    );
    const approved = (
      await approval.locator('.jp-bcc-approval-code').first().textContent()
    )?.trim();
    expect(approved).toBeTruthy();
    await approval.getByRole('button', { name: 'Run', exact: true }).click();

    // The approved code becomes a cell; the next behavior asks again.
    await expect(approval).toBeVisible({ timeout: 60000 });
    expect(
      (await cellSources(page)).some(source => source.trim() === approved)
    ).toBe(true);
    const skipped = (
      await approval.locator('.jp-bcc-approval-code').first().textContent()
    )?.trim();
    expect(skipped).toBeTruthy();
    expect(skipped).not.toBe(approved);
    await approval.getByRole('button', { name: 'Skip', exact: true }).click();

    // Skipped: nothing of it reaches the notebook, and the planner hears about it.
    await expect(approval).toBeVisible({ timeout: 60000 });
    expect(
      (await cellSources(page)).some(source => source.trim() === skipped)
    ).toBe(false);
    await expect(panel(page).locator('.jp-bcc-effects')).toContainText(
      'skipped by the user'
    );

    await approval.getByRole('button', { name: 'Stop', exact: true }).click();
    await expect(approval).toHaveCount(0);
    await expect(stateLine(page)).toHaveText(/^Stopped at step /);
  });
});

test.describe('Settings', () => {
  test.use({ mockSettings: settingsFor('normal') });

  test('a changed setting applies to the next run without a reload', async ({
    page,
    tmpPath
  }) => {
    await uploadHousing(page, tmpPath);
    await newNotebook(page, 'settings.ipynb');
    await configure(page, { interactive: false });
    await configure(page, { interactive: true });
    await startRun(page, 'Describe the houses.');
    const approval = page.locator('.jp-Dialog', {
      hasText: 'wants to add and run this code'
    });
    await expect(approval).toBeVisible({ timeout: 60000 });
    await approval.getByRole('button', { name: 'Stop', exact: true }).click();
    await expect(stateLine(page)).toHaveText(/^Stopped at step /);
  });
});
