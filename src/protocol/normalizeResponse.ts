/**
 * A /planning answer as planners actually send it -> canonical `PlanningResponse`: the target flag
 * under any of its names, camelCase keys, workflow updates with or without their wrapper, and the
 * superseded fields (`behavior`, `actions`, `metadata`, `todo_list_update`, ...; docs/protocol.md#be-liberal).
 */
import {
  alias,
  booleanLike,
  describeValue,
  describeZodError,
  idString,
  isRecord,
  JsonObject,
  nameOf,
  Normalized,
  omit,
  omitUndefined,
  parseDroppingInvalid,
  snakeKeys,
  withoutNulls
} from './fields';
import {
  normalizeAction,
  normalizeWorkflowSteps,
  normalizeWorkflowTemplate
} from './normalize';
import {
  normalizeCurrentOutputs,
  normalizeEffects,
  progressLevelName
} from './normalizeObservation';
import {
  BehaviorDescriptorSchema,
  ContextFilterSchema,
  ContextUpdateSchema,
  PlanningResponse,
  PlanningResponseSchema,
  PlanningUsageSchema,
  ProgressLevelName,
  TransitionSchema
} from './schemas';
import { Action, UnknownAction } from './actionSchemas';
import { normalizeContracts, normalizeRunContract } from './contracts';

function booleanField(
  value: unknown,
  where: string,
  warnings: string[]
): boolean | undefined {
  const coerced = booleanLike(value);
  if (typeof coerced === 'boolean') {
    return coerced;
  }
  if (value !== undefined && value !== null) {
    warnings.push(
      `${where} ignored: expected a boolean, got ${describeValue(value)}`
    );
  }
  return undefined;
}

function normalizeContextFilter(
  raw: JsonObject,
  warnings: string[]
): JsonObject {
  const filter = snakeKeys(raw);
  if (isRecord(filter.effects_config)) {
    const config = snakeKeys(filter.effects_config);
    for (const key of ['current_limit', 'history_limit']) {
      if (config[key] === null) {
        delete config[key];
      }
    }
    for (const key of ['include_current', 'include_history']) {
      config[key] = booleanLike(config[key]);
    }
    filter.effects_config = omitUndefined(config);
  }
  if (isRecord(filter.outputs_tracking)) {
    const tracking = snakeKeys(filter.outputs_tracking);
    for (const key of ['expected_variables', 'validation_required']) {
      if (Array.isArray(tracking[key])) {
        tracking[key] = (tracking[key] as unknown[]).map(nameOf);
      }
    }
    filter.outputs_tracking = tracking;
  }
  if (typeof filter.variables_to_include === 'string') {
    filter.variables_to_include = [filter.variables_to_include];
  }
  if (Array.isArray(filter.focus_to_include)) {
    const levels: ProgressLevelName[] = [];
    for (const item of filter.focus_to_include) {
      const level = progressLevelName(item);
      if (level) {
        levels.push(level);
      } else {
        warnings.push(
          `context_filter.focus_to_include: unknown level ${JSON.stringify(item)} ignored`
        );
      }
    }
    filter.focus_to_include = levels;
  }
  return filter;
}

function normalizeWorkflowUpdate(
  raw: unknown,
  warnings: string[]
): JsonObject | undefined {
  const given = objectOrWarn(raw, 'context_update.workflow_update', warnings);
  if (!given) {
    return undefined;
  }
  const update: JsonObject = { ...given };
  alias(update, 'workflowTemplate', [
    'workflow_template',
    'workflow',
    'template',
    'updated_workflow'
  ]);
  alias(update, 'nextStageId', ['next_stage_id']);
  if (update.workflowTemplate === undefined && Array.isArray(update.stages)) {
    // The template itself, sent without the wrapper.
    const { nextStageId, ...template } = update;
    return normalizeWorkflowUpdate(
      { workflowTemplate: template, nextStageId },
      warnings
    );
  }
  const template = normalizeWorkflowTemplate(update.workflowTemplate);
  if (!template.ok) {
    warnings.push(`context_update.workflow_update ignored: ${template.error}`);
    return undefined;
  }
  update.workflowTemplate = template.template;
  warnings.push(...template.warnings);
  update.nextStageId = idString(update.nextStageId);
  return omitUndefined(update);
}

