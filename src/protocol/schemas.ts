/**
 * Canonical shapes of every message exchanged with the planner service (DSLC).
 *
 * These schemas describe the *canonical* form. Variants seen in the wild (camelCase keys, legacy
 * action names, objects where ids are expected, ...) are rewritten into this form by `normalize.ts`
 * before validation, so parse incoming data with the `normalize*` functions, not with these directly.
 *
 * Objects are loose: fields this client does not know are kept, never rejected.
 */
import { z } from 'zod';
import {
  ActionSchema,
  UnknownActionSchema,
  WorkflowStepSchema,
  WorkflowTemplateSchema
} from './actionSchemas';
import {
  OutputCheckSchema,
  OutputContractSchema,
  RunContractSchema
} from './contracts';

// ---------------------------------------------------------------------------------------------
// Observation
// ---------------------------------------------------------------------------------------------

export const PROGRESS_LEVELS = ['stages', 'steps', 'behaviors'] as const;
export const ProgressLevelNameSchema = z.enum(PROGRESS_LEVELS);
export type ProgressLevelName = z.infer<typeof ProgressLevelNameSchema>;

export const ArtifactSchema = z.looseObject({
  artifact_id: z.string(),
  variable_name: z.string(),
  description: z.string().optional(),
  source: z.string().optional(),
  parent: z.string().optional(),
  created_at: z.string().optional()
});
export type Artifact = z.infer<typeof ArtifactSchema>;

export const OutputsProducedSchema = z.looseObject({
  variables: z.array(z.string()).optional(),
  artifacts: z.array(ArtifactSchema).optional()
});
export type OutputsProduced = z.infer<typeof OutputsProducedSchema>;

export const CompletedItemSchema = z.looseObject({
  stage_id: z.string().optional(),
  step_id: z.string().optional(),
  behavior_id: z.string().optional(),
  goal: z.string().optional(),
  actions_taken: z.array(z.string()).optional(),
  outputs_produced: OutputsProducedSchema.optional()
});
export type CompletedItem = z.infer<typeof CompletedItemSchema>;

export const CurrentOutputsSchema = z.looseObject({
  expected: z.array(z.string()).default([]),
  produced: z.array(z.string()).default([]),
  in_progress: z.array(z.string()).default([]),
  /** Our extension, in a `progress_update`: contracts of the current step's variables. */
  contracts: z.array(OutputContractSchema).optional()
});
export type CurrentOutputs = z.infer<typeof CurrentOutputsSchema>;

export const ProgressLevelSchema = z.looseObject({
  completed: z.array(CompletedItemSchema).default([]),
  /** The current item's id; null when there is none. */
  current: z.string().nullable().optional(),
  remaining: z.array(z.string()).optional(),
  iteration: z.number().optional(),
  /** Detailed guidance text written by the planner (not a list of names). */
  focus: z.string().optional(),
  current_outputs: CurrentOutputsSchema.optional()
});
export type ProgressLevel = z.infer<typeof ProgressLevelSchema>;

export const ProgressSchema = z.looseObject({
  stages: ProgressLevelSchema.optional(),
  steps: ProgressLevelSchema.optional(),
  behaviors: ProgressLevelSchema.optional()
});
export type Progress = z.infer<typeof ProgressSchema>;

export const CurrentLocationSchema = z.looseObject({
  stage_id: z.string().nullable().optional(),
  step_id: z.string().nullable().optional(),
  behavior_id: z.string().nullable().optional(),
  behavior_iteration: z.number().optional()
});
export type CurrentLocation = z.infer<typeof CurrentLocationSchema>;

export const GoalsSchema = z.looseObject({
  stage: z.string().nullable().optional(),
  step: z.string().nullable().optional(),
  behavior: z.string().nullable().optional()
});
export type Goals = z.infer<typeof GoalsSchema>;

export const ObservationLocationSchema = z.looseObject({
  current: CurrentLocationSchema.optional(),
  progress: ProgressSchema.optional(),
  goals: GoalsSchema.optional()
});
export type ObservationLocation = z.infer<typeof ObservationLocationSchema>;

export const EffectsSchema = z.looseObject({
  current: z.array(z.string()).default([]),
  history: z.array(z.string()).default([])
});
export type Effects = z.infer<typeof EffectsSchema>;

export const NotebookStateSchema = z.looseObject({
  title: z.string().nullable().optional(),
  cell_count: z.number().optional(),
  last_cell_type: z.string().nullable().optional(),
  last_output: z.string().nullable().optional()
});
export type NotebookState = z.infer<typeof NotebookStateSchema>;

