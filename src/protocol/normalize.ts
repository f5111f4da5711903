/**
 * Turns workflow templates and actions as planners actually send them into the canonical shapes of
 * `schemas.ts` (docs/protocol.md#be-liberal): actions keyed by `type`; the legacy action names
 * (`add_content`, `add_section`, `execute_code`); `new_step`; camelCase spellings
 * of snake_case fields; `stage_id`/`step_id`/`title` in templates.
 */
import { z } from 'zod';

import {
  alias,
  booleanLike,
  describeIssue,
  describeValue,
  describeZodError,
  formatPath,
  idString,
  isRecord,
  JsonObject,
  nameOf,
  Normalized,
  omit,
  parseDroppingInvalid,
  snakeKeys,
  camelToSnake,
  withoutNulls
} from './fields';
import {
  Action,
  ActionMetadataSchema,
  ActionSchema,
  isActionType,
  UnknownAction,
  WorkflowStep,
  WorkflowStepSchema,
  WorkflowTemplate,
  WorkflowTemplateSchema
} from './actionSchemas';
import { normalizeStepContracts } from './contracts';

// ---------------------------------------------------------------------------------------------
// Workflow templates
// ---------------------------------------------------------------------------------------------

function normalizeNode(
  raw: unknown,
  idKeys: readonly string[],
  where: string
): { ok: true; node: JsonObject } | { ok: false; error: string } {
  if (typeof raw === 'string' && raw.trim()) {
    return { ok: true, node: { id: raw, name: raw } };
  }
  if (!isRecord(raw)) {
    return {
      ok: false,
      error: `${where}: expected an object, got ${describeValue(raw)}`
    };
  }
  const node = snakeKeys(raw);
  alias(node, 'id', idKeys);
  alias(node, 'name', ['title']);
  node.id = idString(node.id);
  if (node.id === undefined && typeof node.name === 'string' && node.name) {
    node.id = node.name;
  }
  if (node.name === undefined || node.name === null) {
    node.name = node.id;
  }
  if (typeof node.id !== 'string' || !node.id) {
    return { ok: false, error: `${where}: missing "id"` };
  }
  if (Array.isArray(node.expected_outputs)) {
    node.expected_outputs = node.expected_outputs.map(nameOf);
  }
  return { ok: true, node };
}

function normalizeStepList(
  raw: unknown,
  where: string,
  warnings: string[]
): { ok: true; steps: JsonObject[] } | { ok: false; error: string } {
  if (raw === undefined || raw === null) {
    return { ok: true, steps: [] };
  }
  if (!Array.isArray(raw)) {
    return {
      ok: false,
      error: `${where}: expected an array, got ${describeValue(raw)}`
    };
  }
  const steps: JsonObject[] = [];
  for (const [index, item] of raw.entries()) {
    const result = normalizeNode(item, ['step_id'], `${where}[${index}]`);
    if (!result.ok) {
      return result;
    }
    normalizeStepContracts(result.node, `${where}[${index}]`, warnings);
    steps.push(result.node);
  }
  return { ok: true, steps };
}

/**
 * Accepts `stage_id`/`step_id` for `id`, `title` for `name`, a missing name (the id is used), missing
 * steps (none), a bare array of stages, and camelCase keys.
 */
export function normalizeWorkflowTemplate(
  sent: unknown
): Normalized<'template', WorkflowTemplate> {
  const raw = withoutNulls(sent);
  const template = Array.isArray(raw)
    ? { stages: raw }
    : isRecord(raw)
      ? snakeKeys(raw)
      : undefined;
  if (!template) {
    return {
      ok: false,
      error: `workflow template: expected an object, got ${describeValue(raw)}`
    };
  }
  alias(template, 'name', ['title']);
  if (!Array.isArray(template.stages)) {
    return { ok: false, error: 'workflow template: missing "stages" array' };
  }
  const stages: JsonObject[] = [];
  const warnings: string[] = [];
  for (const [index, item] of template.stages.entries()) {
    const where = `stages[${index}]`;
    const stage = normalizeNode(item, ['stage_id'], where);
    if (!stage.ok) {
      return { ok: false, error: `workflow template: ${stage.error}` };
    }
    const steps = normalizeStepList(
      stage.node.steps,
      `${where}.steps`,
      warnings
    );
    if (!steps.ok) {
      return { ok: false, error: `workflow template: ${steps.error}` };
    }
    stages.push({ ...stage.node, steps: steps.steps });
  }
  const parsed = WorkflowTemplateSchema.safeParse({ ...template, stages });
  if (!parsed.success) {
    return {
      ok: false,
      error: `workflow template: ${describeZodError(parsed.error)}`
    };
  }
  return { ok: true, template: parsed.data, warnings };
}

/** One step of a template or of `update_stage_steps`, with the same leniency as templates. */
export function normalizeWorkflowSteps(
  raw: unknown,
  where = 'steps'
): Normalized<'steps', WorkflowStep[]> {
  const warnings: string[] = [];
  const result = normalizeStepList(withoutNulls(raw), where, warnings);
  if (!result.ok) {
    return result;
  }
  const parsed = z.array(WorkflowStepSchema).safeParse(result.steps);
  if (!parsed.success) {
    return {
      ok: false,
      error: describeZodError({
        issues: parsed.error.issues.map(issue => ({
          ...issue,
          path: [where, ...issue.path]
        }))
      })
    };
  }
  return { ok: true, steps: parsed.data, warnings };
}

