/** Fixtures and a harness for the run loop specs. */
import type { ISignal } from '@lumino/signaling';
import type {
  Action,
  ExecAction,
  PlanningRequestInput,
  PlanningResponse,
  UnknownAction,
  WorkflowStep,
  WorkflowTemplate
} from '../../protocol';
import { registerBuiltinActions } from '../actions/builtins';
import { ActionRegistry, type IActionContext } from '../actions/registry';
import { reported } from '../messages';
import { WorkflowRunner } from '../run/runner';
import { RunNotebook } from '../run/runNotebook';
import { runBegun } from '../run/stepChanges';
import type { CellMapReader } from '../state/cells';
import { latestFailedChecks } from '../state/contracts';
import { type ISavedRunState, RunState } from '../state/runState';
import { op, type RunOp, transaction } from '../state/transaction';
import { isSavedRunState } from '../saved/savedRun';
import { DEFAULT_SETTINGS, IRunSettings } from '../settings';
import {
  FakeNotebookDriver,
  FakePlannerService,
  IFakePlannerScript
} from '../testing';
import { RunTrace } from '../trace';
import type {
  IPlannerService,
  IRunError,
  IRunFinished,
  IRunnerHooks,
  IRunSnapshot,
  IRunWarning,
  IWorkflowRunner
} from '../types';

export type AnyAction = Action | UnknownAction;

export const TEMPLATE: WorkflowTemplate = {
  name: 'Ames',
  stages: [
    {
      id: 's1',
      name: 'Stage 1',
      goal: 'Understand the data',
      steps: [
        { id: 'p1', name: 'Load', goal: 'Load the data' },
        { id: 'p2', name: 'Explore' }
      ]
    },
    { id: 's2', name: 'Stage 2', steps: [{ id: 'q1', name: 'Model' }] }
  ]
};

export const ONE_STEP: WorkflowTemplate = {
  name: 'Small',
  stages: [{ id: 's1', name: 'Stage 1', steps: [{ id: 'p1', name: 'Load' }] }]
};

export function exec(
  codecell_id = 'lastAddedCellId',
  need_output = true
): ExecAction {
  return {
    action: 'exec',
    codecell_id,
    need_output,
    auto_debug: false,
    keep_debug_button_visible: false
  };
}

export function code(content: string, store_id?: string): AnyAction {
  return store_id
    ? { action: 'add', shot_type: 'action', content, store_id }
    : { action: 'add', shot_type: 'action', content };
}

export function text(content: string): AnyAction {
  return { action: 'add', shot_type: 'dialogue', content };
}

export function title(value: string): AnyAction {
  return { action: 'update_title', title: value };
}

export function plan(
  targetAchieved: boolean,
  extra: Partial<PlanningResponse> = {}
): PlanningResponse {
  return { targetAchieved, ...extra };
}

export function withTemplate(
  targetAchieved: boolean,
  template: WorkflowTemplate = ONE_STEP,
  extra: Partial<PlanningResponse> = {}
): PlanningResponse {
  return {
    targetAchieved,
    ...extra,
    context_update: {
      ...extra.context_update,
      workflow_update: { workflowTemplate: template }
    }
  };
}

/** p1, p2, q1 of TEMPLATE: one behavior each (its title, code, exec, text), achieved at its next plan. */
export function threeStepRun(): IFakePlannerScript {
  return {
    planning: [
      withTemplate(false, TEMPLATE),
      plan(true),
      plan(false),
      plan(true),
      plan(false),
      plan(true)
    ],
    generating: [
      [title('First'), code('a = 1'), exec(), text('loaded')],
      [title('Second'), code('b = 2'), exec(), text('explored')],
      [code('c = 3'), exec()]
    ]
  };
}

/** Resolves once `predicate` holds for a value the signal emits (or for `initial`). */
export function when<T>(
  signal: ISignal<IWorkflowRunner, T>,
  predicate: (value: T) => boolean,
  initial?: T
): Promise<T> {
  return new Promise(resolve => {
    if (initial !== undefined && predicate(initial)) {
      resolve(initial);
      return;
    }
    const slot = (_: IWorkflowRunner, value: T) => {
      if (predicate(value)) {
        signal.disconnect(slot);
        resolve(value);
      }
    };
    signal.connect(slot);
  });
}

/** Lets pending promise callbacks run (the stream reader, the loop) without any timing. */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    await new Promise<void>(resolve => setImmediate(resolve));
  }
}

export interface ISetup<C extends IPlannerService = FakePlannerService> {
  driver: FakeNotebookDriver;
  client: C;
  runner: WorkflowRunner;
  settings: IRunSettings;
  warnings: IRunWarning[];
  errors: IRunError[];
  finished: IRunFinished[];
  transitions: string[];
  paused(): Promise<IRunSnapshot>;
}

/** What a runner under test is made of, besides its planner; the defaults when absent. */
export interface ISetupOptions {
  /** Over `DEFAULT_SETTINGS`. */
  settings?: Partial<IRunSettings>;
  hooks?: IRunnerHooks;
  driver?: FakeNotebookDriver;
  /** The trace the runner records (give the same one to the planner service as its observer). */
  trace?: RunTrace;
}

/**
 * A runner over a fake notebook, whose warnings, errors, ends and transitions are gathered. Its planner
 * is a `FakePlannerService` playing `planner` (a script), or `planner` itself (a service of the test's).
 */
