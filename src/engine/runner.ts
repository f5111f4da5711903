/**
 * The run loop (docs/protocol.md#the-loop): its public API, the phases, step and stage navigation and
 * the signals. The state lives in `runState`, the controls in `runControl`, one behavior in
 * `behaviorRun`, a planning answer's updates in `contextUpdate` and the request bodies in `requests`.
 *
 * Per step: /planning; target achieved -> the step completes and the runner moves on through the
 * workflow template itself; otherwise /generating (streamed), the actions are applied one by one, and
 * /planning is asked again with `behavior_feedback`. The server decides whether more behaviors follow.
 */
import { ISignal, Signal } from '@lumino/signaling';
import { isClientNotice, PlannerError } from '../protocol';
import type { PlanningResponse, WorkflowTemplate } from '../protocol';
import { registerBuiltinActions } from './actions';
import {
  beginBehavior,
  closeInterruptedBehavior,
  finishBehavior,
  runBehavior
} from './behaviorRun';
import {
  applyPlanning,
  ILocation,
  reportPlanningProblem,
  transitionTarget
} from './contextUpdate';
import type { INotebookDriver } from './driver';
import type { IEffectsState } from './effects';
import type { IFsmTransition, WorkflowStateMachine } from './fsm';
import { type IMessage, msg, refusal, say } from './messages';
import {
  ActionRegistry,
  errorMessage,
  errorText,
  IDisposableLike
} from './registry';
import { RunCore } from './runCore';
import { RunControl, RunStopped } from './runControl';
import type {
  IRewindOptions,
  IRewindPlan,
  IRewindRecord,
  RewindTarget
} from './rewind';
import {
  applyRewind,
  checkpointBehavior,
  checkpointStepStart,
  journalingDriver,
  planRewind
} from './rewindRun';
import { isSavedRunState, Phase, RunState } from './runState';
import { generatingRequest, planningRequest, takeRetry } from './requests';
import type { IRunSettings } from './settings';
import { composeSnapshot } from './snapshot';
import { RunTrace } from './trace';
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
} from './types';

export { isSavedRunState, type ISavedRunState } from './runState';

/** After this many /planning failures in a row the run stops with an error instead of falling back. */
export const MAX_PLANNING_FAILURES = 3;

