/**
 * The run loop's serialisable state: everything `saveRunState` writes to the notebook and a resumed run
 * reads back; the operations of a transaction; and `RunState.apply`, the one writer of the run, which
 * changes the fields and calls the models' writing methods (each model still writes its own data).
 */
import {
  type BehaviorFeedback,
  type ContextFilter,
  type GeneratingRequestInput,
  type PlanningRequestInput,
  type PlanningUsage,
  PlanningUsageSchema,
  type SectionProgress
} from '../../protocol';
import {
  CellMap,
  type CellMapReader,
  type CellsWrite,
  ICellMapState
} from './cells';
import {
  emptyContracts,
  type IContractsState,
  type IRunOutcome,
  readContractsState,
  runOutcome
} from './contracts';
import type { IKernelVariables } from '../ports/driver';
import {
  type EffectsReader,
  EffectsStore,
  type EffectsWrite,
  IEffectsState
} from './effects';
import {
  type FsmReader,
  FsmTransitionError,
  type IFsmState,
  type IFsmTransition,
  nextState,
  type WorkflowEvent,
  WorkflowStateMachine
} from './fsm';
import {
  type ProgressReader,
  type ProgressWrite,
  WorkflowProgress
} from './progress';
import type { IProgressState } from './progressState';
import {
  IRewindState,
  readRewindState,
  RewindLog,
  type RewindReader,
  type RewindWrite
} from './rewind';
import type { IMessage } from '../messages';
import { describeVariables } from '../variables';

export interface IRunError {
  message: string;
  text?: IMessage;
  /** The request that failed, or `engine` for a failure of the loop itself. */
  endpoint: 'planning' | 'generating' | 'engine';
  /** `retry()` re-sends the failed request (or re-runs the failed part of the loop). */
  retryable: boolean;
  /** Variables the planner said it lacks: set them with `retry({ variables })`. */
  missingVariables?: string[];
  /** What the planner's error asks the user to do (`PlannerError.action`: `open-llm-settings`). */
  action?: string;
}

export interface IBehaviorTiming {
  behaviorId: string;
  /** The behavior's number within its step, from 1. */
  iteration: number;
  stageId: string | null;
  stepId: string | null;
  /** ISO 8601. */
  startedAt: string;
  endedAt: string | null;
  durationMs: number | null;
}

export type Phase = 'plan' | 'generate' | 'done';

/**
 * The run variables the user's task sets: every request's `context.variables` keeps them, whatever the
 * kernel holds or the context filter names (docs/protocol.md#observation).
 */
export const TASK_VARIABLES = [
  'problem_description',
  'csv_file_path',
  'data_files',
  'llm_model',
  'target_column'
] as const;

export interface IOpenBehavior {
  id: string;
  executed: number;
  succeeded: number;
  sectionsAdded: number;
  lastResult: string;
  /** Index of the next action within the behavior. */
  actionIndex: number;
  /** The previous behavior's effects have been moved to history. */
  rotated: boolean;
}

export interface ILegacyContext {
  toDoList?: string[];
  section_progress?: SectionProgress;
}

