/**
 * The one helper library of the UI tests: the test fixture, settings, planners (the shared ones of
 * playwright.config.js and ones of a test's own on free ports), notebooks, runs, and a probe in the page
 * that reads a notebook's runner, cells and saved state.
 */
import {
  expect,
  galata,
  IJupyterLabPageFixture,
  test as base
} from '@jupyterlab/galata';
import type { APIRequestContext, Page, TestInfo } from '@playwright/test';
import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import type { NotebookPanel } from '@jupyterlab/notebook';
import * as fs from 'fs';
import {
  createServer,
  IncomingHttpHeaders,
  request as httpRequest
} from 'http';
import type { AddressInfo, Socket } from 'net';
import * as path from 'path';
import { IPlannerProcess, startPlanner } from '../../bench/src/processes';
import type {
  IRunFinished,
  IRunSnapshot,
  IWorkflowRunner
} from '../../src/engine/types';
import type { IWorkflowRunnerRegistry } from '../../src/tokens';

// eslint-disable-next-line @typescript-eslint/no-var-requires
const { plannerUrl } = require('../planners');

export const SIDEBAR = '#jp-bcc-sidebar';
export const PLUGIN = 'jupyterlab-notebook-bcc:plugin';
export const HOUSING = path.resolve(__dirname, '../../demo/data/housing.csv');
export const SCREENSHOTS = path.resolve(__dirname, '../screenshots');
export const RUN_STATE_KEY = 'notebook_bcc_run';

/**
 * Galata's test, with the kernels API left alone: galata's kernel mock fails on the empty (204) answer
 * of an interrupt, which Stop sends. Kernels started during a test are shut down after it.
 */
export const test = base.extend<{
  kernelCleanup: void;
  serverSettings: void;
}>({
  kernels: async ({}, use) => {
    await use(null);
  },
  // Galata mocks settings inside the page; the planner relay reads the user's settings on the server,
  // so the test's settings of this extension are written there too (and reset after the test).
  serverSettings: [
    async ({ mockSettings, request }, use) => {
      const ours =
        typeof mockSettings === 'object' && mockSettings
          ? ((mockSettings as Record<string, unknown>)[PLUGIN] ?? {})
          : {};
      await putServerSettings(request, ours as Record<string, unknown>);
      await use();
      await putServerSettings(request, {});
    },
    { auto: true }
  ],
  kernelCleanup: [
    async ({ request }, use) => {
      const list = async (): Promise<string[]> => {
        const response = await request.get('api/kernels');
        return response.ok()
          ? ((await response.json()) as { id: string }[]).map(k => k.id)
          : [];
      };
      const before = new Set(await list());
      await use();
      for (const id of await list()) {
        if (!before.has(id)) {
          await request.delete(`api/kernels/${id}`);
        }
      }
    },
    { auto: true }
  ]
});

export { expect };

export type PlannerName = 'normal' | 'failing' | 'slow';

/** Galata's default settings plus ours: which planner, and any other run setting. */
export function settingsFor(
  planner: PlannerName,
  extra: Record<string, unknown> = {}
): Record<string, unknown> {
  return {
    ...galata.DEFAULT_SETTINGS,
    [PLUGIN]: { baseUrl: plannerUrl(planner), ...extra }
  };
}

/** Puts the sample data beside the test's notebooks, where the kernel runs. */
export async function uploadHousing(
  page: IJupyterLabPageFixture,
  tmpPath: string
): Promise<void> {
  await page.contents.uploadFile(HOUSING, `${tmpPath}/housing.csv`);
}

/**
 * A new notebook in tmpPath, open, with the workflow panel shown: File > New > Notebook, the kernel
 * dialog accepted, then renamed to `name` once its session has started. JupyterLab starts a session
 * under a temporary path, moves it to the notebook's and only then takes it as the notebook's session;
 * a rename in between (galata's `createNew(name)` renames at once) leaves the kernel's session at
 * `Untitled.ipynb`, and the next new notebook, given that free name again, joins that kernel without a
 * kernel dialog.
 */
export async function newNotebook(
  page: IJupyterLabPageFixture,
  name: string
): Promise<void> {
  const assigned = await page.notebook.createNew();
  expect(assigned).toMatch(/\.ipynb$/);
  const dir = await page.filebrowser.getCurrentDirectory();
  await expect
    .poll(() => currentSessionPath(page), { timeout: 60000 })
    .toBe(`${dir}/${assigned}`);
  expect(
    await page.contents.renameFile(`${dir}/${assigned}`, `${dir}/${name}`)
  ).toBe(true);
  await expect(page.activity.getTabLocator(name)).toBeVisible();
  await expect
    .poll(() => serverSessionPaths(page), { timeout: 30000 })
    .toContain(`${dir}/${name}`);
  await command(page, 'notebook-bcc:open');
  await expect(page.locator(SIDEBAR)).toBeVisible();
  await expect(page.locator(`${SIDEBAR} .jp-bcc-state`)).toHaveText(
    'Not started'
  );
}

