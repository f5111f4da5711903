/**
 * The run loop's serialisable state: everything `saveRunState` writes to the notebook and a resumed run
 * reads back. One place writes each field, like `WorkflowProgress` and `EffectsStore`.
 */
import {
  type BehaviorFeedback,
  type ContextFilter,
  type GeneratingRequestInput,
  type PlanningRequestInput,
  type PlanningUsage,
  PlanningUsageSchema,
  type SectionProgress,
  type WorkflowTemplate
} from '../../protocol';
import { CellMap, ICellMapState } from './cells';
import type { IKernelVariables } from '../ports/driver';
import { EffectsStore, IEffectsState } from './effects';
import { IFsmState, WorkflowStateMachine } from './fsm';
import { WorkflowProgress } from './progress';
import type { IProgressState } from './progressState';
import { IRewindState, readRewindState, RewindLog } from './rewind';
import type { IMessage } from '../messages';
import { describeVariables } from '../variables';

export interface IRunError {
  message: string;
  text?: IMessage;
  /** The request that failed, or `engine` for a failure of the loop itself. */
  endpoint: 'planning' | 'generating' | 'engine';
  /** `retry()` re-sends the failed request (or re-runs the failed part of the loop). */
  retryable: boolean;
  /** Variables the planner said it lacks: set them with `retry({ variables })`. */
  missingVariables?: string[];
}

export interface IBehaviorTiming {
  behaviorId: string;
  /** The behavior's number within its step, from 1. */
  iteration: number;
  stageId: string | null;
  stepId: string | null;
  /** ISO 8601. */
  startedAt: string;
  endedAt: string | null;
  durationMs: number | null;
}

export type Phase = 'plan' | 'generate' | 'done';

/**
 * The run variables the user's task sets: every request's `context.variables` keeps them, whatever the
 * kernel holds or the context filter names (docs/protocol.md#observation).
 */
export const TASK_VARIABLES = [
  'problem_description',
  'csv_file_path',
  'data_files',
  'llm_model',
  'target_column'
] as const;

export interface IOpenBehavior {
  id: string;
  executed: number;
  succeeded: number;
  sectionsAdded: number;
  lastResult: string;
  /** Index of the next action within the behavior. */
  actionIndex: number;
  /** The previous behavior's effects have been moved to history. */
  rotated: boolean;
}

export interface ILegacyContext {
  toDoList?: string[];
  section_progress?: SectionProgress;
}

/** What `saveRunState` stores in the notebook; read back by `resumeFromSaved`. */
export interface ISavedRunState {
  format: 'notebook-bcc-run';
  version: 1;
  savedAt: string;
  task: string | null;
  dataFiles: string[];
  phase: Phase;
  pendingFeedback: BehaviorFeedback | null;
  openBehavior: IOpenBehavior | null;
  endStepRequested: boolean;
  fsm: IFsmState;
  progress: IProgressState;
  effects: IEffectsState;
  /** Variables set by the planner (`context_update.variables`) and the task. */
  contextVariables: Record<string, unknown>;
  /** Names among them the user set ("Set Variables…"): their values win over the kernel's. */
  userVariables?: string[];
  /** The last kernel variables seen, as names, types and shapes only: values are never saved. */
  kernelVariableTypes?: Record<string, string>;
  /** Older saves: the last kernel variables' values, read as their types and never written again. */
  kernelVariables?: Record<string, unknown>;
  cells: ICellMapState;
  filter: ContextFilter | null;
  legacy: ILegacyContext;
  timings: IBehaviorTiming[];
  stepMode: boolean;
  /** What the planner service keeps between requests (`IPlannerService.saveState`), if anything. */
  planner?: unknown;
  /** The dialect the planner spoke, once known. */
  plannerDialect?: string | null;
  /** The planner has sent a template in this run (a template saved by an earlier run does not count). */
  templateFromPlanner?: boolean;
  /** Checkpoints and rewinds (docs/architecture.md#rewind); absent in older saves. */
  rewind?: IRewindState;
  /** What an LLM planner said the run spent, as of its latest answer (`PlanningResponse.usage`). */
  usage?: PlanningUsage;
}

export type RetryRequest =
  | { endpoint: 'planning'; body: PlanningRequestInput }
  | { endpoint: 'generating'; body: GeneratingRequestInput };

