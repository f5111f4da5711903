/**
 * What a `/planning` answer changes, decided without changing anything: `planUpdate(view, answer)`
 * reads a view of the run and returns the changes as plain data (the workflow proposal, a stage's new
 * steps, variables, progress, effects, the legacy lists, the next behavior's goal, id, outputs and
 * context filter, the transition asked for, and what to warn about). The caller writes them, and asks
 * the user where a change needs it (a workflow update to confirm). No awaits, no writes, no dialogs.
 */
import {
  type Assessment,
  type ContextFilter,
  type CurrentOutputs,
  type EffectsUpdate,
  type PlanningResponse,
  type PlanningUsage,
  progressUpdatesOf,
  type ProgressLevelName,
  type SectionProgress,
  type Transition,
  type WorkflowStage,
  type WorkflowStep,
  type WorkflowTemplate
} from '../../protocol';
import { type IMessage, msg } from '../messages';
import { firstOpenStep } from '../state/progressState';

/** What the decisions read of the run: a snapshot, never written. */
export interface IRunView {
  /** The workflow template, null before the first. */
  readonly template: WorkflowTemplate | null;
  readonly stageId: string | null;
  readonly stepId: string | null;
  /** The template came from the planner (not from a saved run, nor the client's own start). */
  readonly templateFromPlanner: boolean;
  /** A behavior is under way (its actions run, or a workflow update waits within it). */
  readonly midBehavior: boolean;
  /** The legacy `toDoList`, if the run has one. */
  readonly toDoList?: readonly string[];
}

/** Where the run goes next: a stage and, optionally, one of its steps. */
export interface ILocation {
  stageId: string;
  stepId: string | null;
}

/**
 * What to do with a template from the planner. `keep`: it is the template the run has; `adopt`: taken
 * as it is (the run's first from the planner); `adoptMinor`: same stages and steps, taken without
 * asking (the planner is told); `confirm`: the user confirms it, unless the settings accept updates.
 */
export type WorkflowDecision = 'keep' | 'adopt' | 'adoptMinor' | 'confirm';

export interface IWorkflowProposal {
  template: WorkflowTemplate;
  decision: WorkflowDecision;
  /** The template it would replace: what the user sees beside it when asked to confirm. */
  replaces: WorkflowTemplate | null;
  /** The run's `templateFromPlanner` from now on, whatever the decision. */
  templateFromPlanner: boolean;
  /** The stage to move to once the template is applied (`workflow_update.nextStageId`). */
  nextStageId: string | null;
}

/** One `progress_update` entry, for its level: each field present is applied, in this order. */
export interface IProgressChange {
  level: ProgressLevelName;
  focus?: string;
  assessment?: Assessment;
  /** The level's expected names (stages and steps; the behaviors' go to `nextBehavior.outputs`). */
  expected?: string[];
  /** A non-empty list replaces the level's own (`WorkflowProgress.replaceOutputs`). */
  outputs?: Pick<CurrentOutputs, 'produced' | 'in_progress'>;
}

export interface IPlanningChanges {
  /** What the planner spent, recorded first: a refused update may stop the run, and spent is spent. */
  usage: PlanningUsage | null;
  workflow: IWorkflowProposal | null;
  /** `stage_steps_update`; `stageId` null: the current stage. */
  stageSteps: { stageId: string | null; steps: WorkflowStep[] } | null;
  /** Merged into the context variables. */
  variables: Record<string, unknown> | null;
  progress: IProgressChange[];
  /** Replaces the effects. */
  effects: EffectsUpdate | null;
  /** The legacy `toDoList` as it becomes; null: unchanged. */
  toDoList: string[] | null;
  /** The legacy `section_progress` as it becomes; null: unchanged. */
  sectionProgress: SectionProgress | null;
  nextBehavior: {
    /** The goal of the behavior that follows; null: unchanged. */
    goal: string | null;
    /** Its id (`behavior.id`), null for none: always set. */
    id: string | null;
    /** The names it is expected to produce; null: unchanged. */
    outputs: string[] | null;
  };
  /** The context filter of the next `/generating` (null: none). */
  filter: ContextFilter | null;
  /** Where the planner asks the run to go after this step; resolved by `resolveTransition`. */
  transition: ITransitionRequest | null;
  /** Shown to the user (not told to the planner). */
  warnings: IMessage[];
}

/** `transition.next_stage_id` / `next_step_id`, as the planner named them. */
export interface ITransitionRequest {
  stageId: string | null;
  stepId: string | null;
}

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

/** What `answer` changes in the run `view` sees. */
export function planUpdate(
  view: IRunView,
  answer: PlanningResponse
): IPlanningChanges {
  const update = answer.context_update;
  const workflowUpdate = update?.workflow_update;
  const { progress, plannedOutputs } = progressChanges(answer);
  return {
    usage: answer.usage ?? null,
    workflow: workflowUpdate
      ? {
          ...workflowProposal(
            view,
            workflowUpdate.workflowTemplate,
            workflowUpdate.provisional === true
          ),
          nextStageId: workflowUpdate.nextStageId || null
        }
      : null,
    stageSteps: update?.stage_steps_update
      ? {
          stageId: update.stage_steps_update.stage_id,
          steps: update.stage_steps_update.steps
        }
      : null,
    variables: update?.variables ?? null,
    progress,
    effects: update?.effects_update ?? null,
    toDoList: update?.todo_list_update
      ? nextToDoList(view.toDoList ?? [], update.todo_list_update)
      : null,
    sectionProgress: update?.section_progress
      ? { ...update.section_progress }
      : null,
    nextBehavior: {
      goal: answer.behavior?.target || null,
      id: answer.behavior?.id || null,
      outputs: plannedOutputs
    },
    filter: answer.context_filter ?? null,
    transition: transitionRequest(answer.transition),
    warnings:
      answer.actions && answer.actions.length > 0
        ? [msg('planningActionsIgnored', answer.actions.length)]
        : []
  };
}