function normalizeStageStepsUpdate(
  raw: unknown,
  warnings: string[]
): JsonObject | undefined {
  const given = objectOrWarn(
    raw,
    'context_update.stage_steps_update',
    warnings
  );
  if (!given) {
    return undefined;
  }
  const update = snakeKeys(given);
  alias(update, 'steps', ['updated_steps']);
  update.stage_id = idString(update.stage_id);
  const steps = normalizeWorkflowSteps(update.steps);
  if (!steps.ok) {
    warnings.push(`context_update.stage_steps_update ignored: ${steps.error}`);
    return undefined;
  }
  update.steps = steps.steps;
  warnings.push(...steps.warnings);
  return update;
}

function normalizeProgressUpdate(
  raw: JsonObject,
  warnings: string[]
): JsonObject {
  const progress = snakeKeys(raw);
  progress.level = progressLevelName(progress.level) ?? progress.level;
  if (progress.current_outputs !== undefined) {
    const outputs = normalizeCurrentOutputs(progress.current_outputs);
    if (isRecord(outputs) && outputs.contracts !== undefined) {
      outputs.contracts = normalizeContracts(
        outputs.contracts,
        'progress_update.current_outputs.contracts',
        warnings
      );
    }
    progress.current_outputs = outputs;
  }
  return progress;
}

function normalizeContextUpdate(
  raw: JsonObject,
  warnings: string[]
): JsonObject {
  // Only this level's keys: the names inside `variables` are user variable names.
  const update = snakeKeys(raw);
  alias(update, 'todo_list_update', ['to_do_list_update']);
  if (Array.isArray(update.progress_update)) {
    update.progress_update = update.progress_update
      .filter(isRecord)
      .map(entry => normalizeProgressUpdate(entry, warnings));
  } else if (isRecord(update.progress_update)) {
    update.progress_update = normalizeProgressUpdate(
      update.progress_update,
      warnings
    );
  }
  if ('contract' in update) {
    update.contract = normalizeRunContract(update.contract, warnings);
  }
  if ('workflow_update' in update) {
    update.workflow_update = normalizeWorkflowUpdate(
      update.workflow_update,
      warnings
    );
  }
  if ('stage_steps_update' in update) {
    update.stage_steps_update = normalizeStageStepsUpdate(
      update.stage_steps_update,
      warnings
    );
  }
  if (isRecord(update.effects_update)) {
    update.effects_update = normalizeEffects(update.effects_update);
  }
  for (const key of ['todo_list_update', 'section_progress']) {
    const value = update[key];
    if (isRecord(value)) {
      update[key] = snakeKeys(value);
    }
  }
  // A section sent as null means "no update".
  return Object.fromEntries(
    Object.entries(update).filter(
      ([, value]) => value !== null && value !== undefined
    )
  );
}

/** Older planners put the flag elsewhere (docs/protocol.md#be-liberal); the first one found wins. */
function resolveTargetAchieved(
  body: JsonObject,
  transition: JsonObject,
  warnings: string[]
): boolean {
  const metadata = isRecord(body.metadata) ? body.metadata : {};
  const candidates: [string, unknown][] = [
    ['targetAchieved', body.targetAchieved],
    ['target_achieved', body.target_achieved],
    ['transition.target_achieved', transition.target_achieved],
    [
      'metadata.target_achieved',
      metadata.target_achieved ?? metadata.targetAchieved
    ]
  ];
  let decided: { flag: boolean; by: string } | undefined;
  for (const [where, value] of candidates) {
    const flag = booleanField(value, where, warnings);
    if (flag === undefined) {
      continue;
    }
    if (!decided) {
      decided = { flag, by: where };
    } else if (flag !== decided.flag) {
      warnings.push(
        `${where} (${flag}) contradicts ${decided.by} (${decided.flag}); using ${decided.by}`
      );
    }
  }
  if (!decided) {
    warnings.push('planning response has no targetAchieved; assuming false');
  }
  return decided?.flag ?? false;
}

function objectOrWarn(
  value: unknown,
  label: string,
  warnings: string[]
): JsonObject | undefined {
  if (isRecord(value)) {
    return value;
  }
  if (value !== undefined && value !== null) {
    warnings.push(
      `${label} ignored: expected an object, got ${describeValue(value)}`
    );
  }
  return undefined;
}

function normalizeLegacyActions(
  raw: unknown[],
  warnings: string[]
): (Action | UnknownAction)[] {
  const actions: (Action | UnknownAction)[] = [];
  for (const [index, item] of raw.entries()) {
    const result = normalizeAction(item);
    if (result.ok) {
      actions.push(...result.actions);
      warnings.push(
        ...result.warnings.map(warning => `actions[${index}]: ${warning}`)
      );
    } else {
      warnings.push(`actions[${index}] ignored: ${result.error}`);
    }
  }
  return actions;
}