/** The fields of the run state the loop changes; `WorkflowRunner` writes them (`RunChanges`). */
type ChangedFields =
  | 'contextVariables'
  | 'userVariables'
  | 'legacy'
  | 'filter'
  | 'phase'
  | 'pendingFeedback'
  | 'behavior'
  | 'endStepRequested'
  | 'timings'
  | 'planner'
  | 'plannerDialect'
  | 'templateFromPlanner'
  | 'usage'
  | 'variablesDirty'
  | 'codeRanSinceCollection'
  | 'behaviorsRun'
  | 'planningFailures'
  | 'retry'
  | 'error'
  | 'buffer'
  | 'variablesBeforePause'
  | 'kernelVariables'
  | 'kernelVariableTypes';

/** What a part of the loop changes in the run state's fields, for the runner to write. */
export type RunChanges = Partial<Pick<RunState, ChangedFields>>;

/**
 * The state of one notebook's run. The models are long-lived; `reset()` empties them in place. Only
 * `WorkflowRunner` writes its fields; the rest of the loop reads them as `Readonly<RunState>`.
 */
export class RunState {
  constructor(options: { now: () => Date; maxHistoryItems: () => number }) {
    this._now = options.now;
    this.fsm = new WorkflowStateMachine({ now: options.now });
    this.progress = new WorkflowProgress(options.now);
    this.effects = new EffectsStore(options.maxHistoryItems);
  }

  readonly fsm: WorkflowStateMachine;
  readonly progress: WorkflowProgress;
  readonly effects: EffectsStore;
  readonly cells = new CellMap();
  readonly rewind = new RewindLog();

  task: string | null = null;
  dataFiles: string[] = [];
  contextVariables: Record<string, unknown> = {};
  /** Names of context variables the user set: like the task, a kernel variable never hides them. */
  userVariables: string[] = [];
  /** The last values collected, sent to the planner; kept in memory only. */
  kernelVariables: Record<string, unknown> = {};
  kernelVariableTypes: Record<string, string> = {};
  legacy: ILegacyContext = {};
  filter: ContextFilter | null = null;
  phase: Phase = 'plan';
  pendingFeedback: BehaviorFeedback | null = null;
  behavior: IOpenBehavior | null = null;
  endStepRequested = false;
  timings: IBehaviorTiming[] = [];
  stepMode = false;
  planner: unknown = undefined;
  plannerDialect: string | null = null;
  templateFromPlanner = false;
  /** The planner's latest `usage`: tokens spent are spent, so a rewind keeps it. */
  usage: PlanningUsage | null = null;

  // Not saved: they describe this session's loop, not the run.
  variablesDirty = true;
  /** The run executed code since the variables were last collected (in interactive mode, approved code). */
  codeRanSinceCollection = false;
  behaviorsRun = 0;
  planningFailures = 0;
  retry: RetryRequest | null = null;
  error: IRunError | null = null;
  /** Actions received and not yet applied. */
  buffer: unknown[] = [];
  /** The kernel's variables as last seen before a pause, until the first collection after it. */
  variablesBeforePause: string[] | null = null;

  reset(): void {
    this.fsm.restore({ state: 'IDLE', returnTo: null, history: [] });
    this.progress.reset();
    this.effects.restore({ current: [], history: [] });
    this.cells.clear();
    this.rewind.clear();
    this.task = null;
    this.dataFiles = [];
    this.contextVariables = {};
    this.userVariables = [];
    this.kernelVariables = {};
    this.kernelVariableTypes = {};
    this.legacy = {};
    this.filter = null;
    this.phase = 'plan';
    this.pendingFeedback = null;
    this.behavior = null;
    this.endStepRequested = false;
    this.timings = [];
    this.stepMode = false;
    this.planner = undefined;
    this.plannerDialect = null;
    this.templateFromPlanner = false;
    this.usage = null;
    this.variablesDirty = true;
    this.codeRanSinceCollection = false;
    this.behaviorsRun = 0;
    this.planningFailures = 0;
    this.retry = null;
    this.error = null;
    this.variablesBeforePause = null;
  }

  /**
   * A new run: the task and data files as context variables, at the first step of `template` (one
   * saved by an earlier run) or nowhere until the planner sends one. Follows `reset()`.
   */
  begin(
    options: {
      task: string;
      dataFiles?: string[];
      stepMode?: boolean;
      llmModel?: string;
      targetColumn?: string;
    },
    template: WorkflowTemplate | null
  ): void {
    const dataFiles = options.dataFiles ?? [];
    this.task = options.task;
    this.dataFiles = [...dataFiles];
    this.stepMode = options.stepMode ?? false;
    this.contextVariables = { problem_description: options.task };
    this.userVariables = [];
    if (dataFiles.length > 0) {
      this.contextVariables.csv_file_path = dataFiles[0];
      this.contextVariables.data_files = [...dataFiles];
    }
    if (options.llmModel) {
      this.contextVariables.llm_model = options.llmModel;
    }
    if (options.targetColumn) {
      this.contextVariables.target_column = options.targetColumn;
    }
    this.fsm.dispatch('START_WORKFLOW');
    const firstStage = template?.stages[0] ?? null;
    if (template) {
      this.progress.setTemplate(template);
    }
    this.progress.startStage(firstStage?.id ?? null);
    this.fsm.dispatch('START_STEP');
    this.progress.startStep(firstStage?.steps[0]?.id ?? null);
  }

