/**
 * The tokens other extensions may use, typed by interfaces, and the ids shared by the plugins, the
 * schema and the tests.
 */
import type { NotebookPanel } from '@jupyterlab/notebook';
import { Token } from '@lumino/coreutils';
import type { IDisposable } from '@lumino/disposable';
import type { ISignal } from '@lumino/signaling';
import type {
  ActionOf,
  ActionType,
  Artifact,
  Assessment,
  IConnectionCheck,
  UnknownAction
} from './protocol';
import type { IMessage, IMessageText } from './engine/messages';
import type {
  ActionHandler,
  ActionPostHook,
  ActionPreHook,
  IDisposableLike,
  IUnhandledAction
} from './engine/actions/registry';
import type { IRunSettings } from './engine/settings';
import type { IReproducibilityRecord } from './notebook/reproducibility';
import type {
  IBehaviorApproval,
  IRunError,
  IRunFinished,
  IRunnerHooks,
  IRunSnapshot,
  IRunWarning,
  IStartOptions,
  ItemStatus,
  IWorkflowRunner
} from './engine/types';

export { TRANSLATION_DOMAIN } from './translation';

export const PLUGIN_PREFIX = 'jupyterlab-notebook-bcc';

export namespace PluginIDs {
  /** The runners: this plugin owns the settings (`schema/plugin.json`). */
  export const plugin = `${PLUGIN_PREFIX}:plugin`;
  export const actions = `${PLUGIN_PREFIX}:actions`;
  export const models = `${PLUGIN_PREFIX}:models`;
  export const sidebar = `${PLUGIN_PREFIX}:sidebar`;
  /** The commands: its schema (`schema/commands.json`) holds the toolbar item and the shortcuts. */
  export const commands = `${PLUGIN_PREFIX}:commands`;
  export const statusbar = `${PLUGIN_PREFIX}:statusbar`;
  export const notifications = `${PLUGIN_PREFIX}:notifications`;
}

export namespace CommandIDs {
  export const open = 'notebook-bcc:open';
  export const run = 'notebook-bcc:run';
  export const pause = 'notebook-bcc:pause';
  export const resume = 'notebook-bcc:resume';
  /** Pause when running, resume when paused: one shortcut for both. */
  export const togglePause = 'notebook-bcc:toggle-pause';
  export const step = 'notebook-bcc:step';
  export const stop = 'notebook-bcc:stop';
  export const retry = 'notebook-bcc:retry';
  /** The planner lacks variables: ask the user for them and retry (args `variables` skip the dialog). */
  export const setVariables = 'notebook-bcc:set-variables';
  export const exportTrace = 'notebook-bcc:export-trace';
  /** Checks that the planner answers; the result is a notification. */
  export const testConnection = 'notebook-bcc:test-connection';
  /** Removes the run saved in the notebook's metadata (e.g. one that cannot be read); the cells stay. */
  export const discardSavedRun = 'notebook-bcc:discard-saved-run';
  /** Another window's run lock expired: reload the notebook and continue its run here. */
  export const takeOver = 'notebook-bcc:take-over';
  /** Removes the last behavior's cells and rolls the run back before it, paused. */
  export const undoBehavior = 'notebook-bcc:undo-behavior';
  /** Args `stageId`, `stepId`: removes that step's cells and later ones, and runs again from it. */
  export const redoFromStep = 'notebook-bcc:redo-from-step';
  /** The LLM planner's base URL, model and API key, stored on the Jupyter server (read-only when the administrator set them). */
  export const llmSettings = 'notebook-bcc:llm-settings';
  /** Clears the planner URL in the settings, so runs use the built-in demo planner. */
  export const useBuiltinPlanner = 'notebook-bcc:use-builtin-planner';
  /** The attempts of a rewritten cell (args `cellId`, else the active cell) or of a step's cells (`stepId`). */
  export const showAttempts = 'notebook-bcc:show-attempts';
  /** A note for the planner on a cell (args `cellId`, else the active cell; `text` skips the dialog). */
  export const noteCell = 'notebook-bcc:note-cell';
  /** Removes the note for the planner on a cell (args `cellId`, else the active cell). */
  export const removeCellNote = 'notebook-bcc:remove-cell-note';
  /** A note for the planner on a step of the run (args `stageId`, `stepId`; `text` skips the dialog). */
  export const noteStep = 'notebook-bcc:note-step';
  /** Removes the note on a step (args `stageId`, `stepId`). */
  export const removeStepNote = 'notebook-bcc:remove-step-note';
  /** Args `stageId`, `stepId`: asks for the step's note if it has none, then redoes the step with it. */
  export const redoStepWithNote = 'notebook-bcc:redo-step-with-note';
  /** Runs the run's kept cells in a fresh kernel and compares the values the run delivered. */
  export const checkReproducibility = 'notebook-bcc:check-reproducibility';
  /** Stops the reproducibility check under way (its fresh kernel is shut down). */
  export const stopReproducibilityCheck =
    'notebook-bcc:stop-reproducibility-check';
  /** Args `cellId` (and `notebook`): brings the notebook to the front with that cell selected. */
  export const showCell = 'notebook-bcc:show-cell';
}

