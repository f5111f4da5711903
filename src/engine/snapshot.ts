/**
 * The run as views see it: one composition for a live runner and for a run saved in the notebook, so
 * the panel shows both the same way.
 */
import { runOutcome } from './state/contracts';
import { describeTransition } from './state/fsm';
import { stepKey } from './rewindView';
import {
  type ISavedRunState,
  RunState,
  type RunStateView
} from './state/runState';
import type { IPauseReason, IRunSnapshot } from './types';

/** What only a live loop knows; absent for a saved run. */
export interface ILiveRun {
  /** The loop is active, or a rewind is under way. */
  running: boolean;
  /** A rewind is under way (removing cells, restarting the kernel, re-running the kept ones). */
  rewinding: boolean;
  /** Where the loop's pause stands (its `RunControl`). */
  control: {
    readonly paused: boolean;
    readonly pauseRequested: boolean;
    readonly pauseReason: IPauseReason | null;
  };
  /** Actions received and not yet applied (the behavior's queue). */
  buffered: number;
}

export function composeSnapshot(
  state: RunStateView,
  maxExecutionSteps: number,
  live: ILiveRun | null = null
): IRunSnapshot {
  const last = state.fsm.lastTransition;
  const control = live?.control ?? null;
  // A rewind stops a paused loop first: the run is no longer paused there.
  const paused = (control?.paused ?? false) && !live?.rewinding;
  const progress = state.progress.snapshot(
    state.fsm.state === 'WORKFLOW_COMPLETED'
  );
  // A step given up ran too: it may be redone once its cause is fixed.
  const completedSteps = new Set(
    progress.stages.flatMap(stage =>
      stage.steps
        .filter(
          step => step.status === 'completed' || step.status === 'given_up'
        )
        .map(step => stepKey(stage.id, step.id))
    )
  );
  const saved = state.progress.toJSON();
  const outcome = runOutcome(saved, state.contracts);
  const checks = state.contracts.checks;
  return {
    ...progress,
    state: state.fsm.state,
    running: live?.running ?? false,
    rewinding: live?.rewinding ?? false,
    paused,
    pauseReason: control?.pauseReason ?? null,
    pausing: control ? control.pauseRequested && !control.paused : false,
    error: state.error ? { ...state.error } : null,
    task: state.task,
    behaviorsRun: state.behaviorsRun,
    maxExecutionSteps,
    bufferedActions: live?.buffered ?? 0,
    lastTransition: last ? describeTransition(last) : null,
    lastTransitionAt: last?.timestamp ?? null,
    timings: state.timings.map(t => ({ ...t })),
    progress: saved,
    plannerDialect: state.plannerDialect,
    rewind: state.rewind.view(completedSteps),
    ...(state.usage ? { usage: state.usage } : {}),
    ...(Object.keys(checks).length > 0 ? { outputChecks: { ...checks } } : {}),
    ...(outcome.deliverables.length > 0 || outcome.givenUp.length > 0
      ? { outcome }
      : {})
  };
}

/** A run saved in the notebook, seen as a snapshot (e.g. right after the notebook was opened). */
export function snapshotFromSaved(
  saved: ISavedRunState,
  maxExecutionSteps: number
): IRunSnapshot {
  const state = RunState.fromSaved(saved);
  return composeSnapshot(state, maxExecutionSteps);
}
