/**
 * The `bcc` loop (docs/dialects.md#bcc-loop): the server decides what a behavior does and when a step
 * or stage is complete; the client owns the lists and moves through them.
 */
import type { GeneratingEvent } from '../../actionStream';
import { PlannerError } from '../../errors';
import { type ProtocolText, say } from '../../messages';
import type { ContextUpdate, PlanningResponse } from '../../schemas';
import type { DialectLog } from '../common';
import { bccWarning } from './actions';
import type { IBehaviorDef, IReflection, PlanningAnswer } from './answers';
import { emptyPlan, level, stageName, stepList, withIds } from './plan';
import { applyReflection, progressAt } from './reflection';
import type { BccRequests } from './requests';
import { BccState, templateStep } from './state';

export class BccLoop {
  constructor(
    private readonly _state: BccState,
    private readonly _requests: BccRequests,
    private readonly _log: DialectLog
  ) {}

  async stepStart(
    update: ContextUpdate,
    warn: (warning: ProtocolText) => void,
    signal?: AbortSignal
  ): Promise<void> {
    const where = this._requests.observation?.location?.current;
    const starting =
      this._state.plan.fsm.state === 'IDLE' ||
      this._state.plan.fsm.state === 'WORKFLOW_COMPLETED';
    if (starting) {
      const answer = await this._requests.planningAnswer(
        'IDLE',
        ['stages'],
        signal
      );
      if (answer.kind !== 'stages') {
        throw this._requests.unexpected('IDLE', answer.kind);
      }
      this._startWorkflow(answer, warn);
    }
    // Read after `_startWorkflow`, which makes a new plan.
    const plan = this._state.plan;
    if (
      !starting &&
      where?.stage_id &&
      where.stage_id !== plan.stages.current?.stage_id
    ) {
      this._moveToStage(where.stage_id, warn);
    }
    if (
      plan.stepsOf !== plan.stages.current?.stage_id ||
      plan.steps.current === null
    ) {
      const answer = await this._requests.planningAnswer(
        'STAGE_RUNNING',
        ['steps'],
        signal
      );
      if (answer.kind !== 'steps') {
        throw this._requests.unexpected('STAGE_RUNNING', answer.kind);
      }
      this._startStep(answer, update, warn);
    } else if (where?.step_id && where.step_id !== plan.steps.current.step_id) {
      this._moveToStep(where.step_id, warn);
    }
    if (plan.fsm.state !== 'STEP_RUNNING') {
      this._state.transition('STEP_RUNNING', plan.fsm.last_transition);
    }
  }

  private _startWorkflow(
    answer: Extract<PlanningAnswer, { kind: 'stages' }>,
    warn: (warning: ProtocolText) => void
  ): void {
    const goals = answer.goals ?? this._requests.idleGoalsText();
    const plan = emptyPlan();
    plan.variables = this._state.plan.variables;
    plan.goals = goals;
    const stages = withIds(answer.stages, 'stage_id', 'stage');
    if (stages.length === 0) {
      throw new PlannerError({
        kind: 'invalid',
        url: this._requests.urlOf('planning'),
        ...say('bccNoStages')
      });
    }
    plan.title = answer.title;
    plan.stages.current = stages[0];
    plan.stages.remaining = stages.slice(1);
    plan.stages.focus = answer.focus;
    plan.stages.expected = stages[0].verified_artifacts;
    this._state.plan = plan;
    this._state.templateSent = false;
    this._state.headings = [];
    if (answer.title) {
      this._state.pending.push({ type: 'update_title', title: answer.title });
    }
    if (answer.description) {
      this._state.pending.push({
        type: 'add',
        shot_type: 'markdown',
        content: answer.description
      });
    }
    this._state.heading('new_section', stageName(stages[0]), stages[0].title);
    this._state.transition('STAGE_RUNNING', 'START_WORKFLOW');
    this._requests.checkRequired(stages[0].required_variables, warn);
  }

