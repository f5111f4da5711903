/**
 * Observations and request bodies as clients send them -> canonical shapes (what the planner service
 * receives). Accepts `progress.*.current` given as an object, `current_outputs` items given as
 * `{name, description}`, completed items given as bare ids, the superseded
 * `location.current_stage_id` (docs/protocol.md#be-liberal), effects that are not strings, and camelCase keys.
 */
import { z } from 'zod';

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
  omitUndefined,
  snakeKeys
} from './fields';
import {
  GeneratingRequest,
  GeneratingRequestSchema,
  Observation,
  ObservationSchema,
  PlanningRequest,
  PlanningRequestSchema,
  ProgressLevelName,
  ProgressLevelNameSchema
} from './schemas';

const LEVEL_ID_KEY: Record<ProgressLevelName, string> = {
  stages: 'stage_id',
  steps: 'step_id',
  behaviors: 'behavior_id'
};

/** `stage`, `Steps`, `behaviour` -> the canonical level name, or undefined. */
export function progressLevelName(raw: unknown): ProgressLevelName | undefined {
  if (typeof raw !== 'string') {
    return undefined;
  }
  const word = raw.trim().toLowerCase().replace('behaviour', 'behavior');
  const plural = word.endsWith('s') ? word : `${word}s`;
  const level = ProgressLevelNameSchema.safeParse(plural);
  return level.success ? level.data : undefined;
}

/** An item given as an object where an id is expected -> its id. */
function idOf(item: unknown, idKey: string): unknown {
  if (isRecord(item)) {
    const snake = snakeKeys(item);
    return idString(snake[idKey] ?? snake.id ?? snake.name ?? snake.title);
  }
  return idString(item);
}

export function normalizeCurrentOutputs(raw: unknown): unknown {
  if (!isRecord(raw)) {
    return raw;
  }
  const outputs = snakeKeys(raw);
  for (const key of ['expected', 'produced', 'in_progress']) {
    const list = outputs[key];
    if (Array.isArray(list)) {
      outputs[key] = list.map(nameOf);
    } else if (list === null) {
      delete outputs[key];
    }
  }
  return outputs;
}

function normalizeCompletedItem(item: unknown, idKey: string): unknown {
  if (typeof item === 'string' || typeof item === 'number') {
    return { [idKey]: String(item) };
  }
  if (!isRecord(item)) {
    return item;
  }
  const completed = snakeKeys(item);
  if (completed[idKey] === undefined && completed.id !== undefined) {
    completed[idKey] = completed.id;
  }
  completed[idKey] = idString(completed[idKey]);
  if (isRecord(completed.outputs_produced)) {
    const produced = snakeKeys(completed.outputs_produced);
    if (Array.isArray(produced.variables)) {
      produced.variables = produced.variables.map(nameOf);
    }
    if (Array.isArray(produced.artifacts)) {
      produced.artifacts = produced.artifacts.map(artifact =>
        isRecord(artifact) ? snakeKeys(artifact) : artifact
      );
    }
    completed.outputs_produced = produced;
  }
  return completed;
}

function normalizeProgressLevel(
  raw: unknown,
  level: ProgressLevelName
): unknown {
  if (!isRecord(raw)) {
    return raw;
  }
  const idKey = LEVEL_ID_KEY[level];
  const progress = snakeKeys(raw);
  if (isRecord(progress.current)) {
    const current = snakeKeys(progress.current);
    if (progress.focus === undefined && typeof current.focus === 'string') {
      progress.focus = current.focus;
    }
    progress.current = idOf(current, idKey) ?? null;
  } else {
    progress.current = idString(progress.current);
  }
  if (Array.isArray(progress.completed)) {
    progress.completed = progress.completed.map(item =>
      normalizeCompletedItem(item, idKey)
    );
  } else if (progress.completed === null) {
    delete progress.completed;
  }
  if (Array.isArray(progress.remaining)) {
    progress.remaining = progress.remaining.map(item => idOf(item, idKey));
  }
  if (progress.current_outputs !== undefined) {
    progress.current_outputs = normalizeCurrentOutputs(
      progress.current_outputs
    );
  }
  return progress;
}

function effectText(item: unknown): unknown {
  return typeof item === 'string' ? item : JSON.stringify(item);
}

export function normalizeEffects(raw: unknown): unknown {
  if (typeof raw === 'string') {
    return { current: [raw], history: [] };
  }
  if (Array.isArray(raw)) {
    return { current: raw.map(effectText), history: [] };
  }
  if (!isRecord(raw)) {
    return raw;
  }
  const effects = snakeKeys(raw);
  for (const key of ['current', 'history']) {
    const list = effects[key];
    if (Array.isArray(list)) {
      effects[key] = list.map(effectText);
    } else if (typeof list === 'string') {
      effects[key] = [list];
    } else if (list === null) {
      delete effects[key];
    }
  }
  return effects;
}

