/**
 * The run at its fault, read two ways: live from the notebook's runner in the page (its state, step
 * and behavior), and from the notebook file on the server's disk. A fault the run handles by itself (a
 * line skipped with a warning, a fallback, a cut) does not stop the run: `pauseAtFault` pauses it at the
 * fault, as a user who reads the warning would, so that every case can read its file while the run is
 * stopped there and before anything later is saved.
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { NotebookPanel } from '@jupyterlab/notebook';
import type { Page } from '@playwright/test';
import type { IWorkflowRunner } from '../../../src/engine/types';
import type { IWorkflowRunnerRegistry } from '../../../src/tokens';
import { ISavedNotebook, RUN_STATE_KEY } from '../helpers';

/** Where the run stands, as its runner says. */
export interface ILiveRun {
  state: string;
  running: boolean;
  paused: boolean;
  stageId: string | null;
  stepId: string | null;
  behaviorId: string | null;
}

/** Where the saved run stands, as the notebook file says. */
export interface ISavedPlace {
  task: string | null;
  state: string;
  phase: string;
  stageId: string | null;
  stepId: string | null;
  behaviorId: string | null;
}

/** What pauses the run: a warning, a new cell, or an effect whose text matches, or a behavior count. */
export type FaultTrigger =
  | { warning: RegExp }
  | { cell: RegExp }
  | { effect: RegExp }
  | { behaviors: number };

/** The moment the trigger fired: what matched and where the run was. */
export interface ITriggered {
  detail: string;
  stepId: string | null;
  behaviorId: string | null;
}

interface IPageSide {
  jupyterapp: JupyterFrontEnd;
  galata: { getPlugin(id: string): Promise<unknown> };
  bccFaultStops?: Record<string, ITriggered>;
}

export async function liveRun(page: Page, path: string): Promise<ILiveRun> {
  return page.evaluate(async path => {
    const w = window as unknown as IPageSide;
    const panel = [...w.jupyterapp.shell.widgets('main')].find(
      widget => (widget as NotebookPanel).context?.path === path
    ) as NotebookPanel | undefined;
    if (!panel) {
      throw new Error(`no open notebook ${path}`);
    }
    const registry = (await w.galata.getPlugin(
      'jupyterlab-notebook-bcc:plugin'
    )) as IWorkflowRunnerRegistry;
    const s = (await registry.whenReady(panel)).snapshot;
    return {
      state: s.state,
      running: s.running,
      paused: s.paused,
      stageId: s.stage.id,
      stepId: s.step.id,
      behaviorId: s.behavior.id
    };
  }, path);
}

/**
 * Pauses the run of `path` the moment `trigger` fires (installed before the run starts). The pause
 * takes effect at the run's next action boundary, in the behavior of the fault or right after it.
 */
export async function pauseAtFault(
  page: Page,
  path: string,
  trigger: FaultTrigger
): Promise<void> {
  const serial =
    'behaviors' in trigger
      ? { kind: 'behaviors', count: trigger.behaviors }
      : 'warning' in trigger
        ? { kind: 'warning', source: trigger.warning.source }
        : 'cell' in trigger
          ? { kind: 'cell', source: trigger.cell.source }
          : { kind: 'effect', source: trigger.effect.source };
  await page.evaluate(
    async ({ path, serial }) => {
      const w = window as unknown as IPageSide;
      const stops = (w.bccFaultStops = w.bccFaultStops ?? {});
      const panel = [...w.jupyterapp.shell.widgets('main')].find(
        widget => (widget as NotebookPanel).context?.path === path
      ) as NotebookPanel;
      const registry = (await w.galata.getPlugin(
        'jupyterlab-notebook-bcc:plugin'
      )) as IWorkflowRunnerRegistry;
      const runner: IWorkflowRunner = await registry.whenReady(panel);
      const pattern =
        'source' in serial ? new RegExp(serial.source as string) : null;
      const disconnects: Array<() => void> = [];
      const fire = (detail: string) => {
        if (path in stops) {
          return;
        }
        const s = runner.snapshot;
        stops[path] = { detail, stepId: s.step.id, behaviorId: s.behavior.id };
        disconnects.forEach(disconnect => disconnect());
        runner.pause();
      };
      const on = <T>(
        signal: {
          connect(slot: (sender: unknown, value: T) => void): boolean;
          disconnect(slot: (sender: unknown, value: T) => void): boolean;
        },
        slot: (value: T) => void
      ) => {
        const wrapped = (_: unknown, value: T) => slot(value);
        signal.connect(wrapped);
        disconnects.push(() => signal.disconnect(wrapped));
      };
      switch (serial.kind) {
        case 'behaviors':
          on(runner.progressChanged, snapshot => {
            if (snapshot.behaviorsRun >= (serial.count as number)) {
              fire(`${snapshot.behaviorsRun} behaviors run`);
            }
          });
          break;
        case 'warning':
          on(runner.warning, warning => {
            if (pattern!.test(warning.message)) {
              fire(warning.message);
            }
          });
          break;
        case 'cell':
          on(runner.cellAdded, added => {
            const cell = panel.content.model?.sharedModel.cells.find(
              c => c.getId() === added.cellId
            );
            const source = cell?.getSource() ?? '';
            if (pattern!.test(source)) {
              fire(source);
            }
          });
          break;
        case 'effect':
          on(runner.effectsChanged, effects => {
            const found = effects.current.find(e => pattern!.test(e));
            if (found !== undefined) {
              fire(found);
            }
          });
          break;
      }
    },
    { path, serial }
  );
}

