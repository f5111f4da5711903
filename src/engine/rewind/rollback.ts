/**
 * Rewind's side of the run state (docs/architecture.md#rewind), as transactions: the checkpoint a step
 * or a behavior starts from, and the rollback to one. A saved run that resumes goes back into its step
 * the same way a rollback does (`backIntoStep`).
 */
import type {
  IRewindPlan,
  IRewindRecord,
  IRunCheckpoint
} from '../state/rewind';
import type { RunStateView } from '../state/runState';
import { op, type RunOp } from '../state/transaction';

/** What a checkpoint keeps besides the run state. */
export interface ICheckpointInputs {
  /** The planner service's state (`IPlannerService.saveState`), when it keeps one. */
  planner?: unknown;
  now: Date;
}

/**
 * The checkpoint of where the run stands, before a step's first /planning (`step`) or a behavior's
 * /generating (`behavior`: named after the behavior about to start).
 */
export function checkpoint(
  state: RunStateView,
  kind: IRunCheckpoint['kind'],
  inputs: ICheckpointInputs
): RunOp {
  const progress = state.progress.toJSON();
  const template = progress.template;
  progress.template = null;
  const last = state.timings[state.timings.length - 1];
  const taken: Omit<IRunCheckpoint, 'seq' | 'template'> = {
    kind,
    stageId: state.progress.currentStageId,
    stepId: state.progress.currentStepId,
    behaviorId: kind === 'behavior' ? state.progress.nextBehaviorId() : null,
    at: inputs.now.toISOString(),
    progress,
    effects: state.effects.mark(),
    cells: state.cells.mark(),
    contextVariables: { ...state.contextVariables },
    filter: state.filter,
    templateFromPlanner: state.templateFromPlanner,
    lastTiming: last
      ? { behaviorId: last.behaviorId, startedAt: last.startedAt }
      : null
  };
  if (inputs.planner !== undefined) {
    taken.planner = inputs.planner;
  }
  return op.journal('add', taken, template);
}

/** What the planner service keeps, for a checkpoint; undefined when it keeps nothing or cannot say. */
export function plannerMemory(client: { saveState?(): unknown }): unknown {
  try {
    return client.saveState?.();
  } catch {
    // The planner's memory is then not rolled back; the observation still says where the run is.
    return undefined;
  }
}

/** At the top of the loop: a step that has no checkpoint yet needs one. */
export function needsStepCheckpoint(state: RunStateView): boolean {
  const latest = state.rewind.latest;
  return (
    state.behavior === null &&
    (latest === null ||
      latest.stepId !== state.progress.currentStepId ||
      latest.stageId !== state.progress.currentStageId)
  );
}

/** The run is inside its step again, with no behavior open, as a resumed or rolled back run is. */
export function backIntoStep(): RunOp[] {
  return [op.fsm('RESET'), op.fsm('START_WORKFLOW'), op.fsm('START_STEP')];
}

/** The run state back to `checkpoint`, and what came after it forgotten. */
export function rollback(
  state: RunStateView,
  checkpoint: IRunCheckpoint
): RunOp[] {
  // What the user typed in "Set Variables…" is theirs, not the run's: it stays.
  const typed = state.userVariables.filter(
    name => name in state.contextVariables
  );
  const last = checkpoint.lastTiming;
  const keep = last
    ? state.timings.findIndex(
        t => t.behaviorId === last.behaviorId && t.startedAt === last.startedAt
      ) + 1
    : 0;
  return [
    op.progress('restore', {
      ...checkpoint.progress,
      template: state.rewind.template(checkpoint)
    }),
    op.effects('rollback', checkpoint.effects),
    op.cells('rollback', checkpoint.cells),
    ...backIntoStep(),
    op.journal('truncate', checkpoint),
    op.set({
      contextVariables: {
        ...checkpoint.contextVariables,
        ...Object.fromEntries(
          typed.map(name => [name, state.contextVariables[name]])
        )
      },
      filter: checkpoint.filter,
      templateFromPlanner: checkpoint.templateFromPlanner,
      timings: state.timings.slice(0, keep),
      ...(checkpoint.planner !== undefined
        ? { planner: checkpoint.planner }
        : {}),
      phase: 'plan',
      pendingFeedback: null,
      behavior: null,
      endStepRequested: false,
      retry: null,
      error: null,
      planningFailures: 0,
      variablesDirty: true
    })
  ];
}

/** What a rollback done to `plan` tells the saved run, the trace and the panel. */
export function rewindRecord(
  plan: IRewindPlan,
  done: { removed: number; restored: number },
  effect: string,
  now: Date
): IRewindRecord {
  return {
    kind: plan.target.kind === 'behavior' ? 'undo_behavior' : 'redo_from_step',
    at: now.toISOString(),
    stageId: plan.stageId,
    stepId: plan.stepId,
    behaviorId: plan.behaviorId,
    steps: [...plan.steps],
    removed: done.removed,
    kept: plan.keep.length,
    restored: done.restored,
    kernelRestarted: false,
    rerun: 0,
    rerunError: null,
    effect
  };
}
