/**
 * `WorkflowRunner` (docs/protocol.md#the-loop): the run's public API and signals, and the one place
 * the run state changes: each transaction the parts of the loop dispatch is applied, recorded, told
 * and saved here (`_dispatch`). The phases are in `phases`, one behavior's stream in `behavior`, the
 * notebook the run writes in `runNotebook`, rewind in `rewindRun`.
 */
import { ISignal, Signal } from '@lumino/signaling';
import type { WorkflowTemplate } from '../../protocol';
import { registerBuiltinActions } from '../actions/builtins';
import { type IMessage, msg, refusal, say } from '../messages';
import type { INotebookDriver } from '../ports/driver';
import {
  ActionRegistry,
  errorMessage,
  errorText,
  IDisposableLike
} from '../actions/registry';
import { planRewind } from '../rewind/plan';
import {
  checkpoint,
  needsStepCheckpoint,
  plannerMemory
} from '../rewind/rollback';
import { isSavedRunState } from '../saved/savedRun';
import type { IRunSettings } from '../settings';
import { composeSnapshot } from '../snapshot';
import type { IEffectsState } from '../state/effects';
import type { IFsmTransition } from '../state/fsm';
import type { IRecordedTransaction } from '../state/record';
import type {
  IRewindOptions,
  IRewindPlan,
  IRewindRecord,
  RewindTarget
} from '../state/rewind';
import { type ISavedRunState, RunState } from '../state/runState';
import { type IRunTransaction, op, transaction } from '../state/transaction';
import { RunTrace } from '../trace';
import type {
  IActionApplied,
  ICellAdded,
  IPauseReason,
  IPlannerService,
  IRunError,
  IRetryOptions,
  IRunFinished,
  IRunnerHooks,
  IRunSnapshot,
  IRunWarning,
  IStartOptions,
  IStopOptions,
  IWorkflowRunner
} from '../types';
import { RunBoundaries } from './boundaries';
import { TransactionDispatcher } from './dispatcher';
import type { IRunHost } from './host';
import { RunPhases } from './phases';
import { applyRewind } from './rewindRun';
import { RunControl, RunStopped } from './runControl';
import { RunNotebook } from './runNotebook';
import { retried, runBegun, savedRunResumed } from './stepChanges';
import { latestFailedChecks, runOutcome } from '../state/contracts';

const USER_PAUSE: IPauseReason = {
  kind: 'user',
  ...say('pausedByUser')
};
const REWIND_PAUSE: IPauseReason = {
  kind: 'user',
  message: 'Rewound: Resume asks the planner again from here'
};

export interface IWorkflowRunnerOptions {
  driver: INotebookDriver;
  client: IPlannerService;
  /** Read before every request and action, so changed settings apply at once. */
  settings: () => IRunSettings;
  hooks?: IRunnerHooks;
  /**
   * A shared registry (e.g. the one behind the extension's token). The caller registers the built-in
   * handlers in it (`registerBuiltinActions`); when absent the runner makes its own with them.
   */
  registry?: ActionRegistry;
  /** Give the same instance to the `DslcAdapter` as its `observer`: the trace is recorded from it. */
  trace?: RunTrace;
  now?: () => Date;
}

export class WorkflowRunner implements IWorkflowRunner {
  constructor(options: IWorkflowRunnerOptions) {
    this._driver = options.driver;
    this._client = options.client;
    this._settings = options.settings;
    this._hooks = options.hooks ?? {};
    this._now = options.now ?? (() => new Date());
    this._trace =
      options.trace ?? new RunTrace({ now: () => this._now().getTime() });
    if (options.registry) {
      this._registry = options.registry;
    } else {
      this._registry = new ActionRegistry();
      this._builtins = registerBuiltinActions(this._registry);
    }
    this._state = new RunState({
      now: this._now,
      maxHistoryItems: () => this._settings().maxHistoryItems
    });
    this._trace.variableTypes = () => this._state.kernelVariableTypes;
    this._writer = new TransactionDispatcher({
      state: this._state,
      driver: this._driver,
      client: this._client,
      settings: () => this._settings(),
      behavior: () => this._phases.behavior,
      signals: {
        transition: transition => this._stateChanged.emit(transition),
        effects: effects => this._effectsChanged.emit(effects),
        progress: () => this._emitProgress(),
        warning: (message, source) => this._warn(message, source)
      }
    });
    this._runHost = this._host();
    this._boundaries = new RunBoundaries(this._runHost);
    this._phases = new RunPhases(this._runHost, this._boundaries);
  }