/** `"812"` -> `812`: a count sent as text. */
function numberLike(value: unknown): unknown {
  return typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value)
    ? Number(value)
    : value;
}

/** An LLM planner's `usage` (its tokens and cost); one that cannot be read is dropped with a warning. */
function normalizeUsage(raw: JsonObject): JsonObject {
  const usage = snakeKeys(raw);
  for (const key of ['behavior', 'run', 'cost']) {
    const part = usage[key];
    if (isRecord(part)) {
      usage[key] = Object.fromEntries(
        Object.entries(snakeKeys(part)).map(([name, value]) => [
          name,
          numberLike(value)
        ])
      );
    }
  }
  return usage;
}

const SECTIONS = [
  'targetAchieved',
  'target_achieved',
  'transition',
  'context_update',
  'context_filter',
  'behavior',
  'actions',
  'metadata',
  'usage'
];

/**
 * A /planning answer -> canonical `PlanningResponse`. Sections that cannot be understood are dropped
 * with a warning rather than failing the answer; only a body that is not an object is an error.
 */
export function normalizePlanningResponse(
  sent: unknown
): Normalized<'response', PlanningResponse> {
  const raw = withoutNulls(sent);
  if (!isRecord(raw)) {
    return {
      ok: false,
      error: `planning response: expected a JSON object, got ${describeValue(raw)}`
    };
  }
  const warnings: string[] = [];
  const body = snakeKeys(raw, ['targetAchieved']);
  const response: JsonObject = omit(body, SECTIONS);

  const transition = snakeKeys(
    objectOrWarn(body.transition, 'transition', warnings) ?? {}
  );
  const targetAchieved = resolveTargetAchieved(body, transition, warnings);
  response.targetAchieved = targetAchieved;
  response.transition = parseDroppingInvalid(
    TransitionSchema,
    omitUndefined({
      ...transition,
      continue_behaviors: booleanField(
        transition.continue_behaviors,
        'transition.continue_behaviors',
        warnings
      ),
      target_achieved: targetAchieved,
      next_stage_id: idString(transition.next_stage_id),
      next_step_id: idString(transition.next_step_id),
      stage_complete: booleanField(
        transition.stage_complete,
        'transition.stage_complete',
        warnings
      )
    }),
    'transition',
    warnings
  );

  const rawContextUpdate = objectOrWarn(
    body.context_update,
    'context_update',
    warnings
  );
  // Superseded planners carried workflow updates in transition.workflow_update (docs/protocol.md#be-liberal).
  const legacyWorkflowUpdate = isRecord(transition.workflow_update)
    ? transition.workflow_update
    : undefined;
  if (rawContextUpdate || legacyWorkflowUpdate) {
    const contextUpdate = normalizeContextUpdate(
      rawContextUpdate ?? {},
      warnings
    );
    if (!contextUpdate.workflow_update && legacyWorkflowUpdate) {
      contextUpdate.workflow_update = normalizeWorkflowUpdate(
        legacyWorkflowUpdate,
        warnings
      );
    }
    response.context_update = parseDroppingInvalid(
      ContextUpdateSchema,
      omitUndefined(contextUpdate),
      'context_update',
      warnings
    );
  }

  const contextFilter = objectOrWarn(
    body.context_filter,
    'context_filter',
    warnings
  );
  if (contextFilter) {
    response.context_filter = parseDroppingInvalid(
      ContextFilterSchema,
      normalizeContextFilter(contextFilter, warnings),
      'context_filter',
      warnings
    );
  }
  const behavior = objectOrWarn(body.behavior, 'behavior', warnings);
  if (behavior) {
    response.behavior = parseDroppingInvalid(
      BehaviorDescriptorSchema,
      snakeKeys(behavior),
      'behavior',
      warnings
    );
  }
  if (Array.isArray(body.actions)) {
    response.actions = normalizeLegacyActions(body.actions, warnings);
  }
  response.metadata = objectOrWarn(body.metadata, 'metadata', warnings);
  const usage = objectOrWarn(body.usage, 'usage', warnings);
  if (usage) {
    response.usage = parseDroppingInvalid(
      PlanningUsageSchema,
      normalizeUsage(usage),
      'usage',
      warnings
    );
  }

  const parsed = PlanningResponseSchema.safeParse(omitUndefined(response));
  if (!parsed.success) {
    return {
      ok: false,
      error: `planning response: ${describeZodError(parsed.error)}`
    };
  }
  return { ok: true, response: parsed.data, warnings };
}
