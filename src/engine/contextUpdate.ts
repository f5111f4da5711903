/**
 * What a `/planning` answer changes besides the loop's direction: its `context_update` (workflow
 * template, a stage's steps, variables, progress, effects, the legacy todo list), the behavior goal and
 * the context filter for the next `/generating`.
 */
import {
  progressUpdatesOf,
  type PlanningResponse,
  type WorkflowStep,
  type WorkflowTemplate
} from '../protocol';
import { type IMessage, msg, reported } from './messages';
import { errorMessage } from './registry';
import type { RunCore } from './runCore';
import { RunStopped } from './runControl';

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Whether two templates have the same stages and steps (by id, in order). The documents call for a
 * confirmation of a "major" workflow update without defining it: a change of this structure is major.
 */
export function sameStructure(
  a: WorkflowTemplate,
  b: WorkflowTemplate
): boolean {
  const shape = (t: WorkflowTemplate) =>
    t.stages.map(stage => [stage.id, stage.steps.map(step => step.id)]);
  return sameJson(shape(a), shape(b));
}

/**
 * Applies `context_update`, the behavior goal and `context_filter`. Returns the stage the planner
 * asked to move to (`workflow_update.nextStageId`) when its template was applied; the runner moves.
 */
export async function applyPlanning(
  core: RunCore,
  response: PlanningResponse
): Promise<{ nextStageId: string | null }> {
  const { state } = core;
  const { progress } = state;
  const update = response.context_update;
  // First: a workflow update the user refuses may stop the run, and what was spent is spent.
  if (response.usage) {
    state.usage = response.usage;
  }
  let nextStageId: string | null = null;
  if (update?.workflow_update) {
    const applied = await proposeWorkflow(
      core,
      update.workflow_update.workflowTemplate,
      update.workflow_update.provisional === true
    );
    if (applied && update.workflow_update.nextStageId) {
      nextStageId = update.workflow_update.nextStageId;
    }
  }
  if (update?.stage_steps_update) {
    await replaceStageSteps(
      core,
      update.stage_steps_update.stage_id,
      update.stage_steps_update.steps
    );
  }
  if (update?.variables) {
    Object.assign(state.contextVariables, update.variables);
  }
  // This answer's plan for the next behavior's outputs, which its filter's list joins.
  let behaviorOutputsPlanned = false;
  for (const progressUpdate of progressUpdatesOf(update)) {
    if (progressUpdate.focus !== undefined) {
      progress.setFocus(progressUpdate.level, progressUpdate.focus);
    }
    if (progressUpdate.assessment) {
      progress.setAssessment(progressUpdate.level, progressUpdate.assessment);
    }
    const outputs = progressUpdate.current_outputs;
    const expected = outputs?.expected;
    if (expected && expected.length > 0) {
      if (progressUpdate.level === 'behaviors') {
        progress.planBehaviorOutputs(expected);
        behaviorOutputsPlanned = true;
      } else {
        progress.setExpected(progressUpdate.level, expected);
      }
    }
    if (outputs) {
      progress.replaceOutputs(progressUpdate.level, outputs);
    }
  }
  if (update?.effects_update) {
    state.effects.replace(update.effects_update);
    core.effectsChanged();
  }
  if (update?.todo_list_update) {
    const { operation, items } = update.todo_list_update;
    const list = state.legacy.toDoList ?? [];
    state.legacy.toDoList =
      operation === 'remove'
        ? list.filter(item => !items.includes(item))
        : operation === 'add'
          ? [...list, ...items.filter(item => !list.includes(item))]
          : [...items];
  }
  if (update?.section_progress) {
    state.legacy.section_progress = { ...update.section_progress };
  }
  if (response.behavior?.target) {
    progress.setBehaviorGoal(response.behavior.target);
  }
  progress.planBehaviorId(response.behavior?.id || null);
  state.filter = response.context_filter ?? null;
  const expected = state.filter?.outputs_tracking?.expected_variables;
  if (expected) {
    if (behaviorOutputsPlanned) {
      progress.addPlannedBehaviorOutputs(expected);
    } else {
      progress.planBehaviorOutputs(expected);
    }
  }
  if (response.actions && response.actions.length > 0) {
    core.warn(
      msg('planningActionsIgnored', response.actions.length),
      'planner'
    );
  }
  core.emitProgress();
  return { nextStageId };
}