/**
 * The answer's `progress_update` entries, and what the next behavior is expected to produce: the
 * behaviors' expected names of the plan, joined by the context filter's `expected_variables`.
 */
function progressChanges(answer: PlanningResponse): {
  progress: IProgressChange[];
  plannedOutputs: string[] | null;
} {
  let planned: string[] | null = null;
  const progress: IProgressChange[] = [];
  for (const entry of progressUpdatesOf(answer.context_update)) {
    const change: IProgressChange = { level: entry.level };
    if (entry.focus !== undefined) {
      change.focus = entry.focus;
    }
    if (entry.assessment) {
      change.assessment = entry.assessment;
    }
    const outputs = entry.current_outputs;
    const expected = outputs?.expected;
    if (expected && expected.length > 0) {
      if (entry.level === 'behaviors') {
        planned = [...expected];
      } else {
        change.expected = [...expected];
      }
    }
    if (outputs) {
      change.outputs = {
        produced: outputs.produced,
        in_progress: outputs.in_progress
      };
    }
    progress.push(change);
  }
  const fromFilter =
    answer.context_filter?.outputs_tracking?.expected_variables;
  if (fromFilter) {
    const base: string[] = planned ?? [];
    planned = planned
      ? [...base, ...fromFilter.filter(name => !base.includes(name))]
      : [...fromFilter];
  }
  return { progress, plannedOutputs: planned };
}

function nextToDoList(
  list: readonly string[],
  { operation, items }: { operation: string; items: string[] }
): string[] {
  return operation === 'remove'
    ? list.filter(item => !items.includes(item))
    : operation === 'add'
      ? [...list, ...items.filter(item => !list.includes(item))]
      : [...items];
}

/** The answer's `transition.next_stage_id` / `next_step_id`, if it names either. */
export function transitionRequest(
  transition: Transition | undefined
): ITransitionRequest | null {
  const stageId = transition?.next_stage_id ?? null;
  const stepId = transition?.next_step_id ?? null;
  return stageId === null && stepId === null ? null : { stageId, stepId };
}

/** What to do with a template from the planner (`update_workflow`, or a planning answer's). */
export function workflowProposal(
  view: IRunView,
  template: WorkflowTemplate,
  provisional = false
): IWorkflowProposal {
  const current = view.template;
  // A template saved by an earlier run, or one the client made up to start, is no reason to ask about
  // this run's first one from the planner.
  const first = !view.templateFromPlanner;
  // Only a run's first template may be a provisional start (docs/protocol.md#planning-answer): a later
  // one marked so would let every update after it skip the user's confirmation.
  const templateFromPlanner = !(provisional && first);
  const decision: WorkflowDecision =
    current && sameJson(current, template)
      ? 'keep'
      : !current || first
        ? 'adopt'
        : sameStructure(current, template)
          ? // The same stages and steps in the same order, only names, goals or expected outputs
            // differ: nothing the run is in moves.
            'adoptMinor'
          : 'confirm';
  return {
    template,
    decision,
    replaces: current,
    templateFromPlanner,
    nextStageId: null
  };
}

/**
 * Where the run is once `template` is adopted: a run in no stage, or in one the new template does not
 * have, goes on at the template's start; a behavior under way finishes (and reports) in its own step
 * first, then navigation finds the start. Null: the run stays where it is.
 */
export function locationAfterAdopting(
  view: IRunView,
  template: WorkflowTemplate
): ILocation | null {
  const first = template.stages[0];
  const known = template.stages.some(stage => stage.id === view.stageId);
  if (!first || known || (view.stageId !== null && view.midBehavior)) {
    return null;
  }
  return { stageId: first.id, stepId: firstOpenStep(first)?.id ?? null };
}

/**
 * Where `transition.next_stage_id` / `next_step_id` lead, when they name a known stage or step other
 * than the current one; null for the normal order. A name the template does not have is a problem to
 * report (to the user and the planner) and is ignored.
 */
export function resolveTransition(
  view: IRunView,
  request: ITransitionRequest | null
): { target: ILocation | null; problems: IMessage[] } {
  if (!request) {
    return { target: null, problems: [] };
  }
  const { stageId, stepId } = request;
  const stages = view.template?.stages ?? [];
  const stage: WorkflowStage | null =
    (stageId
      ? stages.find(s => s.id === stageId)
      : stages.find(s => s.steps.some(step => step.id === stepId))) ?? null;
  if (!stage) {
    return {
      target: null,
      problems: [
        stageId
          ? msg('unknownNextStage', stageId)
          : msg('unknownNextStep', stepId ?? '')
      ]
    };
  }
  const named = stepId
    ? (stage.steps.find(s => s.id === stepId) ?? null)
    : null;
  const problems =
    stepId && !named
      ? [
          msg(
            stage.id === view.stageId
              ? 'stepNotInCurrentStage'
              : 'stepNotInStage',
            stepId,
            stage.id
          )
        ]
      : [];
  if (stage.id === view.stageId) {
    const target =
      named && named.id !== view.stepId
        ? { stageId: stage.id, stepId: named.id }
        : null;
    return { target, problems };
  }
  return {
    target: {
      stageId: stage.id,
      stepId: named?.id ?? firstOpenStep(stage)?.id ?? null
    },
    problems
  };
}
