/**
 * The serialized progress of a run (what the notebook saves and checkpoints keep) and the small rules
 * read from it: the current stage and step, goals, ids. `WorkflowProgress` (progress.ts) changes it;
 * `progressViews.ts` shows it.
 */
import type {
  Assessment,
  CompletedItem,
  CurrentOutputs,
  WorkflowStage,
  WorkflowStep,
  WorkflowTemplate
} from '../../protocol';

export interface ILevelState {
  current: string | null;
  completed: CompletedItem[];
  focus: string | null;
  outputs: CurrentOutputs;
}

export interface IBehaviorLevelState extends ILevelState {
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
  /**
   * Per stage, the steps given up (ended by the planner without reaching their target), each with the
   * reason the planner gave (the focus text of that answer). Absent in older saved runs.
   */
  givenUp?: Record<string, Record<string, { reason?: string }>>;
}

/** How much of a given-up step's reason is kept. */
export const MAX_GIVEN_UP_REASON_CHARS = 500;

export interface IStageAssessments {
  stage?: Assessment;
  /** By step id. */
  steps?: Record<string, Assessment>;
}

/** How long an assessment's reasoning may be (the run's metadata and its checkpoints carry it). */
export const MAX_ASSESSMENT_CHARS = 2000;

export function emptyOutputs(): CurrentOutputs {
  return { expected: [], produced: [], in_progress: [] };
}

export function emptyLevel(): ILevelState {
  return { current: null, completed: [], focus: null, outputs: emptyOutputs() };
}

export function emptyBehaviors(): IBehaviorLevelState {
  return {
    ...emptyLevel(),
    iteration: 0,
    goal: null,
    actionsTaken: [],
    nextExpected: []
  };
}

export function union(into: string[], more: readonly string[]): string[] {
  const result = [...into];
  for (const name of more) {
    if (!result.includes(name)) {
      result.push(name);
    }
  }
  return result;
}

export function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

export function firstLine(text: string | null, max = 200): string | null {
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
export function isDone(step: WorkflowStep): boolean {
  return step.status === 'completed';
}

export function itemGoal(
  item: WorkflowStage | WorkflowStep | null
): string | null {
  if (!item) {
    return null;
  }
  return item.goal ?? item.description ?? item.name ?? null;
}

/** A progress with no template and nothing done. */
export function emptyProgressState(): IProgressState {
  return {
    version: 1,
    template: null,
    stages: emptyLevel(),
    steps: emptyLevel(),
    behaviors: emptyBehaviors()
  };
}

export function findStage(
  state: IProgressState,
  stageId: string | null
): WorkflowStage | null {
  if (stageId === null) {
    return null;
  }
  return state.template?.stages.find(s => s.id === stageId) ?? null;
}

export function currentStage(state: IProgressState): WorkflowStage | null {
  return findStage(state, state.stages.current);
}

export function currentStep(state: IProgressState): WorkflowStep | null {
  const id = state.steps.current;
  return currentStage(state)?.steps.find(s => s.id === id) ?? null;
}

/** Where a stage starts: its first step the plan does not mark completed. */
export function firstOpenStep(
  stage: WorkflowStage | null
): WorkflowStep | null {
  return stage?.steps.find(s => !isDone(s)) ?? null;
}