/** The path of the active notebook's session, once JupyterLab has taken it as the notebook's. */
async function currentSessionPath(page: Page): Promise<string | null> {
  return page.evaluate(() => {
    const widget = window.jupyterapp.shell.currentWidget as unknown as {
      sessionContext?: { session?: { path: string } | null };
    };
    return widget?.sessionContext?.session?.path ?? null;
  });
}

/** The paths of the server's sessions. */
async function serverSessionPaths(page: Page): Promise<string[]> {
  const response = await page.request.get('api/sessions');
  expect(response.ok()).toBe(true);
  return ((await response.json()) as { path: string }[]).map(s => s.path);
}

export function panel(page: Page) {
  return page.locator(SIDEBAR);
}

export function stateLine(page: Page) {
  return page.locator(`${SIDEBAR} .jp-bcc-state`);
}

/** Cells of the active notebook. */
export function cells(page: Page) {
  return page.locator(
    '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell'
  );
}

export async function cellCount(page: Page): Promise<number> {
  return cells(page).count();
}

/** The cells' sources, as the notebook model holds them (virtual scrolling hides some from the DOM). */
export async function cellSources(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const widget = window.jupyterapp.shell.currentWidget as unknown as {
      content?: {
        model?: { sharedModel: { cells: { getSource(): string }[] } };
      };
    };
    return (
      widget?.content?.model?.sharedModel.cells.map(c => c.getSource()) ?? []
    );
  });
}

export async function modelCellCount(page: Page): Promise<number> {
  return (await cellSources(page)).length;
}

/**
 * Reloads the page and waits for JupyterLab, not for the launcher galata's `reload` waits for (a
 * restored layout shows a notebook instead). Galata's option is missing from its types.
 */
export async function reloadPage(page: IJupyterLabPageFixture): Promise<void> {
  const reload = page.reload as (options: {
    waitForIsReady: boolean;
  }) => Promise<unknown>;
  await reload.call(page, { waitForIsReady: false });
  await page.locator('#jupyterlab-splash').waitFor({ state: 'detached' });
}

/**
 * Starts a run through the command (no dialog): for tests about something else than the dialog. The
 * notebook is the one at `options.path`, or the active one.
 */
/**
 * Puts the visible notebook in command mode, as a user does before a notebook shortcut (a click on a
 * cell's prompt): the extension's shortcuts are not bound where the user types.
 */
export async function commandMode(page: Page): Promise<void> {
  await page
    .locator('.jp-NotebookPanel:visible .jp-Cell .jp-InputPrompt')
    .first()
    .click();
  await expect(
    page.locator('.jp-NotebookPanel:visible .jp-Notebook.jp-mod-commandMode')
  ).toBeVisible();
}

/**
 * In the open Run dialog, as a user adds a data file: "Add data files…", `name` picked in the file dialog,
 * Select; the Run dialog then lists the file.
 */
export async function addDataFile(page: Page, name: string): Promise<void> {
  await page
    .locator('.jp-Dialog')
    .getByRole('button', { name: 'Add data files…' })
    .click();
  const picker = page
    .locator('.jp-Dialog')
    .filter({ has: page.locator('.jp-DirListing') });
  await picker.locator('.jp-DirListing-item', { hasText: name }).click();
  await picker.getByRole('button', { name: 'Select' }).click();
  await expect(page.locator('.jp-bcc-file-name')).toHaveText(name);
}

