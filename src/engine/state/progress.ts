/**
 * The hierarchical progress of a run (stages > steps > behaviors) and its outputs tracking
 * (docs/protocol.md#outputs-tracking).
 *
 * Expected names come from the plan. While a level is current, expected names present in the kernel are
 * `in_progress`; on completion they become `produced`, `in_progress` is cleared and the produced names
 * roll up into the parent level (behavior -> step -> stage).
 *
 * `WorkflowProgress` is the one writer of the serialized progress (progressState.ts); what views and the
 * planner read of it is in progressViews.ts.
 */
import type {
  Artifact,
  Assessment,
  CompletedItem,
  CurrentLocation,
  CurrentOutputs,
  Goals,
  Progress,
  ProgressLevelName,
  WorkflowStage,
  WorkflowStep,
  WorkflowTemplate
} from '../../protocol';
import {
  artifactId,
  behaviorIdFor,
  clone,
  currentStage,
  currentStep,
  emptyBehaviors,
  emptyLevel,
  emptyOutputs,
  emptyProgressState,
  findStage,
  firstLine,
  firstOpenStep,
  type ILevelState,
  type IProgressState,
  isDone,
  itemGoal,
  MAX_ASSESSMENT_CHARS,
  MAX_GIVEN_UP_REASON_CHARS,
  union
} from './progressState';
import {
  type IProgressSnapshot,
  observationProgress,
  progressGoals,
  progressSnapshot
} from './progressViews';

/** How many action summaries one behavior keeps for `actions_taken`. */
const MAX_ACTIONS_TAKEN = 30;

/** The methods that change the progress: only the run state's transactions call them (state/transaction.ts). */
export type ProgressWrite =
  | 'setTemplate'
  | 'replaceStageSteps'
  | 'setFocus'
  | 'setAssessment'
  | 'setExpected'
  | 'replaceOutputs'
  | 'planBehaviorOutputs'
  | 'addPlannedBehaviorOutputs'
  | 'planBehaviorId'
  | 'setBehaviorGoal'
  | 'recordAction'
  | 'startStage'
  | 'startStep'
  | 'adoptLocation'
  | 'startBehavior'
  | 'observeVariables'
  | 'completeBehavior'
  | 'skipCurrentStep'
  | 'completeStep'
  | 'completeStage'
  | 'restore'
  | 'reset';

/** The progress as the parts of the loop see it: read only. */
export type ProgressReader = Omit<WorkflowProgress, ProgressWrite>;

export class WorkflowProgress {
  constructor(private _now: () => Date = () => new Date()) {}

  get template(): WorkflowTemplate | null {
    return this._state.template;
  }

  get currentStageId(): string | null {
    return this._state.stages.current;
  }

  get currentStepId(): string | null {
    return this._state.steps.current;
  }

  get currentBehaviorId(): string | null {
    return this._state.behaviors.current;
  }

  get iteration(): number {
    return this._state.behaviors.iteration;
  }

  get currentStage(): WorkflowStage | null {
    return currentStage(this._state);
  }

  get currentStep(): WorkflowStep | null {
    return currentStep(this._state);
  }

  outputs(level: ProgressLevelName): CurrentOutputs {
    return clone(this._level(level).outputs);
  }

  completed(level: ProgressLevelName): CompletedItem[] {
    return clone(this._level(level).completed);
  }

  focus(level: ProgressLevelName): string | null {
    return this._level(level).focus;
  }

  setTemplate(template: WorkflowTemplate): void {
    this._state.template = clone(template);
    this._refreshExpectedFromTemplate();
  }

  /** `update_stage_steps` / `stage_steps_update`; false when the template has no such stage. */
  replaceStageSteps(stageId: string, steps: WorkflowStep[]): boolean {
    const stage = this._findStage(stageId);
    if (!stage) {
      return false;
    }
    stage.steps = clone(steps);
    this._refreshExpectedFromTemplate();
    return true;
  }

  setFocus(level: ProgressLevelName, focus: string): void {
    this._level(level).focus = focus;
  }