const USER_PAUSE: IPauseReason = {
  kind: 'user',
  ...say('pausedByUser')
};
const STEP_PAUSE: IPauseReason = {
  kind: 'step',
  ...say('pausedStepMode')
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
  /** Give the same instance to the `PlannerClient` as its `observer`: the trace is recorded from it. */
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
    const state = new RunState({
      now: this._now,
      maxHistoryItems: () => this._settings().maxHistoryItems
    });
    this._core = new RunCore({
      state,
      driver: journalingDriver(this._driver, state),
      client: this._client,
      hooks: this._hooks,
      registry: this._registry,
      settings: this._settings,
      now: this._now,
      trace: this._trace,
      events: {
        progress: () => this._progressChanged.emit(this.snapshot),
        effects: effects => this._effectsChanged.emit(effects),
        error: error => this._errorOccurred.emit(error),
        warning: warning => this._warning.emit(warning),
        cellAdded: event => this._cellAdded.emit(event),
        actionApplied: event => this._actionApplied.emit(event)
      }
    });
    this._state.fsm.changed.connect(this._onTransition, this);
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
      control: this._control
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
    this._resetRun();
    this._trace.clear();
    this._client.resetState?.();
    this._state.begin(options, savedTemplate);
    this._state.phase = this._stepStartPhase();
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
    this._resetRun();
    this._state.restore(saved);
    if (saved.planner !== undefined) {
      this._client.restoreState?.(saved.planner);
    }
    if (saved.phase === 'done' || saved.fsm.state === 'WORKFLOW_COMPLETED') {
      const finished: IRunFinished = {
        reason: 'completed',
        ...say('savedRunCompleted')
      };
      this._finished.emit(finished);
      return finished;
    }
    if (this._state.behavior) {
      closeInterruptedBehavior(this._core, 'interrupted');
    }
    const fsm = this._state.fsm;
    fsm.dispatch('RESET');
    fsm.dispatch('START_WORKFLOW');
    fsm.dispatch('START_STEP');
    this._state.phase = 'plan';
    return this._launch();
  }

  /** During a rewind: the loop it starts waits paused. */
  pause(): void {
    if (this.isRunning) {
      this._core.requestPause(USER_PAUSE);
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
      this._finished.emit(await this._core.settleStopped());
    }
  }

  async retry(options: IRetryOptions = {}): Promise<IRunFinished> {
    this._assertIdle();
    const state = this._state;
    if (state.fsm.state !== 'ERROR') {
      throw refusal('noFailedRequest');
    }
    if (options.variables && Object.keys(options.variables).length > 0) {
      Object.assign(state.contextVariables, options.variables);
      state.userVariables = [
        ...new Set([...state.userVariables, ...Object.keys(options.variables)])
      ];
      state.retry = null;
    }
    state.error = null;
    state.planningFailures = 0;
    state.variablesDirty = true;
    state.fsm.dispatch('RESUME');
    return this._launch();
  }

  captureRunState(): unknown | null {
    return this.isRunning ? this._core.captureState() : null;
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
      record = await applyRewind(this._core, plan, options, signal);
    } catch (error) {
      // A paused loop was stopped for nothing: the run ends there.
      this._endRewind();
      if (stopped) {
        this._finished.emit(stopped);
      }
      throw error;
    }
    if (signal.aborted) {
      const finished = await this._core.settleStopped();
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
    this._resetRun();
    this._client.resetState?.();
    this._emitProgress();
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
    this._resetRun();
    this._state.restore(saved);
    if (saved.planner !== undefined) {
      this._client.restoreState?.(saved.planner);
    }
    return true;
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
    this._state.fsm.changed.disconnect(this._onTransition, this);
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
        finished = await this._core.settleStopped();
      } else {
        finished = await this._core.fail({
          endpoint: 'engine',
          ...say('runFailed', errorText(error)),
          retryable: true
        });
      }
    }
    this._state.buffer = [];
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
        return this._core.complete();
      }
      checkpointStepStart(this._core);
      await this._core.pausePoint();
      const outcome =
        this._state.phase === 'plan'
          ? await this._planPhase()
          : await this._generatePhase();
      if (outcome) {
        return outcome;
      }
    }
  }

  private async _planPhase(): Promise<IRunFinished | null> {
    const state = this._state;
    // The user may have run cells since the last collection.
    state.variablesDirty = true;
    await this._core.refreshVariables();
    const notebook = this._core.driver.notebookSummary();
    const body =
      takeRetry(state, 'planning') ??
      planningRequest(this._core, state.pendingFeedback, notebook);
    let response: PlanningResponse;
    try {
      response = await this._control.untilStopped(
        this._client.planning(body, {
          signal: this._control.signal,
          notebook,
          onWarning: warning =>
            isClientNotice(warning)
              ? this._core.warn(warning.text ?? warning.message, 'planner')
              : reportPlanningProblem(
                  this._core,
                  warning.text ?? warning.message
                )
        })
      );
    } catch (error) {
      this._control.throwIfStopped();
      this._core.observeDialect();
      state.planningFailures++;
      const detail = errorText(error);
      const message = `/planning failed: ${errorMessage(error)}`;
      // An answer the service rejects as out of place would be just as wrong blind, and one the planner
      // cannot do without (a bcc reflection) has no fallback: the user decides.
      if (
        error instanceof PlannerError &&
        (error.kind === 'invalid' || error.needsAnswer)
      ) {
        state.retry = { endpoint: 'planning', body };
        return this._core.fail({
          endpoint: 'planning',
          ...say('planningFailed', detail),
          retryable: true
        });
      }
      if (state.planningFailures >= MAX_PLANNING_FAILURES) {
        state.retry = { endpoint: 'planning', body };
        return this._core.fail({
          endpoint: 'planning',
          ...say('planningFailedInARow', detail, state.planningFailures),
          retryable: true
        });
      }
      if (state.endStepRequested) {
        await this._completeStep();
        return null;
      }
      this._warn(msg('planningFallback', detail), 'planner');
      this._core.addEffect(
        `⚠️ WARN: ${message}; continuing with /generating without a plan`
      );
      state.pendingFeedback = null;
      state.filter = null;
      state.phase = 'generate';
      return null;
    }
    this._core.observeDialect();
    state.planningFailures = 0;
    state.pendingFeedback = null;
    const { nextStageId } = await applyPlanning(this._core, response);
    if (nextStageId && (await this._jumpToStage(nextStageId))) {
      return null;
    }
    const stageComplete = response.transition?.stage_complete === true;
    const achieved =
      stageComplete ||
      response.targetAchieved ||
      response.transition?.target_achieved === true;
    if (achieved || state.endStepRequested) {
      const target = achieved ? transitionTarget(this._core, response) : null;
      if (!achieved && response.transition?.target_achieved === false) {
        // The planner ended the step and says its target was not reached: it gave the step up.
        state.progress.skipCurrentStep();
      }
      await this._completeStep(undefined, target, stageComplete);
    } else if (response.transition?.continue_behaviors === false) {
      const step = state.progress.currentStepId ?? '(unnamed)';
      this._warn(msg('stepEndedEarly', step), 'planner');
      state.progress.skipCurrentStep();
      await this._completeStep('ended without reaching its target');
    } else {
      state.phase = 'generate';
    }
    return null;
  }

  private async _generatePhase(): Promise<IRunFinished | null> {
    const state = this._state;
    if (!state.behavior) {
      const max = this._settings().maxExecutionSteps;
      if (max > 0 && state.behaviorsRun >= max) {
        return this._core.stopForMaxSteps(max);
      }
      checkpointBehavior(this._core, () => beginBehavior(this._core));
    }
    await this._core.refreshVariables();
    const notebook = this._core.driver.notebookSummary();
    const body =
      takeRetry(state, 'generating') ??
      (await generatingRequest(this._core, notebook));
    const error = await runBehavior(this._core, body, notebook);
    this._core.observeDialect();
    if (error) {
      return this._core.fail(error);
    }
    await this._closeBehavior();
    return null;
  }

  private async _closeBehavior(): Promise<void> {
    const state = this._state;
    this._core.rotateEffects();
    state.fsm.dispatch('COMPLETE_BEHAVIOR');
    await this._core.refreshVariables();
    const feedback = finishBehavior(this._core);
    state.behaviorsRun++;
    // Also after end_phase: /planning gets the feedback; the step completes after its answer.
    state.pendingFeedback = feedback;
    state.phase = 'plan';
    await this._core.saveState({ checkpoint: true });
    if (state.stepMode || this._control.pauseAfterBehavior) {
      this._control.pauseAfterBehavior = false;
      this._core.requestPause(STEP_PAUSE);
    }
    this._emitProgress();
  }

  // ------------------------------------------------------------------------------------------
  // Steps and stages
  // ------------------------------------------------------------------------------------------

  /**
   * Completes the current step and goes to `target`, or else to the next step or stage. With
   * `stageComplete` the stage completes too: none of its remaining steps runs, not even one `target` names.
   */
  private async _completeStep(
    note?: string,
    target: ILocation | null = null,
    stageComplete = false
  ): Promise<void> {
    const { fsm, progress } = this._state;
    fsm.dispatch('COMPLETE_STEP');
    await this._core.refreshVariables();
    const present = this._state.presentVariables();
    progress.completeStep(present, note);
    this._state.pendingFeedback = null;
    this._state.endStepRequested = false;
    const otherStage =
      target !== null && target.stageId !== progress.currentStageId
        ? target
        : null;
    const nextStepId = stageComplete
      ? null
      : (target?.stepId ?? progress.nextStep()?.id ?? null);
    if (otherStage) {
      // The rest of the current stage is left: the stage completes with what it produced.
      fsm.dispatch('COMPLETE_STAGE');
      progress.completeStage(present);
      this._enterStage(otherStage.stageId, otherStage.stepId);
    } else if (nextStepId) {
      fsm.dispatch('NEXT_STEP');
      progress.startStep(nextStepId);
      this._state.phase = this._stepStartPhase();
    } else {
      fsm.dispatch('COMPLETE_STAGE');
      progress.completeStage(present);
      const nextStage = progress.nextStage();
      if (nextStage) {
        this._enterStage(nextStage.id);
      } else {
        fsm.dispatch('COMPLETE_WORKFLOW');
        this._state.phase = 'done';
      }
    }
    await this._core.saveState({ checkpoint: true });
    this._emitProgress();
  }

  private _enterStage(stageId: string, stepId: string | null = null): void {
    const { fsm, progress } = this._state;
    fsm.dispatch('NEXT_STAGE');
    progress.startStage(stageId);
    fsm.dispatch('START_STEP');
    progress.startStep(
      stepId ?? progress.firstOpenStep(progress.currentStage)?.id ?? null
    );
    this._state.phase = this._stepStartPhase();
  }

  /** `workflow_update.nextStageId`: leave the current step and stage for another stage. */
  private async _jumpToStage(stageId: string): Promise<boolean> {
    const { progress } = this._state;
    if (stageId === progress.currentStageId || !progress.findStage(stageId)) {
      return false;
    }
    await this._completeStep(`left for stage ${stageId}`, {
      stageId,
      stepId: null
    });
    return true;
  }

  private _stepStartPhase(): Phase {
    return this._settings().startMode === 'generation' &&
      !this._client.needsPlanningFirst
      ? 'generate'
      : 'plan';
  }

  // ------------------------------------------------------------------------------------------
  // State
  // ------------------------------------------------------------------------------------------

  private _emitProgress(): void {
    this._progressChanged.emit(this.snapshot);
  }

  private _onTransition(_: WorkflowStateMachine, transition: IFsmTransition) {
    this._stateChanged.emit(transition);
  }

  private _assertIdle(): void {
    if (this.isRunning) {
      throw refusal('runAlreadyActive');
    }
  }

  private _resetRun(): void {
    this._state.reset();
    this._control.clearPause();
  }

  private _warn(
    message: string | IMessage,
    source: IRunWarning['source']
  ): void {
    this._core.warn(message, source);
  }

  private get _state(): RunState {
    return this._core.state;
  }

  private get _control(): RunControl {
    return this._core.control;
  }

  private readonly _driver: INotebookDriver;
  private readonly _client: IPlannerService;
  private readonly _settings: () => IRunSettings;
  private readonly _hooks: IRunnerHooks;
  private readonly _now: () => Date;
  private readonly _trace: RunTrace;
  private readonly _registry: ActionRegistry;
  private readonly _builtins: IDisposableLike | null = null;
  private readonly _core: RunCore;
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
