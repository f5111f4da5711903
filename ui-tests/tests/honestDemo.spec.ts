/**
 * The honest demo (issue 34): with no planner configured, the Run dialog says that the built-in demo
 * planner makes a standard analysis and does not read the task; it will not start without a CSV file;
 * a forecasting task's findings open with the forecast that was not made; a target column picked in
 * the dialog is the one the analysis relates the others to; and the dialog remembers the last run.
 */
import { galata } from '@jupyterlab/galata';
import type { Page } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';
import {
  cellSources,
  expect,
  HOUSING,
  newNotebook,
  SCREENSHOTS,
  stateLine,
  test,
  uploadHousing
} from './helpers';

const SALES = path.resolve(__dirname, '../../demo/data/sales.csv');
const DEMO_LINE =
  'Built-in demo planner: a standard exploratory analysis of one CSV; it does not read your task';
const FORECAST = 'Forecast next quarter revenue for each region in sales.csv';

test.use({
  mockSettings: galata.DEFAULT_SETTINGS,
  viewport: { width: 1400, height: 900 }
});

function runDialog(page: Page) {
  return page.locator('.jp-Dialog').filter({
    has: page.locator('.jp-bcc-task-input')
  });
}

/** Opens the Run dialog of the active notebook (the command resolves only once it closes). */
async function openRunDialog(page: Page): Promise<void> {
  await page.evaluate(() => {
    void window.jupyterapp.commands.execute('notebook-bcc:run');
  });
  await expect(runDialog(page)).toBeVisible();
}

/** The rendered Markdown cell whose source starts with `start`, scrolled into view. */
async function showCell(page: Page, start: string) {
  await page.evaluate(async start => {
    const widget = window.jupyterapp.shell.currentWidget as unknown as {
      content: {
        model: { sharedModel: { cells: { getSource(): string }[] } };
        activeCellIndex: number;
        mode: string;
        scrollToItem(index: number, align: string): Promise<void>;
      };
    };
    const index = widget.content.model.sharedModel.cells.findIndex(cell =>
      cell.getSource().startsWith(start)
    );
    if (index < 0) {
      throw new Error(`no cell starts with ${start}`);
    }
    widget.content.mode = 'command';
    widget.content.activeCellIndex = index;
    await widget.content.scrollToItem(index, 'start');
  }, start);
  const cell = page.locator(
    '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell.jp-mod-active'
  );
  await cell.scrollIntoViewIfNeeded();
  return cell;
}

/** What the active notebook shows: Markdown cells' sources and code cells' shown outputs. */
async function shownTexts(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const widget = window.jupyterapp.shell.currentWidget as unknown as {
      content: { model: { sharedModel: { cells: { toJSON(): unknown }[] } } };
    };
    const texts: string[] = [];
    for (const cell of widget.content.model.sharedModel.cells) {
      const json = cell.toJSON() as {
        cell_type: string;
        source: string | string[];
        outputs?: {
          text?: string | string[];
          data?: Record<string, unknown>;
        }[];
      };
      const join = (value: unknown) =>
        Array.isArray(value) ? value.join('') : String(value ?? '');
      if (json.cell_type === 'markdown') {
        texts.push(join(json.source));
      }
      for (const output of json.outputs ?? []) {
        // What JupyterLab renders: Markdown before plain text.
        const data = output.data ?? {};
        texts.push(
          join(output.text ?? data['text/markdown'] ?? data['text/plain'])
        );
      }
    }
    return texts;
  });
}