/** What `saveRunState` stores in the notebook; read back by `resumeFromSaved`. */
export interface ISavedRunState {
  format: 'notebook-bcc-run';
  version: 1;
  savedAt: string;
  task: string | null;
  dataFiles: string[];
  phase: Phase;
  pendingFeedback: BehaviorFeedback | null;
  openBehavior: IOpenBehavior | null;
  endStepRequested: boolean;
  fsm: IFsmState;
  progress: IProgressState;
  effects: IEffectsState;
  /** Variables set by the planner (`context_update.variables`) and the task. */
  contextVariables: Record<string, unknown>;
  /** Names among them the user set ("Set Variables…"): their values win over the kernel's. */
  userVariables?: string[];
  /** The last kernel variables seen, as names, types and shapes only: values are never saved. */
  kernelVariableTypes?: Record<string, string>;
  /** Older saves: the last kernel variables' values, read as their types and never written again. */
  kernelVariables?: Record<string, unknown>;
  cells: ICellMapState;
  filter: ContextFilter | null;
  legacy: ILegacyContext;
  timings: IBehaviorTiming[];
  stepMode: boolean;
  /** What the planner service keeps between requests (`IPlannerService.saveState`), if anything. */
  planner?: unknown;
  /** The dialect the planner spoke, once known. */
  plannerDialect?: string | null;
  /** The planner has sent a template in this run (a template saved by an earlier run does not count). */
  templateFromPlanner?: boolean;
  /** Checkpoints and rewinds (docs/architecture.md#rewind); absent in older saves. */
  rewind?: IRewindState;
  /** What an LLM planner said the run spent, as of its latest answer (`PlanningResponse.usage`). */
  usage?: PlanningUsage;
  /** The run's contract, the current step's contracts and the latest checks in the kernel. */
  contracts?: IContractsState;
  /** How the run ended, in words too (`summary`): written once the workflow is complete. */
  outcome?: IRunOutcome;
}

export type RetryRequest =
  | { endpoint: 'planning'; body: PlanningRequestInput }
  | { endpoint: 'generating'; body: GeneratingRequestInput };

/** The fields of the run state a transaction sets (`op.set`). */
type ChangedFields =
  | 'task'
  | 'dataFiles'
  | 'stepMode'
  | 'contextVariables'
  | 'userVariables'
  | 'legacy'
  | 'filter'
  | 'phase'
  | 'pendingFeedback'
  | 'behavior'
  | 'endStepRequested'
  | 'timings'
  | 'planner'
  | 'plannerDialect'
  | 'templateFromPlanner'
  | 'usage'
  | 'contracts'
  | 'variablesDirty'
  | 'codeRanSinceCollection'
  | 'behaviorsRun'
  | 'planningFailures'
  | 'retry'
  | 'error'
  | 'variablesBeforePause'
  | 'kernelVariables'
  | 'kernelVariableTypes';

/** What a transaction sets of the run state's fields. */
export type RunChanges = Partial<Pick<RunState, ChangedFields>>;

// Transactions (built with `op` in transaction.ts): the operations `apply` knows, as a discriminated union.

/** The arguments of method `K` of `T`. */
export type Args<T, K extends keyof T> = T[K] extends (
  ...args: infer A
) => unknown
  ? A
  : never;

/** The arguments of each of a model's writing methods, by name. */
type ArgsOf<T, K extends keyof T> = { [P in K]: Args<T, P> };

/** A call of one of writing methods `K` (a union of names) with its arguments (`A`), as data. */
export type Call<Model extends string, A, K extends keyof A> = {
  [P in K]: { readonly model: Model; readonly op: P; readonly args: A[P] };
}[K];

export type ProgressArgs = ArgsOf<WorkflowProgress, ProgressWrite>;
export type EffectsArgs = ArgsOf<EffectsStore, EffectsWrite>;
export type CellsArgs = ArgsOf<CellMap, CellsWrite>;
export type JournalArgs = ArgsOf<RewindLog, RewindWrite>;

/** Unions discriminated by `model` and `op`. */
export type ProgressOp = Call<'progress', ProgressArgs, ProgressWrite>;
export type EffectsOp = Call<'effects', EffectsArgs, EffectsWrite>;
export type CellsOp = Call<'cells', CellsArgs, CellsWrite>;
export type JournalOp = Call<'journal', JournalArgs, RewindWrite>;

/** An event of the state machine; with `ifAllowed`, skipped when the machine does not allow it then. */
export interface IFsmOp {
  readonly model: 'fsm';
  readonly event: WorkflowEvent;
  readonly ifAllowed?: boolean;
}

