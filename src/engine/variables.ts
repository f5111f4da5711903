/**
 * Kernel variables kept apart from their values: the saved run and the trace hold names, types and
 * shapes only (docs/protocol.md#persistence); what is sent to the planner can hide the values of
 * secret-looking names (the `redactVariables` setting).
 */
import type { IRunSettings } from './settings';

export const REDACTED = '<redacted>';

/** The type and shape of a JSON value as the kernel would name it (`str(len=3)`, `dict(len=2)`). */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) {
    return 'None';
  }
  if (typeof value === 'boolean') {
    return 'bool';
  }
  if (typeof value === 'number') {
    return Number.isInteger(value) ? 'int' : 'float';
  }
  if (typeof value === 'string') {
    return `str(len=${value.length})`;
  }
  if (Array.isArray(value)) {
    return `list(len=${value.length})`;
  }
  if (typeof value === 'object') {
    return `dict(len=${Object.keys(value).length})`;
  }
  return typeof value;
}

/** name -> type for every value; `known` types (from the kernel) win over the JSON guess. */
export function describeVariables(
  values: Record<string, unknown>,
  known: Record<string, string> = {}
): Record<string, string> {
  const types: Record<string, string> = {};
  for (const [name, value] of Object.entries(values)) {
    types[name] = known[name] ?? describeValue(value);
  }
  return types;
}

const MAX_PATTERN_LENGTH = 200;

const LOWER = /\p{Ll}/u;
const UPPER = /\p{Lu}/u;
const DIGIT = /\p{Nd}/u;
const LETTER = /\p{L}/u;

/**
 * `OPENAI_API_KEY`, `apiKey2`, `db-password` -> `openai api key`, `api key`, `db password`: a name cut
 * at separators, case changes (`apiKey`, `HTTPServer`) and digits, lower-cased; digit runs are left
 * out, so `key2` is `key`. In a pattern, `*` is kept: alone between separators it is a segment.
 */
export function nameSegments(name: string, pattern = false): string[] {
  const segments: string[] = [];
  let current = '';
  const cut = () => {
    if (
      current &&
      !(current.length > 0 && [...current].every(c => DIGIT.test(c)))
    ) {
      segments.push(current.toLowerCase());
    }
    current = '';
  };
  const chars = [...name];
  chars.forEach((char, i) => {
    const before = chars[i - 1] ?? '';
    const after = chars[i + 1] ?? '';
    if (!(LETTER.test(char) || DIGIT.test(char) || (pattern && char === '*'))) {
      cut();
      return;
    }
    const caseChange =
      UPPER.test(char) &&
      (LOWER.test(before) || (UPPER.test(before) && LOWER.test(after)));
    if (caseChange || DIGIT.test(char) !== DIGIT.test(before || char)) {
      cut();
    }
    current += char;
  });
  cut();
  return segments;
}

/** `pass*` -> a test of one segment; `*` matches any letters within it, never across segments. */
function segmentTest(pattern: string): (segment: string) => boolean {
  const parts = pattern.split('*');
  return text => {
    if (parts.length === 1) {
      return text === parts[0];
    }
    const first = parts[0];
    const last = parts[parts.length - 1];
    if (!text.startsWith(first) || text.length < first.length + last.length) {
      return false;
    }
    let at = first.length;
    for (const middle of parts.slice(1, -1)) {
      const found = text.indexOf(middle, at);
      if (found < 0) {
        return false;
      }
      at = found + middle.length;
    }
    return text.length - last.length >= at && text.endsWith(last);
  };
}

/**
 * A pattern -> a test of a whole name, segment by segment (docs/protocol.md#context): `*_token`
 * hides `token`, `auth_token` and `accessToken` but not `tokens` or `token_ids`; `*` alone is any run
 * of segments (none too), `*` inside a segment any letters of that segment only.
 */
function patternTest(pattern: string): (segments: string[]) => boolean {
  const tokens = nameSegments(pattern.slice(0, MAX_PATTERN_LENGTH), true);
  const tests = tokens.map(token =>
    token === '*' ? null : segmentTest(token)
  );
  return segments => {
    // Wildcard matching that returns to the last `*` only: linear in the segments per pattern token.
    let t = 0;
    let s = 0;
    let star = -1;
    let resume = 0;
    while (s < segments.length) {
      const test = tests[t];
      if (t < tests.length && test !== null && test(segments[s])) {
        t++;
        s++;
      } else if (t < tests.length && test === null) {
        star = t++;
        resume = s;
      } else if (star >= 0) {
        t = star + 1;
        s = ++resume;
      } else {
        return false;
      }
    }
    while (t < tests.length && tests[t] === null) {
      t++;
    }
    return tokens.length > 0 && t === tests.length;
  };
}

/** Whether the settings hide `name`'s value from the planner (and, inside a value, a key's). */
export function redactionTest(
  settings: Pick<IRunSettings, 'redactVariables' | 'redactVariablePatterns'>
): (name: string) => boolean {
  const patterns = redactedPatterns(settings);
  if (patterns.length === 0) {
    return () => false;
  }
  const tests = patterns.map(patternTest);
  return name => {
    const segments = nameSegments(name);
    return tests.some(test => test(segments));
  };
}

/** The patterns in force: none while redaction is off (also what the kernel is given). */
export function redactedPatterns(
  settings: Pick<IRunSettings, 'redactVariables' | 'redactVariablePatterns'>
): string[] {
  return settings.redactVariables
    ? settings.redactVariablePatterns.map(p => p.trim()).filter(p => p !== '')
    : [];
}

/** `value` with the values of its redacted keys replaced, at any depth of plain JSON containers. */
function redactKeys(
  value: unknown,
  isRedacted: (name: string) => boolean
): unknown {
  if (Array.isArray(value)) {
    return value.map(item => redactKeys(item, isRedacted));
  }
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [
        key,
        isRedacted(key) ? REDACTED : redactKeys(item, isRedacted)
      ])
    );
  }
  return value;
}

/** A copy of `values` with the redacted names' values, and their redacted keys', replaced by `<redacted>`. */
export function redactVariables(
  values: Record<string, unknown>,
  isRedacted: (name: string) => boolean
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(values)) {
    out[name] = isRedacted(name) ? REDACTED : redactKeys(value, isRedacted);
  }
  return out;
}
