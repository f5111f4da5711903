/**
 * The `bcc` dialect (the server Notebook-BCC was written against): a stateless server that reads the
 * whole plan and a sibling `state` on every request, answers `/planning` in XML (stages, steps, behavior)
 * depending on `state.FSM.state`, `/generating` with actions keyed by `type`, and `/reflecting` with a
 * reflection (docs/dialects.md#bcc). The adapter owns the plan and the FSM state it sends.
 */
import { PlannerError } from '../errors';
import { overlongLineWarning } from '../actionStream';
import type { GeneratingEvent } from '../actionStream';
import { msg, type ProtocolText, say } from '../messages';
import type { IGeneratingOptions, IPlanningOptions } from './common';
import { isRecord, JsonObject } from '../fields';
import {
  progressUpdatesOf,
  type ContextUpdate,
  type GeneratingRequestInput,
  type PlanningRequestInput,
  type PlanningResponse,
  type ProgressLevelName,
  type ProgressUpdate
} from '../schemas';
import { IBehaviorDef, IReflection, PlanningAnswer } from './bccAnswers';
import {
  httpError,
  IDialectPlannerService,
  parseJson,
  readLines,
  readText,
  send
} from './common';
import {
  emptyPlan,
  IPlan,
  IPrefetchedAnswer,
  level,
  stageName,
  stepList,
  withIds
} from './bccPlan';
import { BccRequests } from './bccRequests';

export { DEFAULT_BCC_IDLE_GOALS } from './bccPlan';
export type { IBccOptions, IPrefetchedAnswer } from './bccPlan';

/** Kinds of cell the adapter itself queues (titles, headings, markdown, workflow updates). */
const OWN_PENDING = new Set([
  'update_title',
  'new_section',
  'new_step',
  'update_workflow',
  'update_stage_steps'
]);

/**
 * A saved queued cell the adapter could have written: a notebook file is untrusted input, and an
 * entry of code or an `exec` in it would run on Resume before the planner is asked anything.
 */
function isOwnPending(entry: Record<string, unknown>): boolean {
  return (
    OWN_PENDING.has(String(entry.type)) ||
    (entry.type === 'add' && entry.shot_type === 'markdown')
  );
}

