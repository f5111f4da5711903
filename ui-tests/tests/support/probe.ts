/**
 * A probe in the page (`installProbe`) that reads a notebook's runner, cells and run moments, and what
 * is built on it: opening notebooks with their runner, waiting for a run's end.
 */
import { expect, IJupyterLabPageFixture } from '@jupyterlab/galata';
import type { Page } from '@playwright/test';
import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { NotebookPanel } from '@jupyterlab/notebook';
import type {
  IRunFinished,
  IRunSnapshot,
  IWorkflowRunner
} from '../../../src/engine/types';
import type { IWorkflowRunnerRegistry } from '../../../src/tokens';

import { newNotebook } from './notebook';

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