/**
 * The action handlers every runner uses: the built-in types plus those other extensions register at
 * run time. Dispose what `register`, `addPreHook` or `addPostHook` return to undo the registration.
 */
export interface IActionRegistry {
  /** An action type with no handler was met. */
  readonly unhandled: ISignal<IActionRegistry, IUnhandledAction>;
  /** A handler was registered or removed. */
  readonly changed: ISignal<IActionRegistry, string>;
  /** The registered types, newest registration last. */
  readonly types: string[];
  has(type: string): boolean;
  /** A later registration of the same type takes over until it is disposed. */
  register<T extends ActionType>(
    type: T,
    handler: ActionHandler<ActionOf<T>>
  ): IDisposableLike;
  register(
    type: string,
    handler: ActionHandler<UnknownAction>
  ): IDisposableLike;
  /** Runs before the handler of `type` (of every type when absent). */
  addPreHook(hook: ActionPreHook, type?: string): IDisposableLike;
  /** Runs after the handler of `type` (of every type when absent), with its result. */
  addPostHook(hook: ActionPostHook, type?: string): IDisposableLike;
}

/** The hooks of a notebook's runner (dialogs in interactive mode); the pending approval is observable. */
export interface IRunHooks extends IRunnerHooks {
  /** The behavior waiting for the user's approval, or null. */
  readonly pending: IBehaviorApproval | null;
  readonly pendingChanged: ISignal<IRunHooks, void>;
}

/** The LLM planner the relay serves (`notebook-bcc/config`'s `llm`): the models a run may pick. */
export interface ILlmChoice {
  /** The default model. */
  model: string;
  /** The models a run may pick; the default is among them. */
  models: string[];
  /** Where the model answers, for display. */
  base_url: string;
  readonly: boolean;
}

/** Where a run's planner is, as the panel shows it. */
export interface IPlannerLocation {
  /** How requests leave: the transport's label (the relay, or the planner URL itself), in English. */
  readonly via: string;
  /** `via` as a message the panel translates, when it is words and not a URL. */
  readonly viaText?: IMessage;
  /** The planner URL the Jupyter server's relay forwards to, when the server says. */
  readonly url?: string;
  /** Who chose that URL: `server` (the administrator), `user` (the settings) or `default`. */
  readonly source?: string;
  /** No planner is configured: the built-in demo planner answers. */
  readonly builtin?: boolean;
  /** The relay serves the LLM planner: its default model and the models a run may pick. */
  readonly llm?: ILlmChoice;
}

/** What the views know of a run's planner besides its answers. */
export interface IPlannerStatus {
  /** The waiting time started or ended, or the location changed. */
  readonly changed: ISignal<IPlannerStatus, void>;
  /** Since when (ms since the epoch) a request waits for the planner's first byte; null when none does. */
  readonly waitingSince: number | null;
  readonly location: IPlannerLocation | null;
  /** Whether the planner answers, with a message the user can act on. */
  checkConnection(): Promise<IConnectionCheck>;
}

/** Where a run stands, as the holder reports it with each heartbeat (bounded by the server). */
export type RunLockStatus = {
  state?: string;
  paused?: boolean;
  stage?: string | null;
  step?: string | null;
  task?: string | null;
};

/**
 * Who holds a notebook's lock, as this view sees it. `free` with `stale`: another page held it and let
 * it go (or stopped answering), so this view's copy of the notebook may be out of date.
 */
export type RunLockState =
  | { kind: 'free'; stale: boolean }
  | { kind: 'mine' }
  | {
      kind: 'other';
      status: RunLockStatus;
      /** The holder is another view in this page (its notebook model is this one's). */
      samePage: boolean;
    };

/**
 * The lock of one notebook for one runner. A small API on purpose: real-time collaboration reuses it.
 * `acquire` takes it (and starts the heartbeat), `heartbeat` renews it now, `release` frees it;
 * `stateChanged` says who holds it and how the holder's run stands.
 */