export function setup(
  planner: IFakePlannerScript,
  options?: ISetupOptions
): ISetup;
export function setup<C extends IPlannerService>(
  planner: C,
  options?: ISetupOptions
): ISetup<C>;
export function setup(
  planner: IFakePlannerScript | IPlannerService,
  options: ISetupOptions = {}
): ISetup<IPlannerService> {
  const client = isService(planner) ? planner : new FakePlannerService(planner);
  const driver = options.driver ?? new FakeNotebookDriver();
  const settings = { ...DEFAULT_SETTINGS, ...options.settings };
  const runner = new WorkflowRunner({
    driver,
    client,
    settings: () => settings,
    hooks: options.hooks ?? {},
    trace: options.trace
  });
  const s: ISetup<IPlannerService> = {
    driver,
    client,
    runner,
    settings,
    warnings: [],
    errors: [],
    finished: [],
    transitions: [],
    paused: () =>
      when(runner.progressChanged, snap => snap.paused, runner.snapshot)
  };
  runner.warning.connect((_, w) => s.warnings.push(w));
  runner.errorOccurred.connect((_, e) => s.errors.push(e));
  runner.finished.connect((_, f) => s.finished.push(f));
  runner.stateChanged.connect((_, t) =>
    s.transitions.push(`${t.event} -> ${t.to}`)
  );
  return s;
}

function isService(
  planner: IFakePlannerScript | IPlannerService
): planner is IPlannerService {
  return typeof (planner as IPlannerService).planning === 'function';
}

export function saved(driver: FakeNotebookDriver): ISavedRunState {
  if (!isSavedRunState(driver.savedState)) {
    throw new Error('nothing saved');
  }
  return driver.savedState;
}

export function effectsOf(request: PlanningRequestInput | undefined): string[] {
  return request?.observation.context?.effects?.current ?? [];
}

/** A run state of its own, with a fixed clock, changed only by `apply`. */
export function newState(
  options: { now?: () => Date; maxHistoryItems?: number } = {}
): RunState {
  return new RunState({
    now: options.now ?? (() => new Date(0)),
    maxHistoryItems: () => options.maxHistoryItems ?? 50
  });
}

/** `state` after a transaction of `ops`. */
export function applied(state: RunState, ...ops: RunOp[]): RunState {
  state.apply(transaction('test', ops));
  return state;
}

/** A run state as `saved` has it. */
export function restoredState(saved: ISavedRunState): RunState {
  return applied(newState(), op.restore(saved));
}

/** A run state of a new run of `task` at the first step of `template`. */
export function begunState(
  task: string,
  template: WorkflowTemplate | null
): RunState {
  return applied(newState(), ...runBegun({ task }, template, 'plan'));
}

/** The run's notebook over `driver`, writing to `state` (a new one when absent) as the runner would. */
export function runNotebook(
  driver: FakeNotebookDriver,
  options: { state?: RunState; now?: () => Date } = {}
): { notebook: RunNotebook; state: RunState } {
  const state = options.state ?? newState();
  const notebook = new RunNotebook({
    driver,
    cells: state.cells,
    journal: state.rewind,
    now: options.now ?? (() => new Date('2025-05-02T09:00:00Z')),
    cellAdded: () => undefined,
    checkFailure: () => latestFailedChecks(state.contracts),
    dispatch: tx => {
      state.apply(tx);
      return Promise.resolve();
    }
  });
  return { notebook, state };
}

/** The built-in action handlers on a fake notebook, with what they tell the run gathered. */
export interface IActionHarness {
  driver: FakeNotebookDriver;
  registry: ActionRegistry;
  cells: CellMapReader;
  effects: string[];
  /** Effects the handlers moved out of `effects` (`archive_effects`). */
  history: string[];
  warnings: string[];
  pauses: string[];
  workflows: WorkflowTemplate[];
  stepUpdates: [string | null, WorkflowStep[]][];
  endSteps: (string | undefined)[];
  /** What the handlers' `now()` reads. */
  clock: Date;
  run(action: Action | UnknownAction): ReturnType<ActionRegistry['execute']>;
}

export function actionHarness(
  settings: Partial<IRunSettings> = {},
  register: (registry: ActionRegistry) => void = registerBuiltinActions
): IActionHarness {
  const driver = new FakeNotebookDriver();
  const registry = new ActionRegistry();
  register(registry);
  const { notebook, state } = runNotebook(driver, { now: () => h.clock });
  const cells = state.cells;
  const h: IActionHarness = {
    driver,
    registry,
    cells,
    effects: [],
    history: [],
    warnings: [],
    pauses: [],
    workflows: [],
    stepUpdates: [],
    endSteps: [],
    clock: new Date('2025-05-02T09:00:00Z'),
    run: action => registry.execute(action, context(action))
  };
  let index = 0;
  const context = (action: Action | UnknownAction): IActionContext => {
    const provenance = {
      stage_id: 's1',
      step_id: 'p1',
      behavior_id: 'behavior_001',
      action_index: index++,
      action: action.action
    };
    return {
      driver,
      settings: { ...DEFAULT_SETTINGS, ...settings },
      provenance,
      cells,
      effects: {
        add: text => h.effects.push(text),
        archive: () => h.history.push(...h.effects.splice(0))
      },
      signal: new AbortController().signal,
      now: () => h.clock,
      run: {
        ...notebook.writerFor(provenance),
        updateWorkflow: async template => {
          h.workflows.push(template);
          return true;
        },
        replaceStageSteps: async (stageId, steps) => {
          h.stepUpdates.push([stageId, steps]);
          return stageId !== 'unknown';
        },
        endStep: stepId => h.endSteps.push(stepId),
        pause: reason => h.pauses.push(reported(reason).message),
        warn: message => h.warnings.push(reported(message).message)
      }
    };
  };
  return h;
}