  get stateChanged(): ISignal<IWorkflowRunner, IFsmTransition> {
    return this._stateChanged;
  }

  get progressChanged(): ISignal<IWorkflowRunner, IRunSnapshot> {
    return this._progressChanged;
  }

  get effectsChanged(): ISignal<IWorkflowRunner, IEffectsState> {
    return this._effectsChanged;
  }

  get warning(): ISignal<IWorkflowRunner, IRunWarning> {
    return this._warning;
  }

  get errorOccurred(): ISignal<IWorkflowRunner, IRunError> {
    return this._errorOccurred;
  }

  get cellAdded(): ISignal<IWorkflowRunner, ICellAdded> {
    return this._cellAdded;
  }

  get actionApplied(): ISignal<IWorkflowRunner, IActionApplied> {
    return this._actionApplied;
  }

  get finished(): ISignal<IWorkflowRunner, IRunFinished> {
    return this._finished;
  }

  get registry(): ActionRegistry {
    return this._registry;
  }

  get trace(): RunTrace {
    return this._trace;
  }

  /** The transactions applied in this session, oldest first (bounded). */
  get transactions(): readonly IRecordedTransaction[] {
    return this._writer.record;
  }

  get isRunning(): boolean {
    return this._loop !== null || this._rewinding;
  }

  get effects(): IEffectsState {
    return this._state.effects.toJSON();
  }

  get snapshot(): IRunSnapshot {
    return composeSnapshot(this._state, this._settings().maxExecutionSteps, {
      running: this.isRunning,
      rewinding: this._rewinding,
      control: this._control,
      buffered: this._phases.behavior?.queued.length ?? 0
    });
  }

  async start(options: IStartOptions): Promise<IRunFinished> {
    this._assertIdle();
    let savedTemplate: WorkflowTemplate | null = null;
    try {
      const saved = await this._driver.loadRunState();
      if (isSavedRunState(saved)) {
        savedTemplate = saved.progress.template;
      }
    } catch (error) {
      this._warn(msg('savedStateReadFailed', errorMessage(error)), 'driver');
    }
    this._assertIdle();
    this._control.clearPause();
    this._trace.clear();
    this._client.resetState?.();
    void this._writer.dispatch(
      transaction(
        'runner.start',
        runBegun(options, savedTemplate, this._phases.stepStartPhase())
      )
    );
    return this._launch();
  }

  async resumeFromSaved(): Promise<IRunFinished | null> {
    this._assertIdle();
    const saved = await this._driver.loadRunState();
    if (!isSavedRunState(saved)) {
      if (saved !== null && saved !== undefined) {
        this._warn(msg('savedStateUnreadable'), 'driver');
      }
      return null;
    }
    this._assertIdle();
    this._restoreSaved(saved);
    if (saved.phase === 'done' || saved.fsm.state === 'WORKFLOW_COMPLETED') {
      const finished: IRunFinished = {
        reason: 'completed',
        ...say('savedRunCompleted'),
        outcome: runOutcome(saved.progress, this._state.contracts)
      };
      this._finished.emit(finished);
      return finished;
    }
    void this._writer.dispatch(
      transaction('runner.resume', savedRunResumed(this._state, this._now()))
    );
    return this._launch();
  }

  /** During a rewind: the loop it starts waits paused. */
  pause(): void {
    if (this.isRunning) {
      this._boundaries.requestPause(USER_PAUSE);
    }
  }

  resume(): void {
    if (this.isRunning && this._control.cancelPause()) {
      this._emitProgress();
    }
  }

  step(): void {
    if (!this.isRunning) {
      return;
    }
    this._control.pauseAfterBehavior = true;
    this.resume();
  }

  async stop(options: IStopOptions = {}): Promise<void> {
    const loop = this._loop;
    if (loop || this._rewinding) {
      const interruptKernel = options.interruptKernel === true;
      this._control.stop({
        interruptKernel,
        leaveNotebook: options.leaveNotebook === true
      });
      // A rewind re-running the kept cells ends them, and starts no loop after.
      this._rewindAbort?.abort(new RunStopped(interruptKernel));
      if (interruptKernel) {
        try {
          await this._driver.interruptKernel();
        } catch (error) {
          this._warn(msg('interruptFailed', errorMessage(error)), 'driver');
        }
      }
      await (this._rewinding ? this._rewound : loop);
      return;
    }
    if (this._state.fsm.state === 'ERROR') {
      this._finished.emit(await this._phases.settleStopped());
    }
  }

