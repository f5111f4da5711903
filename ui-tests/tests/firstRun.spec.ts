/**
 * The first run of a new user: no planner configured anywhere (galata's default settings have no
 * `baseUrl`, the server has no administrator URL), so the demo planner built into the page answers
 * (docs/architecture.md#demo-planner). Its run is paced, draws figures and closes its thinking cells.
 */
import { galata } from '@jupyterlab/galata';
import type { Page } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';
import {
  cellSources,
  command,
  effects,
  expect,
  installProbe,
  newNotebook,
  panel,
  SCREENSHOTS,
  startRun,
  stateLine,
  test,
  uploadHousing
} from './helpers';

// The task the demo notebook tells a new user to type (demo/demo.ipynb).
const TASK = 'Explore housing.csv and report what drives SalePrice';
const DEMO_LINE =
  "A fixed pandas analysis. Set your planner's URL in Settings > Notebook-BCC.";

// A PNG's base64 starts with this; any other base64 payload is a long unbroken run of its alphabet.
const PNG_BASE64 = 'iVBORw0KGgo';
const BASE64_RUN = /[A-Za-z0-9+/]{200,}={0,2}/;

test.use({
  mockSettings: galata.DEFAULT_SETTINGS,
  viewport: { width: 1400, height: 900 }
});

/** Samples the active notebook's cell count in the page every 50 ms, from now on. */
async function sampleCellCount(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as {
      jupyterapp: {
        shell: {
          currentWidget: {
            content?: { model?: { sharedModel: { cells: unknown[] } } };
          } | null;
        };
      };
      bccCellCounts: { t: number; n: number }[];
    };
    const model = w.jupyterapp.shell.currentWidget?.content?.model;
    w.bccCellCounts = [];
    setInterval(() => {
      w.bccCellCounts.push({
        t: performance.now(),
        n: model?.sharedModel.cells.length ?? -1
      });
    }, 50);
  });
}

/** The sampled moments at which the cell count was higher than at the sample before. */
async function growthMoments(page: Page): Promise<number[]> {
  const samples = await page.evaluate(
    () =>
      (window as unknown as { bccCellCounts: { t: number; n: number }[] })
        .bccCellCounts
  );
  const moments: number[] = [];
  for (let i = 1; i < samples.length; i++) {
    if (samples[i].n > samples[i - 1].n) {
      moments.push(samples[i].t);
    }
  }
  return moments;
}

/** How many image/png outputs the active notebook's code cells hold (from the model). */
async function figureCount(page: Page): Promise<number> {
  return page.evaluate(() => {
    const widget = window.jupyterapp.shell.currentWidget as unknown as {
      content: {
        model: { sharedModel: { cells: { toJSON(): unknown }[] } };
      };
    };
    let count = 0;
    for (const cell of widget.content.model.sharedModel.cells) {
      const json = cell.toJSON() as {
        outputs?: { data?: Record<string, unknown> }[];
      };
      for (const output of json.outputs ?? []) {
        if (output.data?.['image/png'] !== undefined) {
          count++;
        }
      }
    }
    return count;
  });
}

/** Makes the active notebook's first cell with a figure its active cell, scrolled into view. */
async function showFirstFigure(page: Page): Promise<void> {
  await page.evaluate(async () => {
    const widget = window.jupyterapp.shell.currentWidget as unknown as {
      content: {
        model: { sharedModel: { cells: { toJSON(): unknown }[] } };
        activeCellIndex: number;
        mode: string;
        scrollToItem(index: number, align: string): Promise<void>;
      };
    };
    const index = widget.content.model.sharedModel.cells.findIndex(cell =>
      ((cell.toJSON() as { outputs?: { data?: object }[] }).outputs ?? []).some(
        output => output.data !== undefined && 'image/png' in output.data
      )
    );
    if (index < 0) {
      throw new Error('no figure in the notebook');
    }
    widget.content.mode = 'command';
    widget.content.activeCellIndex = index;
    await widget.content.scrollToItem(index, 'start');
  });
  // The notebook renders only the cells near its viewport: the figure's cell is in the DOM now.
  const figure = page
    .locator(
      '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell.jp-mod-active .jp-OutputArea-output img'
    )
    .first();
  await figure.scrollIntoViewIfNeeded();
  await expect(figure).toBeInViewport({ ratio: 0.5 });
}