/**
 * Forgets what fired `pauseAtFault` for `path`, so that a run with several faults can be paused at the
 * next one (`pauseAtFault` again) once it has been read at this one.
 */
export async function forgetFault(page: Page, path: string): Promise<void> {
  await page.evaluate(path => {
    const stops = (window as unknown as IPageSide).bccFaultStops;
    if (stops) {
      delete stops[path];
    }
  }, path);
}

/** What fired `pauseAtFault` for `path`, or null while it has not fired. */
export async function triggered(
  page: Page,
  path: string
): Promise<ITriggered | null> {
  return page.evaluate(
    path => (window as unknown as IPageSide).bccFaultStops?.[path] ?? null,
    path
  );
}

/** The run's place in a saved notebook, or null when it holds no run. */
export function savedPlace(file: ISavedNotebook): ISavedPlace | null {
  const saved = file.metadata[RUN_STATE_KEY] as
    | {
        format?: string;
        task?: string | null;
        phase?: string;
        fsm?: { state?: string };
        progress?: {
          stages?: { current?: string | null };
          steps?: { current?: string | null };
          behaviors?: { current?: string | null };
        };
      }
    | undefined;
  if (!saved || saved.format !== 'notebook-bcc-run') {
    return null;
  }
  return {
    task: saved.task ?? null,
    state: saved.fsm?.state ?? '',
    phase: saved.phase ?? '',
    stageId: saved.progress?.stages?.current ?? null,
    stepId: saved.progress?.steps?.current ?? null,
    behaviorId: saved.progress?.behaviors?.current ?? null
  };
}

/** Pauses or resumes the run of `path` through its runner, as the panel's commands do, without moving focus. */
export async function control(
  page: Page,
  path: string,
  what: 'pause' | 'resume'
): Promise<void> {
  await page.evaluate(
    async ({ path, what }) => {
      const w = window as unknown as IPageSide;
      const panel = [...w.jupyterapp.shell.widgets('main')].find(
        widget => (widget as NotebookPanel).context?.path === path
      ) as NotebookPanel;
      const registry = (await w.galata.getPlugin(
        'jupyterlab-notebook-bcc:plugin'
      )) as IWorkflowRunnerRegistry;
      const runner = await registry.whenReady(panel);
      if (what === 'pause') {
        runner.pause();
      } else {
        runner.resume();
      }
    },
    { path, what }
  );
}

/** Records where the run of `path` stands when its loop ends (stopped, failed or completed). */
export async function recordEnd(page: Page, path: string): Promise<void> {
  await page.evaluate(async path => {
    const w = window as unknown as IPageSide & {
      bccFaultEnds?: Record<string, ILiveRun>;
    };
    const ends = (w.bccFaultEnds = w.bccFaultEnds ?? {});
    const panel = [...w.jupyterapp.shell.widgets('main')].find(
      widget => (widget as NotebookPanel).context?.path === path
    ) as NotebookPanel;
    const registry = (await w.galata.getPlugin(
      'jupyterlab-notebook-bcc:plugin'
    )) as IWorkflowRunnerRegistry;
    const runner = await registry.whenReady(panel);
    runner.finished.connect(() => {
      const s = runner.snapshot;
      ends[path] = {
        state: s.state,
        running: s.running,
        paused: s.paused,
        stageId: s.stage.id,
        stepId: s.step.id,
        behaviorId: s.behavior.id
      };
    });
  }, path);
}

/** Where the run of `path` stood when its loop ended (see `recordEnd`), or null before that. */
export async function endedAt(
  page: Page,
  path: string
): Promise<ILiveRun | null> {
  return page.evaluate(
    path =>
      (window as unknown as { bccFaultEnds?: Record<string, ILiveRun> })
        .bccFaultEnds?.[path] ?? null,
    path
  );
}
