import { mkdtempSync, readFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';

import { DIALECTS } from '../../../../src/protocol/dialects/registry';
import { postJson } from '../../__tests__/helpers';
import { parseCli, USAGE, UsageError } from '../../cli';
import { BCC_SCENARIOS } from '../bcc';
import { parseDialectCli, startDialectDouble } from '../cli';
import { salesCsv } from '../salesData';
import { DEMO_DIR } from './python';

describe('--dialect on the planner command line', () => {
  it('starts no double for dslc or without the flag, and leaves the other options to the planner', () => {
    expect(parseCli(['--port', '0']).dialect).toBeUndefined();
    const dslc = parseCli(['--dialect', 'dslc', '--port', '0', '--quiet']);
    expect(dslc.dialect).toBeUndefined();
    expect(dslc.server.port).toBe(0);
    expect(parseCli(['--dialect=dslc']).dialect).toBeUndefined();
  });

  it('starts a double for each dialect of the extension’s registry but the seed, the reference planner itself', () => {
    for (const { testDouble } of DIALECTS.slice(1)) {
      expect(parseCli(['--dialect', testDouble]).dialect?.dialect).toBe(
        testDouble
      );
      expect(USAGE).toContain(testDouble);
    }
    expect(parseCli(['--dialect', DIALECTS[0].testDouble]).dialect).toBe(
      undefined
    );
  });

  it('parses the v1 and bcc options', () => {
    const v1 = parseCli([
      '--dialect',
      'v1',
      '--port',
      '0',
      '--fail-step',
      'section_2_data_structure_discovery@2',
      '--require-variable',
      'section_3_monthly_trend:target_variable',
      '--record',
      '/tmp/requests.jsonl'
    ]).dialect;
    expect(v1).toMatchObject({
      dialect: 'v1',
      port: 0,
      own: {
        failures: [{ section: 'section_2_data_structure_discovery', nth: 2 }],
        requirements: [
          { section: 'section_3_monthly_trend', name: 'target_variable' }
        ]
      },
      recordFile: '/tmp/requests.jsonl'
    });
    const bcc = parseCli([
      '--dialect=bcc',
      '--scenario',
      'ndjson',
      '--help'
    ]).dialect;
    expect(bcc).toMatchObject({
      dialect: 'bcc',
      own: { scenario: 'ndjson' },
      help: true
    });
    expect(parseCli(['--dialect', 'bcc']).dialect?.own).toEqual({
      scenario: 'recorded',
      strictBody: false
    });
    expect(
      parseCli(['--dialect', 'bcc', '--strict-body']).dialect?.own
    ).toMatchObject({ strictBody: true });
  });

  it('reads failing steps from the environment too', () => {
    const parsed = parseDialectCli(['--dialect', 'v1'], {
      V1_DOUBLE_FAIL_STEP:
        'section_3_monthly_trend,section_2_revenue_by_region@3'
    });
    expect(parsed.dialect?.own).toHaveProperty('failures', [
      { section: 'section_3_monthly_trend', nth: 1 },
      { section: 'section_2_revenue_by_region', nth: 3 }
    ]);
  });

  it('rejects unknown dialects, scenarios and misplaced options as usage errors', () => {
    expect(() => parseCli(['--dialect', 'v2'])).toThrow(UsageError);
    expect(() => parseCli(['--dialect', 'bcc', '--scenario', 'nope'])).toThrow(
      /unknown bcc scenario "nope"/
    );
    expect(() => parseCli(['--dialect', 'v1', '--scenario', 'ndjson'])).toThrow(
      /bcc only/
    );
    expect(() =>
      parseCli(['--dialect', 'bcc', '--fail-step', 'section_1_x'])
    ).toThrow(/v1 only/);
    expect(() => parseCli(['--dialect', 'v1', '--strict-body'])).toThrow(
      /bcc only/
    );
    expect(() =>
      parseCli(['--dialect', 'v1', '--fail-step', 'step@x'])
    ).toThrow(/SECTION\[@N\]/);
    expect(() =>
      parseCli(['--dialect', 'bcc', '--require-variable', 'section_1_x:a'])
    ).toThrow(/v1 only/);
    expect(() =>
      parseCli(['--dialect', 'v1', '--require-variable', 'target_variable'])
    ).toThrow(/SECTION:NAME/);
    expect(() => parseCli(['--dialect', 'v1', '--replay', 'x'])).toThrow(
      UsageError
    );
  });

  it('documents the flags and every scenario in --help', () => {
    expect(USAGE).toContain('--dialect NAME');
    expect(USAGE).toContain('--fail-step');
    expect(USAGE).toContain('--require-variable');
    expect(USAGE).toContain('--strict-body');
    expect(USAGE).toContain('--record FILE');
    expect(USAGE).toContain('/__requests');
    for (const scenario of BCC_SCENARIOS) {
      expect(USAGE).toContain(scenario.name);
    }
  });

  it('--record appends every request to a JSONL file', async () => {
    const file = join(
      mkdtempSync(join(tmpdir(), 'dialect-')),
      'requests.jsonl'
    );
    const options = parseCli([
      '--dialect',
      'bcc',
      '--port',
      '0',
      '--quiet',
      '--record',
      file
    ]).dialect;
    if (!options) {
      throw new Error('no dialect options');
    }
    const server = await startDialectDouble(options);
    try {
      await postJson(`${server.url}/planning`, {
        state: { FSM: { state: 'IDLE' } }
      });
      await postJson(`${server.url}/nowhere`, {});
    } finally {
      await server.close();
    }
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines.map(line => JSON.parse(line))).toEqual([
      expect.objectContaining({ path: '/planning', status: 200 }),
      expect.objectContaining({ path: '/nowhere', status: 404, body: {} })
    ]);
  });
});

describe('the sales data', () => {
  it('is the committed demo/data/sales.csv, 240 rows of 4 columns', () => {
    const text = salesCsv();
    expect(readFileSync(join(DEMO_DIR, 'data', 'sales.csv'), 'utf8')).toBe(
      text
    );
    const rows = text.trim().split('\n');
    expect(rows[0]).toBe('month,region,units,revenue');
    expect(rows).toHaveLength(241);
    expect(rows.every(row => row.split(',').length === 4)).toBe(true);
  });
});
