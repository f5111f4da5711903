/**
 * The first hour of a data scientist (issue 34): a planner that does not answer says why and what to do,
 * Stop holds the run while it asks, a paused run says paused, and a reload shows the same panel.
 * Screenshots: ui-tests/screenshots/first-hour-*.png.
 */
import type { Page } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';
import {
  addDataFile,
  cellSources,
  clickControl,
  command,
  expect,
  modelCellCount,
  newNotebook,
  panel,
  PLUGIN,
  reloadPage,
  SCREENSHOTS,
  settingsFor,
  SIDEBAR,
  startHousingRun,
  stateLine,
  test,
  uploadHousing
} from './helpers';

const TASK = 'What drives the sale price of houses (SalePrice)?';

async function screenshot(
  page: Page,
  selector: string,
  name: string
): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page
    .locator(selector)
    .first()
    .screenshot({ path: path.join(SCREENSHOTS, `first-hour-${name}.png`) });
}

/** Starts a run as the Run dialog's Run does (the planner checked first), without waiting for it. */
async function runChecked(page: Page, task: string): Promise<void> {
  await page.evaluate(task => {
    void window.jupyterapp.commands.execute('notebook-bcc:run', {
      task,
      dataFiles: ['housing.csv'],
      check: true
    });
  }, task);
}

test.describe('A planner that does not answer', () => {
  // Nothing listens on port 9: the relay cannot reach the planner.
  test.use({
    mockSettings: settingsFor('normal', { baseUrl: 'http://127.0.0.1:9' }),
    viewport: { width: 1400, height: 900 }
  });

  test('says what failed and why, offers what to do, and the panel says it too', async ({
    page,
    tmpPath
  }) => {
    await uploadHousing(page, tmpPath);
    await newNotebook(page, 'unreachable.ipynb');
    await runChecked(page, TASK);

    const dialog = page.locator('.jp-Dialog');
    const summary = dialog.locator('.jp-bcc-problem-summary');
    await expect(summary).toHaveText(
      /^Notebook-BCC could not reach the planner at http:\/\/127\.0\.0\.1:9: .+\.$/,
      { timeout: 30000 }
    );
    // The relay, which works, is only in the folded details.
    await expect(summary).not.toContainText('relay');
    const details = dialog.locator('details.jp-bcc-problem-details');
    await expect(details).not.toHaveAttribute('open', '');
    await expect(details.locator('pre')).toBeHidden();
    await details.locator('summary').click();
    await expect(details.locator('pre')).toContainText(
      "the Jupyter server's relay"
    );
    await details.locator('summary').click();
    await expect(dialog.locator('.jp-Dialog-button')).toHaveText([
      'Close',
      'Open Settings',
      'Test connection',
      'Use the built-in demo',
      'Retry'
    ]);
    await screenshot(page, '.jp-Dialog-content', 'unreachable-planner');

    // The panel shows the error too, with the same actions.
    await expect(stateLine(page)).toHaveText('The run could not start');
    const problem = panel(page).locator('.jp-bcc-start-problem');
    await expect(problem.locator('.jp-bcc-error-message')).toHaveText(
      /could not reach the planner at http:\/\/127\.0\.0\.1:9/
    );
    await expect(problem.getByRole('button')).toHaveText([
      'Open Settings',
      'Test connection',
      'Use the built-in demo',
      'Retry'
    ]);

    // Open Settings opens this extension's settings, the planner first.
    await dialog.getByRole('button', { name: 'Open Settings' }).click();
    await expect(dialog).toHaveCount(0);
    const entry = page.locator(`.jp-PluginList-entry[data-id="${PLUGIN}"]`);
    await entry.click();
    const form = page.locator('.jp-SettingsPanel');
    await expect(form).toContainText('Planner URL');
    const titles = await form
      .locator('.jp-FormGroup-fieldLabel, .jp-FormGroup-contentItem label')
      .allInnerTexts();
    const at = (title: string) => titles.findIndex(t => t.includes(title));
    expect(at('Planner URL')).toBeGreaterThanOrEqual(0);
    expect(at('Planner URL')).toBeLessThan(at('Interactive mode'));
    expect(at('Interactive mode')).toBeLessThan(at('Advanced: Transport'));
    // Option values are words, not protocol ids.
    await expect(form).toContainText('Through the Jupyter server');
    await expect(form).not.toContainText('redactVariablePatterns-0');
    await screenshot(page, '.jp-SettingsPanel', 'settings');
  });
});