/** The request bodies of the run trace, exported beside the notebook as JSONL. */
async function tracedRequests(page: Page, tmpPath: string): Promise<string[]> {
  await command(page, 'notebook-bcc:export-trace');
  const file = `${tmpPath}/first-run.bcc-trace.jsonl`;
  await expect
    .poll(() => page.request.get(`api/contents/${file}`).then(r => r.ok()))
    .toBe(true);
  const response = await page.request.get(
    `api/contents/${file}?content=1&type=file&format=text`
  );
  const text = ((await response.json()) as { content: string }).content;
  return text
    .split('\n')
    .filter(line => line.trim() !== '')
    .map(line => JSON.parse(line) as { kind: string; body?: unknown })
    .filter(record => record.kind === 'request')
    .map(record => JSON.stringify(record.body));
}

test.describe('First run with no planner configured', () => {
  test.setTimeout(300 * 1000);

  test('the built-in demo planner runs the analysis to its findings, paced, with figures', async ({
    page,
    tmpPath
  }, testInfo) => {
    await installProbe(page);
    await uploadHousing(page, tmpPath);
    await newNotebook(page, 'first-run.ipynb');
    const notebook = `${tmpPath}/first-run.ipynb`;
    await sampleCellCount(page);
    await startRun(page, TASK);

    await expect(panel(page).locator('.jp-bcc-planner-where')).toHaveText(
      DEMO_LINE,
      { timeout: 60000 }
    );
    await expect(stateLine(page)).toHaveText('Completed', { timeout: 280000 });

    const sources = await cellSources(page);
    expect(sources.some(source => source.startsWith('## Findings'))).toBe(true);
    await expect(
      panel(page).locator('.jp-bcc-output[data-status="produced"]', {
        hasText: 'findings_report'
      })
    ).toBeVisible();

    // Cells arrived one by one while the run was live, not all at once.
    const grew = await growthMoments(page);
    expect(grew.length).toBeGreaterThanOrEqual(10);

    const figures = await figureCount(page);
    expect(figures).toBeGreaterThanOrEqual(3);
    testInfo.annotations.push({
      type: 'first run',
      description: `${sources.length} cells, grown at ${grew.length} moments over ${Math.round((grew[grew.length - 1] - grew[0]) / 1000)} s, ${figures} figures`
    });

    // Every thinking cell was closed: none still says it is thinking, and closed ones say for how long.
    expect(
      sources.filter(source => /is thinking|Thinking…/.test(source))
    ).toEqual([]);
    expect(sources.some(source => /thought for \d+ s/i.test(source))).toBe(
      true
    );

    // The planner got the figures as short text, never their base64.
    const sent = await tracedRequests(page, tmpPath);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.some(body => body.includes('[image/png'))).toBe(true);
    for (const body of sent) {
      expect(body).not.toContain(PNG_BASE64);
      expect(body).not.toMatch(BASE64_RUN);
    }
    const effectTexts = await effects(page, notebook);
    expect(effectTexts.some(text => text.includes('[image/png'))).toBe(true);
    for (const text of effectTexts) {
      expect(text).not.toContain(PNG_BASE64);
      expect(text).not.toMatch(BASE64_RUN);
    }

    await showFirstFigure(page);
    // Named by the JupyterLab it ran on: the wheel-only one (project `wheel`), or the test one (`lab`,
    // where there is no wheel venv).
    const name =
      testInfo.project.name === 'wheel'
        ? 'demo-finished-figures-wheel'
        : 'demo-finished-figures';
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    const body = await page.screenshot({
      path: path.join(SCREENSHOTS, `${name}.png`)
    });
    await testInfo.attach(name, { body, contentType: 'image/png' });
  });
});
