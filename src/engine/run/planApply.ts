/**
 * A `/planning` answer applied: what `planUpdate` decides it changes (the workflow, a stage's steps,
 * variables, progress, effects, the legacy lists, the next behavior), with the user's confirmation of
 * a workflow update; and the same for `update_workflow` and `update_stage_steps` actions. The run's
 * fields change through the runner (`IRunHost.change`).
 */
import type {
  PlanningResponse,
  WorkflowStep,
  WorkflowTemplate
} from '../../protocol';
import { type IMessage, msg, reported } from '../messages';
import { errorMessage } from '../actions/registry';
import type { RunBoundaries } from './boundaries';
import type { IRunHost } from './host';

/** What applying a planning answer uses of the runner. */
export type IPlanApplyHost = Pick<
  IRunHost,
  'state' | 'change' | 'signals' | 'control' | 'hooks' | 'settings'
>;
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
import { RunStopped } from './runControl';
import type { RunState } from '../state/runState';

const BEHAVIOR_STATES: ReadonlySet<string> = new Set([
  'BEHAVIOR_RUNNING',
  'ACTION_RUNNING',
  'ACTION_COMPLETED',
  'WORKFLOW_UPDATE_PENDING'
]);

/** The run as `planUpdate` reads it. */
export function runView(state: Readonly<RunState>): IRunView {
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
      host.change({ usage: changes.usage });
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
    this._applyContext(changes);
    for (const warning of changes.warnings) {
      this._boundaries.warn(warning, 'planner');
    }
    host.signals.progress();
    return nextStageId;
  }

  /** The changes after the workflow's: variables, progress, effects, the legacy lists, the next behavior. */
  private _applyContext(changes: IPlanningChanges): void {
    const host = this._host;
    const { state } = host;
    const { progress } = state;
    for (const change of changes.progress) {
      if (change.focus !== undefined) {
        progress.setFocus(change.level, change.focus);
      }
      if (change.assessment) {
        progress.setAssessment(change.level, change.assessment);
      }
      if (change.expected) {
        progress.setExpected(change.level, change.expected);
      }
      if (change.outputs) {
        progress.replaceOutputs(change.level, change.outputs);
      }
    }
    if (changes.effects) {
      state.effects.replace(changes.effects);
      host.signals.effects(state.effects.toJSON());
    }
    const next = changes.nextBehavior;
    if (next.goal !== null) {
      progress.setBehaviorGoal(next.goal);
    }
    progress.planBehaviorId(next.id);
    if (next.outputs) {
      progress.planBehaviorOutputs(next.outputs);
    }
    host.change({
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
    });
  }

  /** A template from the planner (`update_workflow`): the first is taken as is, a different one is confirmed. */
  proposeWorkflow(template: WorkflowTemplate): Promise<boolean> {
    return this._applyWorkflow(
      workflowProposal(runView(this._host.state), template)
    );
  }

  private async _applyWorkflow(proposal: IWorkflowProposal): Promise<boolean> {
    const host = this._host;
    const { fsm } = host.state;
    const { template, decision } = proposal;
    host.change({ templateFromPlanner: proposal.templateFromPlanner });
    if (decision === 'keep') {
      return true;
    }
    if (decision === 'adopt' || decision === 'adoptMinor') {
      this._adoptTemplate(template);
      if (decision === 'adoptMinor') {
        this._boundaries.addEffect(
          'The planner updated the names or goals of the workflow (same stages and steps); applied.'
        );
        host.signals.progress();
      }
      return true;
    }
    fsm.dispatch('UPDATE_WORKFLOW');
    host.signals.progress();
    const accepted = await this._confirmWorkflow(
      template,
      proposal.replaces ?? template
    );
    fsm.dispatch(
      accepted ? 'UPDATE_WORKFLOW_CONFIRMED' : 'UPDATE_WORKFLOW_REJECTED'
    );
    if (accepted) {
      this._adoptTemplate(template);
    } else {
      this._boundaries.addEffect(
        'The workflow update was rejected by the user; the current workflow is kept.'
      );
    }
    host.signals.progress();
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
        this._host.state.fsm.dispatch('UPDATE_WORKFLOW_REJECTED');
        throw new RunStopped();
      }
      this._boundaries.warn(
        msg('workflowConfirmFailed', errorMessage(error)),
        'hook'
      );
      return false;
    }
  }

  private _adoptTemplate(template: WorkflowTemplate): void {
    const { progress } = this._host.state;
    const location = locationAfterAdopting(runView(this._host.state), template);
    progress.setTemplate(template);
    if (location) {
      progress.adoptLocation(location.stageId, location.stepId);
    }
  }

  /** `update_stage_steps` (`stageId` null: the current stage); false when there is no such stage. */
  replaceStageSteps(stageId: string | null, steps: WorkflowStep[]): boolean {
    const { fsm, progress } = this._host.state;
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
    this._host.signals.progress();
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