test.describe('Stop and pause during a slow stream', () => {
  test.use({
    mockSettings: settingsFor('slow'),
    viewport: { width: 1400, height: 900 }
  });

  test('the Stop dialog holds the run: no cell lands while it asks, Cancel lets it go on', async ({
    page,
    tmpPath
  }) => {
    await startHousingRun(page, tmpPath, 'stop-hold.ipynb', TASK, {
      cells: 2
    });

    await clickControl(page, 'Stop');
    const dialog = page.locator('.jp-Dialog');
    await expect(dialog).toBeVisible();
    const asked = await modelCellCount(page);
    // The slow planner sends a line every 700 ms: several would have landed by now.
    await page.waitForTimeout(4000);
    expect(await modelCellCount(page)).toBe(asked);
    await expect(stateLine(page)).toHaveText(/^Paus/);

    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect
      .poll(() => modelCellCount(page), { timeout: 30000 })
      .toBeGreaterThan(asked);
    await command(page, 'notebook-bcc:stop', { interruptKernel: false });
  });

  test('a paused run says paused in the panel and the tree', async ({
    page,
    tmpPath
  }) => {
    await startHousingRun(page, tmpPath, 'paused.ipynb', TASK, { cells: 3 });
    await clickControl(page, 'Pause');
    await expect(stateLine(page)).toHaveText('Paused');
    const running = panel(page).locator('.jp-bcc-behavior.jp-bcc-mod-current');
    await expect(running).toHaveAttribute('aria-label', /\(paused\)$/);
    await expect(panel(page)).not.toContainText('(running)');
    await expect(panel(page)).not.toContainText('waiting to be applied');
    // What the planner sent meanwhile is held, in words about cells.
    await expect(panel(page).locator('.jp-bcc-buffered')).toHaveText(
      /^\d+ cells? from the planner waits? until you resume$/,
      { timeout: 10000 }
    );
    // Redo from here is there without a hover.
    await screenshot(page, SIDEBAR, 'paused');
    await command(page, 'notebook-bcc:stop', { interruptKernel: false });
  });
});

test.describe('A new notebook', () => {
  test.use({
    mockSettings: settingsFor('normal'),
    viewport: { width: 1400, height: 900 }
  });

  test("the run's title is the first cell: the new notebook's empty cell gives it its place", async ({
    page,
    tmpPath
  }) => {
    await uploadHousing(page, tmpPath);
    await newNotebook(page, 'starter.ipynb');
    expect(await cellSources(page)).toEqual(['']);
    // As a user starts it: the toolbar's Run, then the dialog's.
    await page
      .locator('.jp-NotebookPanel-toolbar [data-command="notebook-bcc:run"]')
      .click();
    const dialog = page.locator('.jp-Dialog');
    await dialog.locator('textarea').fill(TASK);
    await addDataFile(page, 'housing.csv');
    await dialog.getByRole('button', { name: 'Run', exact: true }).click();
    // The title goes first whenever it comes: wait for it and two more cells.
    await expect
      .poll(
        async () => {
          const sources = await cellSources(page);
          return sources.length >= 3 && /^# \S/.test(sources[0]);
        },
        { timeout: 60000 }
      )
      .toBe(true);
    // Every cell is the run's: no empty cell of the user's is left between the title and what follows.
    const notTheRuns = await page.evaluate(() => {
      const widget = window.jupyterapp.shell.currentWidget as unknown as {
        content: {
          model: {
            sharedModel: {
              cells: {
                getSource(): string;
                getMetadata(key: string): unknown;
              }[];
            };
          };
        };
      };
      return widget.content.model.sharedModel.cells
        .filter(cell => cell.getMetadata('notebook_bcc') === undefined)
        .map(cell => cell.getSource());
    });
    expect(notTheRuns).toEqual([]);
    // The title is shown rendered, and no cell of the run was put in edit mode.
    await expect(
      page.locator('.jp-NotebookPanel:visible .jp-Cell').first()
    ).toHaveClass(/jp-mod-rendered/);
    await expect(
      page.locator('.jp-NotebookPanel:visible .jp-Notebook.jp-mod-editMode')
    ).toHaveCount(0);
    await command(page, 'notebook-bcc:stop', { interruptKernel: false });
  });
});

test.describe('A reload', () => {
  test.use({
    mockSettings: settingsFor('normal'),
    viewport: { width: 1400, height: 900 }
  });

  test('shows the same panel after a reload: the artifacts and the outputs', async ({
    page,
    tmpPath
  }) => {
    await startHousingRun(page, tmpPath, 'reload.ipynb', TASK);
    await expect(stateLine(page)).toHaveText('Completed', { timeout: 280000 });
    const artifacts = panel(page).locator('.jp-bcc-artifacts .jp-bcc-count');
    const before = await artifacts.innerText();
    expect(Number(before)).toBeGreaterThan(0);
    // Saved with the notebook: a reload reads the run back from it.
    await page.keyboard.press('Control+s');
    await page.waitForTimeout(1000);

    await reloadPage(page);
    await expect(stateLine(page)).toHaveText('Completed', { timeout: 60000 });
    await expect(artifacts).toHaveText(before);
    await expect(panel(page)).not.toContainText('@behavior_');
  });
});