  restore(saved: ISavedRunState): void {
    this.task = saved.task;
    this.dataFiles = [...saved.dataFiles];
    this.phase = saved.phase;
    this.pendingFeedback = saved.pendingFeedback;
    this.behavior = saved.openBehavior ? { ...saved.openBehavior } : null;
    this.endStepRequested = saved.endStepRequested;
    this.fsm.restore(saved.fsm);
    this.progress.restore(saved.progress);
    this.effects.restore(saved.effects);
    this.contextVariables = { ...saved.contextVariables };
    this.userVariables = [...(saved.userVariables ?? [])];
    this.kernelVariableTypes = saved.kernelVariableTypes
      ? { ...saved.kernelVariableTypes }
      : describeVariables(saved.kernelVariables ?? {});
    // Until the kernel is asked again (on resume), only the types are known.
    this.kernelVariables = { ...this.kernelVariableTypes };
    this.cells.restore(saved.cells);
    const rewind = readRewindState(saved.rewind);
    if (rewind) {
      this.rewind.restore(rewind);
      this.effects.position = rewind.effects;
    } else {
      this.rewind.clear();
    }
    this.filter = saved.filter;
    this.legacy = { ...saved.legacy };
    this.timings = saved.timings.map(t => ({ ...t }));
    this.stepMode = saved.stepMode;
    this.planner = saved.planner;
    this.plannerDialect = saved.plannerDialect ?? null;
    this.templateFromPlanner =
      saved.templateFromPlanner ?? saved.progress.template !== null;
    // Only shown, never needed to resume: a usage that cannot be read is left out, not a problem.
    const usage = PlanningUsageSchema.safeParse(saved.usage);
    this.usage = saved.usage !== undefined && usage.success ? usage.data : null;
  }

  toJSON(): ISavedRunState {
    const saved: ISavedRunState = {
      format: 'notebook-bcc-run',
      version: 1,
      savedAt: this._now().toISOString(),
      task: this.task,
      dataFiles: [...this.dataFiles],
      phase: this.phase,
      pendingFeedback: this.pendingFeedback,
      openBehavior: this.behavior ? { ...this.behavior } : null,
      endStepRequested: this.endStepRequested,
      fsm: this.fsm.toJSON(),
      progress: this.progress.toJSON(),
      effects: this.effects.toJSON(),
      contextVariables: { ...this.contextVariables },
      userVariables: [...this.userVariables],
      kernelVariableTypes: { ...this.kernelVariableTypes },
      cells: this.cells.toJSON(),
      filter: this.filter,
      legacy: { ...this.legacy },
      timings: this.timings.map(t => ({ ...t })),
      stepMode: this.stepMode,
      templateFromPlanner: this.templateFromPlanner,
      rewind: this.rewind.toJSON(this.effects.position)
    };
    if (this.planner !== undefined) {
      saved.planner = this.planner;
    }
    if (this.plannerDialect !== null) {
      saved.plannerDialect = this.plannerDialect;
    }
    if (this.usage !== null) {
      saved.usage = this.usage;
    }
    return saved;
  }

  /** The task's variables and those the user set, as the run holds them (the planner may have updated them). */
  taskVariables(): Record<string, unknown> {
    const task: Record<string, unknown> = {};
    for (const name of [...TASK_VARIABLES, ...this.userVariables]) {
      if (name in this.contextVariables) {
        task[name] = this.contextVariables[name];
      }
    }
    return task;
  }

  /** The kernel variables' names, for outputs tracking. */
  presentVariables(): string[] {
    return Object.keys(this.kernelVariableTypes);
  }

  private readonly _now: () => Date;
}

/** New values from the kernel, as the run keeps them: the values in memory, their types saved. */
export function kernelVariableChanges(
  collected: IKernelVariables
): Required<Pick<RunChanges, 'kernelVariables' | 'kernelVariableTypes'>> {
  return {
    kernelVariables: { ...collected.values },
    kernelVariableTypes: {
      ...describeVariables(collected.values, collected.types),
      ...collected.types
    }
  };
}
