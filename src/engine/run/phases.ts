/**
 * The loop's phases (docs/protocol.md#the-loop): plan, and generate (one behavior's stream, read and
 * applied by a `BehaviorRun` that reports here), step and stage navigation, and the ends of a loop
 * (settle, fail, complete). They change the run's fields only through the runner (`IRunHost.change`);
 * the workflow models (state machine, progress, effects) change through their own methods.
 *
 * Per step: /planning; target achieved -> the step completes and the run moves on through the
 * workflow template itself; otherwise /generating (streamed), the actions are applied one by one, and
 * /planning is asked again with `behavior_feedback`. The server decides whether more behaviors follow.
 */
import { isClientNotice, PlannerError } from '../../protocol';
import type {
  BehaviorFeedback,
  GeneratingRequestInput,
  PlanningRequestInput,
  PlanningResponse
} from '../../protocol';
import { msg, say } from '../messages';
import type { INotebookSummary } from '../ports/driver';
import { errorMessage, errorText } from '../actions/registry';
import type { IPauseReason, IRunError, IRunFinished } from '../types';
import {
  BehaviorRun,
  type IBehaviorOutcome,
  type IBehaviorSink,
  ranCode
} from './behavior';
import type { RunBoundaries } from './boundaries';
import type { IRunHost } from './host';
import type { ILocation } from './planUpdate';
import { PlanApplier } from './planApply';
import { checkpointBehavior } from './rewindRun';
import { RunRequests } from './runRequests';
import type { Phase } from '../state/runState';

/** After this many /planning failures in a row the run stops with an error instead of falling back. */
export const MAX_PLANNING_FAILURES = 3;

const STEP_PAUSE: IPauseReason = {
  kind: 'step',
  ...say('pausedStepMode')
};

export class RunPhases {
  constructor(
    private readonly _host: IRunHost,
    private readonly _boundaries: RunBoundaries
  ) {
    this._plans = new PlanApplier(_host, _boundaries);
    this._requests = new RunRequests(_host, _boundaries);
  }

  /** The behavior whose stream is being read and applied, if any. */
  get behavior(): BehaviorRun | null {
    return this._behavior;
  }

  /** The phase a step starts in. */
  stepStartPhase(): Phase {
    return this._host.settings().startMode === 'generation' &&
      !this._host.client.needsPlanningFirst
      ? 'generate'
      : 'plan';
  }

  async plan(): Promise<IRunFinished | null> {
    const host = this._host;
    const { state, control } = host;
    // The user may have run cells since the last collection.
    host.change({ variablesDirty: true });
    await this._boundaries.refreshVariables();
    const notebook = host.driver.notebookSummary();
    const body =
      this._requests.takeRetry('planning') ?? this._requests.planning(notebook);
    let response: PlanningResponse;
    try {
      response = await control.untilStopped(
        host.client.planning(body, {
          signal: control.signal,
          notebook,
          onWarning: warning =>
            isClientNotice(warning)
              ? this._boundaries.warn(
                  warning.text ?? warning.message,
                  'planner'
                )
              : this._plans.problem(warning.text ?? warning.message)
        })
      );
    } catch (error) {
      control.throwIfStopped();
      this._boundaries.observeDialect();
      return this._planningFailed(error, body);
    }
    this._boundaries.observeDialect();
    host.change({ planningFailures: 0, pendingFeedback: null });
    const nextStageId = await this._plans.apply(response);
    if (nextStageId && (await this._jumpToStage(nextStageId))) {
      return null;
    }
    const stageComplete = response.transition?.stage_complete === true;
    const achieved =
      stageComplete ||
      response.targetAchieved ||
      response.transition?.target_achieved === true;
    if (achieved || state.endStepRequested) {
      const target = achieved ? this._plans.transitionTarget(response) : null;
      if (!achieved && response.transition?.target_achieved === false) {
        // The planner ended the step and says its target was not reached: it gave the step up.
        state.progress.skipCurrentStep();
      }
      await this._completeStep(undefined, target, stageComplete);
    } else if (response.transition?.continue_behaviors === false) {
      const step = state.progress.currentStepId ?? '(unnamed)';
      this._boundaries.warn(msg('stepEndedEarly', step), 'planner');
      state.progress.skipCurrentStep();
      await this._completeStep('ended without reaching its target');
    } else {
      host.change({ phase: 'generate' });
    }
    return null;
  }

