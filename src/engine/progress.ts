/**
 * The hierarchical progress of a run (stages > steps > behaviors) and its outputs tracking
 * (docs/protocol.md#outputs-tracking).
 *
 * Expected names come from the plan. While a level is current, expected names present in the kernel are
 * `in_progress`; on completion they become `produced`, `in_progress` is cleared and the produced names
 * roll up into the parent level (behavior -> step -> stage).
 */
import type {
  Artifact,
  Assessment,
  CompletedItem,
  CurrentLocation,
  CurrentOutputs,
  Goals,
  Progress,
  ProgressLevel,
  ProgressLevelName,
  WorkflowStage,
  WorkflowStep,
  WorkflowTemplate
} from '../protocol';
import type { IProgressSnapshot, IStageView, ItemStatus } from './types';

interface ILevelState {
  current: string | null;
  completed: CompletedItem[];
  focus: string | null;
  outputs: CurrentOutputs;
}

interface IBehaviorLevelState extends ILevelState {
  iteration: number;
  /** The running behavior's goal (legacy `behavior.target`), if the planner gave one. */
  goal: string | null;
  actionsTaken: string[];
  /** Expected names announced by the last plan (`outputs_tracking`) for the next behavior. */
  nextExpected: string[];
  /** The id the last plan gave the next behavior (`behavior.id`); absent in older saved runs. */
  nextId?: string | null;
}

/** The serialized form, saved in the notebook metadata. */
export interface IProgressState {
  version: 1;
  template: WorkflowTemplate | null;
  stages: ILevelState;
  steps: ILevelState;
  behaviors: IBehaviorLevelState;
  /**
   * Per completed stage, the steps it never ran: the stage was declared complete, or the run left it for
   * another stage, before they came up. Absent in older saved runs.
   */
  skippedSteps?: Record<string, string[]>;
  /**
   * The planner's latest assessment of each stage and step (`progress_update.assessment`), by stage
   * id, for the whole run. Absent in older saved runs.
   */
  assessments?: Record<string, IStageAssessments>;
}

export interface IStageAssessments {
  stage?: Assessment;
  /** By step id. */
  steps?: Record<string, Assessment>;
}

/** How long an assessment's reasoning may be (the run's metadata and its checkpoints carry it). */
export const MAX_ASSESSMENT_CHARS = 2000;

/** How many action summaries one behavior keeps for `actions_taken`. */
const MAX_ACTIONS_TAKEN = 30;

function emptyOutputs(): CurrentOutputs {
  return { expected: [], produced: [], in_progress: [] };
}

function emptyLevel(): ILevelState {
  return { current: null, completed: [], focus: null, outputs: emptyOutputs() };
}

function emptyBehaviors(): IBehaviorLevelState {
  return {
    ...emptyLevel(),
    iteration: 0,
    goal: null,
    actionsTaken: [],
    nextExpected: []
  };
}

function union(into: string[], more: readonly string[]): string[] {
  const result = [...into];
  for (const name of more) {
    if (!result.includes(name)) {
      result.push(name);
    }
  }
  return result;
}

function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function firstLine(text: string | null, max = 200): string | null {
  const line = text
    ?.split('\n')
    .map(l => l.trim())
    .find(l => l !== '');
  return line ? line.slice(0, max) : null;
}

export function behaviorIdFor(iteration: number): string {
  return `behavior_${String(iteration).padStart(3, '0')}`;
}

export function artifactId(base: string, version: string): string {
  return `${base}@${version}`;
}

/** `update_stage_steps` may mark steps the server already did. */
function isDone(step: WorkflowStep): boolean {
  return step.status === 'completed';
}

