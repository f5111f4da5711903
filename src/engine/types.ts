/**
 * The public surface of the run loop: what views, commands and other extensions code against.
 */
import type { ISignal } from '@lumino/signaling';
import type {
  Action,
  GeneratingEvent,
  GeneratingRequestInput,
  INotebookSummary,
  ObservationInput,
  PlanningRequestInput,
  PlanningResponse,
  PlanningUsage,
  UnknownAction,
  WorkflowTemplate
} from '../protocol';
import type { ApprovalReason } from './approval';
import type { ICodeFlag } from './codeRisk';
import type { CellRole, ICellProvenance } from './ports/driver';
import type { IOutputCheckRecord, IRunOutcome } from './state/contracts';
import type { IEffectsState } from './state/effects';
import type { IFsmTransition, WorkflowState } from './state/fsm';
import type { IMessage, IMessageText } from './messages';
import type { IProgressState } from './state/progressState';
import type { ActionRegistry, IActionResult } from './actions/registry';
import type {
  IRewindOptions,
  IRewindPlan,
  IRewindRecord,
  IRewindView,
  RewindTarget
} from './state/rewind';
import type { RunTrace } from './trace';
import type { IProgressSnapshot } from './state/progressViews';
import type { IBehaviorTiming, IRunError } from './state/runState';

// Data of the run state, defined beside it (state/) and part of this surface.
export type {
  ILocationView,
  IProgressSnapshot,
  IStageView,
  IStepView,
  ItemStatus
} from './state/progressViews';
export type { IBehaviorTiming, IRunError } from './state/runState';

/** What streams one behavior's actions: the adapter of the planner's dialect. */
export interface IGeneratingSource {
  generating(
    request: GeneratingRequestInput,
    options?: { signal?: AbortSignal; notebook?: INotebookSummary }
  ): AsyncIterable<GeneratingEvent>;
}

/**
 * The planner port: what the run loop needs from the planner (the planner connection, or a dialect
 * adapter such as `DslcAdapter` on its own; tests inject fakes). A dialect adapter keeps what its
 * server needs between requests behind the optional members.
 */
export interface IPlannerService extends IGeneratingSource {
  /** The dialect actually spoken, once known (null or absent until then). */
  readonly dialect?: string | null;
  /**
   * True while the service cannot generate before it has answered a planning request (it finds the
   * planner's dialect with one): a step then starts with /planning whatever the start mode.
   */
  readonly needsPlanningFirst?: boolean;
  /** What the service keeps between requests, saved with the run (JSON-serialisable). */
  saveState?(): unknown;
  /** Called with `saveState()`'s value when a saved run is resumed. */
  restoreState?(saved: unknown): void;
  /** A new run starts: forget what the previous one left. */
  resetState?(): void;
  /** Characters the service adds to every request body (e.g. `notebook_id`): the engine leaves room. */
  requestOverhead?(): number;
  /**
   * The length of the body the service would send for `request`, when that is not the request itself
   * (a dialect that sends only part of the observation); null when it is. The engine trims a request
   * only when what is sent would not fit.
   */
  sentSize?(request: { observation: ObservationInput }): number | null;
  planning(
    request: PlanningRequestInput,
    options?: {
      signal?: AbortSignal;
      /** A warning of the planner client during this request (a retry…). */
      onWarning?: (warning: IMessageText) => void;
      /** The notebook now, for a service whose requests describe more of it than the observation. */
      notebook?: INotebookSummary;
    }
  ): Promise<PlanningResponse>;
  /**
   * The adapter detection (or the settings) chose for this run, once it is to be trusted; null
   * before. The engine streams each behavior straight from it, so no layer in between re-reads the
   * events; without one it asks `generating` here.
   */
  adapter?(): IGeneratingSource | null;
}

export interface IStartOptions {
  /** The user's task, sent as `context.variables.problem_description`. */
  task: string;
  /** Data files, sent as `context.variables.data_files`; the first also as `csv_file_path`. */
  dataFiles?: string[];
  /** Pause after every behavior. */
  stepMode?: boolean;
  /** The model an LLM planner should use, sent as `context.variables.llm_model`. */
  llmModel?: string;
  /** The data's column the task is about (picked in the Run dialog), sent as `context.variables.target_column`. */
  targetColumn?: string;
}

export interface IStopOptions {
  /** Also interrupt the kernel (the running cell stops). */
  interruptKernel?: boolean;
  /**
   * Another window runs the notebook now (it took the run lock over): the run ends without writing to
   * the notebook (the thinking cell is left as it is, nothing is saved), so it cannot overwrite that
   * window's work; the driver holds its saves until a run starts here again.
   */
  leaveNotebook?: boolean;
}

/** A cell already in the notebook that a behavior runs, with the code it holds now. */
export interface IExistingCellRun {
  cellId: string;
  /** The cell's place in the notebook (1 for the first cell), as the user finds it. */
  position: number | null;
  source: string;
  /** What that code reaches outside the notebook (`codeRisk.ts`). */
  flags?: ICodeFlag[];
}

