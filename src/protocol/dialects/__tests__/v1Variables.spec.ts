/**
 * The variables a v1 server says it misses (docs/dialects.md#v1-loop): the step stops for them, the
 * user's values are sent once set, and the list is read from a text in one pass.
 */

import type { GeneratingEvent } from '../../actionStream';
import { V1Adapter } from '../v1/adapter';
import { fullStepIndex, missingVariableNames, problemName } from '../v1/state';
import { collect, FakeTransport, json, ndjson } from './fakeTransport';
import {
  actions,
  header,
  oneAddStream,
  request,
  STAGE,
  STEP
} from './v1Fixtures';

describe('v1 adapter: missing variables', () => {
  it('does not mark a step complete when the server names missing variables', async () => {
    const transport = new FakeTransport(() =>
      ndjson([
        header,
        {
          action: {
            action: 'add',
            shotType: 'dialogue',
            content: "Step Design Workflow needs: ['user_goal']",
            state: {
              variables: {},
              toDoList: [],
              effect: { current: [], history: [] }
            }
          }
        }
      ])
    );
    const service = new V1Adapter({ transport });
    const empty = { variables: {} };
    await service.planning(request(STAGE, STEP, empty));
    const seen: GeneratingEvent[] = [];
    const run = (async () => {
      for await (const event of service.generating(
        request(STAGE, STEP, empty)
      )) {
        seen.push(event);
      }
    })();
    await expect(run).rejects.toThrow(/variables missing: user_goal/);
    await expect(run).rejects.toMatchObject({
      missingVariables: ['user_goal']
    });
    expect(actions(seen)).toHaveLength(1);
    // A retry asks planning what comes next: the step starts again instead of a reflection.
    const retry = await service.planning(
      request(STAGE, STEP, {
        feedback: true,
        variables: { problem_description: 'goal' }
      })
    );
    expect(retry.targetAchieved).toBe(false);
    expect(transport.paths()).toEqual(['POST v1/actions']);
    await collect(service.generating(request(STAGE, STEP))).catch(
      () => undefined
    );
    const second = transport.bodies('v1/actions')[1].state as Record<
      string,
      Record<string, unknown>
    >;
    expect(second.variables.user_goal).toBe('goal');
  });

  it('still finds missing variables when the step is retried after its first request failed', async () => {
    let calls = 0;
    const transport = new FakeTransport(req => {
      if (req.path === 'v1/reflection') {
        return json({ status: 'received', targetAchieved: true, state: {} });
      }
      calls++;
      return calls === 1
        ? json({ detail: 'Sequence for section section_2_x not found' }, 404)
        : ndjson([
            header,
            {
              action: {
                action: 'add',
                shotType: 'dialogue',
                content: "Step Data Structure needs: ['csv_file_path']",
                state: { variables: {}, toDoList: [] }
              }
            }
          ]);
    });
    const service = new V1Adapter({ transport });
    await service.planning(request(STAGE, STEP));
    await expect(
      collect(service.generating(request(STAGE, STEP)))
    ).rejects.toThrow(/no details returned/);
    // Retry resends the request: the step still has not run.
    await expect(
      collect(service.generating(request(STAGE, STEP)))
    ).rejects.toMatchObject({ missingVariables: ['csv_file_path'] });
  });

  it('sends the variables the server asked for once the user has set them', async () => {
    let calls = 0;
    const transport = new FakeTransport(() => {
      calls++;
      return calls === 1
        ? ndjson([
            header,
            {
              action: {
                action: 'add',
                shotType: 'dialogue',
                content:
                  "Step Train needs: ['column_names', 'target_variable']",
                state: { variables: {}, toDoList: [] }
              }
            }
          ])
        : oneAddStream(['next'], 'ok');
    });
    const service = new V1Adapter({ transport });
    await expect(
      collect(service.generating(request(STAGE, STEP)))
    ).rejects.toMatchObject({
      missingVariables: ['column_names', 'target_variable']
    });
    // "Set Variables…" puts the values among the run's variables; Retry resends the request, here
    // after a reload.
    const restored = new V1Adapter({ transport });
    restored.restoreState(JSON.parse(JSON.stringify(service.saveState())));
    await collect(
      restored.generating(
        request(STAGE, STEP, {
          variables: {
            problem_description: 'Predict revenue',
            column_names: "['month', 'revenue']",
            target_variable: 'revenue',
            sales_df: 'DataFrame(240×4)'
          }
        })
      )
    );
    const sent = transport.bodies('v1/actions')[1].state as Record<
      string,
      Record<string, unknown>
    >;
    expect(sent.variables).toMatchObject({
      column_names: "['month', 'revenue']",
      target_variable: 'revenue'
    });
    expect(sent.variables.sales_df).toBeUndefined();
  });

  it.each([
    "Missing: ['user_goal', 'problem_description']",
    "Step Design Workflow: ['user_goal', 'problem_description'].",
    "Action 'DesignWorkflow' 缺少必需变量: ['user_goal', 'problem_description']"
  ])(
    'stops a step whose first answer ends with the list of names its state lacks, whatever the words before it: %s',
    async content => {
      // DIALECTS.md §2.6/§2.7 item 8: one add ending with a Python-style list, toDoList still [].
      const transport = new FakeTransport(() =>
        ndjson([
          header,
          {
            action: {
              action: 'add',
              shotType: 'dialogue',
              content,
              state: {
                variables: { problem_name: 'x' },
                toDoList: [],
                effect: { current: [], history: [] }
              }
            }
          }
        ])
      );
      const service = new V1Adapter({ transport });
      await service.planning(request(STAGE, STEP, { variables: {} }));
      await expect(
        collect(service.generating(request(STAGE, STEP, { variables: {} })))
      ).rejects.toMatchObject({
        missingVariables: ['user_goal', 'problem_description']
      });
    }
  );

  it('warns, and goes on, when a later handler of the step is missing variables (the server drops that event)', async () => {
    // The server pops the event before checking its handler's variables, says what is missing, and
    // the chain goes on (spec §2.6): the step is not stopped, but the user is told what was skipped.
    let call = 0;
    const transport = new FakeTransport(req => {
      if (req.path === 'v1/reflection') {
        return json({ targetAchieved: false });
      }
      call++;
      return call === 1
        ? oneAddStream(['analyze'], 'Looking at the data.')
        : oneAddStream(
            [],
            "事件处理器 'analyze' 缺少必需变量: ['top_5_lines', 'eda_summary']"
          );
    });
    const service = new V1Adapter({ transport });
    await service.planning(request(STAGE, STEP));
    await collect(service.generating(request(STAGE, STEP)));
    await expect(
      service.planning(request(STAGE, STEP, { feedback: true }))
    ).resolves.toMatchObject({ targetAchieved: false });
    const second = await collect(service.generating(request(STAGE, STEP)));
    expect(
      second.filter(e => e.kind === 'warning').map(e => e.message)
    ).toEqual([
      expect.stringMatching(
        /skipped part of step section_2_data_structure_discovery \(variables missing: top_5_lines, eda_summary\)/
      )
    ]);
    // The step goes on: the server is asked for its verdict, the step is not restarted.
    await service.planning(request(STAGE, STEP, { feedback: true }));
    expect(
      transport.paths().filter(p => p === 'POST v1/reflection')
    ).toHaveLength(2);
    // A list of what are not variable names is no such answer, nor a list of names the state
    // already has.
    for (const content of [
      "Handler analyze cannot run: the output of the last cell is missing ['effect.current']",
      "Step X needs: ['user_goal']"
    ]) {
      const listing = new V1Adapter({
        transport: new FakeTransport(() => oneAddStream([], content))
      });
      await listing.planning(request(STAGE, STEP));
      await expect(
        collect(listing.generating(request(STAGE, STEP)))
      ).resolves.toBeDefined();
      await expect(
        collect(listing.generating(request(STAGE, STEP)))
      ).resolves.toBeDefined();
    }
  });

  it('makes a problem_name of the task’s first real sentence, never nothing', () => {
    expect(problemName('1. Load sales.csv\n2. Predict revenue')).toBe(
      'Load sales.csv'
    );
    expect(problemName('！预测销售额。再解释')).toBe('预测销售额');
    expect(problemName('Forecast revenue\r\nper region')).toBe(
      'Forecast revenue'
    );
    expect(problemName('Forecast revenue\rper region')).toBe(
      'Forecast revenue'
    );
    expect(problemName('?!')).toBe('?!');
    expect(problemName('  ')).toBeNull();
    expect(problemName('数'.repeat(80))).toBe(`${'数'.repeat(60)}…`);
  });

  it('finds the missing names at the end of a text', () => {
    expect(missingVariableNames("needs ['a', 'b']")).toEqual(['a', 'b']);
    expect(missingVariableNames('needs ["a"].')).toEqual(['a']);
    expect(missingVariableNames("Missing: ['user_goal']")).toEqual([
      'user_goal'
    ]);
    expect(missingVariableNames("缺少必需变量: ['problem_name'] 。")).toEqual([
      'problem_name'
    ]);
    expect(missingVariableNames("needs ['a', 'b',]")).toEqual(['a', 'b']);
    expect(missingVariableNames('no list [here]')).toBeNull();
    expect(missingVariableNames('an empty list []')).toBeNull();
    expect(missingVariableNames("['a'] and more")).toBeNull();
    // Names the server keeps variables under, not paths or phrases.
    expect(missingVariableNames("is missing ['effect.current']")).toBeNull();
    expect(missingVariableNames("['two words']")).toBeNull();
    expect(missingVariableNames('plain text')).toBeNull();
    expect(fullStepIndex('c', 'c_s')).toBe('c_s');
    expect(fullStepIndex('c', 's')).toBe('c_s');
  });

  it('reads a 10 kB adversarial answer to its end instead of backtracking without bound', () => {
    // Each quoted item followed by two spaces tripled the old pattern's work: 95 characters took 3 s.
    const items = "'a'  ".repeat(2000);
    const started = performance.now();
    expect(missingVariableNames(`Missing: [${items}x`)).toBeNull();
    expect(missingVariableNames(`Missing: [${items}]x`)).toBeNull();
    expect(
      missingVariableNames(`Missing: [${"'a', ".repeat(2000)}'b']`)
    ).toHaveLength(2001);
    // A bound far above a linear scan's few milliseconds; the speed itself is measured in bench/.
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