/** The run's own fields, the whole state emptied, or the whole state as a saved run has it. */
export type RunFieldsOp =
  | { readonly model: 'run'; readonly op: 'set'; readonly fields: RunChanges }
  | { readonly model: 'run'; readonly op: 'reset' }
  | {
      readonly model: 'run';
      readonly op: 'restore';
      readonly saved: ISavedRunState;
    };

export type RunOp =
  RunFieldsOp | IFsmOp | ProgressOp | EffectsOp | CellsOp | JournalOp;

export interface IRunTransaction {
  /** The part of the loop and the event that made it (`phases.closeBehavior`), as the record shows it. */
  readonly origin: string;
  /** Applied in order; a state-machine event the machine would refuse rejects the whole transaction first. */
  readonly ops: readonly RunOp[];
  /** What the run shows changed: `progressChanged` is emitted once, after the transaction and its save. */
  readonly show?: boolean;
  /** Save the run after it: `checkpoint` (the run goes on: may be written later) or `now`. */
  readonly save?: 'checkpoint' | 'now';
}

/** The run state as the parts of the loop see it: its fields and models, read only. */
export type RunStateView = Readonly<
  Omit<RunState, 'apply' | 'fsm' | 'progress' | 'effects' | 'cells' | 'rewind'>
> & {
  readonly fsm: FsmReader;
  readonly progress: ProgressReader;
  readonly effects: EffectsReader;
  readonly cells: CellMapReader;
  readonly rewind: RewindReader;
};

/** What applying a transaction did that the runner tells: the transitions, and whether effects changed. */
export interface IAppliedTransaction {
  transitions: IFsmTransition[];
  effectsChanged: boolean;
}

/**
 * The state of one notebook's run. The models are long-lived; a `reset` empties them in place. Only
 * `apply` changes it, one transaction at a time (state/transaction.ts); the parts of the loop read it
 * as a `RunStateView`.
 */
export class RunState {
  constructor(options: { now: () => Date; maxHistoryItems: () => number }) {
    this._now = options.now;
    this.fsm = new WorkflowStateMachine({ now: options.now });
    this.progress = new WorkflowProgress(options.now);
    this.effects = new EffectsStore(options.maxHistoryItems);
  }

  readonly fsm: WorkflowStateMachine;
  readonly progress: WorkflowProgress;
  readonly effects: EffectsStore;
  readonly cells = new CellMap();
  readonly rewind = new RewindLog();

  task: string | null = null;
  dataFiles: string[] = [];
  contextVariables: Record<string, unknown> = {};
  /** Names of context variables the user set: like the task, a kernel variable never hides them. */
  userVariables: string[] = [];
  /** The last values collected, sent to the planner; kept in memory only. */
  kernelVariables: Record<string, unknown> = {};
  kernelVariableTypes: Record<string, string> = {};
  legacy: ILegacyContext = {};
  filter: ContextFilter | null = null;
  phase: Phase = 'plan';
  pendingFeedback: BehaviorFeedback | null = null;
  behavior: IOpenBehavior | null = null;
  endStepRequested = false;
  timings: IBehaviorTiming[] = [];
  stepMode = false;
  planner: unknown = undefined;
  plannerDialect: string | null = null;
  templateFromPlanner = false;
  /** The planner's latest `usage`: tokens spent are spent, so a rewind keeps it. */
  usage: PlanningUsage | null = null;
  /** The run's contract and the checks in the kernel (docs/protocol.md#output-contracts). */
  contracts: IContractsState = emptyContracts();

  // Not saved: they describe this session's loop, not the run.
  variablesDirty = true;
  /** The run executed code since the variables were last collected (in interactive mode, approved code). */
  codeRanSinceCollection = false;
  behaviorsRun = 0;
  planningFailures = 0;
  retry: RetryRequest | null = null;
  error: IRunError | null = null;
  /** The kernel's variables as last seen before a pause, until the first collection after it. */
  variablesBeforePause: string[] | null = null;