/**
 * What the user is asked before a behavior's code runs: in interactive mode, or because its code is
 * flagged (`reason`; docs/protocol.md#decisions, item 17).
 */
export interface IBehaviorApproval {
  behaviorId: string;
  stageId: string | null;
  stepId: string | null;
  /** `flagged`: interactive mode is off, and the code reaches outside the notebook. */
  reason?: ApprovalReason;
  /** The code of every code cell the behavior adds, in order. */
  codeCells: string[];
  /** What each of `codeCells` reaches outside the notebook, in the same order. */
  codeFlags?: ICodeFlag[][];
  /** The cells already in the notebook that the behavior runs (`exec` by id), once each, in order. */
  existingCells: IExistingCellRun[];
  /** The cells it rewrites (`rewrite_cell`), shown as diffs; absent or empty when none. */
  rewrites?: IRewriteReview[];
  /** Every action of the behavior, in order. */
  actions: (Action | UnknownAction)[];
}

/** A cell a behavior rewrites: the code it holds now against the planner's fix (interactive mode). */
export interface IRewriteReview {
  /** The `rewrite_cell` action's index among the behavior's actions (the key of its edit). */
  index: number;
  /** The planner's reference to the cell (`codecell_id`). */
  reference: string;
  /** The cell it names, or null when there is none. */
  cellId: string | null;
  /** That cell's place in the notebook (1 for the first cell), as the user finds it; null without one. */
  position: number | null;
  /** The code it holds now (the code that failed); empty without a cell. */
  before: string;
  /** The fix. */
  after: string;
  /**
   * The fix replaces the cell's code; false when it goes into a new cell below it (the user edited the
   * cell, or it is not the run's) or at the end (it is gone).
   */
  inPlace: boolean;
  /** What the fix reaches outside the notebook (`codeRisk.ts`): held for approval like an added cell's code. */
  flags?: ICodeFlag[];
}

/** Run, with the fixes the user edited in their diffs: action index → the code accepted. */
export interface IEditedApproval {
  decision: 'run';
  edits: Record<number, string>;
}

export type BehaviorDecision = 'run' | 'skip' | 'stop' | IEditedApproval;

export interface IRunnerHooks {
  /**
   * A workflow update (a different template) arrived: resolve true to apply it. Not called when
   * `autoAcceptWorkflowUpdates` is set; absent means accept. The first template of a run is not asked.
   * `signal` is aborted when the run stops meanwhile.
   */
  confirmWorkflowUpdate?(
    template: WorkflowTemplate,
    current: WorkflowTemplate | null,
    signal: AbortSignal
  ): Promise<boolean>;
  /**
   * Interactive mode: called once a behavior's actions are all received, before any is applied, when it
   * adds or runs code. Without it: when its code is flagged, once the rest of it is received, before the
   * flagged code is added or run (`reason: 'flagged'`). `skip` drops what is not applied yet, `stop`
   * stops the run. `signal` is aborted when the run stops meanwhile: the question is then void (close
   * its dialog).
   */
  approveBehavior?(
    request: IBehaviorApproval,
    signal: AbortSignal
  ): Promise<BehaviorDecision>;
}

/** Why a run is paused: the user, step mode, an unusable kernel, or an action's request. */
export interface IPauseReason {
  kind: 'user' | 'step' | 'kernel' | 'action';
  message: string;
  text?: IMessage;
}

export interface IRunWarning {
  message: string;
  text?: IMessage;
  /** Who raised it. */
  source: 'planner' | 'action' | 'filter' | 'engine' | 'hook' | 'driver';
}

export interface IRetryOptions {
  /**
   * Context variables to set before the retry (e.g. the ones the planner said it lacks); the failed
   * request is then made anew with them instead of being re-sent as it was.
   */
  variables?: Record<string, string>;
}

export interface IRunFinished {
  reason: 'completed' | 'stopped' | 'max_steps' | 'error';
  message: string;
  text?: IMessage;
  /** A completed run: its given-up steps and deliverables (docs/protocol.md#output-contracts). */
  outcome?: IRunOutcome;
}

export interface ICellAdded {
  cellId: string;
  kind: 'markdown' | 'code';
  role: CellRole;
  provenance: ICellProvenance;
}

export interface IActionApplied {
  behaviorId: string | null;
  /** Index of the action within its behavior, from 0. */
  index: number;
  action: Action | UnknownAction;
  result: IActionResult;
}

