/**
 * The registry is the one list of dialects: the settings schema (JSON, which JupyterLab reads as it
 * is) must offer exactly its names and each dialect's own settings with the dialect's defaults, and
 * every dialect must say what a plug-in says.
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import { z } from 'zod';
import type { IDialect } from '../dialect';
import { v1 } from '../v1';
import {
  type DialectName,
  DIALECT_SETTING_KEYS,
  DIALECTS,
  PROTOCOL_SETTINGS,
  readProtocolSetting
} from '../registry';
import { FakeTransport } from './fakeTransport';

const Schema = z.object({
  properties: z.record(
    z.string(),
    z.looseObject({
      type: z.string(),
      default: z.unknown(),
      minimum: z.number().optional(),
      oneOf: z.array(z.object({ const: z.string() })).optional()
    })
  )
});

const schema = Schema.parse(
  JSON.parse(
    readFileSync(join(__dirname, '../../../../schema/plugin.json'), 'utf-8')
  )
).properties;

/** Each dialect's own settings and their defaults. */
const DIALECT_DEFAULTS = DIALECTS.flatMap(dialect =>
  Object.entries(dialect.settings.defaults)
);

describe('the dialect registry', () => {
  it('names each dialect and each test double once', () => {
    const names = DIALECTS.map(dialect => dialect.name);
    expect(new Set(names).size).toBe(names.length);
    const doubles = DIALECTS.map(dialect => dialect.testDouble);
    expect(new Set(doubles).size).toBe(doubles.length);
  });

  it('offers in the protocol setting exactly auto and the registry’s dialects, in its order, auto by default', () => {
    expect(schema.protocol.oneOf?.map(option => option.const)).toEqual([
      ...PROTOCOL_SETTINGS
    ]);
    expect(schema.protocol.default).toBe('auto');
    expect(schema.protocol.minimum).toBeUndefined();
  });

  it('takes every value the protocol setting offers, and auto for anything else', () => {
    for (const { const: value } of schema.protocol.oneOf ?? []) {
      expect(readProtocolSetting(value)).toBe(value);
    }
    expect(readProtocolSetting('other')).toBe('auto');
    expect(readProtocolSetting(undefined)).toBe(
      schema.protocol.default as string
    );
  });

  it.each(DIALECT_DEFAULTS)(
    '%s: a dialect’s own setting is in the schema, with its default and no minimum',
    (key, value) => {
      expect(schema[key]?.default).toEqual(value);
      expect(schema[key]?.minimum).toBeUndefined();
    }
  );

  it('lists the settings the dialects read: protocol, then each dialect’s own', () => {
    expect(DIALECT_SETTING_KEYS).toEqual([
      'protocol',
      ...DIALECT_DEFAULTS.map(([key]) => key)
    ]);
  });

  it.each(
    DIALECTS.map(
      dialect => [dialect.name, dialect as IDialect<DialectName>] as const
    )
  )(
    '%s: its settings read an empty composite as its defaults; its adapter names it; its saved state is read back',
    (_name, dialect) => {
      const adapter = dialect.createAdapter(
        { transport: new FakeTransport(() => new Response()), log: () => 0 },
        dialect.settings.read({})
      )();
      expect(dialect.settings.read({})).toEqual(
        dialect.settings.read(dialect.settings.defaults)
      );
      expect(adapter.dialect).toBe(dialect.name);
      expect(dialect.savedState.read(undefined)).toBeNull();
      expect(dialect.savedState.read('not a state')).toBeNull();
      // A dialect whose adapter keeps nothing saves nothing.
      const saved = adapter.saveState?.();
      expect(dialect.savedState.read(saved) !== null).toBe(saved !== undefined);
    }
  );

  it('reads the v1 entry point trimmed, an empty one or a non-text one as the default', () => {
    expect(
      v1.settings.read({ v1EntryStage: ' intro ', v1EntryStep: 'plan_it' })
    ).toEqual({ entryStageId: 'intro', entryStepId: 'plan_it' });
    expect(v1.settings.read({ v1EntryStage: '  ', v1EntryStep: 7 })).toEqual({
      entryStageId: schema.v1EntryStage.default,
      entryStepId: schema.v1EntryStep.default
    });
  });
});
