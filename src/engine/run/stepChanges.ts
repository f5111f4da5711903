/**
 * What the run's beginning, its steps and stages, and the ends of a loop change in the run state:
 * functions of (state, event) returning the operations of a transaction, which the runner and the
 * phases dispatch (docs/architecture.md#the-run-loop).
 */
import type { WorkflowTemplate } from '../../protocol';
import { backIntoStep } from '../rewind/rollback';
import type { IRunError, Phase, RunStateView } from '../state/runState';
import { op, ProgressDraft, type RunOp } from '../state/transaction';
import type { IRunFinished, IStartOptions } from '../types';
import { behaviorInterrupted } from './behaviorChanges';
import type { ILocation } from './planUpdate';

/**
 * A new run from an empty state: the task and data files as context variables, at the first step of
 * `template` (one saved by an earlier run) or nowhere until the planner sends one; the step starts in
 * `startPhase`.
 */
export function runBegun(
  options: IStartOptions,
  template: WorkflowTemplate | null,
  startPhase: Phase
): RunOp[] {
  const dataFiles = options.dataFiles ?? [];
  const contextVariables: Record<string, unknown> = {
    problem_description: options.task
  };
  if (dataFiles.length > 0) {
    contextVariables.csv_file_path = dataFiles[0];
    contextVariables.data_files = [...dataFiles];
  }
  if (options.llmModel) {
    contextVariables.llm_model = options.llmModel;
  }
  if (options.targetColumn) {
    contextVariables.target_column = options.targetColumn;
  }
  const firstStage = template?.stages[0] ?? null;
  return [
    op.reset(),
    op.set({
      task: options.task,
      dataFiles: [...dataFiles],
      stepMode: options.stepMode ?? false,
      contextVariables,
      userVariables: []
    }),
    op.fsm('START_WORKFLOW'),
    ...(template ? [op.progress('setTemplate', template)] : []),
    op.progress('startStage', firstStage?.id ?? null),
    op.fsm('START_STEP'),
    op.progress('startStep', firstStage?.steps[0]?.id ?? null),
    op.set({ phase: startPhase })
  ];
}

/**
 * A restored run goes on: a behavior a reload cut short is closed as interrupted, and the run is back
 * in its step, planned again.
 */
export function savedRunResumed(state: RunStateView, now: Date): RunOp[] {
  return [
    ...(state.behavior ? behaviorInterrupted(state, 'interrupted', now) : []),
    ...backIntoStep(),
    op.set({ phase: 'plan' })
  ];
}

/** After an error: the failed part is run again, with the variables the user set (they win from then on). */
export function retried(
  state: RunStateView,
  variables: Record<string, string> = {}
): RunOp[] {
  const names = Object.keys(variables);
  return [
    ...(names.length > 0
      ? [
          op.set({
            contextVariables: { ...state.contextVariables, ...variables },
            userVariables: [...new Set([...state.userVariables, ...names])],
            retry: null
          })
        ]
      : []),
    op.set({ error: null, planningFailures: 0, variablesDirty: true }),
    op.fsm('RESUME')
  ];
}

/** Into stage `stageId`, at `stepId` or its first open step. */
function enterStage(
  draft: ProgressDraft,
  stageId: string,
  stepId: string | null,
  startPhase: Phase
): void {
  draft.push(op.fsm('NEXT_STAGE'));
  draft.apply(op.progress('startStage', stageId));
  draft.push(op.fsm('START_STEP'));
  const progress = draft.progress;
  draft.apply(
    op.progress(
      'startStep',
      stepId ?? progress.firstOpenStep(progress.currentStage)?.id ?? null
    )
  );
  draft.push(op.set({ phase: startPhase }));
}

/**
 * The current step completes (its state-machine event is dispatched before the variables are collected
 * again) and the run goes to `target`, or else to the next step or stage, or completes. With
 * `stageComplete` the stage completes too: none of its remaining steps runs, not even one `target` names.
 */
export function stepCompleted(
  state: RunStateView,
  event: {
    note?: string;
    target: ILocation | null;
    stageComplete: boolean;
    startPhase: Phase;
  }
): RunOp[] {
  const present = state.presentVariables();
  const draft = new ProgressDraft(state.progress);
  draft.apply(op.progress('completeStep', present, event.note));
  draft.push(op.set({ pendingFeedback: null, endStepRequested: false }));
  const progress = draft.progress;
  const { target } = event;
  const otherStage =
    target !== null && target.stageId !== progress.currentStageId
      ? target
      : null;
  const nextStepId = event.stageComplete
    ? null
    : (target?.stepId ?? progress.nextStep()?.id ?? null);
  if (otherStage) {
    // The rest of the current stage is left: the stage completes with what it produced.
    draft.push(op.fsm('COMPLETE_STAGE'));
    draft.apply(op.progress('completeStage', present));
    enterStage(draft, otherStage.stageId, otherStage.stepId, event.startPhase);
  } else if (nextStepId) {
    draft.push(op.fsm('NEXT_STEP'));
    draft.apply(op.progress('startStep', nextStepId));
    draft.push(op.set({ phase: event.startPhase }));
  } else {
    draft.push(op.fsm('COMPLETE_STAGE'));
    draft.apply(op.progress('completeStage', present));
    const nextStage = draft.progress.nextStage();
    if (nextStage) {
      enterStage(draft, nextStage.id, null, event.startPhase);
    } else {
      draft.push(op.fsm('COMPLETE_WORKFLOW'), op.set({ phase: 'done' }));
    }
  }
  return draft.ops;
}

/** A loop that ends (stop, max steps) leaves a consistent, resumable state: the step is planned again. */
export function settled(
  state: RunStateView,
  reason: IRunFinished['reason'],
  now: Date
): RunOp[] {
  return [
    ...(state.behavior
      ? behaviorInterrupted(
          state,
          reason === 'stopped' ? 'stopped' : 'interrupted',
          now
        )
      : []),
    op.set({
      phase: state.phase === 'done' ? 'done' : 'plan',
      retry: null,
      error: null
    }),
    op.fsm('CANCEL', { ifAllowed: true })
  ];
}

/** The loop stops on `error`; `retry()` goes on from here. */
export function failed(error: IRunError): RunOp[] {
  return [op.set({ error }), op.fsm('FAIL', { ifAllowed: true })];
}