  /**
   * `progress_update.assessment`: replaces what the planner said before about the current stage, or
   * the current step (a behavior's assessment is its step's). Nothing to say changes nothing.
   */
  setAssessment(level: ProgressLevelName, assessment: Assessment): void {
    const stageId = this.currentStageId;
    const stepId = level === 'stages' ? undefined : this.currentStepId;
    if (stageId === null || stepId === null) {
      return;
    }
    const value: Assessment = {};
    const reasoning = [...(assessment.reasoning?.trim() ?? '')];
    if (reasoning.length > 0) {
      value.reasoning =
        reasoning.length > MAX_ASSESSMENT_CHARS
          ? `${reasoning.slice(0, MAX_ASSESSMENT_CHARS - 1).join('')}…`
          : reasoning.join('');
    }
    if (
      typeof assessment.percent === 'number' &&
      Number.isFinite(assessment.percent)
    ) {
      value.percent = Math.min(100, Math.max(0, assessment.percent));
    }
    if (Object.keys(value).length === 0) {
      return;
    }
    const all = (this._state.assessments ??= {});
    const ofStage = (all[stageId] ??= {});
    if (stepId === undefined) {
      ofStage.stage = value;
    } else {
      ofStage.steps = { ...ofStage.steps, [stepId]: value };
    }
  }

  /** Expected names sent by the planner for a level (`progress_update.current_outputs`). */
  setExpected(level: ProgressLevelName, expected: readonly string[]): void {
    this._level(level).outputs.expected = [...expected];
  }

  /**
   * `progress_update.current_outputs` `produced` / `in_progress`: a non-empty list of the planner's
   * tracking replaces the client's list of that level (for `behaviors`, the last behavior's). An empty
   * one is what an absent one normalises to, so it changes nothing, like `expected`.
   */
  replaceOutputs(
    level: ProgressLevelName,
    lists: { produced: readonly string[]; in_progress: readonly string[] }
  ): void {
    const outputs = this._level(level).outputs;
    if (lists.produced.length > 0) {
      outputs.produced = [...lists.produced];
    }
    if (lists.in_progress.length > 0) {
      outputs.in_progress = [...lists.in_progress];
    }
  }

  /** `outputs_tracking.expected_variables`: what the next behavior is expected to produce. */
  planBehaviorOutputs(expected: readonly string[]): void {
    this._state.behaviors.nextExpected = [...expected];
  }

  /** Names the next behavior should produce as well (a context filter's `expected_variables`). */
  addPlannedBehaviorOutputs(expected: readonly string[]): void {
    const planned = this._state.behaviors.nextExpected;
    planned.push(...expected.filter(name => !planned.includes(name)));
  }

  /** The planner's id for the next behavior (`behavior.id` of a planning answer). */
  planBehaviorId(id: string | null): void {
    this._state.behaviors.nextId = id;
  }

  setBehaviorGoal(goal: string | null): void {
    this._state.behaviors.goal = goal;
  }

  recordAction(summary: string): void {
    const taken = this._state.behaviors.actionsTaken;
    if (taken.length < MAX_ACTIONS_TAKEN) {
      taken.push(summary);
    }
  }

  startStage(stageId: string | null): void {
    const stage = this._findStage(stageId);
    this._state.stages.current = stageId;
    this._state.stages.focus = null;
    this._state.stages.outputs = {
      ...emptyOutputs(),
      expected: [...(stage?.expected_outputs ?? [])]
    };
    this._state.steps = emptyLevel();
    this._state.behaviors = emptyBehaviors();
  }

  startStep(stepId: string | null): void {
    // A step run again (Redo from it) is no longer skipped.
    this._unskip(stepId);
    this._state.steps.current = stepId;
    this._state.steps.focus = null;
    this._state.steps.outputs = {
      ...emptyOutputs(),
      expected: [...(this.currentStep?.expected_outputs ?? [])]
    };
    this._state.behaviors = emptyBehaviors();
  }

  /**
   * The run began before any template was known; the first template names the stage and step already
   * running, so nothing said about them so far (focus, outputs) is reset.
   */
  adoptLocation(stageId: string, stepId: string | null): void {
    this._state.stages.current = stageId;
    this._state.steps.current = stepId;
    this._refreshExpectedFromTemplate();
  }

  /** The id `startBehavior` gives the next behavior: the one the last plan gave it, else `behavior_00N`. */
  nextBehaviorId(): string {
    const behaviors = this._state.behaviors;
    return behaviors.nextId || behaviorIdFor(behaviors.iteration + 1);
  }

  /**
   * A new behavior of the current step; returns its id (`nextBehaviorId`). The iteration counts
   * behaviors of the step either way.
   */
  startBehavior(): string {
    const behaviors = this._state.behaviors;
    behaviors.current = this.nextBehaviorId();
    behaviors.iteration += 1;
    behaviors.nextId = null;
    behaviors.outputs = {
      expected: [...behaviors.nextExpected],
      produced: [],
      in_progress: []
    };
    // Each plan speaks for the behavior that follows it only.
    behaviors.nextExpected = [];
    behaviors.actionsTaken = [];
    return behaviors.current;
  }

  /** Kernel variable names now present: expected ones not yet produced are `in_progress`. */
  observeVariables(present: Iterable<string>): boolean {
    const changes = this._inProgress(present);
    for (const [level, inProgress] of changes) {
      this._level(level).outputs.in_progress = inProgress;
    }
    return changes.length > 0;
  }

