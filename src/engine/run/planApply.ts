/**
 * A `/planning` answer applied: what `planUpdate` decides it changes (the workflow, a stage's steps,
 * variables, progress, effects, the legacy lists, the next behavior), with the user's confirmation of
 * a workflow update; and the same for `update_workflow` and `update_stage_steps` actions. What each
 * changes in the run state is decided by the functions below, as transactions.
 */
import type {
  PlanningResponse,
  WorkflowStep,
  WorkflowTemplate
} from '../../protocol';
import { type IMessage, msg, reported } from '../messages';
import { errorMessage } from '../actions/registry';
import type { RunStateView } from '../state/runState';
import { op, type RunOp, transaction } from '../state/transaction';
import { addEffect } from './boundaries';
import type { RunBoundaries } from './boundaries';
import type { IRunHost } from './host';
import {
  type ILocation,
  type IPlanningChanges,
  type IRunView,
  type IWorkflowProposal,
  locationAfterAdopting,
  planUpdate,
  resolveTransition,
  transitionRequest,
  workflowProposal
} from './planUpdate';
import { answerContracts } from './outputChecks';
import { RunStopped } from './runControl';

/** What applying a planning answer uses of the runner. */
export type IPlanApplyHost = Pick<
  IRunHost,
  'state' | 'dispatch' | 'control' | 'hooks' | 'settings'
>;

const BEHAVIOR_STATES: ReadonlySet<string> = new Set([
  'BEHAVIOR_RUNNING',
  'ACTION_RUNNING',
  'ACTION_COMPLETED',
  'WORKFLOW_UPDATE_PENDING'
]);

/** The run as `planUpdate` reads it. */
export function runView(state: RunStateView): IRunView {
  const { progress } = state;
  return {
    template: progress.template,
    stageId: progress.currentStageId,
    stepId: progress.currentStepId,
    templateFromPlanner: state.templateFromPlanner,
    midBehavior: BEHAVIOR_STATES.has(state.fsm.state),
    toDoList: state.legacy.toDoList
  };
}

/** `template` becomes the run's: where the run is in it, when the run had no place before. */
export function templateAdopted(
  state: RunStateView,
  template: WorkflowTemplate
): RunOp[] {
  const location = locationAfterAdopting(runView(state), template);
  return [
    op.progress('setTemplate', template),
    ...(location
      ? [op.progress('adoptLocation', location.stageId, location.stepId)]
      : [])
  ];
}

/**
 * `update_stage_steps` (`stageId` null: the current stage): the stage's steps replaced, and the run
 * placed at the first open one when it had no step in it; `applied` false when there is no such stage.
 */
export function stageStepsReplaced(
  state: RunStateView,
  stageId: string | null,
  steps: WorkflowStep[]
): { ops: RunOp[]; applied: boolean } {
  const { progress } = state;
  const id = stageId ?? progress.currentStageId;
  const stage = progress.findStage(id);
  const applied = id !== null && stage !== null;
  const first = stage ? progress.firstOpenStep({ ...stage, steps }) : null;
  const place =
    applied &&
    id === progress.currentStageId &&
    progress.currentStepId === null &&
    first;
  return {
    ops: [
      op.fsm('UPDATE_STEP'),
      ...(id !== null ? [op.progress('replaceStageSteps', id, steps)] : []),
      op.fsm(applied ? 'UPDATE_STEP_CONFIRMED' : 'UPDATE_STEP_REJECTED'),
      ...(place && id !== null && first
        ? [op.progress('adoptLocation', id, first.id)]
        : [])
    ],
    applied
  };
}

/** What a planning answer changes after its workflow: variables, progress, effects, the legacy lists, the next behavior. */
export function contextApplied(
  state: RunStateView,
  changes: IPlanningChanges
): RunOp[] {
  const ops: RunOp[] = [];
  for (const change of changes.progress) {
    if (change.focus !== undefined) {
      ops.push(op.progress('setFocus', change.level, change.focus));
    }
    if (change.assessment) {
      ops.push(op.progress('setAssessment', change.level, change.assessment));
    }
    if (change.expected) {
      ops.push(op.progress('setExpected', change.level, change.expected));
    }
    if (change.outputs) {
      ops.push(op.progress('replaceOutputs', change.level, change.outputs));
    }
  }
  if (changes.effects) {
    ops.push(op.effects('replace', changes.effects));
  }
  const next = changes.nextBehavior;
  if (next.goal !== null) {
    ops.push(op.progress('setBehaviorGoal', next.goal));
  }
  ops.push(op.progress('planBehaviorId', next.id));
  if (next.outputs) {
    ops.push(op.progress('planBehaviorOutputs', next.outputs));
  }
  ops.push(
    op.set({
      ...(changes.variables
        ? {
            contextVariables: {
              ...state.contextVariables,
              ...changes.variables
            }
          }
        : {}),
      legacy: {
        ...state.legacy,
        ...(changes.toDoList ? { toDoList: changes.toDoList } : {}),
        ...(changes.sectionProgress
          ? { section_progress: changes.sectionProgress }
          : {})
      },
      filter: changes.filter
    })
  );
  return ops;
}

