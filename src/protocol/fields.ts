/** Helpers shared by the normalisers: key renaming, light coercions and readable zod errors. */
import { z } from 'zod';

export type JsonObject = Record<string, unknown>;

/** The result of a normaliser: the canonical value under `K`, or why there is none. */
export type Normalized<K extends string, T> =
  | ({ ok: true; warnings: string[] } & { [key in K]: T })
  | { ok: false; error: string };

export function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `shotType` -> `shot_type`; keys without a lower-to-upper case change (`FSM`, `id`) are left alone. */
export function camelToSnake(key: string): string {
  if (!/[a-z0-9][A-Z]/.test(key)) {
    return key;
  }
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/**
 * Renames camelCase keys of one object level to snake_case. When both spellings are present the
 * snake_case one wins. Keys listed in `keep` are left as they are.
 */
export function snakeKeys(
  obj: JsonObject,
  keep: readonly string[] = []
): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(obj)) {
    const snake = keep.includes(key) ? key : camelToSnake(key);
    if (snake !== key && snake in obj) {
      continue;
    }
    out[snake] = value;
  }
  return out;
}

/** Moves the first present alias onto `canonical` (when `canonical` itself is absent) and drops the aliases. */
export function alias(
  obj: JsonObject,
  canonical: string,
  aliases: readonly string[]
): void {
  for (const name of aliases) {
    if (name in obj) {
      if (obj[canonical] === undefined) {
        obj[canonical] = obj[name];
      }
      delete obj[name];
    }
  }
}

export function omit(obj: JsonObject, keys: readonly string[]): JsonObject {
  return Object.fromEntries(
    Object.entries(obj).filter(([key]) => !keys.includes(key))
  );
}

export function idString(value: unknown): unknown {
  return typeof value === 'number' && Number.isFinite(value)
    ? String(value)
    : value;
}

export function booleanLike(value: unknown): unknown {
  if (value === 'true') {
    return true;
  }
  if (value === 'false') {
    return false;
  }
  return value;
}

export function describeValue(value: unknown): string {
  if (value === null) {
    return 'null';
  }
  if (value === undefined) {
    return 'nothing (the field is missing)';
  }
  if (Array.isArray(value)) {
    return 'an array';
  }
  return typeof value === 'object'
    ? 'an object'
    : `${typeof value} ${JSON.stringify(value)}`;
}

export function formatPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const part of path) {
    if (typeof part === 'number') {
      text += `[${part}]`;
    } else {
      text += text ? `.${String(part)}` : String(part);
    }
  }
  return text;
}

export function describeIssue(issue: z.core.$ZodIssue): string {
  if (
    issue.code === 'invalid_type' &&
    /received undefined$/.test(issue.message)
  ) {
    return `missing (expected ${issue.expected})`;
  }
  return issue.message;
}

/**
 * A union's issue names the branch the value was meant for (the one that did not fail on the value's
 * type itself), so "one entry or a list" reports the entry's bad field, not "Invalid input".
 */
function unionBranchIssues(issue: z.core.$ZodIssue): z.core.$ZodIssue[] {
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) {
    return [issue];
  }
  const branch =
    issue.errors.find(
      issues =>
        !issues.every(i => i.code === 'invalid_type' && i.path.length === 0)
    ) ?? issue.errors[0];
  return branch
    .map(i => ({ ...i, path: [...issue.path, ...i.path] }))
    .flatMap(unionBranchIssues);
}

/** Zod issues as `field.path: problem` sentences joined by `; `, for logs and HTTP 400 bodies. */
export function describeZodError(error: {
  readonly issues: readonly z.core.$ZodIssue[];
}): string {
  return error.issues
    .flatMap(unionBranchIssues)
    .map(issue => {
      const path = formatPath(issue.path);
      return path ? `${path}: ${describeIssue(issue)}` : describeIssue(issue);
    })
    .join('; ');
}

/**
 * Parses `value` with `schema`; fields that fail are dropped with a warning instead of failing the
 * whole object, so one bad field does not lose the rest. Returns undefined when that is not enough.
 */
export function parseDroppingInvalid<S extends z.ZodType>(
  schema: S,
  value: JsonObject,
  label: string,
  warnings: string[]
): z.output<S> | undefined {
  const candidate = { ...value };
  for (;;) {
    const result = schema.safeParse(candidate);
    if (result.success) {
      return result.data;
    }
    const droppable = new Set<string>();
    for (const issue of result.error.issues) {
      const key = issue.path[0];
      if (typeof key !== 'string' || !(key in candidate)) {
        warnings.push(`${label} ignored: ${describeZodError(result.error)}`);
        return undefined;
      }
      droppable.add(key);
    }
    for (const key of droppable) {
      const issues = result.error.issues
        .filter(issue => issue.path[0] === key)
        .map(issue => ({ ...issue, path: issue.path.slice(1) }));
      warnings.push(`${label}.${key} ignored: ${describeZodError({ issues })}`);
      delete candidate[key];
    }
  }
}

/** An item given as `{name, ...}` (or `{variable_name}`, `{id}`) where a name is expected -> the name. */
export function nameOf(item: unknown): unknown {
  if (isRecord(item)) {
    return item.name ?? item.variable_name ?? item.id;
  }
  return item;
}

export function omitUndefined(obj: JsonObject): JsonObject {
  return Object.fromEntries(
    Object.entries(obj).filter(([, value]) => value !== undefined)
  );
}

/**
 * `value` with every object field that is `null` removed, at any depth. A server that serialises its
 * whole model (Python's `model_dump()`, `asdict()`) sends `null` for each unset optional field, which
 * this protocol reads as absent (docs/protocol.md#be-liberal). The values of a `variables` map are the
 * planner's data and stay as sent.
 */
export function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map(withoutNulls);
  }
  if (!isRecord(value)) {
    return value;
  }
  const kept: JsonObject = {};
  for (const [key, field] of Object.entries(value)) {
    if (field === null) {
      continue;
    }
    kept[key] =
      key === 'variables' && isRecord(field) ? field : withoutNulls(field);
  }
  return kept;
}
