/**
 * The fake kernel's output checks: what the real kernel's check (`src/notebook/kernelChecks.ts`) says,
 * for the values the fake kernel holds (JavaScript values, or the text a fake `name = value` assigned).
 */
import type { OutputCheck, OutputContract } from '../../protocol';

function typeOf(value: unknown): string {
  if (typeof value === 'number') {
    return Number.isInteger(value) ? 'int' : 'float';
  }
  if (typeof value === 'string') {
    const described = /^(DataFrame|Series)\(/.exec(value);
    return described ? value : 'str';
  }
  if (typeof value === 'boolean') {
    return 'bool';
  }
  if (Array.isArray(value)) {
    return `list(len=${value.length})`;
  }
  return value === null
    ? 'None'
    : `dict(len=${Object.keys(value as object).length})`;
}

/** The check of one contract against the fake kernel's `variables`. */
export function fakeCheck(
  contract: OutputContract,
  variables: Record<string, unknown>,
  hidden: (name: string) => boolean = () => false
): OutputCheck {
  const { name, kind } = contract;
  if (!(name in variables)) {
    return {
      ok: false,
      kind,
      type: null,
      value: null,
      reason: `\`${name}\` is missing`
    };
  }
  const value = variables[name];
  const type = typeOf(value);
  const scalar =
    typeof value === 'number' ||
    typeof value === 'boolean' ||
    (type === 'str' && typeof value === 'string');
  const shown = hidden(name) || !scalar ? null : String(value).slice(0, 200);
  const fail = (why: string): OutputCheck => ({
    ok: false,
    kind,
    type,
    value: shown,
    reason: `\`${name}\` ${why}`
  });
  const ok: OutputCheck = { ok: true, kind, type, value: shown };
  const choices = contract.one_of ?? [];
  if (
    choices.length > 0 &&
    (kind === 'text' || kind === 'label' || kind === 'any') &&
    typeof value === 'string' &&
    !choices.includes(value)
  ) {
    return fail(
      `is '${value}', not one of: ${choices.map(c => `'${c}'`).join(', ')}`
    );
  }
  switch (kind) {
    case 'number': {
      if (typeof value !== 'number') {
        return fail(`is a ${type}, not a number`);
      }
      const { decimals } = contract;
      return typeof decimals === 'number' &&
        Math.abs(value - Number(value.toFixed(decimals))) > 1e-9
        ? fail(`is ${value}, a ${type}, not rounded to ${decimals} decimals`)
        : ok;
    }
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value)
        ? ok
        : fail(`is a ${type}, not an integer`);
    case 'label':
      if (typeof value === 'number' && contract.of_column) {
        return fail(
          `is ${value}, an int: not a value of ${contract.frame ?? 'df'}['${contract.of_column}'] (a row number where a label was asked?)`
        );
      }
      return type === 'str' ? ok : fail(`is a ${type}, not a label`);
    case 'text':
      return type === 'str' && value !== ''
        ? ok
        : fail(`is a ${type}, not a text`);
    case 'bool':
      return typeof value === 'boolean' ? ok : fail(`is a ${type}, not a bool`);
    case 'series':
      return type.startsWith('Series(')
        ? ok
        : fail(`is a ${type}, not a Series`);
    case 'dataframe':
      return type.startsWith('DataFrame(')
        ? ok
        : fail(`is a ${type}, not a DataFrame`);
    case 'list':
      return Array.isArray(value) ? ok : fail(`is a ${type}, not a list`);
    case 'dict': {
      if (!type.startsWith('dict(')) {
        return fail(`is a ${type}, not a dict`);
      }
      const lacking = (contract.keys ?? []).filter(
        key => !(key in (value as object))
      );
      return lacking.length === 0
        ? ok
        : fail(`has no keys ${JSON.stringify(lacking)}`);
    }
    default:
      return ok;
  }
}