export async function startRun(
  page: Page,
  task: string,
  options: { path?: string; dataFiles?: string[]; stepMode?: boolean } = {}
): Promise<void> {
  await page.evaluate(
    async ({ path, task, dataFiles, stepMode, plugin }) => {
      let notebook: string | undefined;
      for (const widget of window.jupyterapp.shell.widgets('main')) {
        const candidate = widget as unknown as { context?: { path: string } };
        if (path !== null && candidate.context?.path === path) {
          notebook = widget.id;
        }
      }
      if (path !== null && notebook === undefined) {
        throw new Error(`no open notebook ${path}`);
      }
      const panel =
        notebook !== undefined
          ? [...window.jupyterapp.shell.widgets('main')].find(
              widget => widget.id === notebook
            )
          : window.jupyterapp.shell.currentWidget;
      // A page galata does not drive (a second window opened by the test) has no plugin lookup: it
      // starts without waiting, as before.
      const runner = await (async () => {
        try {
          const registry = (await (
            window as unknown as {
              galata: { getPlugin(id: string): Promise<unknown> };
            }
          ).galata.getPlugin(plugin)) as IWorkflowRunnerRegistry;
          return panel
            ? await registry.whenReady(panel as NotebookPanel)
            : null;
        } catch {
          return null;
        }
      })();
      const before = runner?.snapshot.lastTransitionAt ?? null;
      await window.jupyterapp.commands.execute('notebook-bcc:run', {
        ...(notebook !== undefined ? { notebook } : {}),
        task,
        dataFiles,
        stepMode
      });
      // The command starts the run after taking the run lock, without waiting for it: wait (up to 5 s)
      // until the run's first transition, so a test that then waits for the run's end does not find
      // the notebook idle before its run began.
      const end = Date.now() + 5000;
      while (
        runner &&
        !runner.isRunning &&
        runner.snapshot.lastTransitionAt === before &&
        Date.now() < end
      ) {
        await new Promise(resolve => setTimeout(resolve, 25));
      }
    },
    {
      path: options.path ?? null,
      task,
      dataFiles: options.dataFiles ?? ['housing.csv'],
      stepMode: options.stepMode ?? false,
      plugin: PLUGIN
    }
  );
}

export async function command(
  page: Page,
  id: string,
  args: ReadonlyPartialJSONObject = {}
): Promise<void> {
  // A command may resolve with a widget, which Playwright cannot send back: return nothing.
  await page.evaluate(
    async ({ id, args }) => {
      await window.jupyterapp.commands.execute(id, args);
    },
    { id, args }
  );
}

/** A screenshot of the panel, attached to the report and saved under ui-tests/screenshots/. */
export async function capturePanel(
  page: Page,
  testInfo: TestInfo,
  name: string
): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  const body = await page.locator(SIDEBAR).screenshot({ path: file });
  await testInfo.attach(name, { body, contentType: 'image/png' });
}

/** Records, in the page, every insertion of cells into the active notebook: time and how many. */
export async function recordInsertions(page: Page): Promise<void> {
  await page.evaluate(() => {
    type Change = { type: string; newValues: unknown[] };
    const widget = window.jupyterapp.shell.currentWidget as unknown as {
      content: {
        model: {
          cells: {
            changed: {
              connect(slot: (sender: unknown, change: Change) => void): void;
            };
          };
        };
      };
    };
    const log: { t: number; n: number }[] = [];
    (window as unknown as { bccInsertions: typeof log }).bccInsertions = log;
    widget.content.model.cells.changed.connect((_, change) => {
      if (change.type === 'add') {
        log.push({ t: performance.now(), n: change.newValues.length });
      }
    });
  });
}

/**
 * The opening the run specs share: housing.csv in tmpPath, a new notebook `name` open with the panel,
 * its cell insertions recorded (`insertions`), and a run of `task` on it, answered by the planner of
 * the spec's settings. `commandMode`: no cell in edit mode when the run starts. With `cells`, returns
 * once the run has inserted that many cells.
 */
export async function startHousingRun(
  page: IJupyterLabPageFixture,
  tmpPath: string,
  name: string,
  task: string,
  options: { cells?: number; stepMode?: boolean; commandMode?: boolean } = {}
): Promise<void> {
  await uploadHousing(page, tmpPath);
  await newNotebook(page, name);
  await recordInsertions(page);
  if (options.commandMode) {
    await commandMode(page);
  }
  await startRun(page, task, { stepMode: options.stepMode });
  if (options.cells !== undefined) {
    const cells = options.cells;
    await expect
      .poll(async () => (await insertions(page)).length, { timeout: 60000 })
      .toBeGreaterThanOrEqual(cells);
  }
}

export async function insertions(
  page: Page
): Promise<{ t: number; n: number }[]> {
  return page.evaluate(
    () =>
      (window as unknown as { bccInsertions: { t: number; n: number }[] })
        .bccInsertions
  );
}

export interface ICellProvenance {
  stage_id: string | null;
  step_id: string | null;
  behavior_id: string | null;
  action_index: number;
  action: string;
  role?: string;
}

/** The run's provenance of each cell of the active notebook (null for cells the run did not add). */
export async function provenances(
  page: Page
): Promise<(ICellProvenance | null)[]> {
  return page.evaluate(() => {
    const widget = window.jupyterapp.shell.currentWidget as unknown as {
      content?: {
        model?: {
          sharedModel: { cells: { getMetadata(key: string): unknown }[] };
        };
      };
    };
    return (widget?.content?.model?.sharedModel.cells ?? []).map(
      cell => (cell.getMetadata('notebook_bcc') as ICellProvenance) ?? null
    );
  });
}