  private async _planningFailed(
    error: unknown,
    body: PlanningRequestInput
  ): Promise<IRunFinished | null> {
    const host = this._host;
    const failures = host.state.planningFailures + 1;
    host.change({ planningFailures: failures });
    const detail = errorText(error);
    // An answer the service rejects as out of place would be just as wrong blind, and one the planner
    // cannot do without (a bcc reflection) has no fallback: the user decides.
    const blind =
      error instanceof PlannerError &&
      (error.kind === 'invalid' || error.needsAnswer);
    if (blind || failures >= MAX_PLANNING_FAILURES) {
      host.change({ retry: { endpoint: 'planning', body } });
      return this.fail({
        endpoint: 'planning',
        ...(blind
          ? say('planningFailed', detail)
          : say('planningFailedInARow', detail, failures)),
        retryable: true
      });
    }
    if (host.state.endStepRequested) {
      await this._completeStep();
      return null;
    }
    this._boundaries.warn(msg('planningFallback', detail), 'planner');
    this._boundaries.addEffect(
      `⚠️ WARN: /planning failed: ${errorMessage(error)}; continuing with /generating without a plan`
    );
    host.change({ pendingFeedback: null, filter: null, phase: 'generate' });
    return null;
  }

  async generate(): Promise<IRunFinished | null> {
    const host = this._host;
    const { state } = host;
    if (!state.behavior) {
      const max = host.settings().maxExecutionSteps;
      if (max > 0 && state.behaviorsRun >= max) {
        return this.stopForMaxSteps(max);
      }
      checkpointBehavior(host, () => this._beginBehavior());
    }
    await this._boundaries.refreshVariables();
    const notebook = host.driver.notebookSummary();
    const body =
      this._requests.takeRetry('generating') ??
      (await this._requests.generating(notebook));
    const outcome = await this._runBehavior(body, notebook);
    this._boundaries.observeDialect();
    if (outcome.cut) {
      // After the behavior's own effects, so that the planner sees it.
      this._boundaries.addEffect(`⚠️ ${outcome.cut}`);
    }
    // A stream that ends without `finish_thinking` leaves no live thinking cell behind.
    await this._boundaries.closeThinking();
    if (outcome.failure !== null) {
      host.control.throwIfStopped();
      return this.fail(this._generatingFailed(outcome.failure, body));
    }
    await this._closeBehavior();
    return null;
  }

  private _generatingFailed(
    failure: unknown,
    body: GeneratingRequestInput
  ): IRunError {
    const host = this._host;
    const failed = say('generatingFailed', errorText(failure));
    const applied = host.state.behavior?.actionIndex ?? 0;
    if (applied === 0) {
      host.change({ retry: { endpoint: 'generating', body } });
    } else {
      // Re-sending the request would replay the actions already applied and add their cells twice:
      // the behavior ends with what it did, and a retry asks /planning what comes next.
      this._boundaries.addEffect(
        `⚠️ ${failed.message} after ${applied} action(s) were applied; they are kept and the behavior ends here.`
      );
      if (host.state.fsm.can('COMPLETE_BEHAVIOR')) {
        host.state.fsm.dispatch('COMPLETE_BEHAVIOR');
      }
      this.closeInterruptedBehavior('error');
      host.change({ phase: 'plan' });
    }
    const missing =
      failure instanceof PlannerError ? failure.missingVariables : undefined;
    return {
      endpoint: 'generating',
      ...failed,
      retryable: true,
      ...(missing?.length ? { missingVariables: [...missing] } : {})
    };
  }

  // Behaviors

  private _beginBehavior(): void {
    const host = this._host;
    const { fsm, progress, timings } = host.state;
    fsm.dispatch(
      fsm.state === 'BEHAVIOR_COMPLETED' ? 'NEXT_BEHAVIOR' : 'START_BEHAVIOR'
    );
    const id = progress.startBehavior();
    const max = Math.max(1, host.settings().maxHistoryItems);
    host.change({
      behavior: {
        id,
        executed: 0,
        succeeded: 0,
        sectionsAdded: 0,
        lastResult: 'success',
        actionIndex: 0,
        rotated: false
      },
      endStepRequested: false,
      timings: [
        ...timings,
        {
          behaviorId: id,
          iteration: progress.iteration,
          stageId: progress.currentStageId,
          stepId: progress.currentStepId,
          startedAt: host.now().toISOString(),
          endedAt: null,
          durationMs: null
        }
      ].slice(-max)
    });
    host.signals.progress();
  }