test.describe('The honest demo', () => {
  test.setTimeout(300 * 1000);

  test('names the demo, needs a CSV file, says what a forecasting task did not get, and remembers the task', async ({
    page,
    tmpPath
  }) => {
    await page.contents.uploadFile(SALES, `${tmpPath}/sales.csv`);
    await newNotebook(page, 'forecast.ipynb');

    await openRunDialog(page);
    const dialog = runDialog(page);
    await expect(dialog.locator('.jp-bcc-demo-note')).toHaveText(DEMO_LINE);
    await expect(dialog.locator('.jp-bcc-run-destination')).toHaveCount(0);

    // No data file, and none named in the task: the dialog stays open and says what to do.
    await dialog
      .locator('.jp-bcc-task-input')
      .fill('Forecast next quarter revenue for each region');
    await dialog.getByRole('button', { name: 'Run', exact: true }).click();
    await expect(runDialog(page).locator('.jp-bcc-field-error')).toHaveText(
      'The built-in demo planner needs a CSV file: add one with "Add data files…", or name an existing file in the task.'
    );
    expect(await cellSources(page)).toEqual(['']);

    // The task names sales.csv, which exists beside the notebook: the run reads it.
    await runDialog(page).locator('.jp-bcc-task-input').fill(FORECAST);
    await expect(
      runDialog(page).locator('.jp-bcc-target-column option')
    ).toHaveText(['None', 'month', 'region', 'units', 'revenue']);
    await runDialog(page)
      .getByRole('button', { name: 'Run', exact: true })
      .click();
    await expect(stateLine(page)).toHaveText('Completed', { timeout: 240000 });

    const sources = await cellSources(page);
    const findings = sources.find(source => source.startsWith('## Findings\n'));
    expect(findings).toBeDefined();
    const lines = (findings ?? '').split('\n').filter(line => line.trim());
    expect(lines[1]).toMatch(
      /^\*\*Not done:\*\* the task asks for a forecast\. The built-in demo planner made no forecast: it only explored the data/
    );
    expect(findings).not.toMatch(/\bnan\b/);
    expect(findings).toContain('No target column was given');
    // The title keeps the task's words, and the report is shown once: a Markdown cell, which the
    // output of the code that built it points to instead of printing it again.
    expect(sources).toContain(`# ${FORECAST}`);
    const shown = await shownTexts(page);
    expect(shown.filter(text => text.includes('**Not done:**'))).toHaveLength(
      1
    );
    expect(shown).toContain(
      '*The findings are written out below (and kept in `findings_report`).*'
    );

    const cell = await showCell(page, '## Findings\n');
    await expect(cell.locator('.jp-RenderedMarkdown')).toContainText(
      'made no forecast'
    );
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await cell.screenshot({
      path: path.join(SCREENSHOTS, 'honest-demo-forecast-findings.png')
    });

    // Opened again, the dialog offers the last task and file, and says where the new run goes.
    await openRunDialog(page);
    const again = runDialog(page);
    await expect(again.locator('.jp-bcc-task-input')).toHaveValue(FORECAST);
    await expect(again.locator('.jp-bcc-file-name')).toHaveText(['sales.csv']);
    await expect(again.locator('.jp-bcc-run-destination')).toHaveText(
      'A new run continues below the existing cells.'
    );
    await again.getByRole('button', { name: 'Cancel', exact: true }).click();
    await expect(runDialog(page)).toHaveCount(0);
  });

  test('relates the columns to the target column picked in the dialog', async ({
    page,
    tmpPath
  }) => {
    expect(fs.existsSync(HOUSING)).toBe(true);
    await uploadHousing(page, tmpPath);
    await newNotebook(page, 'target.ipynb');
    await openRunDialog(page);
    const dialog = runDialog(page);
    // The task names housing.csv (beside the notebook) but no column: the user picks SalePrice.
    await dialog
      .locator('.jp-bcc-task-input')
      .fill('housing.csv 中哪些因素影响房价？');
    const target = dialog.locator('.jp-bcc-target-column');
    await expect(target.locator('option[value="SalePrice"]')).toHaveCount(1);
    await target.selectOption('SalePrice');
    await dialog.getByRole('button', { name: 'Run', exact: true }).click();
    await expect(stateLine(page)).toHaveText('Completed', { timeout: 240000 });

    const sources = await cellSources(page);
    // The title keeps the file name as the task writes it.
    expect(sources).toContain('# housing.csv 中哪些因素影响房价？');
    const findings = sources.find(source => source.startsWith('## Findings\n'));
    expect(findings).toMatch(/Numeric drivers of SalePrice \(Pearson r\): /);
    expect(findings).not.toContain('**Not done:**');
    expect(
      sources.some(source => source.includes('TARGET = "SalePrice"'))
    ).toBe(true);
  });
});
