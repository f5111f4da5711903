/**
 * What the fault tests share: planners of their own (the reference planner with fault flags, or a
 * replayed script) on free ports, the extension pointed at them through the settings registry, a probe
 * in the page that reads a notebook's runner, cells and saved state, and the table of outcomes.
 */
import { expect, IJupyterLabPageFixture } from '@jupyterlab/galata';
import type { Page } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';
import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { NotebookPanel } from '@jupyterlab/notebook';
import { IPlannerProcess, startPlanner } from '../../../bench/src/processes';
import type {
  IRunFinished,
  IRunSnapshot,
  IWorkflowRunner
} from '../../../src/engine/types';
import type { IWorkflowRunnerRegistry } from '../../../src/tokens';
import { command } from '../helpers';

export const PLUGIN = 'jupyterlab-notebook-bcc:plugin';
export const SIDEBAR = '#jp-bcc-sidebar';
export const RUN_STATE_KEY = 'notebook_bcc_run';
export const HOUSING = path.resolve(
  __dirname,
  '../../../demo/data/housing.csv'
);

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

export async function stopPlanners(): Promise<void> {
  await Promise.all(planners.splice(0).map(p => p.stop()));
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

export interface ICellInfo {
  id: string;
  type: string;
  source: string;
  role: string | null;
  /** Characters of text in the cell's outputs. */
  outputChars: number;
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

/** Functions the probe puts on `window.bccProbe` (see `installProbe`). */
interface IProbe {
  cells(path: string): ICellInfo[];
  run(path: string): Promise<IRunInfo>;
  /** Requests the runner's client sent (from the run trace): endpoint and body length. */
  requests(path: string): Promise<Array<{ endpoint: string; chars: number }>>;
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
        found.warning.connect((_, warning) =>
          record.warnings.push(warning.message)
        );
        found.finished.connect(
          (_, finished) => (record.finished = { ...finished })
        );
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
            { role?: string } | undefined;
          return {
            id: cell.getId(),
            type: cell.cell_type,
            source: cell.getSource(),
            role: meta?.role ?? null,
            outputChars:
              cell.cell_type === 'code'
                ? textLength((cell.toJSON() as { outputs?: unknown[] }).outputs)
                : 0
          };
        }),
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

export async function cells(page: Page, path: string): Promise<ICellInfo[]> {
  return page.evaluate(
    path => (window as unknown as { bccProbe: IProbe }).bccProbe.cells(path),
    path
  );
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

/** Sets the extension's settings through the settings registry (galata keeps them in memory). */
export async function configure(
  page: Page,
  values: Record<string, string | number | boolean>
): Promise<void> {
  await page.evaluate(
    async ({ plugin, values }) => {
      const w = window as unknown as {
        galata: { getPlugin(id: string): Promise<unknown> };
      };
      const registry = (await w.galata.getPlugin(
        '@jupyterlab/apputils-extension:settings'
      )) as {
        set(plugin: string, key: string, value: unknown): Promise<void>;
      };
      for (const [key, value] of Object.entries(values)) {
        await registry.set(plugin, key, value);
      }
    },
    { plugin: PLUGIN, values }
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

/** A new notebook `name` in the test's directory, open, with its runner ready; returns its path. */
export async function openNewNotebook(
  page: IJupyterLabPageFixture,
  tmpPath: string,
  name: string
): Promise<string> {
  await page.notebook.createNew(name);
  const path = `${tmpPath}/${name}`;
  await expect.poll(() => isReady(page, path), { timeout: 60000 }).toBe(true);
  await command(page, 'notebook-bcc:open');
  await expect(page.locator(SIDEBAR)).toBeVisible();
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

/** Starts a run with the extension's command (no dialog), on the notebook at `path`. */
export async function startRun(
  page: Page,
  path: string,
  task: string,
  dataFiles: string[] = ['housing.csv']
): Promise<void> {
  await page.evaluate(
    async ({ path, task, dataFiles }) => {
      const w = window as unknown as {
        jupyterapp: {
          shell: {
            widgets(
              area: string
            ): Iterable<{ id: string; context?: { path: string } }>;
          };
          commands: { execute(id: string, args: unknown): Promise<unknown> };
        };
      };
      let id = '';
      for (const widget of w.jupyterapp.shell.widgets('main')) {
        if (widget.context?.path === path) {
          id = widget.id;
        }
      }
      await w.jupyterapp.commands.execute('notebook-bcc:run', {
        notebook: id,
        task,
        dataFiles
      });
    },
    { path, task, dataFiles }
  );
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

/** The notebook as saved on the server (the file, not the page's model). */
export async function savedNotebook(
  page: Page,
  path: string
): Promise<{
  metadata: Record<string, unknown>;
  cells: Array<{ id?: string; source: string | string[] }>;
}> {
  const response = await page.request.get(
    `/api/contents/${encodeURI(path)}?content=1&type=notebook`
  );
  expect(response.ok()).toBe(true);
  const model = (await response.json()) as {
    content: {
      metadata: Record<string, unknown>;
      cells: Array<{ id?: string; source: string | string[] }>;
    };
  };
  return model.content;
}

/** The run state saved in the notebook file: its FSM state and phase. */
export async function savedRun(
  page: Page,
  path: string
): Promise<{ state: string; phase: string; task: string } | null> {
  const saved = (await savedNotebook(page, path)).metadata[RUN_STATE_KEY] as
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

/** Ids of `before` still present (same id) in `after`. */
export function kept(
  before: ICellInfo[],
  after: ICellInfo[]
): { kept: number; of: number; missing: ICellInfo[] } {
  const ids = new Set(after.map(c => c.id));
  const missing = before.filter(c => !ids.has(c.id));
  return { kept: before.length - missing.length, of: before.length, missing };
}

export function sidebar(page: Page) {
  return page.locator(SIDEBAR);
}

export function stateLine(page: Page) {
  return page.locator(`${SIDEBAR} .jp-bcc-state`);
}

export function warningList(page: Page) {
  return page.locator(`${SIDEBAR} .jp-bcc-warning-list`);
}

/** Opens the (collapsed) effects section of the sidebar and returns its list. */
export async function effectList(page: Page) {
  const section = page.locator(`${SIDEBAR} details.jp-bcc-effects`);
  await expect(section).toBeVisible({ timeout: 30000 });
  if ((await section.getAttribute('open')) === null) {
    await section.locator('summary').click();
  }
  return section.locator('.jp-bcc-effect-list');
}

// ---------------------------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------------------------

export interface IFaultRow {
  case: string;
  outcome: string;
  cellsKept: string;
  resumed: string;
}

/**
 * Rows of this run of the suite, kept in a file of the output directory (ui-tests/test-results): a
 * failed test restarts the worker, and the rows must outlive it. One file per run (the runner's pid).
 */
function rowsFile(outputDir: string): string {
  return path.join(outputDir, `faults-rows-${process.ppid}.jsonl`);
}

export function tableFile(outputDir: string): string {
  return path.join(outputDir, 'faults-table.txt');
}

export function recordRow(outputDir: string, row: IFaultRow): void {
  fs.mkdirSync(outputDir, { recursive: true });
  fs.appendFileSync(rowsFile(outputDir), JSON.stringify(row) + '\n');
}

export function readRows(outputDir: string): IFaultRow[] {
  const file = rowsFile(outputDir);
  if (!fs.existsSync(file)) {
    return [];
  }
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(line => line.trim())
    .map(line => JSON.parse(line) as IFaultRow);
}

export function formatTable(rows: IFaultRow[]): string {
  const header: IFaultRow = {
    case: 'case',
    outcome: 'outcome',
    cellsKept: 'cells kept',
    resumed: 'resumed'
  };
  const keys: Array<keyof IFaultRow> = [
    'case',
    'outcome',
    'cellsKept',
    'resumed'
  ];
  const widths = keys.map(k =>
    Math.max(...[header, ...rows].map(r => r[k].length))
  );
  const line = (r: IFaultRow) =>
    keys.map((k, i) => r[k].padEnd(widths[i])).join(' | ');
  return [
    line(header),
    widths.map(w => '-'.repeat(w)).join('-|-'),
    ...rows.map(line)
  ].join('\n');
}

/** Writes the table of this run's rows to faults-table.txt and returns it. */
export function writeTable(outputDir: string): string {
  const table = formatTable(readRows(outputDir));
  fs.mkdirSync(outputDir, { recursive: true });
  fs.writeFileSync(tableFile(outputDir), table + '\n');
  return table;
}
