/**
 * The names of the action types a planner may stream (docs/protocol.md#actions), apart from their
 * schemas (`actionSchemas.ts`, zod) so that code loaded at startup can name them.
 */
export const ACTION_TYPES = [
  'add',
  'exec',
  'is_thinking',
  'finish_thinking',
  'new_chapter',
  'new_section',
  'new_step',
  'update_title',
  'update_workflow',
  'update_stage_steps',
  'end_phase',
  'next_event',
  'set_effect_as_thinking',
  'update_last_text',
  'archive_effects',
  'rewrite_cell'
] as const;

/**
 * The actions this client takes beyond the documents' list, offered in every request
 * (`options.optional_actions`) so that a planner knows it may send them (docs/protocol.md#actions).
 */
export const OPTIONAL_ACTIONS = ['rewrite_cell'] as const;
