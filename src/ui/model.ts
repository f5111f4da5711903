/**
 * The view model of one notebook's run: it listens to the runner's signals (and to the run state
 * saved in the notebook) and tells its views when to render. One per notebook, shared by the sidebar,
 * the status bar item and the commands.
 */
import type { NotebookPanel } from '@jupyterlab/notebook';
import { ISignal, Signal } from '@lumino/signaling';
import type { Artifact } from '../protocol';
import type { IEffectsState } from '../engine/state/effects';
import type { IFsmTransition } from '../engine/state/fsm';
import type { IProgressState } from '../engine/state/progressState';
import { canRewind } from '../engine/rewindView';
import type { IRunSettings } from '../engine/settings';
import type {
  IRunError,
  IRunFinished,
  IRunSnapshot,
  IRunWarning,
  IWorkflowRunner
} from '../engine/types';
import { JSONExt, type JSONValue } from '@lumino/coreutils';
import {
  CELL_METADATA_KEY,
  RUN_STATE_METADATA_KEY
} from '../notebook/metadata';
import { readStepNotes, stepNotesIn } from '../notebook/notes';
import { commandAvailability, isResumable } from './present';
import type {
  ICommandAvailability,
  IOutputItem,
  IPlannerLocation,
  IPlannerStatus,
  IRunHooks as RunHooks,
  IRunLock,
  IStageNode,
  IStartProblem,
  IStepNoteView,
  ReproducibilityState,
  RunLockState
} from '../tokens';
import type { ISavedRunState, SavedRunReader } from './saved';
import { buildTree, CompletedItems, trackOutputs } from './tree';

/** Where the run state saved in a notebook is read, and when it changes. */
export interface ISavedRunSource {
  read(): unknown;
  readonly changed: ISignal<unknown, void>;
  /** The user's notes on the run's steps, kept beside the run (none without). */
  stepNotes?(): IStepNoteView[];
  /** The step notes changed. */
  readonly notesChanged?: ISignal<unknown, void>;
}

/** The run state saved in a notebook panel's metadata. */
export class NotebookRunStateSource implements ISavedRunSource {
  constructor(private _panel: NotebookPanel) {
    _panel.model?.metadataChanged.connect((_, change) => {
      if (change.key === RUN_STATE_METADATA_KEY) {
        this._changed.emit();
      } else if (
        change.key === CELL_METADATA_KEY &&
        !JSONExt.deepEqual(
          readStepNotes(change.oldValue) as unknown as JSONValue,
          readStepNotes(change.newValue) as unknown as JSONValue
        )
      ) {
        this._notesChanged.emit();
      }
    }, this);
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get notesChanged(): ISignal<this, void> {
    return this._notesChanged;
  }

  stepNotes(): IStepNoteView[] {
    const model = this._panel.isDisposed ? null : this._panel.model;
    return model
      ? stepNotesIn(model.sharedModel).map(note => ({
          stageId: note.stage_id,
          stepId: note.step_id,
          text: note.text
        }))
      : [];
  }

  read(): unknown {
    const model = this._panel.isDisposed ? null : this._panel.model;
    return model?.sharedModel.getMetadata(RUN_STATE_METADATA_KEY);
  }

  dispose(): void {
    Signal.clearData(this);
  }

  private _changed = new Signal<this, void>(this);
  private _notesChanged = new Signal<this, void>(this);
}

export interface IWarningEntry extends IRunWarning {
  /** ISO 8601. */
  time: string;
}

const FREE: RunLockState = { kind: 'free', stale: false };

/** How many warnings a notebook's run keeps for the view. */
const MAX_WARNINGS = 30;

export class RunModel {
  constructor(options: RunModel.IOptions) {
    this.runner = options.runner;
    this._saved = options.saved;
    this._readSavedRun = options.readSaved;
    this._settings = options.settings;
    const runner = this.runner;
    runner.progressChanged.connect(this._onProgress, this);
    runner.stateChanged.connect(this._onState, this);
    runner.effectsChanged.connect(this._onEffects, this);
    runner.warning.connect(this._onWarning, this);
    runner.errorOccurred.connect(this._onError, this);
    runner.finished.connect(this._onFinished, this);
    this._saved.changed.connect(this._onSaved, this);
    this._saved.notesChanged?.connect(this._onNotes, this);
    this._hooks = options.hooks ?? null;
    this._hooks?.pendingChanged.connect(this._onApproval, this);
    this.planner = options.planner ?? null;
    this.planner?.changed.connect(this._onPlanner, this);
    this.lock = options.lock ?? null;
    this.lock?.stateChanged.connect(this._onLock, this);
    this._effects = runner.effects;
    this._readSaved();
  }