/**
 * The run's cells are in stream order: within each behavior the action indexes increase, and a
 * behavior's cells are not interleaved with another's.
 */
export function expectStreamOrder(cells: (ICellProvenance | null)[]): void {
  const seen = new Set<string>();
  let current: string | null = null;
  let lastIndex = -1;
  for (const cell of cells) {
    if (!cell || cell.behavior_id === null || cell.role === 'title') {
      continue;
    }
    const key = `${cell.stage_id}/${cell.step_id}/${cell.behavior_id}`;
    if (key !== current) {
      expect(seen.has(key)).toBe(false);
      seen.add(key);
      current = key;
      lastIndex = -1;
    }
    expect(cell.action_index).toBeGreaterThan(lastIndex);
    lastIndex = cell.action_index;
  }
}

/** The behaviors the current run has completed, as the panel shows them. */
export async function behaviorsRun(page: Page): Promise<number> {
  const node = page.locator(`${SIDEBAR} .jp-bcc-budget`);
  if ((await node.count()) === 0) {
    return 0;
  }
  return Number(await node.getAttribute('data-behaviors-run'));
}

/** Clicks a control of the workflow panel (Run, Pause, Resume, Step, Stop, Retry). */
export async function clickControl(page: Page, name: string): Promise<void> {
  await page
    .locator(`${SIDEBAR} .jp-bcc-controls, ${SIDEBAR} .jp-bcc-error`)
    .getByRole('button', { name, exact: true })
    .click();
}

/** How many cells the open notebook at `path` has (whether or not it is the active one). */
export async function cellCountOf(page: Page, path: string): Promise<number> {
  return page.evaluate(notebookPath => {
    for (const widget of window.jupyterapp.shell.widgets('main')) {
      const panel = widget as unknown as {
        context?: { path: string };
        content?: { model?: { sharedModel: { cells: unknown[] } } };
      };
      if (panel.context?.path === notebookPath) {
        return panel.content?.model?.sharedModel.cells.length ?? -1;
      }
    }
    return -1;
  }, path);
}

/** Changes our settings through JupyterLab's setting registry, as the settings editor does. */
export async function configure(
  page: Page,
  values: Record<string, unknown>
): Promise<void> {
  await page.evaluate(
    async ({ plugin, values }) => {
      const registry = (await window.galata.getPlugin(
        '@jupyterlab/apputils-extension:settings'
      )) as unknown as {
        set(plugin: string, key: string, value: unknown): Promise<void>;
      };
      for (const [key, value] of Object.entries(values)) {
        await registry.set(plugin, key, value);
      }
    },
    { plugin: PLUGIN, values }
  );
  const current = await page.request.get(SETTINGS_API);
  const raw = current.ok()
    ? ((await current.json()) as { raw?: string }).raw
    : undefined;
  await putServerSettings(page.request, {
    ...parseRaw(raw),
    ...values
  });
}

// Relative: resolved against the test's baseURL, base path included (a JupyterLab under /user/alice/).
const SETTINGS_API = `lab/api/settings/${PLUGIN}`;

/** Writes this extension's user settings on the server (where the planner relay reads them). */
async function putServerSettings(
  request: APIRequestContext,
  values: Record<string, unknown>
): Promise<void> {
  const response = await request.put(SETTINGS_API, {
    data: { raw: JSON.stringify(values) }
  });
  if (!response.ok()) {
    throw new Error(
      `Could not write the server's settings: HTTP ${response.status()} ${await response.text()}`
    );
  }
}

