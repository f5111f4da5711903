/**
 * Kernel variable values never reach the notebook's saved run or the trace; secret-looking names are
 * redacted in what the planner receives (docs/protocol.md#persistence).
 */
import {
  PlannerError,
  type PlanningRequestInput,
  type WorkflowTemplate
} from '../../protocol';
import type { ISavedRunState } from '../state/runState';
import { DEFAULT_SETTINGS, IRunSettings } from '../settings';
import { FakeNotebookDriver } from '../testing';
import { RunTrace } from '../trace';
import {
  describeValue,
  redactionTest,
  redactVariables,
  REDACTED
} from '../variables';
import {
  code,
  exec,
  plan,
  restoredState,
  saved,
  setup,
  text,
  withTemplate
} from './runnerSetup';
import {
  CUSTOM_CASES,
  CUSTOM_PATTERNS,
  HIDDEN_BY_DEFAULT,
  SENT_BY_DEFAULT
} from './redactionCases';

const SECRET = 'sk-live-0123456789';
const LABEL = 'house prices';

async function runWithSecrets(overrides: Partial<IRunSettings> = {}) {
  const trace = new RunTrace();
  const driver = new FakeNotebookDriver();
  // Set by the user's own cells: the planner never saw the values in code.
  driver.variables = {
    api_key: SECRET,
    label: LABEL,
    count: 3,
    config: { auth_token: SECRET, model: 'm' },
    tokens: ['a', 'b']
  };
  const { client, runner } = setup(
    {
      planning: [withTemplate(false), plan(true)],
      generating: [[code('n = 1'), exec()]],
      observer: trace
    },
    { settings: overrides, driver, trace }
  );
  await runner.start({ task: 't' });
  const lastPlanning = client.planningRequests[
    client.planningRequests.length - 1
  ] as PlanningRequestInput;
  return {
    driver,
    trace,
    variables: lastPlanning.observation.context?.variables
  };
}

describe('kernel variable values', () => {
  it('are saved in the notebook as names, types and shapes only', async () => {
    const { driver } = await runWithSecrets();
    const state = saved(driver);
    const text = JSON.stringify(state);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(LABEL);
    expect(state.kernelVariableTypes).toEqual({
      api_key: `str(len=${SECRET.length})`,
      label: `str(len=${LABEL.length})`,
      count: 'int',
      config: 'dict(len=2)',
      tokens: 'list(len=2)',
      n: 'str(len=1)'
    });
    expect(state).not.toHaveProperty('kernelVariables');
  });

  it('are left out of the trace', async () => {
    const { trace } = await runWithSecrets();
    const jsonl = trace.toJSONL();
    expect(jsonl).not.toContain(SECRET);
    expect(jsonl).not.toContain(LABEL);
    expect(jsonl).toContain(`"api_key":"str(len=${SECRET.length})"`);
  });

  it('reach the planner, with secret-looking names redacted, inside small dicts too', async () => {
    const { variables, driver } = await runWithSecrets();
    expect(variables).toMatchObject({
      api_key: REDACTED,
      label: LABEL,
      count: 3,
      config: { auth_token: REDACTED, model: 'm' },
      tokens: ['a', 'b']
    });
    // The kernel is given the patterns, for what it renders as text (docs/protocol.md#context).
    expect(driver.redactedPatterns).toEqual(
      DEFAULT_SETTINGS.redactVariablePatterns
    );
  });

  it('reach the planner unredacted when redaction is off', async () => {
    const { variables, driver } = await runWithSecrets({
      redactVariables: false
    });
    expect(variables).toMatchObject({
      api_key: SECRET,
      label: LABEL,
      config: { auth_token: SECRET }
    });
    expect(driver.redactedPatterns).toEqual([]);
  });

  it('of an older save are read as types and never written back', async () => {
    const first = await runWithSecrets();
    const older = {
      ...saved(first.driver),
      kernelVariables: { api_key: SECRET, rows: [1, 2] }
    } as ISavedRunState;
    delete older.kernelVariableTypes;
    const state = restoredState(older);
    const again = state.toJSON();
    expect(JSON.stringify(again)).not.toContain(SECRET);
    expect(again.kernelVariableTypes).toEqual({
      api_key: `str(len=${SECRET.length})`,
      rows: 'list(len=2)'
    });
  });
});

