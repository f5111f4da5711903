/**
 * The planner dialects' fixture (docs/dialects.md): a test double of the reference planner (or the
 * reference planner itself) of each test's own on a free port, the settings pointing at it, the sales
 * data and a notebook; a run to its end; what the double received (`GET /__requests`) and what the panel
 * shows. Requests go through the Jupyter server's relay.
 */
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';
import type { Page, TestInfo } from '@playwright/test';
import * as path from 'path';
import {
  cellInfos,
  configure,
  expect,
  installProbe,
  openNewNotebook,
  panel,
  planner,
  runInfo,
  startRun,
  stateLine,
  stopPlanners,
  test
} from '../helpers';

export const SALES = path.resolve(__dirname, '../../../demo/data/sales.csv');
export const TASK =
  'Which region brings the most revenue, and how does it change month to month?';
export const HOUSING_TASK = 'What drives the sale price of houses (SalePrice)?';

/** One request as a double recorded it (`GET /__requests`). */
export interface IReceived {
  seq: number;
  method: string;
  path: string;
  contentType: string | null;
  body: unknown;
  status: number;
}

type Json = Record<string, unknown>;

export function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `value.a.b.c`, or undefined where a level is missing. */
export function dig(value: unknown, ...keys: Array<string | number>): unknown {
  let current = value;
  for (const key of keys) {
    if (Array.isArray(current) && typeof key === 'number') {
      current = current[key];
    } else if (isRecord(current)) {
      current = current[String(key)];
    } else {
      return undefined;
    }
  }
  return current;
}

export async function received(url: string): Promise<IReceived[]> {
  const response = await fetch(`${url}/__requests`);
  expect(response.status).toBe(200);
  return (await response.json()) as IReceived[];
}

/** One line per request, for the report: `#3 POST /v1/actions 200 chapter_0_planning …`. */
export function summary(requests: IReceived[]): string {
  return requests
    .map(r => {
      const detail = [
        dig(r.body, 'stage_id'),
        dig(r.body, 'step_index'),
        dig(r.body, 'state', 'FSM', 'state')
      ]
        .filter(v => v !== undefined && v !== null)
        .join(' ');
      return `#${r.seq} ${r.method} ${r.path} ${r.status} ${detail}`;
    })
    .join('\n');
}

/** A double (or the reference planner) of this test's own, the settings pointing at it, the data and a notebook. */
export async function prepare(
  page: IJupyterLabPageFixture,
  tmpPath: string,
  args: string[],
  settings: Record<string, unknown>,
  name: string
): Promise<{ url: string; notebook: string }> {
  const started = await planner(args);
  await configure(page, { baseUrl: started.url, ...settings });
  await page.contents.uploadFile(SALES, `${tmpPath}/sales.csv`);
  const notebook = await openNewNotebook(page, tmpPath, name);
  return { url: started.url, notebook };
}

/**
 * Starts the run and waits until it completes or stops on an error (then fails at once, with the
 * run's error and what the planner received attached).
 */
export async function runToCompletion(
  page: Page,
  notebook: string,
  url: string,
  testInfo: TestInfo,
  task = TASK,
  dataFiles = ['sales.csv']
): Promise<void> {
  await startRun(page, task, { path: notebook, dataFiles });
  await expect
    .poll(
      async () =>
        (await stateLine(page).textContent()) === 'Completed' ||
        (await stateLine(page).getAttribute('data-state')) === 'ERROR',
      { timeout: 240000, intervals: [500] }
    )
    .toBe(true);
  const info = await runInfo(page, notebook);
  if (info.error !== null) {
    // The reference planner has no request list: only the doubles' is attached.
    const log = await received(url).catch(() => null);
    if (log) {
      await attachLog(testInfo, 'requests-until-error', log);
    }
  }
  // Soft: the checks of the cells, the panel and the requests still run and report.
  expect.soft(info.error).toBeNull();
  await expect.soft(stateLine(page)).toHaveText('Completed');
  // A finished run offers Run again and nothing that acts on a live one.
  const control = (id: string) =>
    panel(page).locator(`.jp-bcc-control[data-command="${id}"]`);
  await expect.soft(control('notebook-bcc:run')).toBeEnabled();
  for (const id of [
    'notebook-bcc:pause',
    'notebook-bcc:step',
    'notebook-bcc:stop'
  ]) {
    await expect.soft(control(id)).toBeDisabled();
  }
}

export function dialectLine(page: Page) {
  return panel(page).locator('.jp-bcc-planner-dialect');
}

/** Expands every stage of the progress tree and returns stage name → its step names. */
export async function plannedTree(
  page: Page
): Promise<Record<string, string[]>> {
  const stages = panel(page).locator('.jp-bcc-stage');
  const tree: Record<string, string[]> = {};
  for (let i = 0; i < (await stages.count()); i++) {
    const stage = stages.nth(i);
    if ((await stage.getAttribute('aria-expanded')) === 'false') {
      // Dispatched: the run's toast may cover the row.
      await stage.locator('.jp-bcc-tree-row').first().dispatchEvent('click');
      await expect(stage).toHaveAttribute('aria-expanded', 'true');
    }
    const name = (await stage.getAttribute('aria-label')) ?? '';
    tree[name] = await stage
      .locator('.jp-bcc-step')
      .evaluateAll(items => items.map(i => i.getAttribute('aria-label') ?? ''));
  }
  return tree;
}

/** Cells the run added: headings, markdown, and code cells with outputs from the kernel. */
export async function expectRunCells(
  page: Page,
  notebook: string,
  headings: string[]
): Promise<void> {
  const all = await cellInfos(page, notebook);
  const sources = all.map(c => c.source);
  for (const heading of headings) {
    expect
      .soft(sources)
      .toContainEqual(expect.stringMatching(new RegExp(`^#+ ${heading}`)));
  }
  const prose = all.filter(
    c => c.type === 'markdown' && !c.source.startsWith('#')
  );
  expect.soft(prose.length).toBeGreaterThan(0);
  const code = all.filter(c => c.type === 'code' && c.madeBy !== null);
  expect.soft(code.length).toBeGreaterThan(0);
  expect.soft(code.filter(c => c.outputChars > 0).length).toBeGreaterThan(0);
  // No thinking cell is left open.
  expect.soft(sources.filter(s => /is thinking/.test(s))).toEqual([]);
}

export async function attachLog(
  testInfo: TestInfo,
  name: string,
  requests: IReceived[]
): Promise<void> {
  await testInfo.attach(name, {
    body: summary(requests),
    contentType: 'text/plain'
  });
  await testInfo.attach(`${name}.json`, {
    body: JSON.stringify(requests, null, 1),
    contentType: 'application/json'
  });
}

/** The FSM state of the superset body's sibling `state`. */
export function fsm0(request: IReceived): unknown {
  return dig(request.body, 'state', 'FSM', 'state');
}

/** Each test's timeout and viewport, the probe in the page, and its planners stopped after it. */
export function useDialectRuns(): void {
  test.setTimeout(300 * 1000);
  test.use({ viewport: { width: 1400, height: 900 } });

  test.beforeEach(async ({ page }) => {
    await installProbe(page);
  });

  test.afterEach(async () => {
    await stopPlanners();
  });
}