function parseRaw(raw: string | undefined): Record<string, unknown> {
  try {
    const parsed: unknown = raw ? JSON.parse(raw) : {};
    return parsed && typeof parsed === 'object'
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

// ---------------------------------------------------------------------------------------------
// Planners
// ---------------------------------------------------------------------------------------------

const planners: IPlannerProcess[] = [];

/** Starts a planner for this test (stopped by `stopPlanners` after it); `args` as on its command line. */
export async function planner(args: string[]): Promise<IPlannerProcess> {
  const started = await startPlanner(args);
  planners.push(started);
  return started;
}

/** Stops the planners and recording proxies this test started. */
export async function stopPlanners(): Promise<void> {
  await Promise.all([
    ...planners.splice(0).map(p => p.stop()),
    ...proxies.splice(0).map(p => p.close())
  ]);
}

/** One request as a recording proxy received it. */
export interface IRecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface IRecordingProxy {
  url: string;
  /** Every request received so far, in order. */
  requests: IRecordedRequest[];
  close(): Promise<void>;
}

const proxies: IRecordingProxy[] = [];

/**
 * An HTTP proxy in front of `target` (a planner) that records each request, head and body, and streams
 * the answer back unchanged: what the planner received, which its own log does not show. Closed by
 * `stopPlanners`.
 */
export async function recordingProxy(target: string): Promise<IRecordingProxy> {
  const upstream = new URL(target);
  const requests: IRecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (chunk: Buffer) => parts.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(parts);
      requests.push({
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: req.headers,
        body: body.toString('utf8')
      });
      const forward = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host }
        },
        answer => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        }
      );
      forward.on('error', error => {
        if (!res.headersSent) {
          res.writeHead(502);
        }
        res.end(String(error));
      });
      // The client went away: so does the request to the planner.
      res.on('close', () => forward.destroy());
      forward.end(body);
    });
  });
  server.on('connection', socket => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const proxy: IRecordingProxy = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>(resolve => {
        for (const socket of sockets) {
          socket.destroy();
        }
        server.close(() => resolve());
      })
  };
  proxies.push(proxy);
  return proxy;
}

/** The planner's request log, e.g. `POST /planning 429 3ms`, with when each line was read. */
export function requestLog(
  p: IPlannerProcess
): Array<{ line: string; at: number }> {
  return p.requests();
}

// ---------------------------------------------------------------------------------------------
// The page
// ---------------------------------------------------------------------------------------------

/** What identifies a cell's content: kept means the same id with the same type and source. */
export interface ICellContent {
  id: string;
  type: string;
  source: string;
}

export interface ICellInfo extends ICellContent {
  role: string | null;
  /** The run's provenance (stage/step/behavior#action), null for a cell the run did not add. */
  madeBy: string | null;
  /** Characters of text in the cell's outputs. */
  outputChars: number;
}

/** One moment of a run as the probe saw it: a signal of the runner and the cells at that instant. */
export interface IRunMoment {
  event: 'progress' | 'warning' | 'finished';
  behaviorsRun: number;
  paused: boolean;
  state: string;
  /** The warning's text, or how the run finished. */
  detail: string | null;
  cells: ICellContent[];
}

export interface IRunInfo {
  state: string;
  running: boolean;
  paused: boolean;
  pauseReason: string | null;
  error: string | null;
  stepId: string | null;
  behaviorsRun: number;
  finished: IRunFinished | null;
  warnings: string[];
}

export interface IExchange {
  endpoint: string;
  /** When the request was sent and its answer's head arrived, in ms since the run began. */
  sentAt: number;
  answeredAt: number | null;
  status: number | null;
}

/** Functions the probe puts on `window.bccProbe` (see `installProbe`). */
interface IProbe {
  cells(path: string): ICellInfo[];
  /** Every moment recorded for the notebook since the probe first read its runner. */
  timeline(path: string): IRunMoment[];
  run(path: string): Promise<IRunInfo>;
  /** Requests the runner's client sent (from the run trace): endpoint and body length. */
  requests(path: string): Promise<Array<{ endpoint: string; chars: number }>>;
  /** Each HTTP request the client sent and its answer, in the client's clock (from the run trace). */
  exchanges(path: string): Promise<IExchange[]>;
  effects(path: string): Promise<string[]>;
  /** The kernel answers a kernel_info request (its status may still say "starting" after an autorestart). */
  kernelAnswers(path: string): Promise<boolean>;
  restartKernel(path: string): Promise<void>;
  /** Pauses the run (at the next action boundary) once it has run `behaviors` behaviors. */
  pauseAfter(path: string, behaviors: number): Promise<void>;
  /** Deletes a cell the way the user does: make it active, then the notebook's delete command. */
  deleteCell(path: string, cellId: string): Promise<void>;
  /** The active cell's index and the notebook's mode. */
  focus(path: string): { activeCellIndex: number; mode: string };
}

/**
 * Installs `window.bccProbe` now and on every later load of the page (reloads included). It finds a
 * notebook by path among the main area's widgets and its runner through the extension's registry,
 * and records each runner's warnings and how its last run finished.
 */