/** A template from the planner: the first is taken as is, a different one is confirmed. */
export async function proposeWorkflow(
  core: RunCore,
  template: WorkflowTemplate,
  provisional = false
): Promise<boolean> {
  const { fsm, progress } = core.state;
  const current = progress.template;
  // A template saved by an earlier run, or one the client made up to start, is no reason to ask about
  // this run's first one from the planner.
  const first = !core.state.templateFromPlanner;
  // Only a run's first template may be a provisional start (docs/protocol.md#planning-answer): a later
  // one marked so would let every update after it skip the user's confirmation.
  core.state.templateFromPlanner = !(provisional && first);
  if (current && sameJson(current, template)) {
    return true;
  }
  if (!current || first) {
    adoptTemplate(core, template);
    return true;
  }
  if (sameStructure(current, template)) {
    // A minor update: the same stages and steps in the same order, only names, goals or expected
    // outputs differ. Nothing the run is in moves, so it is applied without asking.
    adoptTemplate(core, template);
    core.addEffect(
      'The planner updated the names or goals of the workflow (same stages and steps); applied.'
    );
    core.emitProgress();
    return true;
  }
  fsm.dispatch('UPDATE_WORKFLOW');
  core.emitProgress();
  let accepted = true;
  const confirm = core.hooks.confirmWorkflowUpdate;
  if (!core.settings().autoAcceptWorkflowUpdates && confirm) {
    try {
      accepted = await core.control.untilStopped(
        confirm.call(core.hooks, template, current, core.control.signal)
      );
    } catch (error) {
      if (core.control.stopRequested) {
        fsm.dispatch('UPDATE_WORKFLOW_REJECTED');
        throw new RunStopped();
      }
      core.warn(msg('workflowConfirmFailed', errorMessage(error)), 'hook');
      accepted = false;
    }
  }
  fsm.dispatch(
    accepted ? 'UPDATE_WORKFLOW_CONFIRMED' : 'UPDATE_WORKFLOW_REJECTED'
  );
  if (accepted) {
    adoptTemplate(core, template);
  } else {
    core.addEffect(
      'The workflow update was rejected by the user; the current workflow is kept.'
    );
  }
  core.emitProgress();
  return accepted;
}

const BEHAVIOR_STATES: ReadonlySet<string> = new Set([
  'BEHAVIOR_RUNNING',
  'ACTION_RUNNING',
  'ACTION_COMPLETED',
  'WORKFLOW_UPDATE_PENDING'
]);

function adoptTemplate(core: RunCore, template: WorkflowTemplate): void {
  const { progress } = core.state;
  progress.setTemplate(template);
  const first = template.stages[0];
  // A run in no stage, or in one the new template does not have, goes on at the template's start; a
  // behavior under way finishes (and reports) in its own step first, then navigation finds the start.
  const midBehavior = BEHAVIOR_STATES.has(core.state.fsm.state);
  if (
    first &&
    !progress.findStage(progress.currentStageId) &&
    (progress.currentStageId === null || !midBehavior)
  ) {
    progress.adoptLocation(first.id, progress.firstOpenStep(first)?.id ?? null);
  }
}

export async function replaceStageSteps(
  core: RunCore,
  stageId: string | null,
  steps: WorkflowStep[]
): Promise<boolean> {
  const { fsm, progress } = core.state;
  const id = stageId ?? progress.currentStageId;
  fsm.dispatch('UPDATE_STEP');
  const applied = id !== null && progress.replaceStageSteps(id, steps);
  fsm.dispatch(applied ? 'UPDATE_STEP_CONFIRMED' : 'UPDATE_STEP_REJECTED');
  const first = progress.firstOpenStep(progress.findStage(id));
  if (
    applied &&
    id === progress.currentStageId &&
    progress.currentStepId === null &&
    first
  ) {
    progress.adoptLocation(id, first.id);
  }
  core.emitProgress();
  return applied;
}

/** Where the run goes next: a stage and, optionally, one of its steps. */
export interface ILocation {
  stageId: string;
  stepId: string | null;
}

/**
 * Where `transition.next_stage_id` / `next_step_id` lead, when they name a known stage or step other
 * than the one just completed; null for the normal order. Unknown ids are reported and ignored.
 */
export function transitionTarget(
  core: RunCore,
  response: PlanningResponse
): ILocation | null {
  const progress = core.state.progress;
  const stageId = response.transition?.next_stage_id ?? null;
  const stepId = response.transition?.next_step_id ?? null;
  if (stageId === null && stepId === null) {
    return null;
  }
  const stages = progress.template?.stages ?? [];
  const stage = stageId
    ? progress.findStage(stageId)
    : (stages.find(s => s.steps.some(step => step.id === stepId)) ?? null);
  if (!stage) {
    reportPlanningProblem(
      core,
      stageId
        ? msg('unknownNextStage', stageId)
        : msg('unknownNextStep', stepId ?? '')
    );
    return null;
  }
  const named = stepId
    ? (stage.steps.find(s => s.id === stepId) ?? null)
    : null;
  if (stepId && !named) {
    reportPlanningProblem(
      core,
      msg(
        stage.id === progress.currentStageId
          ? 'stepNotInCurrentStage'
          : 'stepNotInStage',
        stepId,
        stage.id
      )
    );
  }
  if (stage.id === progress.currentStageId) {
    return named && named.id !== progress.currentStepId
      ? { stageId: stage.id, stepId: named.id }
      : null;
  }
  return {
    stageId: stage.id,
    stepId: named?.id ?? progress.firstOpenStep(stage)?.id ?? null
  };
}

/** A problem in a /planning answer: a visible warning, and an effect the planner reads. */
export function reportPlanningProblem(
  core: RunCore,
  message: string | IMessage
): void {
  core.warn(message, 'planner');
  core.addEffect(`⚠️ WARN: ${reported(message).message}`);
}