  /** A run state as `saved` has it: a saved run shown, not resumed. */
  static fromSaved(saved: ISavedRunState): RunState {
    const state = new RunState({
      now: () => new Date(),
      maxHistoryItems: () => saved.effects.history.length
    });
    state._restore(saved);
    return state;
  }

  /**
   * Applies `transaction`, its operations in order. A state-machine event the machine would refuse
   * (and is not `ifAllowed`) rejects the transaction before anything changes.
   */
  apply(transaction: IRunTransaction): IAppliedTransaction {
    this._check(transaction.ops);
    const applied: IAppliedTransaction = {
      transitions: [],
      effectsChanged: false
    };
    for (const change of transaction.ops) {
      switch (change.model) {
        case 'run':
          if (change.op === 'set') {
            Object.assign(this, change.fields);
          } else if (change.op === 'reset') {
            this._reset();
          } else {
            this._restore(change.saved);
          }
          break;
        case 'fsm':
          if (!change.ifAllowed || this.fsm.can(change.event)) {
            applied.transitions.push(this.fsm.dispatch(change.event));
          }
          break;
        case 'progress':
          call(this.progress, change);
          break;
        case 'effects':
          call(this.effects, change);
          applied.effectsChanged = true;
          break;
        case 'cells':
          call(this.cells, change);
          break;
        case 'journal':
          call(this.rewind, change);
          break;
      }
    }
    return applied;
  }

  /** Throws `FsmTransitionError` when an event of `ops` would be refused where it comes. */
  private _check(ops: readonly RunOp[]): void {
    let state = this.fsm.state;
    let returnTo = this.fsm.returnTo;
    for (const change of ops) {
      if (change.model === 'run' && change.op !== 'set') {
        const fsm =
          change.op === 'reset'
            ? { state: 'IDLE' as const, returnTo: null }
            : change.saved.fsm;
        state = fsm.state;
        returnTo = fsm.returnTo;
      } else if (change.model === 'fsm') {
        const next = nextState(state, returnTo, change.event);
        if (next === null && !change.ifAllowed) {
          throw new FsmTransitionError(state, change.event);
        }
        if (next !== null) {
          state = next.to;
          returnTo = next.returnTo;
        }
      }
    }
  }

  private _reset(): void {
    this.fsm.restore({ state: 'IDLE', returnTo: null, history: [] });
    this.progress.reset();
    this.effects.restore({ current: [], history: [] });
    this.cells.clear();
    this.rewind.clear();
    this.task = null;
    this.dataFiles = [];
    this.contextVariables = {};
    this.userVariables = [];
    this.kernelVariables = {};
    this.kernelVariableTypes = {};
    this.legacy = {};
    this.filter = null;
    this.phase = 'plan';
    this.pendingFeedback = null;
    this.behavior = null;
    this.endStepRequested = false;
    this.timings = [];
    this.stepMode = false;
    this.planner = undefined;
    this.plannerDialect = null;
    this.templateFromPlanner = false;
    this.usage = null;
    this.contracts = emptyContracts();
    this.variablesDirty = true;
    this.codeRanSinceCollection = false;
    this.behaviorsRun = 0;
    this.planningFailures = 0;
    this.retry = null;
    this.error = null;
    this.variablesBeforePause = null;
  }