export async function installProbe(page: Page): Promise<void> {
  const install = () => {
    const w = window as unknown as {
      jupyterapp: JupyterFrontEnd;
      galata: { getPlugin(id: string): Promise<unknown> };
      bccProbe: IProbe;
    };
    const seen = new WeakMap<
      IWorkflowRunner,
      { warnings: string[]; finished: IRunFinished | null }
    >();
    const timelines = new Map<string, IRunMoment[]>();
    const panel = (path: string): NotebookPanel => {
      for (const widget of w.jupyterapp.shell.widgets('main')) {
        const candidate = widget as NotebookPanel;
        if (candidate.context?.path === path && candidate.content) {
          return candidate;
        }
      }
      throw new Error(`no open notebook ${path}`);
    };
    const runner = async (path: string): Promise<IWorkflowRunner> => {
      const registry = (await w.galata.getPlugin(
        'jupyterlab-notebook-bcc:plugin'
      )) as IWorkflowRunnerRegistry;
      const found = await registry.whenReady(panel(path));
      if (!seen.has(found)) {
        const record = {
          warnings: [] as string[],
          finished: null as IRunFinished | null
        };
        seen.set(found, record);
        const moments: IRunMoment[] = [];
        timelines.set(path, moments);
        // Taken synchronously in the signal: the cells exactly as they were at that moment.
        const moment = (
          event: IRunMoment['event'],
          detail: string | null
        ): void => {
          const s = found.snapshot;
          let cells: ICellContent[] = [];
          try {
            cells = (panel(path).content.model?.sharedModel.cells ?? []).map(
              cell => ({
                id: cell.getId(),
                type: cell.cell_type,
                source: cell.getSource()
              })
            );
          } catch {
            // The notebook is closing: the moment is kept, without cells.
          }
          moments.push({
            event,
            behaviorsRun: s.behaviorsRun,
            paused: s.paused,
            state: s.state,
            detail,
            cells
          });
        };
        found.warning.connect((_, warning) => {
          record.warnings.push(warning.message);
          moment('warning', warning.message);
        });
        found.progressChanged.connect(() => moment('progress', null));
        found.finished.connect((_, finished) => {
          record.finished = { ...finished };
          moment('finished', finished.reason);
        });
      }
      return found;
    };
    const textLength = (outputs: unknown[] | undefined): number =>
      (outputs ?? []).reduce((sum: number, output) => {
        const o = output as {
          text?: string | string[];
          data?: Record<string, unknown>;
        };
        const text = o.text ?? o.data?.['text/plain'] ?? '';
        return (
          sum + (Array.isArray(text) ? text.join('') : String(text)).length
        );
      }, 0);
    w.bccProbe = {
      cells: (path: string) =>
        (panel(path).content.model?.sharedModel.cells ?? []).map(cell => {
          const meta = cell.getMetadata('notebook_bcc') as
            | {
                role?: string;
                stage_id?: string | null;
                step_id?: string | null;
                behavior_id?: string | null;
                action_index?: number;
              }
            | undefined;
          return {
            id: cell.getId(),
            type: cell.cell_type,
            source: cell.getSource(),
            role: meta?.role ?? null,
            madeBy:
              meta?.behavior_id != null
                ? `${meta.stage_id}/${meta.step_id}/${meta.behavior_id}#${meta.action_index}`
                : null,
            outputChars:
              cell.cell_type === 'code'
                ? textLength((cell.toJSON() as { outputs?: unknown[] }).outputs)
                : 0
          };
        }),
      timeline: (path: string) => [...(timelines.get(path) ?? [])],
      run: async (path: string) => {
        const r = await runner(path);
        const s = r.snapshot;
        const record = seen.get(r);
        return {
          state: s.state,
          running: s.running,
          paused: s.paused,
          pauseReason: s.pauseReason?.message ?? null,
          error: s.error?.message ?? null,
          stepId: s.step.id,
          behaviorsRun: s.behaviorsRun,
          finished: record?.finished ?? null,
          warnings: [...(record?.warnings ?? [])]
        };
      },
      requests: async (path: string) =>
        (await runner(path)).trace.records
          .filter(record => record.kind === 'request')
          .map(record => ({
            endpoint: record.endpoint,
            chars: JSON.stringify(record.body).length
          })),
      exchanges: async (path: string) => {
        const records = (await runner(path)).trace.records;
        return records
          .filter(record => record.kind === 'request')
          .map(request => {
            const response = records.find(
              r => r.kind === 'response' && r.seq === request.seq
            );
            return {
              endpoint: request.endpoint,
              sentAt: request.t,
              answeredAt: response?.t ?? null,
              status: response?.kind === 'response' ? response.status : null
            };
          });
      },
      effects: async (path: string) => {
        const e = (await runner(path)).effects;
        return [...e.history, ...e.current];
      },
      kernelAnswers: async (path: string) => {
        const kernel = panel(path).sessionContext.session?.kernel;
        if (!kernel || kernel.status === 'dead') {
          return false;
        }
        const timeout = new Promise<boolean>(resolve =>
          setTimeout(() => resolve(false), 5000)
        );
        return Promise.race([
          kernel.requestKernelInfo().then(
            () => true,
            () => false
          ),
          timeout
        ]);
      },
      restartKernel: (path: string) =>
        panel(path).sessionContext.restartKernel(),
      pauseAfter: async (path: string, behaviors: number) => {
        const r = await runner(path);
        const onProgress = (_: IWorkflowRunner, snapshot: IRunSnapshot) => {
          if (snapshot.behaviorsRun >= behaviors) {
            r.progressChanged.disconnect(onProgress);
            r.pause();
          }
        };
        r.progressChanged.connect(onProgress);
      },
      deleteCell: async (path: string, cellId: string) => {
        const p = panel(path);
        const index = (p.content.model?.sharedModel.cells ?? []).findIndex(
          cell => cell.getId() === cellId
        );
        if (index < 0) {
          throw new Error(`no cell ${cellId}`);
        }
        w.jupyterapp.shell.activateById(p.id);
        p.content.mode = 'command';
        p.content.activeCellIndex = index;
        await w.jupyterapp.commands.execute('notebook:delete-cell');
      },
      focus: (path: string) => {
        const p = panel(path);
        return {
          activeCellIndex: p.content.activeCellIndex,
          mode: p.content.mode
        };
      }
    };
  };
  await page.addInitScript(install);
  await page.evaluate(install);
}

