/**
 * A run saved in the notebook (the runner's `ISavedRunState`) seen as a snapshot, so the sidebar can
 * show where a run stands before it is resumed, e.g. right after the notebook was opened.
 */
import { describeTransition } from '../engine/fsm';
import { WorkflowProgress } from '../engine/progress';
import { isSavedRunState, ISavedRunState } from '../engine/runner';
import type { IRunSnapshot, IStageView, ItemStatus } from '../engine/types';

export { isSavedRunState };
export type { ISavedRunState };

/** The stages of the saved template, each completed, current or remaining (as the runner marks them). */
function stageViews(
  progress: WorkflowProgress,
  finished: boolean
): IStageView[] {
  const template = progress.template;
  if (!template) {
    return [];
  }
  const doneStages = new Set(progress.completed('stages').map(s => s.stage_id));
  const doneSteps = new Set(progress.completed('steps').map(s => s.step_id));
  const currentStage = progress.currentStageId;
  const currentStep = progress.currentStepId;
  return template.stages.map(stage => {
    const stageStatus: ItemStatus = doneStages.has(stage.id)
      ? 'completed'
      : stage.id === currentStage && !finished
        ? 'current'
        : 'remaining';
    return {
      id: stage.id,
      name: stage.name,
      status: stageStatus,
      steps: stage.steps.map(step => ({
        id: step.id,
        name: step.name,
        status:
          stageStatus === 'completed' ||
          (stage.id === currentStage && doneSteps.has(step.id))
            ? 'completed'
            : stage.id === currentStage && step.id === currentStep
              ? 'current'
              : 'remaining'
      }))
    };
  });
}

export function snapshotFromSaved(
  saved: ISavedRunState,
  maxExecutionSteps: number
): IRunSnapshot {
  const progress = WorkflowProgress.fromJSON(saved.progress);
  const goals = progress.goals();
  const history = saved.fsm.history;
  const last = history.length ? history[history.length - 1] : null;
  const finished = saved.fsm.state === 'WORKFLOW_COMPLETED';
  return {
    state: saved.fsm.state,
    running: false,
    paused: false,
    pauseReason: null,
    pausing: false,
    error: null,
    task: saved.task,
    workflowName: progress.template?.name ?? null,
    stage: {
      id: progress.currentStageId,
      name: progress.currentStage?.name ?? null,
      goal: goals.stage ?? null
    },
    step: {
      id: progress.currentStepId,
      name: progress.currentStep?.name ?? null,
      goal: goals.step ?? null
    },
    behavior: { id: progress.currentBehaviorId, iteration: progress.iteration },
    stages: stageViews(progress, finished),
    outputs: {
      stages: progress.outputs('stages'),
      steps: progress.outputs('steps'),
      behaviors: progress.outputs('behaviors')
    },
    behaviorsRun: 0,
    maxExecutionSteps,
    bufferedActions: 0,
    lastTransition: last ? describeTransition(last) : null,
    lastTransitionAt: last?.timestamp ?? null,
    timings: saved.timings.map(t => ({ ...t }))
  };
}