// ---------------------------------------------------------------------------------------------
// Actions
// ---------------------------------------------------------------------------------------------

const LEGACY_ACTION_NAMES = [
  'add_content',
  'add_section',
  'execute_code'
] as const;

/** The content_type of the legacy `add_content` -> shot_type. */
const CONTENT_TYPE_TO_SHOT_TYPE: Record<string, string> = {
  text: 'dialogue',
  markdown: 'dialogue',
  code: 'action'
};

let generatedStoreIds = 0;

function generatedStoreId(): string {
  generatedStoreIds += 1;
  return `bcc-${Date.now().toString(36)}-${generatedStoreIds}`;
}

/** `Add`, `newChapter`, `new-chapter` -> the known name when there is one; custom names are kept. */
function canonicalActionName(name: string): string {
  const trimmed = name.trim();
  const candidate = camelToSnake(trimmed).replace(/-/g, '_').toLowerCase();
  const known =
    isActionType(candidate) ||
    (LEGACY_ACTION_NAMES as readonly string[]).includes(candidate);
  return known ? candidate : trimmed;
}

/** Whether `name` designates a built-in or legacy action type, in any accepted spelling. */
export function isBuiltInActionName(name: string): boolean {
  const canonical = canonicalActionName(name);
  return (
    isActionType(canonical) ||
    (LEGACY_ACTION_NAMES as readonly string[]).includes(canonical)
  );
}

export type NormalizeActionResult =
  | { ok: true; actions: (Action | UnknownAction)[]; warnings: string[] }
  | { ok: false; error: string };

function cleanMetadata(
  fields: JsonObject,
  name: string,
  warnings: string[]
): void {
  if (fields.metadata === undefined) {
    return;
  }
  if (!isRecord(fields.metadata)) {
    if (fields.metadata !== null) {
      warnings.push(
        `${name} action: field "metadata" ignored: expected an object`
      );
    }
    delete fields.metadata;
    return;
  }
  const metadata = snakeKeys(fields.metadata);
  for (const key of ['chapter_id', 'section_id']) {
    if (key in metadata) {
      metadata[key] = idString(metadata[key]);
    }
  }
  fields.metadata = parseDroppingInvalid(
    ActionMetadataSchema,
    metadata,
    `${name} action: metadata`,
    warnings
  );
}

/** Field aliases and light coercions for the built-in action types, applied before validation. */
function prepareKnownAction(
  name: string,
  raw: JsonObject,
  warnings: string[]
): { ok: true; fields: JsonObject } | { ok: false; error: string } {
  const fields = snakeKeys(raw);
  fields.action = name;
  if (fields.shot_type !== undefined && typeof fields.shot_type !== 'string') {
    warnings.push(
      `${name} action: field "shot_type" ignored: expected a string`
    );
    delete fields.shot_type;
  } else if (typeof fields.shot_type === 'string') {
    fields.shot_type = fields.shot_type.trim().toLowerCase();
  }
  cleanMetadata(fields, name, warnings);

  switch (name) {
    case 'add':
      if (fields.content === undefined && fields.code !== undefined) {
        fields.shot_type ??= 'action';
      }
      alias(fields, 'content', ['code', 'text']);
      fields.store_id = idString(fields.store_id);
      break;
    case 'exec':
      alias(fields, 'codecell_id', ['code_cell_id', 'cell_id']);
      fields.codecell_id = idString(fields.codecell_id);
      for (const key of [
        'need_output',
        'auto_debug',
        'keep_debug_button_visible'
      ]) {
        fields[key] = booleanLike(fields[key]);
      }
      break;
    case 'is_thinking':
      if (typeof fields.text_array === 'string') {
        fields.text_array = [fields.text_array];
      }
      break;
    case 'new_chapter':
    case 'new_section':
    case 'new_step':
      alias(fields, 'content', ['title', 'text']);
      break;
    case 'update_title':
      alias(fields, 'title', ['content', 'text']);
      break;
    case 'update_workflow': {
      alias(fields, 'updated_workflow', [
        'workflow_template',
        'workflow',
        'template'
      ]);
      if (fields.updated_workflow === undefined) {
        break;
      }
      const template = normalizeWorkflowTemplate(fields.updated_workflow);
      if (!template.ok) {
        return {
          ok: false,
          error: `update_workflow action: field "updated_workflow": ${template.error}`
        };
      }
      fields.updated_workflow = template.template;
      warnings.push(...template.warnings);
      break;
    }
    case 'update_stage_steps': {
      alias(fields, 'updated_steps', ['steps']);
      fields.stage_id = idString(fields.stage_id);
      if (fields.updated_steps === undefined) {
        break;
      }
      const steps = normalizeWorkflowSteps(
        fields.updated_steps,
        'updated_steps'
      );
      if (!steps.ok) {
        return {
          ok: false,
          error: `update_stage_steps action: ${steps.error}`
        };
      }
      fields.updated_steps = steps.steps;
      warnings.push(...steps.warnings);
      break;
    }
    case 'end_phase':
      fields.step_id = idString(fields.step_id);
      break;
    case 'set_effect_as_thinking':
      alias(fields, 'thinking_text', ['text', 'content']);
      break;
    case 'update_last_text':
      alias(fields, 'text', ['content']);
      break;
    case 'rewrite_cell':
      alias(fields, 'codecell_id', ['code_cell_id', 'cell_id']);
      fields.codecell_id = idString(fields.codecell_id);
      alias(fields, 'content', ['code', 'source']);
      break;
  }
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) {
      delete fields[key];
    }
  }
  return { ok: true, fields };
}