/** Everything a view needs to show the run in plain words. */
export interface IRunSnapshot extends IProgressSnapshot {
  state: WorkflowState;
  /** The loop is active (it may be paused or waiting for the planner), or a rewind is under way. */
  running: boolean;
  /** A rewind is under way: its kernel restart and re-run of the kept cells may take minutes. */
  rewinding?: boolean;
  paused: boolean;
  /** Why the run is paused or pausing (user, step mode, kernel, action), or null. */
  pauseReason: IPauseReason | null;
  /** A pause was asked for and takes effect at the next action boundary. */
  pausing: boolean;
  error: IRunError | null;
  task: string | null;
  /** Behaviors run since the run was started or resumed (what `maxExecutionSteps` counts). */
  behaviorsRun: number;
  maxExecutionSteps: number;
  /** Actions received and not yet applied (e.g. while paused). */
  bufferedActions: number;
  lastTransition: string | null;
  lastTransitionAt: string | null;
  /** The most recent behaviors, oldest first. */
  timings: IBehaviorTiming[];
  /** The progress model's state (goals, focus, completed items), as it is now. */
  progress: IProgressState;
  /** The dialect the planner speaks, once known (`IPlannerService.dialect`). */
  plannerDialect: string | null;
  /** What can be undone or redone, and the latest rewind (docs/architecture.md#rewind). */
  rewind?: IRewindView;
  /** What an LLM planner said it spent, as of its latest answer; absent when it never said. */
  usage?: PlanningUsage;
  /** The latest check in the kernel of each contract's name (docs/protocol.md#output-contracts). */
  outputChecks?: Record<string, IOutputCheckRecord>;
  /**
   * How the run stands: its given-up steps and its deliverables as last checked; absent when it has
   * neither. `ok` false once the workflow completed: it ended with problems.
   */
  outcome?: IRunOutcome;
}

/**
 * The run loop of one notebook. Drive it with `start` / `pause` / `resume` / `step` / `stop` / `retry` /
 * `resumeFromSaved`; watch it through the signals and `snapshot`.
 */
export interface IWorkflowRunner {
  /** Every state machine transition. */
  readonly stateChanged: ISignal<IWorkflowRunner, IFsmTransition>;
  /** Location, outputs, pause or timing changed: the new snapshot. */
  readonly progressChanged: ISignal<IWorkflowRunner, IRunSnapshot>;
  /** Effects (current and history) changed. */
  readonly effectsChanged: ISignal<IWorkflowRunner, IEffectsState>;
  /** Something the user should see but that does not stop the run. */
  readonly warning: ISignal<IWorkflowRunner, IRunWarning>;
  /** The run stopped on an error (state `ERROR`); `retry()` when `retryable`. */
  readonly errorOccurred: ISignal<IWorkflowRunner, IRunError>;
  /** The run added a cell to the notebook. */
  readonly cellAdded: ISignal<IWorkflowRunner, ICellAdded>;
  /** An action was applied (successfully or not). */
  readonly actionApplied: ISignal<IWorkflowRunner, IActionApplied>;
  /** The loop ended: completed, stopped, max steps reached, or error. */
  readonly finished: ISignal<IWorkflowRunner, IRunFinished>;

  readonly snapshot: IRunSnapshot;
  /** The loop is active (including paused), or a rewind is under way: nothing else may start. */
  readonly isRunning: boolean;
  /** Where action handlers are registered; other extensions may add types at run time. */
  readonly registry: ActionRegistry;
  /** Requests and answers of the run, as JSONL via `trace.toJSONL()`. */
  readonly trace: RunTrace;
  /** The current effects. */
  readonly effects: IEffectsState;

  /** Starts a new run; resolves when the loop ends. Rejects if a run is already active. */
  start(options: IStartOptions): Promise<IRunFinished>;
  /** Continues the run saved in the notebook from its current step; null when nothing was saved. */
  resumeFromSaved(): Promise<IRunFinished | null>;
  /** Pauses at the next action boundary (the running action finishes; the stream keeps being read). */
  pause(): void;
  /** Goes on from the next buffered action. */
  resume(): void;
  /** Runs one behavior, then pauses (when paused: resumes for one behavior). */
  step(): void;
  /**
   * Aborts the request in flight, optionally interrupts the kernel; resolves once the state is saved.
   * During a rewind: the re-run of the kept cells ends, and no loop starts after it.
   */
  stop(options?: IStopOptions): Promise<void>;
  /**
   * The live run's state as `saveRunState` would store it, at once: for a notebook that closes before
   * the loop can save; null when no run is live.
   */
  captureRunState(): unknown | null;
  /** After an error: re-sends the failed request; resolves when the loop ends again. */
  retry(options?: IRetryOptions): Promise<IRunFinished>;
  /** What rewinding to `target` would remove, keep and restore; null when it cannot be done. */
  rewindPlan(target: RewindTarget): Promise<IRewindPlan | null>;
  /**
   * Rewinds (docs/architecture.md#rewind): the run must be paused or idle. Undoing a behavior leaves the
   * run paused there; redoing from a step resumes the run at that step.
   */
  rewind(
    target: RewindTarget,
    options?: IRewindOptions
  ): Promise<IRewindRecord>;
  /**
   * Forgets the run kept in memory (its saved copy in the notebook is the caller's to remove): nothing
   * is left to resume, rewind or write back. Refused while a run or a rewind is active.
   */
  forgetRun(): void;
  dispose(): void;
}
