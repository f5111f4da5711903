/**
 * Canonical shapes of the workflow template and of the actions a planner streams
 * (docs/protocol.md#actions); the other messages are in `schemas.ts`. As there, parse incoming data
 * with the `normalize*` functions, not with these.
 */
import { z } from 'zod';
import { ACTION_TYPES } from './actionTypes';
import { OutputContractSchema } from './contracts';

// ---------------------------------------------------------------------------------------------
// Workflow template
// ---------------------------------------------------------------------------------------------

export const WorkflowStepSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string(),
  description: z.string().optional(),
  goal: z.string().optional(),
  expected_outputs: z.array(z.string()).optional(),
  /** Our extension: what the step's variables must be, checked in the kernel (contracts.ts). */
  output_contracts: z.array(OutputContractSchema).optional()
});
export type WorkflowStep = z.infer<typeof WorkflowStepSchema>;

export const WorkflowStageSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string(),
  description: z.string().optional(),
  goal: z.string().optional(),
  expected_outputs: z.array(z.string()).optional(),
  steps: z.array(WorkflowStepSchema)
});
export type WorkflowStage = z.infer<typeof WorkflowStageSchema>;

export const WorkflowTemplateSchema = z.looseObject({
  name: z.string().optional(),
  stages: z.array(WorkflowStageSchema)
});
export type WorkflowTemplate = z.infer<typeof WorkflowTemplateSchema>;

// ---------------------------------------------------------------------------------------------
// Actions
// ---------------------------------------------------------------------------------------------

export const ActionTypeSchema = z.enum(ACTION_TYPES);
export type ActionType = z.infer<typeof ActionTypeSchema>;

/** `dialogue` and `observation` make markdown cells, `action` a code cell; others pass through. */
export const KNOWN_SHOT_TYPES = ['dialogue', 'observation', 'action'] as const;
export type KnownShotType = (typeof KNOWN_SHOT_TYPES)[number];

/** `codecell_id` value that designates the most recently added code cell. */
export const LAST_ADDED_CELL_ID = 'lastAddedCellId';

export const ActionMetadataSchema = z.looseObject({
  is_step: z.boolean().optional(),
  is_chapter: z.boolean().optional(),
  is_section: z.boolean().optional(),
  chapter_id: z.string().nullable().optional(),
  section_id: z.string().nullable().optional(),
  chapter_number: z.number().nullable().optional(),
  section_number: z.number().nullable().optional(),
  finished_thinking: z.boolean().optional(),
  thinking_text: z.string().nullable().optional(),
  extra: z.record(z.string(), z.unknown()).optional()
});
export type ActionMetadata = z.infer<typeof ActionMetadataSchema>;

/** Fields any action may carry (the spec's examples put `shot_type` on exec and is_thinking too). */
const actionBase = {
  shot_type: z.string().optional(),
  metadata: ActionMetadataSchema.optional()
};

export const AddActionSchema = z.looseObject({
  ...actionBase,
  action: z.literal('add'),
  content: z.string(),
  store_id: z.string().optional()
});
export type AddAction = z.infer<typeof AddActionSchema>;

export const ExecActionSchema = z.looseObject({
  ...actionBase,
  action: z.literal('exec'),
  /** A `store_id`, a notebook cell id, or `lastAddedCellId`. */
  codecell_id: z.string().min(1),
  need_output: z.boolean().default(true),
  auto_debug: z.boolean().default(false),
  keep_debug_button_visible: z.boolean().default(false)
});
export type ExecAction = z.infer<typeof ExecActionSchema>;

export const IsThinkingActionSchema = z.looseObject({
  ...actionBase,
  action: z.literal('is_thinking'),
  thinking_text: z.string().optional(),
  agent_name: z.string().optional(),
  custom_text: z.string().optional(),
  text_array: z.array(z.string()).optional()
});
export type IsThinkingAction = z.infer<typeof IsThinkingActionSchema>;

export const FinishThinkingActionSchema = z.looseObject({
  ...actionBase,
  action: z.literal('finish_thinking')
});
export type FinishThinkingAction = z.infer<typeof FinishThinkingActionSchema>;

export const NewChapterActionSchema = z.looseObject({
  ...actionBase,
  action: z.literal('new_chapter'),
  content: z.string()
});
export type NewChapterAction = z.infer<typeof NewChapterActionSchema>;

export const NewSectionActionSchema = z.looseObject({
  ...actionBase,
  action: z.literal('new_section'),
  content: z.string()
});
export type NewSectionAction = z.infer<typeof NewSectionActionSchema>;