  private _restore(saved: ISavedRunState): void {
    this.task = saved.task;
    this.dataFiles = [...saved.dataFiles];
    this.phase = saved.phase;
    this.pendingFeedback = saved.pendingFeedback;
    this.behavior = saved.openBehavior ? { ...saved.openBehavior } : null;
    this.endStepRequested = saved.endStepRequested;
    this.fsm.restore(saved.fsm);
    this.progress.restore(saved.progress);
    this.effects.restore(saved.effects);
    this.contextVariables = { ...saved.contextVariables };
    this.userVariables = [...(saved.userVariables ?? [])];
    this.kernelVariableTypes = saved.kernelVariableTypes
      ? { ...saved.kernelVariableTypes }
      : describeVariables(saved.kernelVariables ?? {});
    // Until the kernel is asked again (on resume), only the types are known.
    this.kernelVariables = { ...this.kernelVariableTypes };
    this.cells.restore(saved.cells);
    const rewind = readRewindState(saved.rewind);
    if (rewind) {
      this.rewind.restore(rewind);
      this.effects.setPosition(rewind.effects);
    } else {
      this.rewind.clear();
    }
    this.filter = saved.filter;
    this.legacy = { ...saved.legacy };
    this.timings = saved.timings.map(t => ({ ...t }));
    this.stepMode = saved.stepMode;
    this.planner = saved.planner;
    this.plannerDialect = saved.plannerDialect ?? null;
    this.templateFromPlanner =
      saved.templateFromPlanner ?? saved.progress.template !== null;
    // Only shown, never needed to resume: a usage that cannot be read is left out, not a problem.
    const usage = PlanningUsageSchema.safeParse(saved.usage);
    this.usage = saved.usage !== undefined && usage.success ? usage.data : null;
    this.contracts = readContractsState(saved.contracts);
  }

  toJSON(): ISavedRunState {
    const saved: ISavedRunState = {
      format: 'notebook-bcc-run',
      version: 1,
      savedAt: this._now().toISOString(),
      task: this.task,
      dataFiles: [...this.dataFiles],
      phase: this.phase,
      pendingFeedback: this.pendingFeedback,
      openBehavior: this.behavior ? { ...this.behavior } : null,
      endStepRequested: this.endStepRequested,
      fsm: this.fsm.toJSON(),
      progress: this.progress.toJSON(),
      effects: this.effects.toJSON(),
      contextVariables: { ...this.contextVariables },
      userVariables: [...this.userVariables],
      kernelVariableTypes: { ...this.kernelVariableTypes },
      cells: this.cells.toJSON(),
      filter: this.filter,
      legacy: { ...this.legacy },
      timings: this.timings.map(t => ({ ...t })),
      stepMode: this.stepMode,
      templateFromPlanner: this.templateFromPlanner,
      rewind: this.rewind.toJSON(this.effects.position)
    };
    if (this.planner !== undefined) {
      saved.planner = this.planner;
    }
    if (this.plannerDialect !== null) {
      saved.plannerDialect = this.plannerDialect;
    }
    if (this.usage !== null) {
      saved.usage = this.usage;
    }
    const { run, step, checks } = this.contracts;
    if (run !== null || step !== null || Object.keys(checks).length > 0) {
      saved.contracts = this.contracts;
    }
    if (this.fsm.state === 'WORKFLOW_COMPLETED') {
      saved.outcome = runOutcome(saved.progress, this.contracts);
    }
    return saved;
  }

  /** The task's variables and those the user set, as the run holds them (the planner may have updated them). */
  taskVariables(): Record<string, unknown> {
    const task: Record<string, unknown> = {};
    for (const name of [...TASK_VARIABLES, ...this.userVariables]) {
      if (name in this.contextVariables) {
        task[name] = this.contextVariables[name];
      }
    }
    return task;
  }

  /** The kernel variables' names, for outputs tracking. */
  presentVariables(): string[] {
    return Object.keys(this.kernelVariableTypes);
  }

  private readonly _now: () => Date;
}

/** New values from the kernel, as the run keeps them: the values in memory, their types saved. */
export function kernelVariableChanges(
  collected: IKernelVariables
): Required<Pick<RunChanges, 'kernelVariables' | 'kernelVariableTypes'>> {
  return {
    kernelVariables: { ...collected.values },
    kernelVariableTypes: {
      ...describeVariables(collected.values, collected.types),
      ...collected.types
    }
  };
}

/** One of a model's writing methods called with its arguments, as `op` describes it. */
function call<T, O extends { op: keyof T; args: readonly unknown[] }>(
  model: T,
  change: O
): void {
  Reflect.apply(model[change.op] as () => unknown, model, change.args);
}
