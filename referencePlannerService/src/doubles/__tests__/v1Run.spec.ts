/**
 * Runs of the engine's WorkflowRunner through the v1 adapter against the v1 double over HTTP: what
 * the engine does around the adapter (a template left in the notebook, a behavior the user skips).
 */
import { DEFAULT_SETTINGS, WorkflowRunner } from '../../../../src/engine';
import type {
  BehaviorDecision,
  IBehaviorApproval,
  IRunSettings
} from '../../../../src/engine';
import { FakeNotebookDriver } from '../../../../src/engine/testing';
import { createBrowserTransport } from '../../../../src/protocol';
import { V1Adapter } from '../../../../src/protocol/dialects';
import type { IDialectAdapter } from '../../../../src/protocol/dialects';
import type { IRunningDoubleServer } from '../http';
import { startV1Double } from '../v1';

// The v1 adapter saves a copy of its state.
globalThis.structuredClone ??= <T>(value: T): T =>
  JSON.parse(JSON.stringify(value)) as T;

interface IActionsBody {
  stage_id: string;
  step_index: string;
  state: {
    toDoList: string[];
    variables: Record<string, unknown>;
    effect: { current: string[]; history: string[] };
  };
}

/** A dslc planner's whole run: one template, one step, done at once. */
const dslcPlanner: IDialectAdapter = {
  planning: async () => ({
    targetAchieved: true,
    context_update: {
      workflow_update: {
        workflowTemplate: {
          name: 'Sales',
          stages: [
            {
              id: 'load',
              name: 'Load',
              steps: [{ id: 'read_csv', name: 'Read' }]
            }
          ]
        }
      }
    }
  }),
  generating: () => {
    throw new Error('not asked');
  }
};

describe('the engine with the v1 adapter against the v1 double', () => {
  let server: IRunningDoubleServer;

  afterEach(async () => {
    await server?.close();
  });

  function runner(
    driver: FakeNotebookDriver,
    client: IDialectAdapter,
    overrides: Partial<IRunSettings> = {},
    approve?: (request: IBehaviorApproval) => Promise<BehaviorDecision>
  ): WorkflowRunner {
    const settings: IRunSettings = {
      ...DEFAULT_SETTINGS,
      baseUrl: server.url,
      maxExecutionSteps: 4,
      autoAcceptWorkflowUpdates: true,
      ...overrides
    };
    return new WorkflowRunner({
      driver,
      client,
      settings: () => settings,
      hooks: approve ? { approveBehavior: approve } : {}
    });
  }

  const task = {
    task: 'Predict next month’s revenue per region',
    dataFiles: ['data/sales.csv']
  };

  const actionsBodies = () =>
    server
      .requests()
      .filter(r => r.path === '/v1/actions')
      .map(r => ({ ...(r.body as IActionsBody), status: r.status }));

  it.each(['reflection', 'generation'] as const)(
    'starts a new run at the entry step when the notebook holds a dslc planner’s template (%s start mode)',
    async startMode => {
      server = await startV1Double({ port: 0, log: null, lineDelayMs: 0 });
      const driver = new FakeNotebookDriver();
      driver.onExec = () => ({ status: 'ok', output: "['month', 'region']\n" });
      await runner(driver, dslcPlanner).start(task);
      expect(driver.savedState).toMatchObject({
        progress: { template: { stages: [{ id: 'load' }] } }
      });
      const transport = createBrowserTransport({ baseUrl: server.url });
      await runner(driver, new V1Adapter({ transport }), {
        startMode
      }).start(task);
      const sent = actionsBodies();
      expect(sent[0]).toMatchObject({
        stage_id: 'chapter_0_planning',
        status: 200
      });
      // No request for a stage the server does not know ("Stage load not found").
      expect(sent.every(body => body.stage_id !== 'load')).toBe(true);
      expect(sent.every(body => body.status === 200)).toBe(true);
    }
  );

  it('asks the server again, with the same state and effect, for a behavior the user skipped', async () => {
    server = await startV1Double({ port: 0, log: null, lineDelayMs: 0 });
    const driver = new FakeNotebookDriver();
    driver.onExec = () => ({ status: 'ok', output: "['month', 'region']\n" });
    const transport = createBrowserTransport({ baseUrl: server.url });
    let asked = 0;
    // The second behavior that runs code is skipped, every other one approved.
    const approve = async (): Promise<BehaviorDecision> =>
      ++asked === 2 ? 'skip' : 'run';
    await runner(
      driver,
      new V1Adapter({ transport }),
      { interactive: true, maxExecutionSteps: 8 },
      approve
    ).start(task);
    expect(asked).toBeGreaterThan(2);
    const paths = server.requests().map(r => r.path);
    const sent = actionsBodies();
    // The skipped behavior is the first whose code was not approved: the entry step's was (asked 1),
    // the first steps of chapter 1 add no code, and the data step's first behavior is asked next.
    const skippedIndex = 3;
    const [skipped, again] = [sent[skippedIndex], sent[skippedIndex + 1]];
    expect(skipped.step_index).toMatch(/section_2_data_structure_discovery$/);
    // Asked again as it was, with no reflection in between (which would judge code that never ran).
    const at = paths.flatMap((path, i) => (path === '/v1/actions' ? [i] : []));
    expect(paths.slice(at[skippedIndex], at[skippedIndex + 1])).toEqual([
      '/v1/actions'
    ]);
    expect(again.step_index).toBe(skipped.step_index);
    expect(again.state.toDoList).toEqual(skipped.state.toDoList);
    expect(again.state.effect).toEqual(skipped.state.effect);
    expect(
      sent.flatMap(body => body.state.effect.current).join('\n')
    ).not.toContain('skipped by the user');
  });
});