  /** The open behavior's stream, read and applied by a `BehaviorRun` that reports to `_sink()`. */
  private async _runBehavior(
    body: GeneratingRequestInput,
    notebook: INotebookSummary
  ): Promise<IBehaviorOutcome> {
    const host = this._host;
    const open = host.state.behavior;
    if (!open) {
      throw new Error('No behavior is open.');
    }
    const behavior = new BehaviorRun({
      id: open.id,
      location: () => ({
        stageId: host.state.progress.currentStageId,
        stepId: host.state.progress.currentStepId
      }),
      counters: open,
      // Straight from the adapter detection chose, once there is one (IPlannerService.adapter).
      stream: (host.client.adapter?.() ?? host.client).generating(body, {
        signal: host.control.signal,
        notebook
      }),
      registry: host.registry,
      notebook: host.notebook,
      control: host.control,
      settings: () => host.settings(),
      hooks: host.hooks,
      now: () => host.now(),
      sink: this._sink()
    });
    this._behavior = behavior;
    host.change({ buffer: behavior.queued as unknown[] });
    try {
      return await behavior.run();
    } finally {
      this.keepCounters();
      this._behavior = null;
    }
  }

  /** The counters of the behavior under way, into the state (it is saved with them). */
  keepCounters(): void {
    const open = this._host.state.behavior;
    const behavior = this._behavior;
    if (open && behavior && open.id === behavior.id) {
      this._host.change({ behavior: { ...open, ...behavior.counters } });
    }
  }

  private _sink(): IBehaviorSink {
    const host = this._host;
    const { state } = host;
    const boundaries = this._boundaries;
    return {
      warn: (message, source) => boundaries.warn(message, source),
      effect: text => boundaries.addEffect(text),
      archiveEffects: () => {
        state.effects.rotate();
        host.signals.effects(state.effects.toJSON());
      },
      actionStarted: () => {
        boundaries.rotateEffects();
        state.fsm.dispatch(
          state.fsm.state === 'ACTION_COMPLETED'
            ? 'NEXT_ACTION'
            : 'START_ACTION'
        );
      },
      actionApplied: async (action, index, result) => {
        if (result.summary) {
          state.progress.recordAction(result.summary);
        }
        if (ranCode(action)) {
          host.change({ variablesDirty: true, codeRanSinceCollection: true });
        }
        state.fsm.dispatch('COMPLETE_ACTION');
        const behaviorId = this._behavior?.id ?? null;
        host.signals.actionApplied({ behaviorId, index, action, result });
        if (action.action === 'exec' && this._tracksOutputs()) {
          await this._refreshBetweenActions();
        }
      },
      queueChanged: () => host.signals.progress(),
      pausePoint: () => boundaries.pausePoint(),
      pause: reason => boundaries.requestPause(reason),
      endStep: stepId => {
        const current = state.progress.currentStepId;
        if (stepId && current && stepId !== current) {
          boundaries.warn(msg('endPhaseOtherStep', stepId, current), 'action');
        }
        host.change({ endStepRequested: true });
      },
      updateWorkflow: template => this._plans.proposeWorkflow(template),
      replaceStageSteps: async (stageId, steps) =>
        this._plans.replaceStageSteps(stageId, steps)
    };
  }

  private _tracksOutputs(): boolean {
    const { progress } = this._host.state;
    return (['stages', 'steps', 'behaviors'] as const).some(
      level => progress.outputs(level).expected.length > 0
    );
  }

  /** Outputs tracking sees an exec's variables at once, unless the run is stopping or pausing. */
  private async _refreshBetweenActions(): Promise<void> {
    const { state, control } = this._host;
    if (
      state.variablesDirty &&
      !control.stopRequested &&
      !control.pauseRequested
    ) {
      await this._boundaries.refreshVariables();
    }
  }

  private async _closeBehavior(): Promise<void> {
    const host = this._host;
    const { state, control } = host;
    // A behavior that applied nothing still moves the one before's effects to history.
    this._boundaries.rotateEffects();
    state.fsm.dispatch('COMPLETE_BEHAVIOR');
    await this._boundaries.refreshVariables();
    // Also after end_phase: /planning gets the feedback; the step completes after its answer.
    host.change({
      pendingFeedback: this._finishBehavior(),
      behaviorsRun: state.behaviorsRun + 1,
      phase: 'plan'
    });
    await this._boundaries.saveState({ checkpoint: true });
    if (state.stepMode || control.pauseAfterBehavior) {
      control.pauseAfterBehavior = false;
      this._boundaries.requestPause(STEP_PAUSE);
    }
    host.signals.progress();
  }

  /** Records the open behavior as completed; returns its feedback. */
  private _finishBehavior(note?: string): BehaviorFeedback {
    const host = this._host;
    const { state } = host;
    const behavior = state.behavior;
    if (!behavior) {
      throw new Error('No behavior is open.');
    }
    state.progress.completeBehavior(state.presentVariables(), note);
    // A planner may give two behaviors the same id: the open timing is the latest.
    const timings = [...state.timings];
    const at = timings.map(t => t.behaviorId).lastIndexOf(behavior.id);
    const timing = timings[at];
    if (timing && timing.endedAt === null) {
      const end = host.now();
      timings[at] = {
        ...timing,
        endedAt: end.toISOString(),
        durationMs: end.getTime() - Date.parse(timing.startedAt)
      };
    }
    host.change({ behavior: null, timings });
    return {
      behavior_id: behavior.id,
      actions_executed: behavior.executed,
      actions_succeeded: behavior.succeeded,
      sections_added: behavior.sectionsAdded,
      // Any failed action makes the behavior's result an error, not only the last one.
      last_action_result:
        note ??
        (behavior.succeeded < behavior.executed ? 'error' : behavior.lastResult)
    };
  }