  async retry(options: IRetryOptions = {}): Promise<IRunFinished> {
    this._assertIdle();
    if (this._state.fsm.state !== 'ERROR') {
      throw refusal('noFailedRequest');
    }
    void this._writer.dispatch(
      transaction('runner.retry', retried(this._state, options.variables))
    );
    return this._launch();
  }

  captureRunState(): unknown | null {
    return this.isRunning ? this._writer.capture() : null;
  }

  async rewindPlan(target: RewindTarget): Promise<IRewindPlan | null> {
    if (this._rewinding || (this._loop && !this._control.paused)) {
      return null;
    }
    if (!this._loop && !(await this._loadSavedForRewind())) {
      return null;
    }
    return planRewind(this._state, this._driver, target);
  }

  /**
   * The runner is busy from here until the loop the rewind starts runs: nothing else may start while
   * the kernel restarts and the kept cells run again, which can take minutes.
   */
  async rewind(
    target: RewindTarget,
    options: IRewindOptions = {}
  ): Promise<IRewindRecord> {
    if (this._rewinding) {
      throw refusal('runAlreadyActive');
    }
    if (this._loop && !this._control.paused) {
      throw refusal('pauseBeforeRewind');
    }
    const abort = new AbortController();
    this._rewindAbort = abort;
    const rewound = this._rewind(target, options, abort.signal);
    this._rewound = rewound.then(
      () => undefined,
      () => undefined
    );
    this._emitProgress();
    return rewound;
  }

  private async _rewind(
    target: RewindTarget,
    options: IRewindOptions,
    signal: AbortSignal
  ): Promise<IRewindRecord> {
    let stopped: IRunFinished | null = null;
    let record: IRewindRecord;
    try {
      const loop = this._loop;
      if (loop) {
        // The paused loop settles (and is saved) first; a new one starts from the checkpoint.
        this._control.stop();
        stopped = await loop;
      } else {
        this._control.clearPause();
        if (!(await this._loadSavedForRewind())) {
          throw refusal('noRunToRewind');
        }
      }
      const plan = planRewind(this._state, this._driver, target);
      if (!plan) {
        throw refusal('rewindPointGone');
      }
      record = await applyRewind(this._runHost, plan, options, signal);
    } catch (error) {
      // A paused loop was stopped for nothing: the run ends there.
      this._endRewind();
      if (stopped) {
        this._finished.emit(stopped);
      }
      throw error;
    }
    if (signal.aborted) {
      const finished = await this._phases.settleStopped();
      this._endRewind();
      this._finished.emit(finished);
      return record;
    }
    if (target.kind === 'behavior') {
      this._control.requestPause(REWIND_PAUSE);
    }
    this._endRewind();
    void this._launch();
    return record;
  }

  private _endRewind(): void {
    this._rewindAbort = null;
    this._emitProgress();
  }

  forgetRun(): void {
    this._assertIdle();
    this._control.clearPause();
    this._client.resetState?.();
    void this._writer.dispatch(
      transaction('runner.forget', [op.reset()], { show: true })
    );
  }

  /** An idle runner that never ran here takes the run saved in the notebook; false when there is none. */
  private async _loadSavedForRewind(): Promise<boolean> {
    if (this._state.task !== null) {
      return true;
    }
    const rewinding = this._rewinding;
    const saved = await this._driver.loadRunState();
    if (!isSavedRunState(saved)) {
      return false;
    }
    // Nothing may have started meanwhile (the rewind that asks, if one does, is its own).
    if (this._loop || this._rewinding !== rewinding) {
      throw refusal('runAlreadyActive');
    }
    this._restoreSaved(saved);
    return true;
  }

  /** The run saved in the notebook, in place of this one; its planner service's state too. */
  private _restoreSaved(saved: ISavedRunState): void {
    this._control.clearPause();
    void this._writer.dispatch(
      transaction('runner.restore', [op.reset(), op.restore(saved)])
    );
    if (saved.planner !== undefined) {
      this._client.restoreState?.(saved.planner);
    }
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    if (this.isRunning) {
      void this.stop();
    }
    this._builtins?.dispose();
    Signal.clearData(this);
  }

  // ------------------------------------------------------------------------------------------
  // The loop
  // ------------------------------------------------------------------------------------------

  private _launch(): Promise<IRunFinished> {
    this._control.launch();
    this._driver.holdSaves(false);
    const loop = this._drive();
    this._loop = loop;
    return loop;
  }

