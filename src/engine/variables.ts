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

/** `*key*` -> a case-insensitive whole-name test; `*` is the only wildcard, so it cannot backtrack badly. */
function globTest(pattern: string): (name: string) => boolean {
  const parts = pattern.slice(0, MAX_PATTERN_LENGTH).toLowerCase().split('*');
  return name => {
    const text = name.toLowerCase();
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

/** Whether the settings hide `name`'s value from the planner. */
export function redactionTest(
  settings: Pick<IRunSettings, 'redactVariables' | 'redactVariablePatterns'>
): (name: string) => boolean {
  if (!settings.redactVariables) {
    return () => false;
  }
  const tests = settings.redactVariablePatterns
    .filter(p => p.trim() !== '')
    .map(p => globTest(p.trim()));
  return name => tests.some(test => test(name));
}

/** A copy of `values` with the redacted names' values replaced by `<redacted>`. */
export function redactVariables(
  values: Record<string, unknown>,
  isRedacted: (name: string) => boolean
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(values)) {
    out[name] = isRedacted(name) ? REDACTED : value;
  }
  return out;
}