/** One of the notebook's last cells, as a dialect that sends them describes it (docs/dialects.md#bcc-request). */
export interface INotebookCell {
  id: string;
  type: 'markdown' | 'code';
  content: string;
  /** The outputs as one text (none for a cell without outputs). */
  outputs: string[];
  /** What the run keeps in the cell's metadata (provenance, role). */
  metadata: Record<string, unknown>;
}

/**
 * Our extension: a code cell the run rewrote (`rewrite_cell`), as the observation carries it: its
 * current code (the last attempt) and its latest failed attempts, each bounded
 * (docs/protocol.md#request-size).
 */
export const CellAttemptsSchema = z.looseObject({
  cell_id: z.string(),
  /** The planner's name of the cell, when it gave one. */
  store_id: z.string().nullable().optional(),
  step_id: z.string().nullable().optional(),
  /** How many attempts the cell has had, the current code included. */
  attempts: z.number().int().nonnegative(),
  /** The current code, cut to a head and a tail. */
  code: z.string(),
  /** The latest earlier attempts, oldest first: their code cut, their error's last line. */
  failed: z.array(
    z.looseObject({
      attempt: z.number().int().nonnegative(),
      code: z.string(),
      error: z.string().nullable()
    })
  )
});
export type CellAttempts = z.infer<typeof CellAttemptsSchema>;

/**
 * The notebook as the client describes it: the seed's four fields, which the observation carries, plus
 * the execution count and the last cells, which only a dialect that sends them reads.
 */
export interface INotebookSummary {
  title: string | null;
  cell_count: number;
  last_cell_type: string | null;
  last_output: string | null;
  /** The highest execution count among the code cells; null before any ran. */
  execution_count: number | null;
  cells: INotebookCell[];
  /** The cells the run rewrote, each already bounded; the observation sends the current step's. */
  attempts?: CellAttempts[];
  /** The user's notes for the planner on the notebook's cells and the run's steps (`context.user_notes`). */
  user_notes?: UserNote[];
}

/**
 * Our extension (docs/protocol.md#observation): a note the user wrote for the planner, on a cell or on a
 * step ("use the median, not the mean"). Sent in `observation.context.user_notes`, bounded in count and
 * length (`notebook/notes.ts`).
 */
export const UserNoteSchema = z.looseObject({
  text: z.string(),
  /** ISO 8601: when the note was written (or last edited). */
  created_at: z.string().optional(),
  /** The step the note is on, or the step that wrote the cell it is on. */
  step_id: z.string().optional(),
  stage_id: z.string().optional(),
  /** The cell the note is on. */
  cell_id: z.string().optional()
});
export type UserNote = z.infer<typeof UserNoteSchema>;

export const FsmStateSchema = z.looseObject({
  state: z.string(),
  /** e.g. `"NEXT_BEHAVIOR -> BEHAVIOR_RUNNING"`. */
  last_transition: z.string().nullable().optional(),
  timestamp: z.string().nullable().optional(),
  history: z.array(z.unknown()).optional(),
  transition: z.array(z.unknown()).optional()
});
export type FsmState = z.infer<typeof FsmStateSchema>;

/** Superseded context field (docs/protocol.md#be-liberal); accepted, not produced. */
export const SectionProgressSchema = z.looseObject({
  current_section_id: z.string().nullable().optional(),
  current_section_number: z.number().nullable().optional(),
  completed_sections: z.array(z.string()).optional(),
  all: z.array(z.string()).optional()
});
export type SectionProgress = z.infer<typeof SectionProgressSchema>;

export const ObservationContextSchema = z.looseObject({
  variables: z.record(z.string(), z.unknown()).default({}),
  effects: EffectsSchema.optional(),
  notebook: NotebookStateSchema.optional(),
  FSM: FsmStateSchema.optional(),
  toDoList: z.array(z.string()).optional(),
  section_progress: SectionProgressSchema.optional(),
  /** Notes about the request itself (`[context trimmed: …]`), never outputs of the code. */
  notices: z.array(z.string()).optional(),
  /** Our extension: what the check in the kernel found for each contract's name (contracts.ts). */
  output_checks: z.record(z.string(), OutputCheckSchema).optional(),
  /** Our extension: the current step's rewritten cells, their last attempt and earlier failed ones. */
  cell_attempts: z.array(CellAttemptsSchema).optional(),
  /** Our extension: what the user asked of the planner in notes on cells and steps. */
  user_notes: z.array(UserNoteSchema).optional()
});
export type ObservationContext = z.infer<typeof ObservationContextSchema>;

export const ObservationSchema = z.looseObject({
  location: ObservationLocationSchema,
  context: ObservationContextSchema.optional()
});
/** Parsed form: arrays that may be omitted on the wire (completed, outputs, effects) are filled. */
export type Observation = z.infer<typeof ObservationSchema>;
/** What may be sent: e.g. the filtered observation for /generating, with many parts left out. */
export type ObservationInput = z.input<typeof ObservationSchema>;

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

