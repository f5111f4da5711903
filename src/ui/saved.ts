/**
 * A run saved in the notebook (the runner's `ISavedRunState`) seen as a snapshot, so the sidebar can
 * show where a run stands before it is resumed, e.g. right after the notebook was opened.
 */
import { describeTransition } from '../engine/fsm';
import { WorkflowProgress } from '../engine/progress';
import { isSavedRunState, ISavedRunState } from '../engine/runner';
import type { IRunSnapshot } from '../engine/types';

export { isSavedRunState };
export type { ISavedRunState };

export function snapshotFromSaved(
  saved: ISavedRunState,
  maxExecutionSteps: number
): IRunSnapshot {
  const progress = WorkflowProgress.fromJSON(saved.progress);
  const history = saved.fsm.history;
  const last = history.length ? history[history.length - 1] : null;
  return {
    ...progress.snapshot(saved.fsm.state === 'WORKFLOW_COMPLETED'),
    state: saved.fsm.state,
    running: false,
    paused: false,
    pauseReason: null,
    pausing: false,
    error: null,
    task: saved.task,
    behaviorsRun: 0,
    maxExecutionSteps,
    bufferedActions: 0,
    lastTransition: last ? describeTransition(last) : null,
    lastTransitionAt: last?.timestamp ?? null,
    timings: saved.timings.map(t => ({ ...t }))
  };
}
