/**
 * The loop's phases (docs/protocol.md#the-loop): plan, and generate (one behavior's stream, read and
 * applied by a `BehaviorRun` that reports here), step and stage navigation, and the ends of a loop
 * (settle, fail, complete). What each changes in the run state is decided by the functions of
 * `behaviorChanges.ts` and `stepChanges.ts`, and dispatched here as transactions.
 *
 * Per step: /planning; target achieved -> the step completes and the run moves on through the
 * workflow template itself; otherwise /generating (streamed), the actions are applied one by one, and
 * /planning is asked again with `behavior_feedback`. The server decides whether more behaviors follow.
 */
import { isClientNotice, PlannerError } from '../../protocol';
import type {
  GeneratingRequestInput,
  PlanningRequestInput,
  PlanningResponse
} from '../../protocol';
import { outcomeProblems } from '../state/contracts';
import { msg, say } from '../messages';
import type { INotebookSummary } from '../ports/driver';
import { errorMessage, errorText } from '../actions/registry';
import type { IRunError, Phase } from '../state/runState';
import { op, type RunOp, transaction } from '../state/transaction';
import type { IPauseReason, IRunFinished } from '../types';
import {
  BehaviorRun,
  type IBehaviorOutcome,
  type IBehaviorSink,
  ranCode
} from './behavior';
import {
  actionApplied,
  actionStarted,
  behaviorBegun,
  behaviorClosed,
  countersKept,
  generatingFailed,
  plannerAction
} from './behaviorChanges';
import { rotateEffects, type RunBoundaries } from './boundaries';
import type { IRunHost } from './host';
import type { ILocation } from './planUpdate';
import { PlanApplier } from './planApply';
import { RunOutputChecks, stepGivenUp } from './outputChecks';
import { RunRequests } from './runRequests';
import { plannerMemory } from '../rewind/rollback';
import { failed, settled, stepCompleted } from './stepChanges';

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
    this._outputs = new RunOutputChecks(_host, warning =>
      _boundaries.warn(warning, 'engine')
    );
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
    await this._dispatch('phases.plan', [op.set({ variablesDirty: true })]);
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
    await this._dispatch('phases.planned', [
      op.set({ planningFailures: 0, pendingFeedback: null })
    ]);
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
      // The planner ended the step and says its target was not reached: it gave the step up.
      const givenUp =
        !achieved && response.transition?.target_achieved === false
          ? this._giveUp(response)
          : [];
      await this._completeStep({ target, stageComplete, givenUp });
    } else if (response.transition?.continue_behaviors === false) {
      await this._completeStep({
        note: 'ended without reaching its target',
        givenUp: this._giveUp(response)
      });
    } else {
      await this._dispatch('phases.generateNext', [
        op.set({ phase: 'generate' })
      ]);
    }
    return null;
  }

  private async _planningFailed(
    error: unknown,
    body: PlanningRequestInput
  ): Promise<IRunFinished | null> {
    const host = this._host;
    const failures = host.state.planningFailures + 1;
    await this._dispatch('phases.planningFailed', [
      op.set({ planningFailures: failures })
    ]);
    const detail = errorText(error);
    // An answer the service rejects as out of place would be just as wrong blind, and one the planner
    // cannot do without (a bcc reflection) has no fallback: the user decides.
    const blind =
      error instanceof PlannerError &&
      (error.kind === 'invalid' || error.needsAnswer);
    if (blind || failures >= MAX_PLANNING_FAILURES) {
      await this._dispatch('phases.planningFailed', [
        op.set({ retry: { endpoint: 'planning', body } })
      ]);
      return this.fail({
        endpoint: 'planning',
        ...(blind
          ? say('planningFailed', detail)
          : say('planningFailedInARow', detail, failures)),
        retryable: true,
        ...plannerAction(error)
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
    await this._dispatch('phases.planningFallback', [
      op.set({ pendingFeedback: null, filter: null, phase: 'generate' })
    ]);
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
      await this._dispatch(
        'phases.behaviorBegun',
        behaviorBegun(state, {
          now: host.now(),
          maxHistoryItems: host.settings().maxHistoryItems,
          planner: plannerMemory(host.client)
        }),
        { show: true }
      );
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
      const { ops, error } = generatingFailed(state, {
        failure: outcome.failure,
        body,
        now: host.now()
      });
      await this._dispatch('phases.generatingFailed', ops);
      return this.fail(error);
    }
    await this._closeBehavior();
    return null;
  }

  // Behaviors

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
      dataFiles: () => host.state.dataFiles,
      now: () => host.now(),
      sink: this._sink()
    });
    this._behavior = behavior;
    try {
      return await behavior.run();
    } finally {
      void this._dispatch(
        'phases.behaviorEnded',
        countersKept(host.state, behavior)
      );
      this._behavior = null;
    }
  }

  private _sink(): IBehaviorSink {
    const host = this._host;
    const { state } = host;
    const boundaries = this._boundaries;
    return {
      warn: (message, source) => boundaries.warn(message, source),
      effect: text => boundaries.addEffect(text),
      archiveEffects: () =>
        void this._dispatch('behavior.archiveEffects', [op.effects('rotate')]),
      actionStarted: () =>
        void this._dispatch('behavior.actionStarted', actionStarted(state)),
      actionApplied: async (action, index, result) => {
        await this._dispatch(
          'behavior.actionApplied',
          actionApplied(action, result)
        );
        if (ranCode(action)) {
          this._outputs.codeRan();
        }
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
          const name = state.progress.currentStep?.name ?? current;
          boundaries.warn(msg('endPhaseOtherStep', stepId, name), 'action');
        }
        void this._dispatch('behavior.endStep', [
          op.set({ endStepRequested: true })
        ]);
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
    await this._dispatch('phases.behaviorCompleted', [
      ...rotateEffects(state),
      op.fsm('COMPLETE_BEHAVIOR')
    ]);
    await this._outputs.afterBehavior(state.behavior?.id ?? null);
    await this._boundaries.refreshVariables();
    await this._dispatch(
      'phases.behaviorClosed',
      behaviorClosed(state, host.now()),
      { save: 'checkpoint', show: true }
    );
    if (state.stepMode || control.pauseAfterBehavior) {
      control.pauseAfterBehavior = false;
      this._boundaries.requestPause(STEP_PAUSE);
    }
  }

  // Steps and stages

  /**
   * Completes the current step (`givenUp`: it ended without reaching its target) and goes to `target`,
   * or else to the next step or stage. With `stageComplete` the stage completes too.
   */
  private async _completeStep(
    step: {
      note?: string;
      target?: ILocation | null;
      stageComplete?: boolean;
      /** The step was given up (`stepGivenUp`): what that records. */
      givenUp?: RunOp[];
    } = {}
  ): Promise<void> {
    await this._dispatch('phases.completeStep', [
      ...(step.givenUp ?? []),
      op.fsm('COMPLETE_STEP')
    ]);
    await this._boundaries.refreshVariables();
    await this._dispatch(
      'phases.stepCompleted',
      stepCompleted(this._host.state, {
        note: step.note,
        target: step.target ?? null,
        stageComplete: step.stageComplete ?? false,
        startPhase: this.stepStartPhase()
      }),
      { save: 'checkpoint', show: true }
    );
  }

  /** The planner gave the current step up: the user is told why; returns what the step records. */
  private _giveUp(response: PlanningResponse): RunOp[] {
    const { warning, ops } = stepGivenUp(this._host.state, response);
    this._boundaries.warn(warning, 'planner');
    return ops;
  }

  /** `workflow_update.nextStageId`: leave the current step and stage for another stage. */
  private async _jumpToStage(stageId: string): Promise<boolean> {
    const { progress } = this._host.state;
    if (stageId === progress.currentStageId || !progress.findStage(stageId)) {
      return false;
    }
    await this._completeStep({
      note: `left for stage ${stageId}`,
      target: { stageId, stepId: null }
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
    const { control } = host;
    const leaving = control.leavingNotebook;
    if (leaving) {
      host.driver.holdSaves(true);
    } else {
      await this._boundaries.closeThinking();
    }
    control.clearPause();
    await this._dispatch(
      'phases.settled',
      settled(host.state, finished.reason, host.now()),
      leaving ? {} : { save: 'now' }
    );
    return finished;
  }

  async fail(error: IRunError): Promise<IRunFinished> {
    await this._boundaries.closeThinking();
    await this._dispatch('phases.failed', failed(error));
    this._host.signals.error({ ...error });
    await this._dispatch('phases.failed', [], { save: 'now' });
    return { reason: 'error', message: error.message, text: error.text };
  }

  async complete(): Promise<IRunFinished> {
    await this._boundaries.closeThinking();
    const outcome = await this._outputs.atEnd();
    await this._dispatch('phases.completed', [], { save: 'now' });
    const problems = outcomeProblems(outcome.givenUp, outcome.deliverables);
    return {
      reason: 'completed',
      ...(problems.length > 0
        ? say('workflowEndedWithProblems', problems.join('; '))
        : say('workflowComplete')),
      outcome
    };
  }

  private _dispatch(
    origin: string,
    ops: RunOp[],
    options: { show?: boolean; save?: 'checkpoint' | 'now' } = {}
  ): Promise<void> {
    return this._host.dispatch(transaction(origin, ops, options));
  }

  private readonly _plans: PlanApplier;
  private readonly _requests: RunRequests;
  private readonly _outputs: RunOutputChecks;
  private _behavior: BehaviorRun | null = null;
}