function itemGoal(item: WorkflowStage | WorkflowStep | null): string | null {
  if (!item) {
    return null;
  }
  return item.goal ?? item.description ?? item.name ?? null;
}

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
    return this._findStage(this._state.stages.current);
  }

  get currentStep(): WorkflowStep | null {
    const stage = this.currentStage;
    const id = this._state.steps.current;
    return stage?.steps.find(s => s.id === id) ?? null;
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

  /**
   * A new behavior of the current step; returns its id: the one the last plan gave it, else
   * `behavior_001`, ... The iteration counts behaviors of the step either way.
   */
  startBehavior(): string {
    const behaviors = this._state.behaviors;
    behaviors.iteration += 1;
    behaviors.current = behaviors.nextId || behaviorIdFor(behaviors.iteration);
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
    const names = new Set(present);
    let changed = false;
    for (const level of ['stages', 'steps', 'behaviors'] as const) {
      const outputs = this._level(level).outputs;
      const inProgress = outputs.expected.filter(
        n => names.has(n) && !outputs.produced.includes(n)
      );
      if (inProgress.join('\n') !== outputs.in_progress.join('\n')) {
        outputs.in_progress = inProgress;
        changed = true;
      }
    }
    return changed;
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

  /** The current step ends without reaching its target (the planner gave it up): it shows as skipped. */
  skipCurrentStep(): void {
    const stage = this._state.stages.current;
    const step = this._state.steps.current;
    if (stage === null || step === null) {
      return;
    }
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
    return stage?.steps.find(s => !isDone(s)) ?? null;
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
    return {
      stage: itemGoal(this.currentStage),
      step: itemGoal(this.currentStep),
      behavior: this._state.behaviors.goal
    };
  }

  /**
   * The location, the template marked completed / current / remaining, and the outputs, as views
   * show them. `finished`: the workflow is completed, so no stage is current any more.
   */
  snapshot(finished: boolean): IProgressSnapshot {
    const goals = this.goals();
    return {
      workflowName: this.template?.name ?? null,
      stage: {
        id: this.currentStageId,
        name: this.currentStage?.name ?? null,
        goal: goals.stage ?? null,
        focus: this._state.stages.focus
      },
      step: {
        id: this.currentStepId,
        name: this.currentStep?.name ?? null,
        goal: goals.step ?? null,
        focus: this._state.steps.focus
      },
      behavior: { id: this.currentBehaviorId, iteration: this.iteration },
      stages: this._stageViews(finished),
      outputs: {
        stages: this.outputs('stages'),
        steps: this.outputs('steps'),
        behaviors: this.outputs('behaviors')
      }
    };
  }

  /** `observation.location.progress`. */
  toProgress(): Progress {
    const stageIds = (this._state.template?.stages ?? []).map(s => s.id);
    const stepIds = (this.currentStage?.steps ?? []).map(s => s.id);
    const behaviors = this._state.behaviors;
    return {
      stages: this._levelView(this._state.stages, stageIds),
      steps: this._levelView(this._state.steps, stepIds),
      behaviors: {
        ...this._levelView(behaviors, null),
        iteration: behaviors.iteration
      }
    };
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
    return {
      version: 1,
      template: null,
      stages: emptyLevel(),
      steps: emptyLevel(),
      behaviors: emptyBehaviors()
    };
  }

  private _levelView(
    level: ILevelState,
    order: string[] | null
  ): ProgressLevel {
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

  private _stageViews(finished: boolean): IStageView[] {
    const template = this._state.template;
    if (!template) {
      return [];
    }
    const doneStages = new Set(this.completed('stages').map(s => s.stage_id));
    const doneSteps = new Set(this.completed('steps').map(s => s.step_id));
    const currentStage = this.currentStageId;
    const currentStep = this.currentStepId;
    return template.stages.map(stage => {
      const stageStatus: ItemStatus = doneStages.has(stage.id)
        ? 'completed'
        : stage.id === currentStage && !finished
          ? 'current'
          : 'remaining';
      const skipped = new Set(
        stageStatus === 'completed' || stage.id === currentStage
          ? (this._state.skippedSteps?.[stage.id] ?? [])
          : []
      );
      return {
        id: stage.id,
        name: stage.name,
        status: stageStatus,
        steps: stage.steps.map(step => ({
          id: step.id,
          name: step.name,
          status: skipped.has(step.id)
            ? 'skipped'
            : stageStatus === 'completed' ||
                (stage.id === currentStage &&
                  (doneSteps.has(step.id) || isDone(step)))
              ? 'completed'
              : stage.id === currentStage && step.id === currentStep
                ? 'current'
                : 'remaining'
        }))
      };
    });
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
    if (stageId === null) {
      return null;
    }
    return this._state.template?.stages.find(s => s.id === stageId) ?? null;
  }

  private _level(level: ProgressLevelName): ILevelState {
    return this._state[level];
  }

  private _state: IProgressState = WorkflowProgress.emptyState();
}