export const OptionsSchema = z.looseObject({
  stream: z.boolean().default(false),
  /** Our extension: the actions beyond the documents' list that this client takes (`OPTIONAL_ACTIONS`). */
  optional_actions: z.array(z.string()).optional()
});
export type Options = z.infer<typeof OptionsSchema>;

export const BehaviorFeedbackSchema = z.looseObject({
  behavior_id: z.string().optional(),
  actions_executed: z.number().int().nonnegative(),
  actions_succeeded: z.number().int().nonnegative().optional(),
  sections_added: z.number().int().nonnegative().optional(),
  /** `success`, `error`, or another word the client chose. */
  last_action_result: z.union([z.enum(['success', 'error']), z.string()])
});
export type BehaviorFeedback = z.infer<typeof BehaviorFeedbackSchema>;

export const PlanningRequestSchema = z.looseObject({
  observation: ObservationSchema,
  behavior_feedback: BehaviorFeedbackSchema.optional(),
  options: OptionsSchema.optional()
});
export type PlanningRequest = z.infer<typeof PlanningRequestSchema>;
export type PlanningRequestInput = z.input<typeof PlanningRequestSchema>;

export const GeneratingRequestSchema = z.looseObject({
  observation: ObservationSchema,
  options: OptionsSchema.optional()
});
export type GeneratingRequest = z.infer<typeof GeneratingRequestSchema>;
export type GeneratingRequestInput = z.input<typeof GeneratingRequestSchema>;

// ---------------------------------------------------------------------------------------------
// Context filter
// ---------------------------------------------------------------------------------------------

/** `shape_only`, `describe_only`, `head_only`, `last_N_only` (e.g. `last_5_only`), or other. */
export const SummarizeStrategySchema = z.string();
export type SummarizeStrategy = z.infer<typeof SummarizeStrategySchema>;

export const EffectsConfigSchema = z.looseObject({
  include_current: z.boolean().optional(),
  current_limit: z.number().int().nonnegative().optional(),
  include_history: z.boolean().optional(),
  history_limit: z.number().int().nonnegative().optional(),
  /** Regular expressions matched against each effect text. */
  patterns: z
    .looseObject({
      include: z.array(z.string()).optional(),
      exclude: z.array(z.string()).optional()
    })
    .optional()
});
export type EffectsConfig = z.infer<typeof EffectsConfigSchema>;

export const OutputsTrackingSchema = z.looseObject({
  expected_variables: z.array(z.string()).optional(),
  validation_required: z.array(z.string()).optional()
});
export type OutputsTracking = z.infer<typeof OutputsTrackingSchema>;

export const ContextFilterSchema = z.looseObject({
  variables_to_include: z.array(z.string()).optional(),
  variables_to_summarize: z
    .record(z.string(), SummarizeStrategySchema)
    .optional(),
  effects_config: EffectsConfigSchema.optional(),
  focus_to_include: z.array(ProgressLevelNameSchema).optional(),
  outputs_tracking: OutputsTrackingSchema.optional()
});
export type ContextFilter = z.infer<typeof ContextFilterSchema>;

// ---------------------------------------------------------------------------------------------
// Planning response
// ---------------------------------------------------------------------------------------------

export const TransitionSchema = z.looseObject({
  /** Absent: continue while the target is not achieved. */
  continue_behaviors: z.boolean().optional(),
  target_achieved: z.boolean().optional(),
  next_stage_id: z.string().nullable().optional(),
  next_step_id: z.string().nullable().optional(),
  /** Our extension: the current stage is complete too; its remaining steps are skipped. */
  stage_complete: z.boolean().optional()
});
export type Transition = z.infer<typeof TransitionSchema>;

/**
 * Our extension: the planner's judgement of the current item of a level (a reflection's reasoning, a
 * stage's progress percentage). The progress panel shows it on that stage or step.
 */
export const AssessmentSchema = z.looseObject({
  reasoning: z.string().optional(),
  /** 0 to 100. */
  percent: z.number().optional()
});
export type Assessment = z.infer<typeof AssessmentSchema>;

export const ProgressUpdateSchema = z.looseObject({
  level: ProgressLevelNameSchema,
  focus: z.string().optional(),
  current_outputs: CurrentOutputsSchema.optional(),
  assessment: AssessmentSchema.optional()
});
export type ProgressUpdate = z.infer<typeof ProgressUpdateSchema>;

