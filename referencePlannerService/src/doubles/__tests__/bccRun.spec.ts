/**
 * Whole runs of the engine's WorkflowRunner through the bcc adapter against the bcc double over HTTP.
 * The in-memory notebook prints what the double's code would print: the step's completion marker.
 */
import {
  DEFAULT_SETTINGS,
  IRunFinished,
  WorkflowRunner
} from '../../../../src/engine';
import type { IExecResult, IRunSettings } from '../../../../src/engine';
import { FakeNotebookDriver } from '../../../../src/engine/testing';
import { createBrowserTransport } from '../../../../src/protocol';
import {
  BccAdapter,
  createDialectSelector
} from '../../../../src/protocol/dialects';
import type {
  DialectName,
  IDialectAdapter
} from '../../../../src/protocol/dialects';
import { withAdapter } from '../../../../src/protocol/dialects/__tests__/fakeDialects';
import { BCC_SCENARIOS, startBccDouble } from '../bcc';
import type { IRunningDoubleServer } from '../http';

/** The marker the double's second behavior of a step prints, assembled as its code assembles it. */
const MARKER_PRINT = /print\("BCC" \+ "(-DONE:\w+)"\)/;

interface IBccRun {
  finished: IRunFinished;
  runner: WorkflowRunner;
  /** `state.FSM.state` of every request the double received, in order. */
  states: string[];
  /** The step of every request that had one. */
  steps: string[];
}

/** The bcc adapter itself, or the selector that detects the dialect (`auto`, as the extension runs it). */
type ClientKind = 'bcc' | 'auto';

async function runAgainst(
  server: IRunningDoubleServer,
  overrides: Partial<IRunSettings> = {},
  kind: ClientKind = 'bcc'
): Promise<IBccRun> {
  const driver = new FakeNotebookDriver();
  driver.onExec = cell => {
    const marker = MARKER_PRINT.exec(cell.source);
    return {
      status: 'ok',
      output: marker ? `BCC${marker[1]}\n` : 'ok\n'
    } satisfies IExecResult;
  };
  const transport = createBrowserTransport({ baseUrl: server.url });
  const noDslc: IDialectAdapter = {
    planning: () => Promise.reject(new Error('not a dslc planner')),
    generating: () => {
      throw new Error('not a dslc planner');
    }
  };
  const client =
    kind === 'bcc'
      ? new BccAdapter({ transport })
      : createDialectSelector({
          protocol: 'auto',
          transport,
          dialects: withAdapter('dslc', noDslc),
          cache: new Map<string, DialectName>()
        });
  // Two behaviors per step: a run that starts over stops here instead of running on.
  const settings: IRunSettings = {
    ...DEFAULT_SETTINGS,
    baseUrl: server.url,
    maxExecutionSteps: 20,
    ...overrides
  };
  const runner = new WorkflowRunner({
    driver,
    client,
    settings: () => settings
  });
  const finished = await runner.start({
    task: 'Summarise revenue per region',
    dataFiles: ['data/sales.csv']
  });
  const bodies = server.requests().map(
    r =>
      r.body as {
        state: { FSM: { state: string } };
        observation: { location: { current: { step_id: string | null } } };
      }
  );
  return {
    finished,
    runner,
    states: bodies.map(body => body.state.FSM.state),
    steps: [
      ...new Set(
        bodies.flatMap(body => body.observation.location.current.step_id ?? [])
      )
    ]
  };
}

describe('the engine with the bcc adapter against the bcc double', () => {
  let server: IRunningDoubleServer;

  afterEach(async () => {
    await server?.close();
  });

  async function start(scenario: string, strictBody = false): Promise<void> {
    server = await startBccDouble({
      port: 0,
      log: null,
      scenario,
      strictBody,
      lineDelayMs: 0
    });
  }

  it.each(BCC_SCENARIOS.filter(s => !s.shortLastStage).map(s => s.name))(
    'scenario %s: runs both stages, every step, and completes the workflow once',
    async scenario => {
      await start(scenario);
      const { finished, runner, states, steps } = await runAgainst(server);
      expect(finished.reason).toBe('completed');
      expect(runner.snapshot.state).toBe('WORKFLOW_COMPLETED');
      expect(states.filter(state => state === 'IDLE')).toHaveLength(1);
      expect(steps).toEqual([
        'load_sales',
        'check_quality',
        'revenue_by_region',
        'monthly_trend'
      ]);
    }
  );

  it('runs the same with the generation start mode, which does not apply to bcc', async () => {
    await start('recorded');
    const { finished, states, steps } = await runAgainst(server, {
      startMode: 'generation'
    });
    expect(finished.reason).toBe('completed');
    expect(states.filter(state => state === 'IDLE')).toHaveLength(1);
    expect(steps).toEqual([
      'load_sales',
      'check_quality',
      'revenue_by_region',
      'monthly_trend'
    ]);
    // Each behavior is planned before it is generated.
    states.forEach((state, index) => {
      if (state === 'BEHAVIOR_RUNNING') {
        expect(states[index - 1]).toBe('STEP_RUNNING');
      }
    });
  });

  it('ends the run when the last stage is complete with a step left, without planning a new workflow', async () => {
    await start('short-last-stage');
    const { finished, runner, states, steps } = await runAgainst(server);
    expect(finished.reason).toBe('completed');
    expect(runner.snapshot.state).toBe('WORKFLOW_COMPLETED');
    expect(states.filter(state => state === 'IDLE')).toHaveLength(1);
    expect(steps).toEqual(['load_sales', 'check_quality', 'revenue_by_region']);
    expect(states.at(-1)).toBe('STEP_COMPLETED');
  });

  it('detects a strict server through the bcc body after the superset gets 422, and runs it to the end', async () => {
    await start('recorded', true);
    const { finished, states, steps } = await runAgainst(server, {}, 'auto');
    expect(finished.reason).toBe('completed');
    const statuses = server.requests().map(r => r.status);
    // Only the superset probe was refused; every later request was a bcc body.
    expect(statuses[0]).toBe(422);
    expect(statuses.slice(1).every(status => status === 200)).toBe(true);
    expect(states.slice(0, 3)).toEqual(['IDLE', 'IDLE', 'STAGE_RUNNING']);
    expect(steps).toEqual([
      'load_sales',
      'check_quality',
      'revenue_by_region',
      'monthly_trend'
    ]);
  });
});