export interface IRunLock extends IDisposable {
  /** The owner id: one per browser tab, kept across reloads. */
  readonly owner: string;
  readonly state: RunLockState;
  readonly stateChanged: ISignal<IRunLock, RunLockState>;
  /** The lock was taken by another owner while this one held it (its heartbeat came too late). */
  readonly lost: ISignal<IRunLock, void>;
  /** True when this runner holds the lock afterwards. */
  acquire(): Promise<boolean>;
  /** Renews the held lock with the run's current status; false when it was lost. */
  heartbeat(): Promise<boolean>;
  release(): Promise<void>;
  /** Asks who holds the lock now (other views also poll on their own). */
  refresh(): Promise<void>;
}

/** A notebook, the run loop bound to it and the runner's hooks. */
export interface IRunnerEntry {
  readonly panel: NotebookPanel;
  readonly runner: IWorkflowRunner;
  readonly hooks: IRunHooks;
  /** The run's planner, for the views (the waiting time, where it is, a connection check). */
  readonly planner?: IPlannerStatus;
  /** The notebook's run lock (one live run per notebook; docs/architecture.md#one-run-per-notebook). */
  readonly lock?: IRunLock;
}

/**
 * One workflow runner per open notebook. A runner is created when its notebook is ready and disposed
 * when the notebook closes (its run is stopped and saved first).
 */
export interface IWorkflowRunnerRegistry {
  /** A notebook got its runner. */
  readonly runnerAdded: ISignal<IWorkflowRunnerRegistry, IRunnerEntry>;
  /** A notebook closed; its runner is being disposed. */
  readonly runnerRemoved: ISignal<IWorkflowRunnerRegistry, IRunnerEntry>;
  /** The runner of a notebook, or null while the notebook is loading (or not a notebook). */
  get(panel: NotebookPanel): IWorkflowRunner | null;
  /** Resolves with the notebook's runner once it exists (at once when it does). */
  whenReady(panel: NotebookPanel): Promise<IWorkflowRunner>;
  /** Every notebook with a runner. */
  entries(): IRunnerEntry[];
  /** The settings every run reads (the user's settings, updated as they change). */
  readonly settings: IRunSettings;
  /** The action handlers shared by every runner, present and future. */
  readonly actions: IActionRegistry;
}

export const IWorkflowRunnerRegistry = new Token<IWorkflowRunnerRegistry>(
  'jupyterlab-notebook-bcc:IWorkflowRunnerRegistry',
  'The workflow runner of each open notebook.'
);

/**
 * The action registry shared by all runners, present and future, so a registration applies to every
 * notebook's run.
 */
export type IWorkflowActionRegistry = IActionRegistry;

export const IWorkflowActionRegistry = new Token<IWorkflowActionRegistry>(
  'jupyterlab-notebook-bcc:IWorkflowActionRegistry',
  'Registers custom action types (and hooks) for every workflow run.'
);

/** A warning of a run, with when it was shown. */
export interface ITimedWarning extends IRunWarning {
  /** ISO 8601. */
  readonly time: string;
}

/** Which run commands apply to a notebook whose run is in this state. */
export interface ICommandAvailability {
  run: boolean;
  pause: boolean;
  resume: boolean;
  step: boolean;
  stop: boolean;
  retry: boolean;
}

export interface IBehaviorNode {
  /** Unique in the tree: `<step>/<behavior>`. */
  key: string;
  id: string;
  iteration: number;
  status: ItemStatus;
  /** Current and the run is active (a current behavior of a stopped run was interrupted). */
  running: boolean;
  /** Running, and the run is paused (or pausing): it holds until Resume. */
  paused: boolean;
  goal: string | null;
  produced: string[];
  durationMs: number | null;
}

export interface IStepNode {
  id: string;
  name: string;
  status: ItemStatus;
  goal: string | null;
  /** The planner's guidance for the current step (markdown). */
  focus: string | null;
  /** The planner's latest assessment of the step, current or not. */
  assessment: Assessment | null;
  produced: string[];
  behaviors: IBehaviorNode[];
}

export interface IStageNode {
  id: string;
  name: string;
  status: ItemStatus;
  goal: string | null;
  focus: string | null;
  assessment: Assessment | null;
  produced: string[];
  steps: IStepNode[];
}

export interface IOutputItem {
  name: string;
  status: 'produced' | 'in_progress' | 'missing';
  /** Its latest check in the kernel against its contract, when it has one (docs/protocol.md#output-contracts). */
  check?: { ok: boolean; reason: string | null; type: string | null };
}

/** A note of the user's for the planner on a step of the run, kept in the notebook (`notebook/notes.ts`). */
export interface IStepNoteView {
  readonly stageId: string | null;
  readonly stepId: string;
  readonly text: string;
}