/** `progress_update` as a list, whichever form it came in. */
export function progressUpdatesOf<T = ProgressUpdate>(
  update: { progress_update?: T | T[] } | undefined
): T[] {
  const value = update?.progress_update;
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

export const EffectsUpdateSchema = z.looseObject({
  current: z.array(z.string()).optional(),
  history: z.array(z.string()).optional()
});
export type EffectsUpdate = z.infer<typeof EffectsUpdateSchema>;

export const WorkflowUpdateSchema = z.looseObject({
  workflowTemplate: WorkflowTemplateSchema,
  nextStageId: z.string().nullable().optional(),
  /** A start template the client made up (v1's entry step): the planner's first real one replaces it unasked. */
  provisional: z.boolean().optional()
});
export type WorkflowUpdate = z.infer<typeof WorkflowUpdateSchema>;

export const StageStepsUpdateSchema = z.looseObject({
  stage_id: z.string().min(1),
  steps: z.array(WorkflowStepSchema)
});
export type StageStepsUpdate = z.infer<typeof StageStepsUpdateSchema>;

/** Superseded (docs/protocol.md#be-liberal): `operation` is `add`, `remove` or `replace`. */
export const TodoListUpdateSchema = z.looseObject({
  operation: z.string(),
  items: z.array(z.string())
});
export type TodoListUpdate = z.infer<typeof TodoListUpdateSchema>;

export const ContextUpdateSchema = z.looseObject({
  variables: z.record(z.string(), z.unknown()).optional(),
  /** One level's update, or a list with one entry per level (a bcc reflection updates two). */
  progress_update: z
    .union([ProgressUpdateSchema, z.array(ProgressUpdateSchema)])
    .optional(),
  effects_update: EffectsUpdateSchema.optional(),
  workflow_update: WorkflowUpdateSchema.optional(),
  stage_steps_update: StageStepsUpdateSchema.optional(),
  todo_list_update: TodoListUpdateSchema.optional(),
  section_progress: SectionProgressSchema.optional(),
  /** Our extension: the run's deliverables; a later one replaces the earlier. */
  contract: RunContractSchema.optional()
});
export type ContextUpdate = z.infer<typeof ContextUpdateSchema>;

/** Superseded `behavior` descriptor (docs/protocol.md#be-liberal). */
export const BehaviorDescriptorSchema = z.looseObject({
  id: z.string().optional(),
  iteration: z.number().optional(),
  target: z.string().optional()
});
export type BehaviorDescriptor = z.infer<typeof BehaviorDescriptorSchema>;

const TokenCount = z.number().int().nonnegative();

/** Tokens a model read and wrote (`model_calls`: how many requests to the model they took). */
export const TokenUsageSchema = z.looseObject({
  prompt_tokens: TokenCount.optional(),
  completion_tokens: TokenCount.optional(),
  model_calls: TokenCount.optional()
});
export type TokenUsage = z.infer<typeof TokenUsageSchema>;

/**
 * What an LLM planner spent (our extension of a /planning answer, docs/protocol.md): the tokens of the
 * behavior that just ended and of the whole run so far, and their cost when its administrator set prices.
 */
export const PlanningUsageSchema = z.looseObject({
  model: z.string().optional(),
  behavior: TokenUsageSchema.optional(),
  run: TokenUsageSchema.optional(),
  cost: z
    .looseObject({
      run: z.number().nonnegative().optional(),
      behavior: z.number().nonnegative().optional(),
      currency: z.string().optional()
    })
    .optional()
});
export type PlanningUsage = z.infer<typeof PlanningUsageSchema>;

export const PlanningResponseSchema = z.looseObject({
  targetAchieved: z.boolean(),
  transition: TransitionSchema.optional(),
  context_update: ContextUpdateSchema.optional(),
  context_filter: ContextFilterSchema.optional(),
  // Superseded fields, still accepted (docs/protocol.md#be-liberal).
  behavior: BehaviorDescriptorSchema.optional(),
  actions: z.array(z.union([ActionSchema, UnknownActionSchema])).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  usage: PlanningUsageSchema.optional()
});
export type PlanningResponse = z.infer<typeof PlanningResponseSchema>;

// ---------------------------------------------------------------------------------------------
// Generating response
// ---------------------------------------------------------------------------------------------

/**
 * One NDJSON line of a streamed /generating answer: `{"action": {...}}`. The action stream reads lines
 * with this schema (and bare actions, which it also accepts); see `actionStream.ts`.
 */
export const GeneratingLineSchema = z.looseObject({
  action: z.record(z.string(), z.unknown())
});
export type GeneratingLine = z.infer<typeof GeneratingLineSchema>;

/** A non-streamed /generating answer (or one line holding several actions): `{"actions": [...]}`. */
export const GeneratingBatchSchema = z.looseObject({
  actions: z.array(z.unknown())
});
export type GeneratingBatch = z.infer<typeof GeneratingBatchSchema>;