function normalizeLocation(raw: JsonObject): JsonObject {
  const location = snakeKeys(raw);
  // Superseded observations put the position straight on location as current_stage_id, current_step_id, ...
  if (!isRecord(location.current)) {
    const legacy: JsonObject = {};
    const legacyKeys: Record<string, string> = {
      current_stage_id: 'stage_id',
      current_step_id: 'step_id',
      behavior_id: 'behavior_id',
      behavior_iteration: 'behavior_iteration'
    };
    for (const [from, to] of Object.entries(legacyKeys)) {
      if (location[from] !== undefined) {
        legacy[to] = location[from];
      }
    }
    if (Object.keys(legacy).length > 0) {
      location.current = legacy;
    }
  }
  if (isRecord(location.current)) {
    const current = snakeKeys(location.current);
    for (const key of ['stage_id', 'step_id', 'behavior_id']) {
      current[key] = idOf(current[key], key);
    }
    if (
      typeof current.behavior_iteration === 'string' &&
      current.behavior_iteration.trim()
    ) {
      const iteration = Number(current.behavior_iteration);
      if (Number.isFinite(iteration)) {
        current.behavior_iteration = iteration;
      }
    }
    location.current = omitUndefined(current);
  }
  if (isRecord(location.progress)) {
    const progress: JsonObject = {};
    for (const [key, value] of Object.entries(location.progress)) {
      const level = progressLevelName(key);
      if (level) {
        progress[level] = normalizeProgressLevel(value, level);
      } else {
        progress[key] = value;
      }
    }
    location.progress = progress;
  }
  if (isRecord(location.goals)) {
    location.goals = snakeKeys(location.goals);
  }
  return location;
}

function normalizeContext(raw: JsonObject): JsonObject {
  // Only known keys are renamed: `variables` holds user names that must stay as they are.
  const context: JsonObject = { ...raw };
  alias(context, 'FSM', ['fsm', 'Fsm']);
  alias(context, 'toDoList', ['todo_list', 'todoList', 'to_do_list']);
  alias(context, 'section_progress', ['sectionProgress']);
  if (context.variables === null) {
    delete context.variables;
  }
  if (context.effects !== undefined) {
    context.effects = normalizeEffects(context.effects);
  }
  for (const key of ['notebook', 'FSM', 'section_progress']) {
    if (isRecord(context[key])) {
      context[key] = snakeKeys(context[key] as JsonObject);
    }
  }
  return context;
}

/** A raw observation (as a client sends it) -> canonical `Observation`. */
export function normalizeObservation(
  raw: unknown
): Normalized<'observation', Observation> {
  if (!isRecord(raw)) {
    return {
      ok: false,
      error: `observation: expected an object, got ${describeValue(raw)}`
    };
  }
  const observation: JsonObject = { ...raw };
  if (!isRecord(observation.location)) {
    return {
      ok: false,
      error: 'observation.location: missing (expected object)'
    };
  }
  observation.location = normalizeLocation(observation.location);
  if (isRecord(observation.context)) {
    observation.context = normalizeContext(observation.context);
  } else if (observation.context === null) {
    delete observation.context;
  }
  const parsed = ObservationSchema.safeParse(observation);
  if (!parsed.success) {
    return { ok: false, error: prefixPaths('observation', parsed.error) };
  }
  return { ok: true, observation: parsed.data, warnings: [] };
}

function prefixPaths(
  prefix: string,
  error: { readonly issues: readonly z.core.$ZodIssue[] }
): string {
  return describeZodError({
    issues: error.issues.map(issue => ({
      ...issue,
      path: [prefix, ...issue.path]
    }))
  });
}

function normalizeRequestFields(
  raw: unknown
):
  | { ok: true; request: JsonObject; warnings: string[] }
  | { ok: false; error: string } {
  if (!isRecord(raw)) {
    return {
      ok: false,
      error: `request body: expected a JSON object, got ${describeValue(raw)}`
    };
  }
  const request = snakeKeys(raw);
  const observation = normalizeObservation(request.observation);
  if (!observation.ok) {
    return observation;
  }
  request.observation = observation.observation;
  if (isRecord(request.behavior_feedback)) {
    request.behavior_feedback = snakeKeys(request.behavior_feedback);
  }
  if (isRecord(request.options)) {
    request.options = {
      ...request.options,
      stream: booleanLike(request.options.stream)
    };
  }
  return { ok: true, request, warnings: observation.warnings };
}

/** A /planning request body (what the planner service receives). */
export function normalizePlanningRequest(
  raw: unknown
): Normalized<'request', PlanningRequest> {
  const prepared = normalizeRequestFields(raw);
  if (!prepared.ok) {
    return prepared;
  }
  const parsed = PlanningRequestSchema.safeParse(prepared.request);
  if (!parsed.success) {
    return { ok: false, error: describeZodError(parsed.error) };
  }
  return { ok: true, request: parsed.data, warnings: prepared.warnings };
}

/** A /generating request body (what the planner service receives). */
export function normalizeGeneratingRequest(
  raw: unknown
): Normalized<'request', GeneratingRequest> {
  const prepared = normalizeRequestFields(raw);
  if (!prepared.ok) {
    return prepared;
  }
  const parsed = GeneratingRequestSchema.safeParse(prepared.request);
  if (!parsed.success) {
    return { ok: false, error: describeZodError(parsed.error) };
  }
  return { ok: true, request: parsed.data, warnings: prepared.warnings };
}