function validateAction(
  name: string,
  fields: JsonObject
): { ok: true; action: Action } | { ok: false; error: string } {
  const parsed = ActionSchema.safeParse(fields);
  if (parsed.success) {
    return { ok: true, action: parsed.data };
  }
  const problems = parsed.error.issues.map(issue => {
    const path = formatPath(issue.path);
    if (
      issue.code === 'invalid_type' &&
      /received undefined$/.test(issue.message) &&
      issue.path.length === 1
    ) {
      return `${name} action is missing required field "${path}"`;
    }
    return `${name} action: field "${path}": ${describeIssue(issue)}`;
  });
  return { ok: false, error: problems.join('; ') };
}

/** Legacy add_content / add_section / execute_code -> canonical fields (one or two actions). */
function expandLegacyAction(
  name: string,
  raw: JsonObject
): JsonObject[] | string {
  const fields = snakeKeys(raw);
  switch (name) {
    case 'add_content': {
      const contentType = fields.content_type;
      delete fields.content_type;
      if (fields.shot_type === undefined && typeof contentType === 'string') {
        const key = contentType.trim().toLowerCase();
        fields.shot_type = CONTENT_TYPE_TO_SHOT_TYPE[key] ?? contentType;
      }
      return [{ ...fields, action: 'add' }];
    }
    case 'add_section':
      return [{ ...fields, action: 'new_section' }];
    case 'execute_code': {
      alias(fields, 'codecell_id', ['code_cell_id', 'cell_id']);
      if (fields.codecell_id !== undefined) {
        delete fields.code;
        return [{ ...fields, action: 'exec' }];
      }
      const code = fields.code ?? fields.content;
      if (typeof code !== 'string') {
        return 'execute_code action has neither "codecell_id" nor "code"';
      }
      const storeId =
        typeof fields.store_id === 'string' && fields.store_id
          ? fields.store_id
          : generatedStoreId();
      const add: JsonObject = {
        action: 'add',
        shot_type: 'action',
        content: code,
        store_id: storeId
      };
      if (fields.metadata !== undefined) {
        add.metadata = fields.metadata;
      }
      const exec = omit(fields, [
        'code',
        'content',
        'store_id',
        'metadata',
        'shot_type'
      ]);
      return [add, { ...exec, action: 'exec', codecell_id: storeId }];
    }
  }
  return [fields];
}

/**
 * One action as sent by a planner -> canonical actions (usually one; `execute_code` with inline code
 * becomes an `add` and an `exec`). Unknown action types come back as `UnknownAction` so that custom
 * handlers can claim them; a known type missing a required field is an error.
 */
export function normalizeAction(raw: unknown): NormalizeActionResult {
  if (!isRecord(raw)) {
    return {
      ok: false,
      error: `action must be a JSON object, got ${describeValue(raw)}`
    };
  }
  let fields: JsonObject = { ...raw };
  let name: string;
  if (typeof fields.action === 'string' && fields.action.trim()) {
    name = fields.action;
  } else if (isRecord(fields.action)) {
    return normalizeAction(fields.action);
  } else if (typeof fields.type === 'string' && fields.type.trim()) {
    name = fields.type;
    fields = omit(fields, ['type']);
  } else {
    return {
      ok: false,
      error: 'action has no "action" (or "type") field naming its type'
    };
  }
  name = canonicalActionName(name);
  fields.action = name;

  if (
    !isActionType(name) &&
    !(LEGACY_ACTION_NAMES as readonly string[]).includes(name)
  ) {
    // A custom action goes to its handler as sent: its fields are its own.
    return { ok: true, actions: [{ ...fields, action: name }], warnings: [] };
  }
  fields = withoutNulls(fields) as JsonObject;
  const expanded = (LEGACY_ACTION_NAMES as readonly string[]).includes(name)
    ? expandLegacyAction(name, fields)
    : [fields];
  if (typeof expanded === 'string') {
    return { ok: false, error: expanded };
  }
  const warnings: string[] = [];
  const actions: Action[] = [];
  for (const item of expanded) {
    const itemName = String(item.action);
    const prepared = prepareKnownAction(itemName, item, warnings);
    if (!prepared.ok) {
      return prepared;
    }
    const validated = validateAction(itemName, prepared.fields);
    if (!validated.ok) {
      return validated;
    }
    actions.push(validated.action);
  }
  return { ok: true, actions, warnings };
}