  readonly runner: IWorkflowRunner;
  readonly planner: IPlannerStatus | null;
  readonly lock: IRunLock | null;

  /** Who holds the notebook's run lock (`free` without a lock). */
  get lockState(): RunLockState {
    return this.lock?.state ?? FREE;
  }

  /** Another window's run let the lock go (or stopped answering): this copy must be reloaded first. */
  get canTakeOver(): boolean {
    const state = this.lockState;
    return state.kind === 'free' && state.stale && !this.runner.isRunning;
  }

  /** What is wrong with the run saved in the notebook, or null when it is readable or absent. */
  get savedRunProblems(): readonly string[] | null {
    return this._savedProblems;
  }

  get canDiscardSaved(): boolean {
    return (
      this._hasSaved && !this.runner.isRunning && this.lockState.kind === 'free'
    );
  }

  /** Something the views show changed. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** `live`: the runner ran in this session; `saved`: only a run saved in the notebook is known. */
  get source(): 'live' | 'saved' | 'none' {
    if (this._isLive()) {
      return 'live';
    }
    return this._savedState ? 'saved' : 'none';
  }

  get snapshot(): IRunSnapshot {
    if (!this._isLive() && this._savedSnapshot) {
      return this._savedSnapshot;
    }
    return this._liveSnapshot();
  }

  /** The progress state of the run shown (live or saved). */
  get progress(): IProgressState | null {
    const source = this.source;
    return source === 'none' ? null : this.snapshot.progress;
  }

  /** Since when (ms since the epoch) the run waits for the planner's first byte; null when it does not. */
  get waitingSince(): number | null {
    return this.runner.isRunning ? (this.planner?.waitingSince ?? null) : null;
  }

  /** Where the run's planner is, when known. */
  get plannerLocation(): IPlannerLocation | null {
    return this.planner?.location ?? null;
  }

  /** Interactive mode: the running behavior waits for the user's approval. */
  get awaitingApproval(): boolean {
    return (this._hooks?.pending ?? null) !== null;
  }

  get tree(): IStageNode[] {
    this._completed.observe(this.progress);
    return buildTree(this.snapshot, this.progress, this._completed);
  }

  get outputs(): IOutputItem[] {
    return trackOutputs(this.snapshot);
  }

  get artifacts(): Artifact[] {
    this._completed.observe(this.progress);
    return this._completed.artifacts();
  }

  /** Effects, newest first: the running behavior's, then earlier ones. */
  get effects(): string[] {
    const effects =
      this.source === 'saved' && this._savedState
        ? this._savedState.effects
        : this._effects;
    return [...effects.current]
      .reverse()
      .concat([...effects.history].reverse());
  }

  /** Warnings of this notebook's runs, newest first. */
  get warnings(): IWarningEntry[] {
    return [...this._warnings].reverse();
  }

  get error(): IRunError | null {
    return this.snapshot.error;
  }

  /** How the last run ended in this session; null while one runs. */
  get finished(): IRunFinished | null {
    return this._finished;
  }

  get availability(): ICommandAvailability {
    if (this._lockedOut()) {
      return commandAvailability(null);
    }
    if (this.source === 'saved') {
      const snapshot = this.snapshot;
      return {
        ...commandAvailability(null),
        run: true,
        resume: snapshot.state !== 'WORKFLOW_COMPLETED'
      };
    }
    return commandAvailability(this.snapshot);
  }

  /** Undo or Redo from a step may start: the run is idle or paused here, and no other window runs it. */
  get canRewind(): boolean {
    return (
      this.source !== 'none' && !this._lockedOut() && canRewind(this.snapshot)
    );
  }

  /** There is a stopped or saved run that Resume continues. */
  get canResumeSaved(): boolean {
    if (this.runner.isRunning || this._lockedOut()) {
      return false;
    }
    if (this.source === 'saved') {
      return this.snapshot.state !== 'WORKFLOW_COMPLETED';
    }
    return isResumable(this.snapshot);
  }

  /** A run that could not start (its planner did not answer), until a run starts or it is cleared. */
  get startProblem(): IStartProblem | null {
    return this._startProblem;
  }

  setStartProblem(problem: IStartProblem | null): void {
    if (problem !== this._startProblem) {
      this._startProblem = problem;
      this._changed.emit();
    }
  }

  get stepNotes(): readonly IStepNoteView[] {
    this._stepNotes ??= this._saved.stepNotes?.() ?? [];
    return this._stepNotes;
  }

  get reproducibility(): ReproducibilityState | null {
    return this._reproducibility;
  }

