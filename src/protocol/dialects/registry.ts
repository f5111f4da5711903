/**
 * The dialects the extension speaks: the one list of them. The `protocol` setting's values
 * (schema/plugin.json, held equal by a test), detection's order, the settings each dialect reads and
 * the reference planner service's `--dialect` doubles all come from here
 * (docs/dialects.md#adding-a-dialect).
 */
import { bcc } from './bcc';
import type { IDialect } from './dialect';
import { dslc } from './dslc';
import { v1 } from './v1';

/**
 * In detection's order. The first is the seed dialect (docs/protocol.md): its body is the base of the
 * superset probe, and it claims last an answer no other dialect recognised.
 */
export const DIALECTS = [dslc, bcc, v1] as const;

export type DialectName = (typeof DIALECTS)[number]['name'];

/** The `protocol` setting: `auto` detects the dialect once per run (docs/dialects.md#choosing). */
export type ProtocolSetting = 'auto' | DialectName;

export const PROTOCOL_SETTINGS: readonly ProtocolSetting[] = [
  'auto',
  ...DIALECTS.map(dialect => dialect.name)
];

/** The settings the dialects read (schema/plugin.json): `protocol`, then each dialect's own. */
export const DIALECT_SETTING_KEYS: readonly string[] = [
  'protocol',
  ...DIALECTS.flatMap(dialect => Object.keys(dialect.settings.defaults))
];

/** The test doubles the reference planner service starts with `--dialect NAME` (the seed's is itself). */
export type TestDoubleName = (typeof DIALECTS)[number]['testDouble'];

export function isDialectName(value: unknown): value is DialectName {
  return DIALECTS.some(dialect => dialect.name === value);
}

export function dialectNamed(name: DialectName): IDialect<DialectName> {
  const found = DIALECTS.find(dialect => dialect.name === name);
  if (!found) {
    throw new Error(`no dialect named ${name}`);
  }
  return found;
}

/** The `protocol` setting of the plugin's composite settings; anything else is `auto`. */
export function readProtocolSetting(value: unknown): ProtocolSetting {
  return PROTOCOL_SETTINGS.find(setting => setting === value) ?? 'auto';
}