/** Not a documented action (docs/protocol.md#actions); sent by some planners for a `####` heading. */
export const NewStepActionSchema = z.looseObject({
  ...actionBase,
  action: z.literal('new_step'),
  content: z.string()
});
export type NewStepAction = z.infer<typeof NewStepActionSchema>;

export const UpdateTitleActionSchema = z.looseObject({
  ...actionBase,
  action: z.literal('update_title'),
  title: z.string()
});
export type UpdateTitleAction = z.infer<typeof UpdateTitleActionSchema>;

export const UpdateWorkflowActionSchema = z.looseObject({
  ...actionBase,
  action: z.literal('update_workflow'),
  updated_workflow: WorkflowTemplateSchema
});
export type UpdateWorkflowAction = z.infer<typeof UpdateWorkflowActionSchema>;

export const UpdateStageStepsActionSchema = z.looseObject({
  ...actionBase,
  action: z.literal('update_stage_steps'),
  /** Absent: the current stage. */
  stage_id: z.string().optional(),
  updated_steps: z.array(WorkflowStepSchema)
});
export type UpdateStageStepsAction = z.infer<
  typeof UpdateStageStepsActionSchema
>;

export const EndPhaseActionSchema = z.looseObject({
  ...actionBase,
  action: z.literal('end_phase'),
  step_id: z.string().optional()
});
export type EndPhaseAction = z.infer<typeof EndPhaseActionSchema>;

export const NextEventActionSchema = z.looseObject({
  ...actionBase,
  action: z.literal('next_event'),
  event_type: z.string().optional()
});
export type NextEventAction = z.infer<typeof NextEventActionSchema>;

/** Marks the last code cell's output as the planner's thinking (`v1`); adds no effect. */
export const SetEffectAsThinkingActionSchema = z.looseObject({
  ...actionBase,
  action: z.literal('set_effect_as_thinking'),
  thinking_text: z.string().optional()
});
export type SetEffectAsThinkingAction = z.infer<
  typeof SetEffectAsThinkingActionSchema
>;

/** Replaces the text of the last text cell the run added (`bcc`). */
export const UpdateLastTextActionSchema = z.looseObject({
  ...actionBase,
  action: z.literal('update_last_text'),
  text: z.string()
});
export type UpdateLastTextAction = z.infer<typeof UpdateLastTextActionSchema>;

/** Our extension: the current effects move into history now, as at a new behavior (`bcc` `comment_result`). */
export const ArchiveEffectsActionSchema = z.looseObject({
  ...actionBase,
  action: z.literal('archive_effects')
});
export type ArchiveEffectsAction = z.infer<typeof ArchiveEffectsActionSchema>;

/**
 * Our extension: a fix replaces the source of a code cell the run wrote (its outputs cleared, the code
 * it held kept in the cell's attempts); a cell the user edited is not rewritten, the fix goes below it.
 */
export const RewriteCellActionSchema = z.looseObject({
  ...actionBase,
  action: z.literal('rewrite_cell'),
  /** A `store_id`, a notebook cell id, or `lastAddedCellId`, as for `exec`. */
  codecell_id: z.string().min(1),
  content: z.string()
});
export type RewriteCellAction = z.infer<typeof RewriteCellActionSchema>;

export const ActionSchema = z.discriminatedUnion('action', [
  AddActionSchema,
  ExecActionSchema,
  IsThinkingActionSchema,
  FinishThinkingActionSchema,
  NewChapterActionSchema,
  NewSectionActionSchema,
  NewStepActionSchema,
  UpdateTitleActionSchema,
  UpdateWorkflowActionSchema,
  UpdateStageStepsActionSchema,
  EndPhaseActionSchema,
  NextEventActionSchema,
  SetEffectAsThinkingActionSchema,
  UpdateLastTextActionSchema,
  ArchiveEffectsActionSchema,
  RewriteCellActionSchema
]);
export type Action = z.infer<typeof ActionSchema>;

/** The canonical action of one type, e.g. `ActionOf<'exec'>` is `ExecAction`. */
export type ActionOf<T extends ActionType> = Extract<Action, { action: T }>;

/**
 * An action whose type this client does not know. Passed on, unvalidated, so that handlers
 * registered at run time (custom actions) can claim it.
 */
export const UnknownActionSchema = z.looseObject({ action: z.string().min(1) });
export type UnknownAction = z.infer<typeof UnknownActionSchema>;

export function isActionType(name: unknown): name is ActionType {
  return (ACTION_TYPES as readonly unknown[]).includes(name);
}

/** Tells a validated built-in action from an `UnknownAction`. */
export function isKnownAction(
  action: Action | UnknownAction
): action is Action {
  return isActionType(action.action);
}
