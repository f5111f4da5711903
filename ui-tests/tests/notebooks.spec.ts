import {
  cellCountOf,
  command,
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
  mockSettings: settingsFor('slow'),
  viewport: { width: 1400, height: 900 }
});

test.describe('Several notebooks', () => {
  test('two notebooks run at once; the panel follows the active one; closing one stops and saves its run', async ({
    page,
    tmpPath
  }) => {
    const a = `${tmpPath}/first.ipynb`;
    const b = `${tmpPath}/second.ipynb`;
    await uploadHousing(page, tmpPath);
    await newNotebook(page, 'first.ipynb');
    await startRun(page, 'Describe the houses.');
    await expect.poll(() => cellCountOf(page, a)).toBeGreaterThan(2);

    await newNotebook(page, 'second.ipynb');
    await expect(panel(page).locator('.jp-bcc-notebook-name')).toHaveText(
      'second.ipynb'
    );
    await startRun(page, 'What drives the sale price of houses (SalePrice)?');
    await expect(stateLine(page)).toHaveText(/Running|Waiting/);

    // Both runs go on, each in its own notebook, whichever tab is active.
    const firstCount = await cellCountOf(page, a);
    const secondCount = await cellCountOf(page, b);
    await expect
      .poll(() => cellCountOf(page, a), { timeout: 60000 })
      .toBeGreaterThan(firstCount);
    await expect
      .poll(() => cellCountOf(page, b), { timeout: 60000 })
      .toBeGreaterThan(secondCount);

    await page.notebook.activate('first.ipynb');
    await expect(panel(page).locator('.jp-bcc-notebook-name')).toHaveText(
      'first.ipynb'
    );
    await expect(stateLine(page)).toHaveAttribute('data-running', 'true');
    await expect(
      page.locator('.jp-bcc-status-item .jp-bcc-status-text')
    ).not.toHaveText('');

    // Closing the first notebook stops its run and saves it; reopened, it can be resumed.
    await page
      .locator('.lm-DockPanel-tabBar .lm-TabBar-tab', {
        hasText: 'first.ipynb'
      })
      .locator('.lm-TabBar-tabCloseIcon')
      .click();
    await expect(
      page.locator('.lm-DockPanel-tabBar .lm-TabBar-tab', {
        hasText: 'first.ipynb'
      })
    ).toHaveCount(0);
    await expect(page.locator('.jp-Dialog')).toHaveCount(0);
    await page.notebook.openByPath(a);
    await page.notebook.activate('first.ipynb');
    await expect(stateLine(page)).toHaveText(/^Stopped at step /);

    await page.notebook.activate('second.ipynb');
    await expect(stateLine(page)).toHaveAttribute('data-running', 'true');
    await command(page, 'notebook-bcc:stop', { interruptKernel: false });
    await expect(stateLine(page)).toHaveText(/^Stopped at step /);
  });
});
