/**
 * What views and the planner read of a run's progress: the panel's snapshot (the template marked
 * completed / current / skipped / remaining) and the observation's `location.progress`. Functions of
 * the serialized progress (progressState.ts); they change nothing.
 */
import type {
  CurrentOutputs,
  Goals,
  Progress,
  ProgressLevel
} from '../../protocol';
import {
  clone,
  currentStage,
  currentStep,
  type ILevelState,
  type IProgressState,
  isDone,
  itemGoal
} from './progressState';

/**
 * `skipped`: a step of a completed stage that never ran (the stage ended before it came up);
 * `given_up`: a step that ended without reaching its target, and a completed stage that has one.
 */
export type ItemStatus =
  'completed' | 'current' | 'remaining' | 'skipped' | 'given_up';

export interface IStepView {
  id: string;
  name: string;
  status: ItemStatus;
}

export interface IStageView extends IStepView {
  steps: IStepView[];
}

/** Where the current stage or step is: its name, goal and the planner's latest focus text. */
export interface ILocationView {
  id: string | null;
  name: string | null;
  goal: string | null;
  focus: string | null;
}

/** The part of a snapshot that the progress model alone decides (a live or a saved run). */
export interface IProgressSnapshot {
  workflowName: string | null;
  stage: ILocationView;
  step: ILocationView;
  behavior: { id: string | null; iteration: number };
  /** The template with each stage and step marked completed, current, remaining or skipped. */
  stages: IStageView[];
  outputs: {
    stages: CurrentOutputs;
    steps: CurrentOutputs;
    behaviors: CurrentOutputs;
  };
}

export function progressGoals(state: IProgressState): Goals {
  return {
    stage: itemGoal(currentStage(state)),
    step: itemGoal(currentStep(state)),
    behavior: state.behaviors.goal
  };
}

/**
 * The location, the template marked completed / current / remaining, and the outputs, as views
 * show them. `finished`: the workflow is completed, so no stage is current any more.
 */
export function progressSnapshot(
  state: IProgressState,
  finished: boolean
): IProgressSnapshot {
  const goals = progressGoals(state);
  return {
    workflowName: state.template?.name ?? null,
    stage: {
      id: state.stages.current,
      name: currentStage(state)?.name ?? null,
      goal: goals.stage ?? null,
      focus: state.stages.focus
    },
    step: {
      id: state.steps.current,
      name: currentStep(state)?.name ?? null,
      goal: goals.step ?? null,
      focus: state.steps.focus
    },
    behavior: {
      id: state.behaviors.current,
      iteration: state.behaviors.iteration
    },
    stages: stageViews(state, finished),
    outputs: {
      stages: clone(state.stages.outputs),
      steps: clone(state.steps.outputs),
      behaviors: clone(state.behaviors.outputs)
    }
  };
}

/** `observation.location.progress`. */
export function observationProgress(state: IProgressState): Progress {
  const stageIds = (state.template?.stages ?? []).map(s => s.id);
  const stepIds = (currentStage(state)?.steps ?? []).map(s => s.id);
  const behaviors = state.behaviors;
  return {
    stages: levelView(state.stages, stageIds),
    steps: levelView(state.steps, stepIds),
    behaviors: {
      ...levelView(behaviors, null),
      iteration: behaviors.iteration
    }
  };
}

function levelView(level: ILevelState, order: string[] | null): ProgressLevel {
  const view: ProgressLevel = {
    completed: clone(level.completed),
    current: level.current,
    current_outputs: clone(level.outputs)
  };
  if (order) {
    const done = new Set(
      level.completed.map(c => c.stage_id ?? c.step_id ?? '')
    );
    const index = order.indexOf(level.current ?? '');
    view.remaining = order.filter(
      (id, i) => i > index && id !== level.current && !done.has(id)
    );
  }
  if (level.focus) {
    view.focus = level.focus;
  }
  return view;
}

function stageViews(state: IProgressState, finished: boolean): IStageView[] {
  const template = state.template;
  if (!template) {
    return [];
  }
  const doneStages = new Set(state.stages.completed.map(s => s.stage_id));
  const doneSteps = new Set(state.steps.completed.map(s => s.step_id));
  const currentStageId = state.stages.current;
  const currentStepId = state.steps.current;
  return template.stages.map(stage => {
    const stageStatus: ItemStatus = doneStages.has(stage.id)
      ? 'completed'
      : stage.id === currentStageId && !finished
        ? 'current'
        : 'remaining';
    const ran = stageStatus === 'completed' || stage.id === currentStageId;
    const skipped = new Set(ran ? (state.skippedSteps?.[stage.id] ?? []) : []);
    const givenUp = new Set(
      ran ? Object.keys(state.givenUp?.[stage.id] ?? {}) : []
    );
    return {
      id: stage.id,
      name: stage.name,
      // A stage that completed with a step given up is not ticked either.
      status:
        stageStatus === 'completed' &&
        stage.steps.some(step => givenUp.has(step.id))
          ? 'given_up'
          : stageStatus,
      steps: stage.steps.map(step => ({
        id: step.id,
        name: step.name,
        status: givenUp.has(step.id)
          ? 'given_up'
          : skipped.has(step.id)
            ? 'skipped'
            : stageStatus === 'completed' ||
                (stage.id === currentStageId &&
                  (doneSteps.has(step.id) || isDone(step)))
              ? 'completed'
              : stage.id === currentStageId && step.id === currentStepId
                ? 'current'
                : 'remaining'
      }))
    };
  });
}