/** Calls one of the probe's functions in the page. */
export async function callProbe<K extends keyof IProbe>(
  page: Page,
  name: K,
  ...args: Parameters<IProbe[K]>
): Promise<Awaited<ReturnType<IProbe[K]>>> {
  return page.evaluate(
    ({ name, args }) => {
      const p = (
        window as unknown as {
          bccProbe: Record<string, (...a: unknown[]) => unknown>;
        }
      ).bccProbe;
      return p[name](...args);
    },
    { name, args: args as unknown[] }
  ) as Promise<Awaited<ReturnType<IProbe[K]>>>;
}

/** The cells of the notebook at `path`, from its model (the probe must be installed). */
export async function cellInfos(
  page: Page,
  path: string
): Promise<ICellInfo[]> {
  return page.evaluate(
    path => (window as unknown as { bccProbe: IProbe }).bccProbe.cells(path),
    path
  );
}

export async function timeline(
  page: Page,
  path: string
): Promise<IRunMoment[]> {
  return page.evaluate(
    path => (window as unknown as { bccProbe: IProbe }).bccProbe.timeline(path),
    path
  );
}

/** The cells at the first recorded moment that `when` accepts (waiting for it to happen). */
export async function cellsAt(
  page: Page,
  path: string,
  when: (moment: IRunMoment) => boolean,
  timeout = 60000
): Promise<ICellContent[]> {
  let found: IRunMoment | undefined;
  await expect
    .poll(
      async () => {
        found = (await timeline(page, path)).find(when);
        return found !== undefined;
      },
      { timeout, intervals: [100, 250] }
    )
    .toBe(true);
  return (found as IRunMoment).cells;
}

export async function runInfo(page: Page, path: string): Promise<IRunInfo> {
  return page.evaluate(
    path => (window as unknown as { bccProbe: IProbe }).bccProbe.run(path),
    path
  );
}

export async function requests(
  page: Page,
  path: string
): Promise<Array<{ endpoint: string; chars: number }>> {
  return page.evaluate(
    path => (window as unknown as { bccProbe: IProbe }).bccProbe.requests(path),
    path
  );
}

export async function effects(page: Page, path: string): Promise<string[]> {
  return page.evaluate(
    path => (window as unknown as { bccProbe: IProbe }).bccProbe.effects(path),
    path
  );
}

/** The notebook at `path` is open and has its runner. */
async function isReady(page: Page, path: string): Promise<boolean> {
  return page.evaluate(
    path =>
      (window as unknown as { bccProbe: IProbe }).bccProbe
        .run(path)
        .then(() => true)
        .catch(() => false),
    path
  );
}

/** A new notebook `name` in the test's directory, as `newNotebook`, with its runner read by the probe. */
export async function openNewNotebook(
  page: IJupyterLabPageFixture,
  tmpPath: string,
  name: string
): Promise<string> {
  await newNotebook(page, name);
  const path = `${tmpPath}/${name}`;
  await expect.poll(() => isReady(page, path), { timeout: 60000 }).toBe(true);
  return path;
}

