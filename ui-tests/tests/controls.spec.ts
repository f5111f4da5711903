import type { Page } from '@playwright/test';
import {
  behaviorsRun,
  clickControl,
  command,
  commandMode,
  expect,
  expectStreamOrder,
  insertions,
  modelCellCount,
  newNotebook,
  provenances,
  settingsFor,
  startHousingRun,
  stateLine,
  test,
  uploadHousing
} from './helpers';

const TASK = 'What drives the sale price of houses (SalePrice)?';

test.describe('Pause and resume', () => {
  test.use({
    mockSettings: settingsFor('slow'),
    viewport: { width: 1400, height: 900 }
  });

  test('no new cell while paused though the stream goes on; resume applies the rest in order', async ({
    page,
    tmpPath
  }) => {
    await startHousingRun(page, tmpPath, 'pause.ipynb', TASK, { cells: 2 });

    // The slow planner is still streaming this behavior; pause with the keyboard shortcut.
    const streamEnds = page.waitForEvent('requestfinished', {
      predicate: request => request.url().endsWith('/generating'),
      timeout: 30000
    });
    await commandMode(page);
    await page.keyboard.press('Control+Alt+P');
    await expect(stateLine(page)).toHaveText('Paused');
    const paused = await modelCellCount(page);
    await streamEnds;
    expect(await modelCellCount(page)).toBe(paused);
    await expect(stateLine(page)).toHaveText('Paused');

    await clickControl(page, 'Resume');
    await expect
      .poll(() => modelCellCount(page), { timeout: 30000 })
      .toBeGreaterThan(paused + 1);
    expectStreamOrder(await provenances(page));

    await command(page, 'notebook-bcc:stop', { interruptKernel: false });
    await expect(stateLine(page)).toHaveText(/^Stopped at step /);
  });
});

test.describe('Step and stop', () => {
  test.use({
    mockSettings: settingsFor('normal'),
    viewport: { width: 1400, height: 900 }
  });

  test('step mode pauses after each behavior; Step runs exactly one more', async ({
    page,
    tmpPath
  }) => {
    await uploadHousing(page, tmpPath);
    await newNotebook(page, 'step.ipynb');
    await page
      .locator('.jp-NotebookPanel-toolbar [data-command="notebook-bcc:run"]')
      .click();
    const dialog = page.locator('.jp-Dialog');
    await dialog.locator('textarea').fill(TASK);
    await dialog.getByLabel('Step mode: pause after every behavior').check();
    await dialog.getByRole('button', { name: 'Run' }).click();

    await expect(stateLine(page)).toHaveText('Paused (step mode)', {
      timeout: 60000
    });
    expect(await behaviorsRun(page)).toBe(1);
    const afterOne = await modelCellCount(page);

    await clickControl(page, 'Step');
    await expect.poll(() => behaviorsRun(page), { timeout: 60000 }).toBe(2);
    await expect(stateLine(page)).toHaveText('Paused (step mode)');
    expect(await modelCellCount(page)).toBeGreaterThan(afterOne);
    expect(await behaviorsRun(page)).toBe(2);

    await command(page, 'notebook-bcc:stop', { interruptKernel: false });
    await expect(stateLine(page)).toHaveText(/^Stopped at step /);
  });

  test('Stop asks whether to interrupt the kernel, stops adding cells, and Resume goes on', async ({
    page,
    tmpPath
  }) => {
    await startHousingRun(page, tmpPath, 'stop.ipynb', TASK);
    await expect
      .poll(() => modelCellCount(page), { timeout: 60000 })
      .toBeGreaterThan(5);

    await clickControl(page, 'Stop');
    const dialog = page.locator('.jp-Dialog');
    await expect(dialog).toContainText('Stop the workflow');
    await dialog.getByLabel('Also interrupt the kernel').check();
    await dialog.getByRole('button', { name: 'Stop' }).click();
    // The run stops once the current action ends (the kernel interrupted): seconds on a busy machine.
    await expect(stateLine(page)).toHaveText(/^Stopped at step /, {
      timeout: 30000
    });
    const stopped = await modelCellCount(page);
    await expect(
      page.locator('.jp-bcc-controls').getByRole('button', { name: 'Resume' })
    ).toBeEnabled();
    // Saved with the notebook: the kernel idles and no cell is added any more.
    await expect(
      page.locator('.jp-Notebook-ExecutionIndicator')
    ).toHaveAttribute('data-status', 'idle');
    expect(await modelCellCount(page)).toBe(stopped);

    await clickControl(page, 'Resume');
    await expect
      .poll(() => modelCellCount(page), { timeout: 60000 })
      .toBeGreaterThan(stopped);
    await command(page, 'notebook-bcc:stop', { interruptKernel: true });
    await expect(stateLine(page)).toHaveText(/^Stopped at step /);
  });
});

test.describe('Following new cells', () => {
  test.use({
    mockSettings: settingsFor('slow', { followNewCells: true }),
    viewport: { width: 1400, height: 700 }
  });

  /**
   * The visible notebook's scroll position: how far from the top, and whether its last cell (the run's
   * newest) is in view. The distance to the end of the scrollable area says nothing about following:
   * JupyterLab's "scroll past end" space (`scrollPastEnd`, on by default) is nearly a view high, so a
   * notebook that has just scrolled its newest cell into view is still ~440 px from the end.
   */
  async function scroll(page: Page) {
    return page.evaluate(() => {
      const outer = document.querySelector<HTMLElement>(
        '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer'
      )!;
      const cells = outer.querySelectorAll<HTMLElement>('.jp-Cell');
      const last = cells[cells.length - 1]?.getBoundingClientRect();
      const view = outer.getBoundingClientRect();
      return {
        top: outer.scrollTop,
        newestInView: !!last && last.top < view.bottom && last.bottom > view.top
      };
    });
  }

  test('stops following while the user reads earlier cells, and follows again once they are back at the end', async ({
    page,
    tmpPath
  }) => {
    // Not typing in a cell: the run's cells are followed.
    await startHousingRun(page, tmpPath, 'follow.ipynb', TASK, {
      commandMode: true
    });
    // Enough cells that the notebook scrolls, and it has followed them.
    await expect
      .poll(async () => (await scroll(page)).top, { timeout: 90000 })
      .toBeGreaterThan(200);
    const seen = (await insertions(page)).length;

    // The user scrolls up to read, with the mouse wheel.
    const notebook = page.locator(
      '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer'
    );
    await notebook.hover();
    await page.mouse.wheel(0, -100000);
    await expect.poll(async () => (await scroll(page)).top).toBe(0);
    await expect
      .poll(async () => (await insertions(page)).length, { timeout: 60000 })
      .toBeGreaterThanOrEqual(seen + 3);
    // New cells came; the view stayed where the user reads.
    expect((await scroll(page)).top).toBe(0);

    // Back at the end, the view follows the run again: it moves on from where the user left it, to
    // each new cell.
    await page.mouse.wheel(0, 100000);
    let left = -1;
    await expect
      .poll(async () => {
        const before = left;
        left = (await scroll(page)).top;
        return left > 0 && left === before;
      })
      .toBe(true);
    const back = (await insertions(page)).length;
    await expect
      .poll(async () => (await insertions(page)).length, { timeout: 60000 })
      .toBeGreaterThanOrEqual(back + 2);
    await expect
      .poll(
        async () => {
          const now = await scroll(page);
          return now.top > left && now.newestInView;
        },
        { timeout: 30000 }
      )
      .toBe(true);
    await command(page, 'notebook-bcc:stop', { interruptKernel: false });
  });
});