  private _startStep(
    answer: Extract<PlanningAnswer, { kind: 'steps' }>,
    update: ContextUpdate,
    warn: (warning: ProtocolText) => void
  ): void {
    const plan = this._state.plan;
    const stage = plan.stages.current;
    const steps = withIds(answer.steps, 'step_id', 'step');
    if (!stage || steps.length === 0) {
      throw new PlannerError({
        kind: 'invalid',
        url: this._requests.urlOf('planning'),
        ...say('bccNoSteps', stage?.stage_id ?? '(none)')
      });
    }
    const wanted = this._requests.observation?.location?.current?.step_id;
    const first = steps.find(s => s.step_id === wanted) ?? steps[0];
    plan.steps = level();
    plan.steps.current = first;
    plan.steps.remaining = steps.filter(s => s !== first);
    plan.steps.focus = answer.focus;
    plan.stepListFocus = answer.focus;
    plan.steps.expected = first.verified_artifacts;
    plan.stepsOf = stage.stage_id;
    plan.behaviors = level();
    plan.iteration = 0;
    plan.goals = answer.goals ?? first.goal;
    if (this._state.templateSent) {
      update.stage_steps_update = {
        stage_id: stage.stage_id,
        steps: steps.map(s => templateStep(s))
      };
    }
    this._state.heading('new_step', first.title);
    this._state.transition('STEP_RUNNING', 'START_STEP');
    this._requests.checkRequired(first.required_variables, warn);
  }

  async planBehavior(
    update: ContextUpdate,
    response: PlanningResponse,
    signal?: AbortSignal
  ): Promise<void> {
    const answer = await this._requests.planningAnswer(
      'STEP_RUNNING',
      ['behavior'],
      signal
    );
    if (answer.kind !== 'behavior') {
      throw this._requests.unexpected('STEP_RUNNING', answer.kind);
    }
    this._startBehavior(answer.behavior, 'START_BEHAVIOR', update, response);
  }

  /** `behavior` becomes the current one (its id made up when it has none); the engine is told. */
  private _startBehavior(
    behavior: IBehaviorDef,
    event: 'START_BEHAVIOR' | 'NEXT_BEHAVIOR',
    update: ContextUpdate,
    response: PlanningResponse
  ): void {
    const plan = this._state.plan;
    plan.iteration += 1;
    behavior.behavior_id ||= `${plan.steps.current?.step_id ?? 'step'}_b${plan.iteration}`;
    plan.behaviors.current = behavior;
    plan.behaviors.expected = behavior.outputs;
    plan.behaviors.produced = [];
    plan.behaviors.in_progress = [];
    plan.behaviors.focus = behavior.task;
    plan.goals = behavior.task;
    this._state.transition('BEHAVIOR_RUNNING', event);
    const focus = [
      behavior.agent ? `${behavior.agent}: ${behavior.task}` : behavior.task,
      ...Object.entries(behavior.inputs).map(([k, v]) => `input ${k}: ${v}`),
      ...behavior.acceptance.map(c => `accept: ${c}`)
    ].join('\n');
    if (plan.iteration === 1) {
      // A step's first behavior: the engine is at this step (and stage) now, so their focus texts
      // (§3.3, and a stage reflection's next_step_focus) land there.
      if (plan.stages.focus) {
        progressAt(update, 'stages').focus = plan.stages.focus;
      }
      if (plan.steps.focus) {
        progressAt(update, 'steps').focus = plan.steps.focus;
      }
    }
    const entry = progressAt(update, 'behaviors');
    entry.focus = focus;
    entry.current_outputs = {
      produced: [],
      in_progress: [],
      ...entry.current_outputs,
      expected: behavior.outputs.map(o => o.name)
    };
    response.behavior = {
      id: behavior.behavior_id,
      iteration: plan.iteration,
      target: behavior.task
    };
  }