  setReproducibility(state: ReproducibilityState | null): void {
    if (state !== this._reproducibility) {
      this._reproducibility = state;
      this._changed.emit();
    }
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    Signal.disconnectReceiver(this);
    Signal.clearData(this);
  }

  private _isLive(): boolean {
    if (this.runner.isRunning) {
      return true;
    }
    const snapshot = this._liveSnapshot();
    return snapshot.task !== null || snapshot.state !== 'IDLE';
  }

  /**
   * The runner's snapshot, composed when read: the runner changes state several times per action,
   * and the views read it at most once per frame.
   */
  private _liveSnapshot(): IRunSnapshot {
    this._snapshot ??= this.runner.snapshot;
    return this._snapshot;
  }

  /** Another window runs this notebook, or ran it since this copy was loaded. */
  private _lockedOut(): boolean {
    const state = this.lockState;
    return state.kind === 'other' || (state.kind === 'free' && state.stale);
  }

  private _readSaved(): void {
    const raw = this._saved.read();
    this._hasSaved = raw !== undefined && raw !== null;
    const saved = this._readSavedRun(
      raw,
      this._settings().maxExecutionSteps,
      () => {
        if (!this._disposed) {
          this._onSaved();
        }
      }
    );
    this._savedState = saved?.state ?? null;
    this._savedSnapshot = saved?.snapshot ?? null;
    this._savedProblems = saved?.problems ?? null;
  }

  private _onProgress(_: IWorkflowRunner, snapshot: IRunSnapshot): void {
    this._snapshot = snapshot;
    this._changed.emit();
  }

  private _onState(_: IWorkflowRunner, transition: IFsmTransition): void {
    if (transition.event === 'START_WORKFLOW') {
      // A run starts (or resumes): what the previous one ended with no longer applies.
      this._finished = null;
      this._startProblem = null;
      this._completed.clear();
    }
    this._snapshot = null;
    this._changed.emit();
  }

  private _onEffects(_: IWorkflowRunner, effects: IEffectsState): void {
    this._effects = effects;
    this._changed.emit();
  }

  private _onWarning(_: IWorkflowRunner, warning: IRunWarning): void {
    this._warnings.push({ ...warning, time: new Date().toISOString() });
    if (this._warnings.length > MAX_WARNINGS) {
      this._warnings.splice(0, this._warnings.length - MAX_WARNINGS);
    }
    this._changed.emit();
  }

  private _onError(): void {
    this._snapshot = null;
    this._changed.emit();
  }

  private _onFinished(_: IWorkflowRunner, finished: IRunFinished): void {
    this._finished = finished;
    this._snapshot = null;
    this._changed.emit();
  }

  private _onNotes(): void {
    this._stepNotes = null;
    this._changed.emit();
  }

  private _onPlanner(): void {
    this._changed.emit();
  }

  private _onApproval(): void {
    this._changed.emit();
  }

  private _onLock(): void {
    this._changed.emit();
  }

  private _onSaved(): void {
    this._readSaved();
    if (this._isLive()) {
      // Saved mid-transition: the runner's own snapshot is fresher than the last one it emitted.
      this._snapshot = null;
    }
    this._changed.emit();
  }

  private _saved: ISavedRunSource;
  private _readSavedRun: SavedRunReader;
  private _hooks: RunHooks | null;
  private _settings: () => IRunSettings;
  /** The live run's snapshot; null when it is to be composed again. */
  private _snapshot: IRunSnapshot | null = null;
  private _effects: IEffectsState;
  private _savedState: ISavedRunState | null = null;
  private _savedSnapshot: IRunSnapshot | null = null;
  private _savedProblems: string[] | null = null;
  private _hasSaved = false;
  private _warnings: IWarningEntry[] = [];
  private _finished: IRunFinished | null = null;
  private _startProblem: IStartProblem | null = null;
  private _stepNotes: IStepNoteView[] | null = null;
  private _reproducibility: ReproducibilityState | null = null;
  private _completed = new CompletedItems();
  private _changed = new Signal<this, void>(this);
  private _disposed = false;
}

export namespace RunModel {
  export interface IOptions {
    runner: IWorkflowRunner;
    saved: ISavedRunSource;
    /** Reads what `saved` holds (lab/lazy.ts's, which loads the runtime's schema on first use). */
    readSaved: SavedRunReader;
    settings: () => IRunSettings;
    /** The runner's hooks, to know when it waits for the user. */
    hooks?: RunHooks | null;
    /** The run's planner: the waiting time and where it is. */
    planner?: IPlannerStatus | null;
    /** The notebook's run lock: another window's live run disables Run and Resume here. */
    lock?: IRunLock | null;
  }
}
