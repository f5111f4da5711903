/**
 * `schema/plugin.json` is the one source of the settings' defaults and minima: the code's copies must
 * agree with it, key for key.
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import { z } from 'zod';
import { DIALECT_SETTING_KEYS } from '../../protocol/dialects/registry';
import {
  DEFAULT_SETTINGS,
  IRunSettings,
  MAX_TIMEOUT_SECONDS,
  SETTING_MINIMA,
  toRunSettings
} from '../settings';

const SchemaFile = z.object({
  properties: z.record(
    z.string(),
    z.looseObject({
      type: z.string(),
      default: z.unknown(),
      minimum: z.number().optional(),
      oneOf: z.array(z.object({ const: z.string() })).optional(),
      description: z.string()
    })
  )
});

const schema = SchemaFile.parse(
  JSON.parse(
    readFileSync(join(__dirname, '../../../schema/plugin.json'), 'utf-8')
  )
).properties;

const keys = Object.keys(DEFAULT_SETTINGS) as (keyof IRunSettings)[];

describe('settings defaults', () => {
  it('has one setting in the code for each in the schema, the dialect registry holding the dialects’', () => {
    expect(Object.keys(schema).sort()).toEqual(
      [...keys, ...DIALECT_SETTING_KEYS].sort()
    );
  });

  it.each(keys)('%s: the default is the schema default', key => {
    expect(DEFAULT_SETTINGS[key]).toEqual(schema[key].default);
  });

  it.each(keys)('%s: the minimum is the schema minimum', key => {
    const minima: Record<string, number> = SETTING_MINIMA;
    expect(minima[key]).toBe(schema[key].minimum);
  });

  it.each(['executionTimeout', 'firstByteTimeout', 'stallTimeout'] as const)(
    '%s: a limit longer than a browser timer holds is no limit, not one that fires at once',
    key => {
      expect(toRunSettings({ [key]: 99999999 })[key]).toBe(0);
      expect(toRunSettings({ [key]: MAX_TIMEOUT_SECONDS })[key]).toBe(
        MAX_TIMEOUT_SECONDS
      );
      expect(MAX_TIMEOUT_SECONDS * 1000).toBeLessThanOrEqual(2 ** 31 - 1);
    }
  );

  it('maps an empty composite to the defaults', () => {
    expect(toRunSettings({})).toEqual(DEFAULT_SETTINGS);
  });

  it.each(Object.entries(SETTING_MINIMA))(
    '%s: a value under the minimum keeps the default, the minimum is taken',
    (key, minimum) => {
      const settings = (value: number) =>
        toRunSettings({ [key]: value }) as unknown as Record<string, unknown>;
      expect(settings(minimum - 0.5)[key]).toBe(
        (DEFAULT_SETTINGS as unknown as Record<string, unknown>)[key]
      );
      expect(settings(minimum)[key]).toBe(minimum);
    }
  );

  it.each(keys.filter(key => schema[key].oneOf))(
    '%s: every value the schema offers is taken',
    key => {
      for (const { const: value } of schema[key].oneOf ?? []) {
        expect(toRunSettings({ [key]: value })[key]).toBe(value);
      }
      expect(toRunSettings({ [key]: 'other' })[key]).toBe(
        DEFAULT_SETTINGS[key]
      );
    }
  );
});