  /** Returns true when the answer is complete (no further behavior planning in this call). */
  async afterBehavior(
    update: ContextUpdate,
    response: PlanningResponse,
    warn: (warning: ProtocolText) => void,
    signal?: AbortSignal
  ): Promise<boolean> {
    const plan = this._state.plan;
    let stage: IReflection;
    if (plan.fsm.state === 'STEP_COMPLETED') {
      // A Retry after the stage reflection failed: the step's verdict is in; the stage's is asked again.
      // The variables of that verdict were lost with the failed answer: they go with this one.
      if (Object.keys(plan.variables).length > 0) {
        update.variables = { ...plan.variables };
      }
      stage = await this._requests.reflect('STEP_COMPLETED', warn, signal);
      this._apply(stage, update, warn);
    } else {
      this._state.transition('BEHAVIOR_COMPLETED', 'COMPLETE_ACTION');
      const reflection = await this._requests.reflect(
        'BEHAVIOR_COMPLETED',
        warn,
        signal
      );
      this._apply(reflection, update, warn);
      const behavior = plan.behaviors.current;
      if (behavior) {
        plan.behaviors.completed.push({
          ...behavior,
          completion_status: 'success',
          artifacts_produced: plan.behaviors.produced,
          ...(reflection.whathappened
            ? { whathappened: reflection.whathappened }
            : {})
        });
        plan.behaviors.current = null;
      }
      if (!reflection.stepComplete) {
        if (reflection.focus) {
          progressAt(update, 'behaviors').focus = reflection.focus;
        }
        response.transition = {
          continue_behaviors: true,
          target_achieved: false
        };
        if (reflection.ndjson && behavior) {
          // No /planning between NDJSON reflections: /generating runs the next iteration of this behavior.
          this._startBehavior(
            {
              ...behavior,
              behavior_id: '',
              whathappened: reflection.whathappened
            },
            'NEXT_BEHAVIOR',
            update,
            response
          );
          return true;
        }
        this._state.transition('STEP_RUNNING', 'NEXT_BEHAVIOR');
        return false;
      }
      this._state.transition('STEP_COMPLETED', 'COMPLETE_STEP');
      // Meant for the next step: it gets it unless the stage reflection names a focus of its own.
      plan.movingForward = reflection.focus;
      if (reflection.stageComplete) {
        // An NDJSON reflection that also ends the stage: applied once, above.
        stage = reflection;
      } else {
        stage = await this._requests.reflect('STEP_COMPLETED', warn, signal);
        this._apply(stage, update, warn);
      }
    }
    return this._afterStep(stage, response, warn);
  }

  /** The step is done (`stage`: the stage's verdict): the next step, or the next stage. */
  private _afterStep(
    stage: IReflection,
    response: PlanningResponse,
    warn: (warning: ProtocolText) => void
  ): boolean {
    const plan = this._state.plan;
    response.targetAchieved = true;
    const step = plan.steps.current;
    if (step) {
      plan.steps.completed.push({
        ...step,
        completion_status: 'success',
        artifacts_produced: plan.steps.produced
      });
    }
    const nextStep =
      plan.steps.remaining.find(s => s.step_id === stage.nextStepId) ??
      plan.steps.remaining[0];
    if (!stage.stageComplete && nextStep) {
      plan.steps.remaining = plan.steps.remaining.filter(s => s !== nextStep);
      plan.steps.current = nextStep;
      plan.steps.expected = nextStep.verified_artifacts;
      plan.steps.produced = [];
      plan.steps.in_progress = [];
      plan.goals = nextStep.goal;
      plan.behaviors = level();
      plan.iteration = 0;
      // Sent to the engine with the step's first behavior (`_startBehavior`).
      plan.steps.focus =
        stage.focus ?? plan.movingForward ?? plan.stepListFocus;
      plan.movingForward = undefined;
      this._state.heading('new_step', nextStep.title);
      this._state.transition('STEP_RUNNING', 'NEXT_STEP');
      this._requests.checkRequired(nextStep.required_variables, warn);
      response.transition = {
        target_achieved: true,
        next_step_id: nextStep.step_id
      };
      return true;
    }
    if (!stage.stageComplete) {
      this._log('bcc: no step remains; the stage is treated as complete');
    }
    plan.movingForward = undefined;
    this._completeStage(warn);
    const next = plan.stages.current;
    // The remaining steps of the stage are skipped: without stage_complete the engine would run them.
    response.transition = next
      ? {
          target_achieved: true,
          next_stage_id: next.stage_id,
          stage_complete: true
        }
      : { target_achieved: true, stage_complete: true };
    return true;
  }

