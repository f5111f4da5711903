import {
  addDataFile,
  cellSources,
  command,
  expect,
  insertions,
  newNotebook,
  recordInsertions,
  settingsFor,
  stateLine,
  test,
  uploadHousing
} from './helpers';

test.use({
  mockSettings: settingsFor('normal'),
  viewport: { width: 1400, height: 900 }
});

test.describe('Run Workflow', () => {
  test('the toolbar button opens the dialog; cells appear one by one while the run is live', async ({
    page,
    tmpPath
  }) => {
    await uploadHousing(page, tmpPath);
    await newNotebook(page, 'live.ipynb');
    await recordInsertions(page);

    await page
      .locator('.jp-NotebookPanel-toolbar [data-command="notebook-bcc:run"]')
      .click();
    const dialog = page.locator('.jp-Dialog');
    await expect(dialog).toBeVisible();
    await dialog
      .locator('textarea')
      .fill('What drives the sale price of houses? Use housing.csv.');

    // Pick the data file in the file browser dialog.
    await addDataFile(page, 'housing.csv');
    await page
      .locator('.jp-Dialog')
      .getByRole('button', { name: 'Run' })
      .click();

    // Cells arrive one by one, as the stream is applied, while the run is live.
    await expect
      .poll(async () => (await insertions(page)).length, { timeout: 60000 })
      .toBeGreaterThanOrEqual(6);
    await expect(stateLine(page)).toHaveAttribute('data-running', 'true');
    const log = await insertions(page);
    expect(log.every(insertion => insertion.n === 1)).toBe(true);
    expect(log[log.length - 1].t - log[0].t).toBeGreaterThan(200);
    const sources = await cellSources(page);
    expect(sources.join('\n')).toContain('housing.csv');

    await command(page, 'notebook-bcc:stop', { interruptKernel: true });
    await expect(stateLine(page)).toHaveText(/^Stopped at step /);
  });
});