  /** Whether `observeVariables(present)` would change anything. */
  observes(present: Iterable<string>): boolean {
    return this._inProgress(present).length > 0;
  }

  completeBehavior(present: Iterable<string>, note?: string): CompletedItem {
    const behaviors = this._state.behaviors;
    const id = behaviors.current ?? behaviorIdFor(behaviors.iteration);
    const names = new Set(present);
    const produced = union(
      behaviors.outputs.produced,
      behaviors.outputs.expected.filter(n => names.has(n))
    );
    behaviors.outputs.produced = produced;
    behaviors.outputs.in_progress = [];
    const goal =
      behaviors.goal ?? firstLine(behaviors.focus) ?? `Behavior ${id}`;
    const item: CompletedItem = {
      behavior_id: id,
      goal: note ? `${goal} (${note})` : goal,
      actions_taken: [...behaviors.actionsTaken],
      outputs_produced: {
        variables: [...produced],
        artifacts: this._artifacts(produced, id)
      }
    };
    behaviors.completed.push(item);
    behaviors.goal = null;
    this._rollUp(this._state.steps, produced);
    return clone(item);
  }

  /**
   * The current step ends without reaching its target (the planner gave it up, `reason`: what its
   * answer said): it shows as given up, and the run's end says so.
   */
  skipCurrentStep(reason: string | null = null): void {
    const stage = this._state.stages.current;
    const step = this._state.steps.current;
    if (stage === null || step === null) {
      return;
    }
    const said = reason?.trim().slice(0, MAX_GIVEN_UP_REASON_CHARS);
    const givenUp = (this._state.givenUp ??= {});
    givenUp[stage] = {
      ...givenUp[stage],
      [step]: said ? { reason: said } : {}
    };
    const skipped = this._state.skippedSteps?.[stage] ?? [];
    if (!skipped.includes(step)) {
      this._state.skippedSteps = {
        ...this._state.skippedSteps,
        [stage]: [...skipped, step]
      };
    }
  }

  private _unskip(stepId: string | null): void {
    const stage = this._state.stages.current;
    const skipped = stage !== null ? this._state.skippedSteps?.[stage] : null;
    if (stage !== null && skipped?.includes(stepId ?? '')) {
      this._state.skippedSteps = {
        ...this._state.skippedSteps,
        [stage]: skipped.filter(id => id !== stepId)
      };
    }
    const givenUp = stage !== null ? this._state.givenUp?.[stage] : undefined;
    if (stage !== null && stepId !== null && givenUp?.[stepId]) {
      const others = { ...givenUp };
      delete others[stepId];
      this._state.givenUp = { ...this._state.givenUp, [stage]: others };
    }
  }

  completeStep(present: Iterable<string>, note?: string): CompletedItem {
    const steps = this._state.steps;
    const id = steps.current ?? 'step';
    const produced = this._finishLevel(steps, present);
    const goal = itemGoal(this.currentStep) ?? `Step ${id}`;
    const item: CompletedItem = {
      step_id: id,
      goal: note ? `${goal} (${note})` : goal,
      actions_taken: this._state.behaviors.completed.map(
        b => b.goal ?? b.behavior_id ?? ''
      ),
      outputs_produced: {
        variables: [...produced],
        artifacts: [
          ...this._state.behaviors.completed.flatMap(
            b => b.outputs_produced?.artifacts ?? []
          ),
          ...this._artifacts(produced, id)
        ]
      }
    };
    steps.completed.push(item);
    this._rollUp(this._state.stages, produced);
    return clone(item);
  }

  completeStage(present: Iterable<string>): CompletedItem {
    const stages = this._state.stages;
    const id = stages.current ?? 'stage';
    const ran = new Set(this._state.steps.completed.map(s => s.step_id));
    const skipped = (this.currentStage?.steps ?? [])
      .filter(step => !ran.has(step.id) && !isDone(step))
      .map(step => step.id);
    if (stages.current !== null && skipped.length > 0) {
      // Besides the steps given up (`skipCurrentStep`), those the run never reached.
      const given = this._state.skippedSteps?.[stages.current] ?? [];
      this._state.skippedSteps = {
        ...this._state.skippedSteps,
        [stages.current]: [...new Set([...given, ...skipped])]
      };
    }
    const produced = this._finishLevel(stages, present);
    const item: CompletedItem = {
      stage_id: id,
      goal: itemGoal(this.currentStage) ?? `Stage ${id}`,
      actions_taken: this._state.steps.completed.map(
        s => s.goal ?? s.step_id ?? ''
      ),
      outputs_produced: {
        variables: [...produced],
        artifacts: this._artifacts(produced, id)
      }
    };
    stages.completed.push(item);
    return clone(item);
  }