  private async _drive(): Promise<IRunFinished> {
    // Lets `_launch` record the loop before any of it runs.
    await Promise.resolve();
    this._emitProgress();
    let finished: IRunFinished;
    try {
      finished = await this._run();
    } catch (error) {
      if (this._control.stopRequested || error instanceof RunStopped) {
        finished = await this._phases.settleStopped();
      } else {
        finished = await this._phases.fail({
          endpoint: 'engine',
          ...say('runFailed', errorText(error)),
          retryable: true
        });
      }
    }
    this._loop = null;
    this._emitProgress();
    // A rewind stops the paused loop only to start another: the run has not ended.
    if (!this._rewinding) {
      this._finished.emit(finished);
    }
    return finished;
  }

  private async _run(): Promise<IRunFinished> {
    for (;;) {
      this._control.throwIfStopped();
      if (this._state.phase === 'done') {
        return this._phases.complete();
      }
      if (needsStepCheckpoint(this._state)) {
        await this._writer.dispatch(
          transaction('rewind.stepCheckpoint', [
            checkpoint(this._state, 'step', {
              planner: plannerMemory(this._client),
              now: this._now()
            })
          ])
        );
      }
      await this._boundaries.pausePoint();
      const outcome =
        this._state.phase === 'plan'
          ? await this._phases.plan()
          : await this._phases.generate();
      if (outcome) {
        return outcome;
      }
    }
  }

  /** What the parts of the loop are given: the state to read, `dispatch`, the signals, the services. */
  private _host(): IRunHost {
    const state = this._state;
    const dispatch = (tx: IRunTransaction) => this._writer.dispatch(tx);
    return {
      state,
      control: this._control,
      client: this._client,
      hooks: this._hooks,
      driver: this._driver,
      notebook: new RunNotebook({
        driver: this._driver,
        cells: state.cells,
        journal: state.rewind,
        now: this._now,
        cellAdded: event => this._cellAdded.emit(event),
        checkFailure: () => latestFailedChecks(state.contracts),
        dispatch
      }),
      registry: this._registry,
      trace: this._trace,
      signals: {
        progress: () => this._emitProgress(),
        error: error => this._errorOccurred.emit(error),
        warning: warning => this._warning.emit(warning),
        actionApplied: event => this._actionApplied.emit(event)
      },
      settings: () => this._settings(),
      now: () => this._now(),
      dispatch
    };
  }

  private _warn(
    message: string | IMessage,
    source: IRunWarning['source']
  ): void {
    this._boundaries.warn(message, source);
  }

  private _emitProgress(): void {
    this._progressChanged.emit(this.snapshot);
  }

  private _assertIdle(): void {
    if (this.isRunning) {
      throw refusal('runAlreadyActive');
    }
  }

  private readonly _driver: INotebookDriver;
  private readonly _client: IPlannerService;
  private readonly _settings: () => IRunSettings;
  private readonly _hooks: IRunnerHooks;
  private readonly _now: () => Date;
  private readonly _trace: RunTrace;
  private readonly _registry: ActionRegistry;
  private readonly _builtins: IDisposableLike | null = null;
  private readonly _state: RunState;
  private readonly _control = new RunControl();
  private readonly _boundaries: RunBoundaries;
  private readonly _phases: RunPhases;
  private readonly _runHost: IRunHost;
  private readonly _writer: TransactionDispatcher;
  private _loop: Promise<IRunFinished> | null = null;
  private _disposed = false;
  /** From the start of a rewind until the loop it starts (or its stop): the runner is busy. */
  private get _rewinding(): boolean {
    return this._rewindAbort !== null;
  }
  /** The rewind under way, aborted by Stop; null when none is. */
  private _rewindAbort: AbortController | null = null;
  /** The rewind under way, settled either way: what Stop waits for. */
  private _rewound: Promise<void> | null = null;

  private _stateChanged = new Signal<IWorkflowRunner, IFsmTransition>(this);
  private _progressChanged = new Signal<IWorkflowRunner, IRunSnapshot>(this);
  private _effectsChanged = new Signal<IWorkflowRunner, IEffectsState>(this);
  private _warning = new Signal<IWorkflowRunner, IRunWarning>(this);
  private _errorOccurred = new Signal<IWorkflowRunner, IRunError>(this);
  private _cellAdded = new Signal<IWorkflowRunner, ICellAdded>(this);
  private _actionApplied = new Signal<IWorkflowRunner, IActionApplied>(this);
  private _finished = new Signal<IWorkflowRunner, IRunFinished>(this);
}