/** Opens an existing notebook by path and waits for its runner. */
export async function openNotebook(page: Page, path: string): Promise<void> {
  await page.evaluate(async path => {
    await (
      window as unknown as {
        jupyterapp: {
          commands: { execute(id: string, args: unknown): Promise<unknown> };
        };
      }
    ).jupyterapp.commands.execute('docmanager:open', { path });
  }, path);
  await expect.poll(() => isReady(page, path), { timeout: 60000 }).toBe(true);
}

/** Waits until the run is no longer active and returns how it ended. */
export async function waitForEnd(
  page: Page,
  path: string,
  timeout = 90000
): Promise<IRunInfo> {
  await expect
    .poll(async () => (await runInfo(page, path)).running, {
      timeout,
      intervals: [250]
    })
    .toBe(false);
  return runInfo(page, path);
}

export interface ISavedNotebook {
  metadata: Record<string, unknown>;
  cells: Array<{
    id?: string;
    cell_type: string;
    source: string | string[];
    metadata?: Record<string, unknown>;
  }>;
}

/**
 * The notebook as saved on the server (the file, not the page's model), read from the server's disk.
 * Not through the contents API: a GET that lands while the server writes a large notebook finds half a
 * file and "recovers" it from the server's backup copy, which breaks the save under way (jupyter_server's
 * atomic writing), so a test polling the file would change what it measures. A file read mid-write is
 * read again until it parses, for up to 10 s.
 */
export async function savedNotebook(
  page: Page,
  notebookPath: string
): Promise<ISavedNotebook> {
  const root = await page.evaluate(() => {
    const data = document.getElementById('jupyter-config-data');
    return (JSON.parse(data?.textContent ?? '{}') as { serverRoot?: string })
      .serverRoot;
  });
  if (!root) {
    throw new Error('savedNotebook: the page does not say its server root');
  }
  const file = path.join(root, notebookPath);
  const deadline = Date.now() + 10000;
  for (;;) {
    try {
      return JSON.parse(fs.readFileSync(file, 'utf-8')) as ISavedNotebook;
    } catch (error) {
      if (Date.now() > deadline) {
        throw new Error(`savedNotebook: ${file} unreadable: ${error}`);
      }
      await new Promise(resolve => setTimeout(resolve, 200));
    }
  }
}

/** The cells of a saved notebook, as `ICellContent`. */
export function savedCells(file: ISavedNotebook): ICellContent[] {
  return file.cells.map(cell => ({
    id: cell.id ?? '',
    type: cell.cell_type,
    source: Array.isArray(cell.source) ? cell.source.join('') : cell.source
  }));
}

/** The run state in a saved notebook: its FSM state, phase and task. */
export function runStateIn(
  file: ISavedNotebook
): { state: string; phase: string; task: string } | null {
  const saved = file.metadata[RUN_STATE_KEY] as
    | {
        format?: string;
        fsm?: { state?: string };
        phase?: string;
        task?: string;
      }
    | undefined;
  if (!saved || saved.format !== 'notebook-bcc-run') {
    return null;
  }
  return {
    state: saved.fsm?.state ?? '',
    phase: saved.phase ?? '',
    task: saved.task ?? ''
  };
}

/** The run state saved in the notebook file. */
export async function savedRun(
  page: Page,
  path: string
): Promise<{ state: string; phase: string; task: string } | null> {
  return runStateIn(await savedNotebook(page, path));
}

/** The cells of `before` still in `after` with the same id, type and source. */
export function kept(
  before: ICellContent[],
  after: ICellContent[]
): { kept: number; of: number; missing: ICellContent[] } {
  const now = new Map(after.map(c => [c.id, c]));
  const missing = before.filter(c => {
    const found = now.get(c.id);
    return found?.type !== c.type || found?.source !== c.source;
  });
  return { kept: before.length - missing.length, of: before.length, missing };
}

/** Cells that repeat another's provenance: a behavior's action applied twice. */
export function duplicates(all: ICellInfo[]): string[] {
  const seen = new Set<string>();
  const twice: string[] = [];
  for (const cell of all) {
    if (cell.madeBy !== null && cell.role !== 'title') {
      if (seen.has(cell.madeBy)) {
        twice.push(cell.madeBy);
      }
      seen.add(cell.madeBy);
    }
  }
  return twice;
}

export function warningList(page: Page) {
  return panel(page).locator('.jp-bcc-warning-list');
}

/** Opens the (collapsed) effects section of the sidebar and returns its list. */
export async function effectList(page: Page) {
  const section = panel(page).locator('details.jp-bcc-effects');
  await expect(section).toBeVisible({ timeout: 30000 });
  if ((await section.getAttribute('open')) === null) {
    await section.locator('summary').click();
  }
  return section.locator('.jp-bcc-effect-list');
}