  /**
   * The step after the current one in the current stage, or the first one not completed. A step the
   * plan marks `status: "completed"` is never run again.
   */
  nextStep(): WorkflowStep | null {
    const stage = this.currentStage;
    if (!stage) {
      return null;
    }
    const done = new Set(this._state.steps.completed.map(s => s.step_id));
    const index = stage.steps.findIndex(
      s => s.id === this._state.steps.current
    );
    const candidates = index >= 0 ? stage.steps.slice(index + 1) : stage.steps;
    return candidates.find(s => !done.has(s.id) && !isDone(s)) ?? null;
  }

  /** Where a stage starts: its first step the plan does not mark completed. */
  firstOpenStep(stage: WorkflowStage | null): WorkflowStep | null {
    return firstOpenStep(stage);
  }

  nextStage(): WorkflowStage | null {
    const stages = this._state.template?.stages ?? [];
    const done = new Set(this._state.stages.completed.map(s => s.stage_id));
    const index = stages.findIndex(s => s.id === this._state.stages.current);
    const candidates = index >= 0 ? stages.slice(index + 1) : stages;
    return candidates.find(s => !done.has(s.id)) ?? null;
  }

  findStage(stageId: string | null): WorkflowStage | null {
    return this._findStage(stageId);
  }

  location(): CurrentLocation {
    return {
      stage_id: this._state.stages.current,
      step_id: this._state.steps.current,
      behavior_id: this._state.behaviors.current,
      behavior_iteration: this._state.behaviors.iteration
    };
  }

  goals(): Goals {
    return progressGoals(this._state);
  }

  /** The panel's view (`progressSnapshot`). */
  snapshot(finished: boolean): IProgressSnapshot {
    return progressSnapshot(this._state, finished);
  }

  /** `observation.location.progress`. */
  toProgress(): Progress {
    return observationProgress(this._state);
  }

  toJSON(): IProgressState {
    return clone(this._state);
  }

  restore(state: IProgressState): void {
    this._state = clone(state);
  }

  reset(): void {
    this._state = WorkflowProgress.emptyState();
  }

  static fromJSON(state: IProgressState, now?: () => Date): WorkflowProgress {
    const progress = new WorkflowProgress(now);
    progress.restore(state);
    return progress;
  }

  static emptyState(): IProgressState {
    return emptyProgressState();
  }

  /** The levels whose `in_progress` list `present` changes, with the list it becomes. */
  private _inProgress(
    present: Iterable<string>
  ): [ProgressLevelName, string[]][] {
    const names = new Set(present);
    const changes: [ProgressLevelName, string[]][] = [];
    for (const level of ['stages', 'steps', 'behaviors'] as const) {
      const outputs = this._level(level).outputs;
      const inProgress = outputs.expected.filter(
        n => names.has(n) && !outputs.produced.includes(n)
      );
      if (inProgress.join('\n') !== outputs.in_progress.join('\n')) {
        changes.push([level, inProgress]);
      }
    }
    return changes;
  }

  private _finishLevel(
    level: ILevelState,
    present: Iterable<string>
  ): string[] {
    const names = new Set(present);
    level.outputs.produced = union(
      level.outputs.produced,
      level.outputs.expected.filter(n => names.has(n))
    );
    level.outputs.in_progress = [];
    return [...level.outputs.produced];
  }

  private _rollUp(parent: ILevelState, produced: readonly string[]): void {
    parent.outputs.produced = union(parent.outputs.produced, produced);
    parent.outputs.in_progress = parent.outputs.in_progress.filter(
      n => !produced.includes(n)
    );
  }

  private _artifacts(names: readonly string[], version: string): Artifact[] {
    const createdAt = this._now().toISOString();
    return names.map(name => ({
      artifact_id: artifactId(name, version),
      variable_name: name,
      source: version,
      created_at: createdAt
    }));
  }

  private _refreshExpectedFromTemplate(): void {
    const stageExpected = this.currentStage?.expected_outputs;
    if (stageExpected) {
      this._state.stages.outputs.expected = [...stageExpected];
    }
    const stepExpected = this.currentStep?.expected_outputs;
    if (stepExpected) {
      this._state.steps.outputs.expected = [...stepExpected];
    }
  }

  private _findStage(stageId: string | null): WorkflowStage | null {
    return findStage(this._state, stageId);
  }

  private _level(level: ProgressLevelName): ILevelState {
    return this._state[level];
  }

  private _state: IProgressState = WorkflowProgress.emptyState();
}