/**
 * The reproducibility check of a notebook's run, as the panel shows it: under way (which cell runs in
 * the fresh kernel), its record (this session's, or the one the notebook's metadata keeps), or why it
 * gave none (the kernel could not start, it was stopped).
 */
export type ReproducibilityState =
  | {
      kind: 'checking';
      phase: 'starting' | 'running' | 'comparing';
      cell: number;
      cells: number;
    }
  | { kind: 'done'; record: IReproducibilityRecord }
  | { kind: 'failed'; message: string; stopped: boolean };

/** What the views show of one notebook's run; `changed` fires when any of it changes. */
export interface IRunModel {
  readonly changed: ISignal<IRunModel, void>;
  readonly runner: IWorkflowRunner;
  /** The run's planner, when the runner was built with one the views can watch. */
  readonly planner: IPlannerStatus | null;
  /** Since when (ms since the epoch) the run waits for the planner's first byte; null when it does not. */
  readonly waitingSince: number | null;
  /** Where the run's planner is, when known. */
  readonly plannerLocation: IPlannerLocation | null;
  /** `live`: the runner ran in this session; `saved`: only a run saved in the notebook is known. */
  readonly source: 'live' | 'saved' | 'none';
  readonly snapshot: IRunSnapshot;
  /** Interactive mode: the running behavior waits for the user's approval. */
  readonly awaitingApproval: boolean;
  /** Stages > steps > behaviors, with their status. */
  readonly tree: IStageNode[];
  readonly outputs: IOutputItem[];
  readonly artifacts: Artifact[];
  /** Effects, newest first. */
  readonly effects: string[];
  /** Warnings, newest first. */
  readonly warnings: ITimedWarning[];
  readonly error: IRunError | null;
  /** How the last run ended in this session; null while one runs. */
  readonly finished: IRunFinished | null;
  /** Which run commands apply now. */
  readonly availability: ICommandAvailability;
  /** There is a stopped or saved run that Resume continues. */
  readonly canResumeSaved: boolean;
  /** Undo or Redo from a step may start: the run is idle or paused here, and no other window runs it. */
  readonly canRewind: boolean;
  /** The notebook's run lock, when the runner has one. */
  readonly lock: IRunLock | null;
  /** Who holds the notebook's run lock: another window's live run disables Run and Resume here. */
  readonly lockState: RunLockState;
  /** Another window's run let the lock go or stopped answering: Take over reloads the notebook and resumes. */
  readonly canTakeOver: boolean;
  /** What is wrong with the run saved in the notebook (field: problem), or null when it is readable or absent. */
  readonly savedRunProblems: readonly string[] | null;
  /** A run is saved in the notebook (readable or not) and no run is live here. */
  readonly canDiscardSaved: boolean;
  /** A run that could not start (its planner did not answer), until a run starts or the user closes it. */
  readonly startProblem: IStartProblem | null;
  setStartProblem(problem: IStartProblem | null): void;
  /** The user's notes on the run's steps (a note on a cell shows on the cell). */
  readonly stepNotes: readonly IStepNoteView[];
  /** The reproducibility check: under way, its result, or why it has none; null before any. */
  readonly reproducibility: ReproducibilityState | null;
  setReproducibility(state: ReproducibilityState | null): void;
  readonly isDisposed: boolean;
}

/** A run that could not start: why, and what it was asked to do (Retry starts it again). */
export interface IStartProblem {
  message: IMessageText;
  options: IStartOptions;
}

export interface IRunModelEntry {
  readonly panel: NotebookPanel;
  readonly model: IRunModel;
}

/** The active notebook and its run model (null while the notebook loads). */
export interface ICurrentRun {
  readonly panel: NotebookPanel;
  readonly model: IRunModel | null;
}

/** The view models of the notebooks' runs: what the sidebar, status bar and commands show. */
export interface IRunModelRegistry {
  /** The run model of a notebook, or null while its runner does not exist yet. */
  model(panel: NotebookPanel): IRunModel | null;
  /** A notebook got its runner and model. */
  readonly modelAdded: ISignal<IRunModelRegistry, IRunModelEntry>;
  /** The active notebook's run (following the notebook tracker); null when no notebook is active. */
  readonly current: ICurrentRun | null;
  /**
   * The active notebook changed, got its run model or was renamed, or its run changed: whatever the
   * views show of the current run may differ.
   */
  readonly currentChanged: ISignal<IRunModelRegistry, ICurrentRun | null>;
}

export const IRunModelRegistry = new Token<IRunModelRegistry>(
  'jupyterlab-notebook-bcc:IRunModelRegistry',
  'The view model of each notebook run, for views.'
);