  /** A behavior cut short (stop, reload): recorded as it is, its feedback kept for the next plan. */
  closeInterruptedBehavior(note: string): void {
    this._host.change({
      pendingFeedback: this._finishBehavior(note),
      endStepRequested: false
    });
  }

  // Steps and stages

  /**
   * Completes the current step and goes to `target`, or else to the next step or stage. With
   * `stageComplete` the stage completes too: none of its remaining steps runs, not even one `target` names.
   */
  private async _completeStep(
    note?: string,
    target: ILocation | null = null,
    stageComplete = false
  ): Promise<void> {
    const host = this._host;
    const { fsm, progress } = host.state;
    fsm.dispatch('COMPLETE_STEP');
    await this._boundaries.refreshVariables();
    const present = host.state.presentVariables();
    progress.completeStep(present, note);
    host.change({ pendingFeedback: null, endStepRequested: false });
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
      host.change({ phase: this.stepStartPhase() });
    } else {
      fsm.dispatch('COMPLETE_STAGE');
      progress.completeStage(present);
      const nextStage = progress.nextStage();
      if (nextStage) {
        this._enterStage(nextStage.id);
      } else {
        fsm.dispatch('COMPLETE_WORKFLOW');
        host.change({ phase: 'done' });
      }
    }
    await this._boundaries.saveState({ checkpoint: true });
    host.signals.progress();
  }

  private _enterStage(stageId: string, stepId: string | null = null): void {
    const { fsm, progress } = this._host.state;
    fsm.dispatch('NEXT_STAGE');
    progress.startStage(stageId);
    fsm.dispatch('START_STEP');
    progress.startStep(
      stepId ?? progress.firstOpenStep(progress.currentStage)?.id ?? null
    );
    this._host.change({ phase: this.stepStartPhase() });
  }

  /** `workflow_update.nextStageId`: leave the current step and stage for another stage. */
  private async _jumpToStage(stageId: string): Promise<boolean> {
    const { progress } = this._host.state;
    if (stageId === progress.currentStageId || !progress.findStage(stageId)) {
      return false;
    }
    await this._completeStep(`left for stage ${stageId}`, {
      stageId,
      stepId: null
    });
    return true;
  }

  // Ends of a loop

  stopForMaxSteps(max: number): Promise<IRunFinished> {
    const text = msg('maxSteps', this._host.state.behaviorsRun, max);
    this._boundaries.warn(text, 'engine');
    return this.settle({
      reason: 'max_steps',
      ...say(text.id, ...text.params)
    });
  }

  settleStopped(): Promise<IRunFinished> {
    return this.settle({ reason: 'stopped', ...say('runStopped') });
  }

  /** Leaves a consistent, saved, resumable state: the current step is planned again on resume. */
  async settle(finished: IRunFinished): Promise<IRunFinished> {
    const host = this._host;
    const { state, control } = host;
    const leaving = control.leavingNotebook;
    if (leaving) {
      host.driver.holdSaves(true);
    } else {
      await this._boundaries.closeThinking();
    }
    if (state.behavior) {
      this.closeInterruptedBehavior(
        finished.reason === 'stopped' ? 'stopped' : 'interrupted'
      );
    }
    host.change({
      phase: state.phase === 'done' ? 'done' : 'plan',
      retry: null,
      error: null
    });
    control.clearPause();
    if (state.fsm.can('CANCEL')) {
      state.fsm.dispatch('CANCEL');
    }
    if (!leaving) {
      await this._boundaries.saveState();
    }
    return finished;
  }

  async fail(error: IRunError): Promise<IRunFinished> {
    const host = this._host;
    await this._boundaries.closeThinking();
    host.change({ error });
    if (host.state.fsm.can('FAIL')) {
      host.state.fsm.dispatch('FAIL');
    }
    host.signals.error({ ...error });
    await this._boundaries.saveState();
    return { reason: 'error', message: error.message, text: error.text };
  }

  async complete(): Promise<IRunFinished> {
    await this._boundaries.closeThinking();
    await this._boundaries.saveState();
    return { reason: 'completed', ...say('workflowComplete') };
  }

  private readonly _plans: PlanApplier;
  private readonly _requests: RunRequests;
  private _behavior: BehaviorRun | null = null;
}