  private _completeStage(warn: (warning: ProtocolText) => void): void {
    const plan = this._state.plan;
    this._state.transition('STAGE_COMPLETED', 'COMPLETE_STAGE');
    if (plan.steps.remaining.length > 0) {
      this._log(
        `bcc: steps skipped: ${plan.steps.remaining.map(s => s.step_id).join(', ')}`
      );
    }
    const stage = plan.stages.current;
    if (stage) {
      plan.stages.completed.push({
        ...stage,
        completion_status: 'success',
        artifacts_produced: plan.stages.produced,
        ...plan.stageNotes
      });
      if (plan.stepsOf === stage.stage_id) {
        plan.pastSteps = {
          ...plan.pastSteps,
          [stage.stage_id]: stepList(plan)
        };
      }
    }
    const next = plan.stages.remaining.shift() ?? null;
    plan.stages.current = next;
    plan.stages.expected = next?.verified_artifacts ?? [];
    plan.stages.produced = [];
    plan.stages.in_progress = [];
    plan.steps = level();
    plan.behaviors = level();
    plan.iteration = 0;
    plan.stepsOf = null;
    plan.stageNotes = undefined;
    if (next) {
      plan.goals = next.goal;
      this._state.heading('new_section', stageName(next), next.title);
      this._state.transition('STAGE_RUNNING', 'NEXT_STAGE');
      this._requests.checkRequired(next.required_variables, warn);
    } else {
      this._state.transition('WORKFLOW_COMPLETED', 'COMPLETE_WORKFLOW');
    }
  }

  /**
   * What `planning` does at a step start, for a `/generating` with no behavior planned: the plan goes
   * to the engine as actions before the others (`update_workflow`, `update_stage_steps`), warnings as
   * warning events.
   */
  async planBeforeGenerating(signal?: AbortSignal): Promise<GeneratingEvent[]> {
    const warnings: GeneratingEvent[] = [];
    const update: ContextUpdate = {};
    const response: PlanningResponse = { targetAchieved: false };
    await this.stepStart(
      update,
      warning => warnings.push(bccWarning(this._log, warning)),
      signal
    );
    await this.planBehavior(update, response, signal);
    this._state.finish(response, update);
    const template = update.workflow_update?.workflowTemplate;
    const steps = update.stage_steps_update;
    this._state.pending.unshift(
      ...(template
        ? [{ type: 'update_workflow', updated_workflow: template }]
        : []),
      ...(steps
        ? [
            {
              type: 'update_stage_steps',
              stage_id: steps.stage_id,
              updated_steps: steps.steps
            }
          ]
        : [])
    );
    return warnings;
  }

  /** The engine moved to another stage on its own (resume, user choice): follow it. */
  private _moveToStage(
    stageId: string,
    warn: (warning: ProtocolText) => void
  ): void {
    const plan = this._state.plan;
    const target = plan.stages.remaining.find(s => s.stage_id === stageId);
    if (!target) {
      warn(say('bccUnknownStage', stageId));
      return;
    }
    plan.stages.remaining = [
      target,
      ...plan.stages.remaining.filter(s => s !== target)
    ];
    this._completeStage(warn);
  }

  private _moveToStep(
    stepId: string,
    warn: (warning: ProtocolText) => void
  ): void {
    const plan = this._state.plan;
    const target = plan.steps.remaining.find(s => s.step_id === stepId);
    if (!target) {
      warn(say('bccUnknownStep', stepId));
      return;
    }
    if (plan.steps.current) {
      plan.steps.completed.push({
        ...plan.steps.current,
        completion_status: 'skipped',
        artifacts_produced: []
      });
    }
    plan.steps.remaining = plan.steps.remaining.filter(s => s !== target);
    plan.steps.current = target;
    plan.steps.focus = plan.stepListFocus;
    plan.goals = target.goal;
    plan.behaviors = level();
    plan.iteration = 0;
    this._state.heading('new_step', target.title);
    this._state.transition('STEP_RUNNING', 'NEXT_STEP');
    this._requests.checkRequired(target.required_variables, warn);
  }

  private _apply(
    reflection: IReflection,
    update: ContextUpdate,
    warn: (warning: ProtocolText) => void
  ): void {
    applyReflection(this._state, reflection, update, {
      observation: this._requests.observation,
      log: this._log,
      warn
    });
  }
}