export class BccPlannerService
  extends BccRequests
  implements IDialectPlannerService
{
  readonly dialect = 'bcc';

  /** The IDLE answer that detection already received: used instead of asking again. */
  usePrefetched(answer: IPrefetchedAnswer): void {
    this._prefetched = answer;
  }

  async planning(
    request: PlanningRequestInput,
    options: IPlanningOptions = {}
  ): Promise<PlanningResponse> {
    this._observation = request.observation;
    this._notebook = options.notebook ?? null;
    const warn = (warning: ProtocolText) => {
      this._log(warning.message);
      options.onWarning?.(warning);
    };
    const update: ContextUpdate = {};
    const response: PlanningResponse = { targetAchieved: false };
    if (request.behavior_feedback) {
      this._feedback = request.behavior_feedback as JsonObject;
      // At STEP_RUNNING the last behavior's verdict is in already: a Retry after the next behavior
      // could not be planned.
      const finished =
        this._plan.fsm.state !== 'STEP_RUNNING' &&
        (await this._afterBehavior(update, response, warn, options.signal));
      if (finished) {
        return this._finish(response, update);
      }
    } else {
      this._feedback = null;
      await this._stepStart(update, warn, options.signal);
    }
    if (this._plan.fsm.state === 'STEP_RUNNING') {
      await this._planBehavior(update, response, options.signal);
    }
    return this._finish(response, update);
  }

  async *generating(
    request: GeneratingRequestInput,
    options: IGeneratingOptions = {}
  ): AsyncGenerator<GeneratingEvent, void, undefined> {
    this._observation = request.observation;
    this._notebook = options.notebook ?? null;
    const url = this._transport.urlOf('generating');
    // The seed's generation start mode does not apply to bcc (§3.6): a step's behavior is planned first.
    const planned = this._plan.behaviors.current
      ? []
      : await this._planBeforeGenerating(options.signal);
    this._transition('BEHAVIOR_RUNNING', this._plan.fsm.last_transition);
    let index = 0;
    yield* planned;
    const pending = this._pending;
    this._pending = [];
    for (const action of pending) {
      for (const event of this._events(action, url, true)) {
        yield event.kind === 'action' ? { ...event, index: index++ } : event;
      }
    }
    const response = await send(
      this._transport,
      'POST',
      'generating',
      this._body('BEHAVIOR_RUNNING', true),
      options.signal
    );
    if (!response.ok) {
      throw httpError('POST', url, response.status, await readText(response));
    }
    // One pretty-printed JSON document is read whole when its first line opens it (§3.4 (b)); any
    // other line that is not JSON is a warning, and the lines after it are applied as they arrive
    // (as the dslc reader does: `ActionLineParser`).
    let buffered: string[] | null = null;
    let first = true;
    const lineEvents = (line: string): GeneratingEvent[] => {
      const parsed = parseJson(line);
      if (!parsed.ok) {
        return [
          this._warning(
            say(
              'lineProblem',
              `POST ${url}`,
              msg('malformedLine'),
              line.slice(0, 200)
            )
          )
        ];
      }
      return this._messageEvents(parsed.value, url, line);
    };
    for await (const line of readLines(response, options.signal)) {
      if (typeof line !== 'string') {
        const warning = overlongLineWarning(`POST ${url}`, line, line.head);
        this._log(warning.message);
        yield warning;
        continue;
      }
      if (buffered) {
        buffered.push(line);
        continue;
      }
      const opensDocument =
        first &&
        (line.startsWith('[') || (line.startsWith('{') && !parseJson(line).ok));
      first = false;
      if (opensDocument) {
        buffered = [line];
        continue;
      }
      for (const event of lineEvents(line)) {
        yield event.kind === 'action' ? { ...event, index: index++ } : event;
      }
    }
    if (buffered) {
      const whole = parseJson(buffered.join('\n'));
      const events = whole.ok
        ? this._messageEvents(whole.value, url, buffered.join('\n'))
        : buffered.flatMap(lineEvents);
      for (const event of events) {
        yield event.kind === 'action' ? { ...event, index: index++ } : event;
      }
    }
    this._transition('BEHAVIOR_COMPLETED', 'COMPLETE_ACTION');
  }

  saveState(): unknown {
    return {
      dialect: 'bcc',
      plan: structuredClone(this._plan),
      headings: this._headings,
      // Cells an answer asked for that the next /generating writes first: a reload in between keeps them.
      pending: structuredClone(this._pending)
    };
  }

  restoreState(saved: unknown): void {
    this.resetState();
    if (isRecord(saved) && isRecord(saved.plan) && isRecord(saved.plan.fsm)) {
      this._plan = structuredClone(saved.plan) as unknown as IPlan;
      this._headings = Array.isArray(saved.headings)
        ? saved.headings.map(String)
        : [];
      this._templateSent = this._plan.stages.current !== null;
      this._pending = Array.isArray(saved.pending)
        ? (structuredClone(
            saved.pending.filter(isRecord).filter(isOwnPending)
          ) as JsonObject[])
        : [];
    }
  }

  resetState(): void {
    this._plan = emptyPlan();
    this._pending = [];
    this._headings = [];
    this._prefetched = null;
    this._reflectRoute = 'reflecting';
    this._templateSent = false;
  }

  // ------------------------------------------------------------------------------------------
  // The loop
  // ------------------------------------------------------------------------------------------

  private async _stepStart(
    update: ContextUpdate,
    warn: (warning: ProtocolText) => void,
    signal?: AbortSignal
  ): Promise<void> {
    const where = this._observation?.location?.current;
    const starting =
      this._plan.fsm.state === 'IDLE' ||
      this._plan.fsm.state === 'WORKFLOW_COMPLETED';
    if (starting) {
      const answer = await this._planningAnswer('IDLE', ['stages'], signal);
      if (answer.kind !== 'stages') {
        throw this._unexpected('IDLE', answer.kind);
      }
      this._startWorkflow(answer, warn);
    }
    // Read after `_startWorkflow`, which makes a new plan.
    const plan = this._plan;
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
      const answer = await this._planningAnswer(
        'STAGE_RUNNING',
        ['steps'],
        signal
      );
      if (answer.kind !== 'steps') {
        throw this._unexpected('STAGE_RUNNING', answer.kind);
      }
      this._startStep(answer, update, warn);
    } else if (where?.step_id && where.step_id !== plan.steps.current.step_id) {
      this._moveToStep(where.step_id, warn);
    }
    if (plan.fsm.state !== 'STEP_RUNNING') {
      this._transition('STEP_RUNNING', plan.fsm.last_transition);
    }
  }

  private _startWorkflow(
    answer: Extract<PlanningAnswer, { kind: 'stages' }>,
    warn: (warning: ProtocolText) => void
  ): void {
    const goals = answer.goals ?? this._idleGoalsText();
    const plan = emptyPlan();
    plan.variables = this._plan.variables;
    plan.goals = goals;
    const stages = withIds(answer.stages, 'stage_id', 'stage');
    if (stages.length === 0) {
      throw new PlannerError({
        kind: 'invalid',
        url: this._transport.urlOf('planning'),
        ...say('bccNoStages')
      });
    }
    plan.title = answer.title;
    plan.stages.current = stages[0];
    plan.stages.remaining = stages.slice(1);
    plan.stages.focus = answer.focus;
    plan.stages.expected = stages[0].verified_artifacts;
    this._plan = plan;
    this._templateSent = false;
    this._headings = [];
    if (answer.title) {
      this._pending.push({ type: 'update_title', title: answer.title });
    }
    if (answer.description) {
      this._pending.push({
        type: 'add',
        shot_type: 'markdown',
        content: answer.description
      });
    }
    this._heading('new_section', stageName(stages[0]), stages[0].title);
    this._transition('STAGE_RUNNING', 'START_WORKFLOW');
    this._checkRequired(stages[0].required_variables, warn);
  }

  private _startStep(
    answer: Extract<PlanningAnswer, { kind: 'steps' }>,
    update: ContextUpdate,
    warn: (warning: ProtocolText) => void
  ): void {
    const plan = this._plan;
    const stage = plan.stages.current;
    const steps = withIds(answer.steps, 'step_id', 'step');
    if (!stage || steps.length === 0) {
      throw new PlannerError({
        kind: 'invalid',
        url: this._transport.urlOf('planning'),
        ...say('bccNoSteps', stage?.stage_id ?? '(none)')
      });
    }
    const wanted = this._observation?.location?.current?.step_id;
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
    if (this._templateSent) {
      update.stage_steps_update = {
        stage_id: stage.stage_id,
        steps: steps.map(s => this._templateStep(s))
      };
    }
    this._heading('new_step', first.title);
    this._transition('STEP_RUNNING', 'START_STEP');
    this._checkRequired(first.required_variables, warn);
  }

  private async _planBehavior(
    update: ContextUpdate,
    response: PlanningResponse,
    signal?: AbortSignal
  ): Promise<void> {
    const answer = await this._planningAnswer(
      'STEP_RUNNING',
      ['behavior'],
      signal
    );
    if (answer.kind !== 'behavior') {
      throw this._unexpected('STEP_RUNNING', answer.kind);
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
    const plan = this._plan;
    plan.iteration += 1;
    behavior.behavior_id ||= `${plan.steps.current?.step_id ?? 'step'}_b${plan.iteration}`;
    plan.behaviors.current = behavior;
    plan.behaviors.expected = behavior.outputs;
    plan.behaviors.produced = [];
    plan.behaviors.in_progress = [];
    plan.behaviors.focus = behavior.task;
    plan.goals = behavior.task;
    this._transition('BEHAVIOR_RUNNING', event);
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
  private async _afterBehavior(
    update: ContextUpdate,
    response: PlanningResponse,
    warn: (warning: ProtocolText) => void,
    signal?: AbortSignal
  ): Promise<boolean> {
    const plan = this._plan;
    let stage: IReflection;
    if (plan.fsm.state === 'STEP_COMPLETED') {
      // A Retry after the stage reflection failed: the step's verdict is in; the stage's is asked again.
      // The variables of that verdict were lost with the failed answer: they go with this one.
      if (Object.keys(plan.variables).length > 0) {
        update.variables = { ...plan.variables };
      }
      stage = await this._reflect('STEP_COMPLETED', warn, signal);
      this._applyReflection(stage, update, warn);
    } else {
      this._transition('BEHAVIOR_COMPLETED', 'COMPLETE_ACTION');
      const reflection = await this._reflect(
        'BEHAVIOR_COMPLETED',
        warn,
        signal
      );
      this._applyReflection(reflection, update, warn);
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
        this._transition('STEP_RUNNING', 'NEXT_BEHAVIOR');
        return false;
      }
      this._transition('STEP_COMPLETED', 'COMPLETE_STEP');
      // Meant for the next step: it gets it unless the stage reflection names a focus of its own.
      plan.movingForward = reflection.focus;
      if (reflection.stageComplete) {
        // An NDJSON reflection that also ends the stage: applied once, above.
        stage = reflection;
      } else {
        stage = await this._reflect('STEP_COMPLETED', warn, signal);
        this._applyReflection(stage, update, warn);
      }
    }
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
      this._heading('new_step', nextStep.title);
      this._transition('STEP_RUNNING', 'NEXT_STEP');
      this._checkRequired(nextStep.required_variables, warn);
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
    const plan = this._plan;
    this._transition('STAGE_COMPLETED', 'COMPLETE_STAGE');
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
      this._heading('new_section', stageName(next), next.title);
      this._transition('STAGE_RUNNING', 'NEXT_STAGE');
      this._checkRequired(next.required_variables, warn);
    } else {
      this._transition('WORKFLOW_COMPLETED', 'COMPLETE_WORKFLOW');
    }
  }

  /**
   * What `planning` does at a step start, for a `/generating` with no behavior planned: the plan goes
   * to the engine as actions before the others (`update_workflow`, `update_stage_steps`), warnings as
   * warning events.
   */
  private async _planBeforeGenerating(
    signal?: AbortSignal
  ): Promise<GeneratingEvent[]> {
    const warnings: GeneratingEvent[] = [];
    const update: ContextUpdate = {};
    const response: PlanningResponse = { targetAchieved: false };
    await this._stepStart(
      update,
      warning => warnings.push(this._warning(warning)),
      signal
    );
    await this._planBehavior(update, response, signal);
    this._finish(response, update);
    const template = update.workflow_update?.workflowTemplate;
    const steps = update.stage_steps_update;
    this._pending.unshift(
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
    const plan = this._plan;
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
    const plan = this._plan;
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
    this._heading('new_step', target.title);
    this._transition('STEP_RUNNING', 'NEXT_STEP');
    this._checkRequired(target.required_variables, warn);
  }

  private _applyReflection(
    reflection: IReflection,
    update: ContextUpdate,
    warn: (warning: ProtocolText) => void
  ): void {
    const plan = this._plan;
    if (reflection.conflict) {
      this._log(
        `bcc: reflection disagrees with itself: ${reflection.conflict}`
      );
    }
    const variables: JsonObject = { ...reflection.variables };
    if (reflection.saveEffectAs) {
      variables[reflection.saveEffectAs] = (
        this._observation?.context?.effects?.current ?? []
      ).join('\n');
    }
    if (Object.keys(variables).length > 0) {
      Object.assign(plan.variables, variables);
      update.variables = { ...(update.variables ?? {}), ...variables };
    }
    const outputs = reflection.outputs;
    if (outputs) {
      const level: ProgressLevelName =
        reflection.kind === 'stage_reflection'
          ? 'stages'
          : plan.behaviors.current
            ? 'behaviors'
            : 'steps';
      const target = plan[level];
      target.produced = outputs.produced;
      target.in_progress = outputs.in_progress;
      // The engine's outputs tracking shows the server's lists (docs/dialects.md#bcc).
      const entry = progressAt(update, level);
      entry.current_outputs = {
        expected: entry.current_outputs?.expected ?? [],
        produced: [...outputs.produced],
        in_progress: [...outputs.in_progress]
      };
    }
    for (const comment of reflection.comments) {
      this._pending.push({
        type: 'add',
        shot_type: 'markdown',
        content: comment
      });
    }
    // §3.7: the reasoning and the progress percentage are shown in the progress panel, on the step
    // (a behavior's reflection) or the stage.
    const percent = Number.parseFloat(reflection.progressPercent ?? '');
    if (reflection.reasoning || Number.isFinite(percent)) {
      progressAt(
        update,
        reflection.kind === 'stage_reflection' ? 'stages' : 'steps'
      ).assessment = {
        ...(reflection.reasoning ? { reasoning: reflection.reasoning } : {}),
        ...(Number.isFinite(percent) ? { percent } : {})
      };
    }
    const notes = [
      reflection.reasoning,
      reflection.progressPercent
        ? `progress ${reflection.progressPercent}`
        : undefined,
      typeof reflection.whathappened === 'object'
        ? JSON.stringify(reflection.whathappened)
        : reflection.whathappened
    ]
      .filter(Boolean)
      .join(' · ');
    if (notes) {
      this._log(`bcc ${reflection.kind}: ${notes}`);
    }
    if (reflection.experienceSummary || reflection.keyFindings) {
      // §3.7: kept on the stage record, sent back in `completed` once the stage is done.
      const notes = plan.stageNotes ?? {};
      const findings = [
        ...(notes.key_findings ?? []),
        ...(reflection.keyFindings ?? [])
      ];
      plan.stageNotes = {
        ...notes,
        ...(reflection.experienceSummary
          ? { experience_summary: reflection.experienceSummary }
          : {}),
        ...(findings.length > 0 ? { key_findings: [...new Set(findings)] } : {})
      };
    }
    if (reflection.proposedGoal && plan.stages.current) {
      plan.stages.current.goal = reflection.proposedGoal;
      update.workflow_update = { workflowTemplate: this._template() };
    }
    if (reflection.needsMoreSteps) {
      warn(say('bccNeedsMoreSteps'));
    }
  }
}

/** The `progress_update` entry of one level: a reflection and the next plan in one answer both add to it. */
function progressAt(
  update: ContextUpdate,
  level: ProgressLevelName
): ProgressUpdate {
  const entries = progressUpdatesOf(update);
  let entry = entries.find(e => e.level === level);
  if (!entry) {
    entry = { level };
    entries.push(entry);
  }
  update.progress_update = entries.length === 1 ? entries[0] : entries;
  return entry;
}
