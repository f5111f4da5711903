/**
 * What a behavior changes in the run state, from its start to its end, decided from what the run holds
 * and what happened: functions of (state, event) returning the operations of a transaction. The phases
 * and the behavior's sink dispatch them (docs/architecture.md#the-run-loop).
 */
import type { BehaviorFeedback, GeneratingRequestInput } from '../../protocol';
import { PlannerError } from '../../protocol';
import type { AnyAction, IActionResult } from '../actions/registry';
import { errorText } from '../actions/registry';
import { say } from '../messages';
import { checkpoint } from '../rewind/rollback';
import type { IRunError, RunStateView } from '../state/runState';
import { op, type RunOp } from '../state/transaction';
import { addEffect, rotateEffects } from './boundaries';
import type { IBehaviorCounters } from './behavior';
import { ranCode } from './behavior';

/** What the planner's error asks the user to do, for the run's error. */
export function plannerAction(error: unknown): Pick<IRunError, 'action'> {
  return error instanceof PlannerError && error.action
    ? { action: error.action }
    : {};
}

/**
 * A behavior begins: the checkpoint it can be undone to (with the planner service's state, when it
 * keeps one), the state machine, the progress, the open behavior and its timing (at most
 * `maxHistoryItems` timings are kept).
 */
export function behaviorBegun(
  state: RunStateView,
  event: { now: Date; maxHistoryItems: number; planner?: unknown }
): RunOp[] {
  const { fsm, progress, timings } = state;
  const id = progress.nextBehaviorId();
  const max = Math.max(1, event.maxHistoryItems);
  return [
    checkpoint(state, 'behavior', { planner: event.planner, now: event.now }),
    op.fsm(
      fsm.state === 'BEHAVIOR_COMPLETED' ? 'NEXT_BEHAVIOR' : 'START_BEHAVIOR'
    ),
    op.progress('startBehavior'),
    op.set({
      behavior: {
        id,
        executed: 0,
        succeeded: 0,
        sectionsAdded: 0,
        lastResult: 'success',
        actionIndex: 0,
        rotated: false
      },
      endStepRequested: false,
      timings: [
        ...timings,
        {
          behaviorId: id,
          iteration: progress.iteration + 1,
          stageId: progress.currentStageId,
          stepId: progress.currentStepId,
          startedAt: event.now.toISOString(),
          endedAt: null,
          durationMs: null
        }
      ].slice(-max)
    })
  ];
}

/** An action of the open behavior starts. */
export function actionStarted(state: RunStateView): RunOp[] {
  return [
    ...rotateEffects(state),
    op.fsm(
      state.fsm.state === 'ACTION_COMPLETED' ? 'NEXT_ACTION' : 'START_ACTION'
    )
  ];
}

/** An action was applied: its summary for `actions_taken`, and the kernel may hold new variables. */
export function actionApplied(
  action: AnyAction,
  result: IActionResult
): RunOp[] {
  return [
    ...(result.summary ? [op.progress('recordAction', result.summary)] : []),
    ...(ranCode(action)
      ? [op.set({ variablesDirty: true, codeRanSinceCollection: true })]
      : []),
    op.fsm('COMPLETE_ACTION')
  ];
}

/** What the behavior under way counted, kept in the state (it is saved with them); nothing for another. */
export function countersKept(
  state: RunStateView,
  behavior: { id: string; counters: IBehaviorCounters }
): RunOp[] {
  const open = state.behavior;
  return open && open.id === behavior.id
    ? [op.set({ behavior: { ...open, ...behavior.counters } })]
    : [];
}

/** The open behavior recorded as completed (`note`: how it was cut short), and its feedback. */
export function behaviorFinished(
  state: RunStateView,
  now: Date,
  note?: string
): { ops: RunOp[]; feedback: BehaviorFeedback } {
  const behavior = state.behavior;
  if (!behavior) {
    throw new Error('No behavior is open.');
  }
  // A planner may give two behaviors the same id: the open timing is the latest.
  const timings = [...state.timings];
  const at = timings.map(t => t.behaviorId).lastIndexOf(behavior.id);
  const timing = timings[at];
  if (timing && timing.endedAt === null) {
    timings[at] = {
      ...timing,
      endedAt: now.toISOString(),
      durationMs: now.getTime() - Date.parse(timing.startedAt)
    };
  }
  const present = state.presentVariables();
  return {
    ops: [
      op.progress('completeBehavior', present, note),
      op.set({ behavior: null, timings })
    ],
    feedback: {
      behavior_id: behavior.id,
      actions_executed: behavior.executed,
      actions_succeeded: behavior.succeeded,
      sections_added: behavior.sectionsAdded,
      // Any failed action makes the behavior's result an error, not only the last one.
      last_action_result:
        note ??
        (behavior.succeeded < behavior.executed ? 'error' : behavior.lastResult)
    }
  };
}

/** The behavior's stream ended and its actions are applied: its feedback waits for the next /planning. */
export function behaviorClosed(state: RunStateView, now: Date): RunOp[] {
  const { ops, feedback } = behaviorFinished(state, now);
  // Also after end_phase: /planning gets the feedback; the step completes after its answer.
  return [
    ...ops,
    op.set({
      pendingFeedback: feedback,
      behaviorsRun: state.behaviorsRun + 1,
      phase: 'plan'
    })
  ];
}

/** A behavior cut short (stop, reload, failure): recorded as it is, its feedback kept for the next plan. */
export function behaviorInterrupted(
  state: RunStateView,
  note: string,
  now: Date
): RunOp[] {
  const { ops, feedback } = behaviorFinished(state, now, note);
  return [
    ...ops,
    op.set({ pendingFeedback: feedback, endStepRequested: false })
  ];
}

/**
 * `/generating` failed (`failure`) for `body`. Before any action was applied, retry re-sends the
 * request; after, re-sending it would replay the actions already applied and add their cells twice:
 * the behavior ends with what it did, and a retry asks /planning what comes next.
 */
export function generatingFailed(
  state: RunStateView,
  event: { failure: unknown; body: GeneratingRequestInput; now: Date }
): { ops: RunOp[]; error: IRunError } {
  const failed = say('generatingFailed', errorText(event.failure));
  const applied = state.behavior?.actionIndex ?? 0;
  const ops: RunOp[] =
    applied === 0
      ? [op.set({ retry: { endpoint: 'generating', body: event.body } })]
      : [
          ...addEffect(
            state,
            `⚠️ ${failed.message} after ${applied} action(s) were applied; they are kept and the behavior ends here.`
          ),
          op.fsm('COMPLETE_BEHAVIOR', { ifAllowed: true }),
          ...behaviorInterrupted(state, 'error', event.now),
          op.set({ phase: 'plan' })
        ];
  const missing =
    event.failure instanceof PlannerError
      ? event.failure.missingVariables
      : undefined;
  return {
    ops,
    error: {
      endpoint: 'generating',
      ...failed,
      retryable: true,
      ...(missing?.length ? { missingVariables: [...missing] } : {}),
      ...plannerAction(event.failure)
    }
  };
}