describe('redaction patterns', () => {
  const test = redactionTest(DEFAULT_SETTINGS);

  it.each(HIDDEN_BY_DEFAULT)('%s is redacted by default', name =>
    expect(test(name)).toBe(true)
  );

  it.each(SENT_BY_DEFAULT)('%s is sent by default', name =>
    expect(test(name)).toBe(false)
  );

  it('matches whole name segments: `*` alone is any run of segments, inside a segment any letters', () => {
    const only = redactionTest({
      redactVariables: true,
      redactVariablePatterns: CUSTOM_PATTERNS
    });
    for (const [name, hidden] of CUSTOM_CASES) {
      expect([name, only(name)]).toEqual([name, hidden]);
    }
    expect(only('a'.repeat(100_000) + '!')).toBe(false);
    expect(only(`${'a_'.repeat(50_000)}b`)).toBe(false);
  });

  it('replaces only the matching values', () => {
    expect(redactVariables({ api_key: 'k', n: 1 }, test)).toEqual({
      api_key: REDACTED,
      n: 1
    });
  });

  it('hides the keys of small containers the same way, under any name', () => {
    expect(
      redactVariables(
        {
          config: { api_key: 'k', model: 'm', nested: [{ dbPassword: 'p' }] },
          tokens: ['a', 'b']
        },
        test
      )
    ).toEqual({
      config: {
        api_key: REDACTED,
        model: 'm',
        nested: [{ dbPassword: REDACTED }]
      },
      tokens: ['a', 'b']
    });
  });

  it('describes JSON values by type and shape', () => {
    expect(
      [null, true, 3, 0.5, 'abc', [1, 2], { a: 1 }].map(describeValue)
    ).toEqual([
      'None',
      'bool',
      'int',
      'float',
      'str(len=3)',
      'list(len=2)',
      'dict(len=1)'
    ]);
  });
});

describe('values the user types for the planner (Set Variables)', () => {
  it('reach the planner as typed, even under a secret-looking name, and are not saved in the notebook under one', async () => {
    const missing = new PlannerError({
      kind: 'invalid',
      url: 'http://planner.test/v1/actions',
      message: 'the planner lacks api_key, region',
      missingVariables: ['api_key', 'region']
    });
    const s = setup({
      planning: [withTemplate(false), plan(true)],
      generating: [missing, [text('ran')]]
    });
    expect((await s.runner.start({ task: 't' })).reason).toBe('error');
    const done = await s.runner.retry({
      variables: { api_key: SECRET, region: 'eu' }
    });
    expect(done.reason).toBe('completed');
    // The user typed it for the planner: redaction (of kernel values) does not undo that.
    expect(
      s.client.generatingRequests[1].observation?.context?.variables
    ).toMatchObject({ api_key: SECRET, region: 'eu' });
    const state = saved(s.driver);
    expect(JSON.stringify(state)).not.toContain(SECRET);
    expect(state.contextVariables).toMatchObject({ region: 'eu' });
    expect(state.contextVariables).not.toHaveProperty('api_key');
  });

  it('are left out of every rewind checkpoint saved in the notebook, not only the run context', async () => {
    const missing = new PlannerError({
      kind: 'invalid',
      url: 'http://planner.test/generating',
      message: 'the planner lacks api_key',
      missingVariables: ['api_key']
    });
    const twoSteps: WorkflowTemplate = {
      name: 'Two',
      stages: [
        {
          id: 's1',
          name: 'Stage 1',
          steps: [
            { id: 'p1', name: 'Load' },
            { id: 'p2', name: 'Explore' }
          ]
        }
      ]
    };
    const s = setup({
      planning: [withTemplate(false, twoSteps), plan(true), plan(true)],
      generating: [missing, [text('ran')]]
    });
    expect((await s.runner.start({ task: 't' })).reason).toBe('error');
    const done = await s.runner.retry({
      variables: { api_key: SECRET, region: 'eu' }
    });
    expect(done.reason).toBe('completed');
    const state = saved(s.driver);
    // Step p2 began after the retry: its checkpoint was taken with the typed values.
    const p2 = state.rewind?.checkpoints.find(c => c.stepId === 'p2');
    expect(p2?.contextVariables).toMatchObject({ region: 'eu' });
    expect(JSON.stringify(state)).not.toContain(SECRET);
  });

  it("are left out of the planner service's saved state, where a dialect keeps the server's echo of them", async () => {
    const missing = new PlannerError({
      kind: 'invalid',
      url: 'http://planner.test/v1/actions',
      message: 'the planner lacks api_key',
      missingVariables: ['api_key']
    });
    const s = setup({
      planning: [withTemplate(false), plan(true)],
      generating: [missing, [text('ran')]]
    });
    // A v1 server echoes the whole state, variables included, and its adapter saves that echo.
    let echoed: Record<string, unknown> = {};
    Object.assign(s.client, {
      saveState: () => ({ dialect: 'v1', state: { variables: echoed } }),
      restoreState: () => undefined
    });
    expect((await s.runner.start({ task: 't' })).reason).toBe('error');
    echoed = { api_key: SECRET, region: 'eu' };
    const done = await s.runner.retry({
      variables: { api_key: SECRET, region: 'eu' }
    });
    expect(done.reason).toBe('completed');
    const state = saved(s.driver);
    expect(state.planner).toEqual({
      dialect: 'v1',
      state: { variables: { region: 'eu' } }
    });
    expect(JSON.stringify(state)).not.toContain(SECRET);
  });
});