export class PlanApplier {
  constructor(
    private readonly _host: IPlanApplyHost,
    private readonly _boundaries: RunBoundaries
  ) {}

  /**
   * Applies what a `/planning` answer changes (`planUpdate`). Returns the stage the planner asked to
   * move to (`workflow_update.nextStageId`) when its template was applied; the caller moves.
   */
  async apply(response: PlanningResponse): Promise<string | null> {
    const host = this._host;
    const changes = planUpdate(runView(host.state), response);
    if (changes.usage) {
      await host.dispatch(
        transaction('plan.usage', [op.set({ usage: changes.usage })])
      );
    }
    let nextStageId: string | null = null;
    if (changes.workflow) {
      const applied = await this._applyWorkflow(changes.workflow);
      nextStageId = applied ? changes.workflow.nextStageId : null;
    }
    if (changes.stageSteps) {
      this.replaceStageSteps(
        changes.stageSteps.stageId,
        changes.stageSteps.steps
      );
    }
    for (const warning of changes.warnings) {
      this._boundaries.warn(warning, 'planner');
    }
    await host.dispatch(
      transaction('plan.context', contextApplied(host.state, changes))
    );
    // The step's contracts join its expected outputs as the answer's context left them.
    await host.dispatch(
      transaction('plan.contracts', answerContracts(host.state, response), {
        show: true
      })
    );
    return nextStageId;
  }

  /** A template from the planner (`update_workflow`): the first is taken as is, a different one is confirmed. */
  proposeWorkflow(template: WorkflowTemplate): Promise<boolean> {
    return this._applyWorkflow(
      workflowProposal(runView(this._host.state), template)
    );
  }

  private async _applyWorkflow(proposal: IWorkflowProposal): Promise<boolean> {
    const host = this._host;
    const { template, decision } = proposal;
    const fromPlanner = op.set({
      templateFromPlanner: proposal.templateFromPlanner
    });
    if (decision === 'keep') {
      await host.dispatch(transaction('plan.workflowKept', [fromPlanner]));
      return true;
    }
    if (decision === 'adopt' || decision === 'adoptMinor') {
      const minor = decision === 'adoptMinor';
      await host.dispatch(
        transaction(
          'plan.workflowAdopted',
          [
            fromPlanner,
            ...templateAdopted(host.state, template),
            ...(minor
              ? addEffect(
                  host.state,
                  'The planner updated the names or goals of the workflow (same stages and steps); applied.'
                )
              : [])
          ],
          { show: minor }
        )
      );
      return true;
    }
    await host.dispatch(
      transaction(
        'plan.workflowProposed',
        [fromPlanner, op.fsm('UPDATE_WORKFLOW')],
        { show: true }
      )
    );
    const accepted = await this._confirmWorkflow(
      template,
      proposal.replaces ?? template
    );
    const state = host.state;
    await host.dispatch(
      transaction(
        accepted ? 'plan.workflowConfirmed' : 'plan.workflowRejected',
        accepted
          ? [
              op.fsm('UPDATE_WORKFLOW_CONFIRMED'),
              ...templateAdopted(state, template)
            ]
          : [
              op.fsm('UPDATE_WORKFLOW_REJECTED'),
              ...addEffect(
                state,
                'The workflow update was rejected by the user; the current workflow is kept.'
              )
            ],
        { show: true }
      )
    );
    return accepted;
  }

  private async _confirmWorkflow(
    template: WorkflowTemplate,
    current: WorkflowTemplate
  ): Promise<boolean> {
    const { control, hooks, settings } = this._host;
    const confirm = hooks.confirmWorkflowUpdate;
    if (settings().autoAcceptWorkflowUpdates || !confirm) {
      return true;
    }
    try {
      return await control.untilStopped(
        confirm.call(hooks, template, current, control.signal)
      );
    } catch (error) {
      if (control.stopRequested) {
        await this._host.dispatch(
          transaction('plan.workflowRejected', [
            op.fsm('UPDATE_WORKFLOW_REJECTED')
          ])
        );
        throw new RunStopped();
      }
      this._boundaries.warn(
        msg('workflowConfirmFailed', errorMessage(error)),
        'hook'
      );
      return false;
    }
  }

  /** `update_stage_steps` (`stageId` null: the current stage); false when there is no such stage. */
  replaceStageSteps(stageId: string | null, steps: WorkflowStep[]): boolean {
    const { ops, applied } = stageStepsReplaced(
      this._host.state,
      stageId,
      steps
    );
    void this._host.dispatch(
      transaction('plan.stageSteps', ops, { show: true })
    );
    return applied;
  }

  /** Where the answer's transition leads, reporting names the template does not have; null: the normal order. */
  transitionTarget(response: PlanningResponse): ILocation | null {
    const { target, problems } = resolveTransition(
      runView(this._host.state),
      transitionRequest(response.transition)
    );
    for (const problem of problems) {
      this.problem(problem);
    }
    return target;
  }

  /** A problem in a /planning answer: a visible warning, and an effect the planner reads. */
  problem(message: string | IMessage): void {
    this._boundaries.warn(message, 'planner');
    this._boundaries.addEffect(`⚠️ WARN: ${reported(message).message}`);
  }
}
