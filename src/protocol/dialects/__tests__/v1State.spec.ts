import { progressUpdatesOf } from '../../schemas';
import { PlannerError } from '../../errors';
import type { GeneratingEvent } from '../../actionStream';
import { isRouteMissingError } from '../common';
import { V1Adapter } from '../v1/adapter';
import { fullStepIndex, missingVariableNames, problemName } from '../v1/state';
import {
  breaksAfter,
  collect,
  FakeTransport,
  json,
  ndjson,
  text
} from './fakeTransport';
import {
  actions,
  header,
  oneAddStream,
  request,
  STAGE,
  state,
  STEP
} from './v1Fixtures';

describe('v1 adapter: missing variables, errors and the stored state', () => {
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

  it.each([
    [
      404,
      { detail: 'Sequence for section section_2_x not found' },
      /planner failed in step section_2_x \(no details returned\)/
    ],
    [404, { detail: `Stage ${STAGE} not found` }, /does not know stage/],
    [
      400,
      { detail: 'Step s9 not found in stage c. Available steps: [a]' },
      /does not know step.*Available steps/
    ],
    [
      422,
      { detail: 'stage_id cannot be null' },
      /HTTP 422: stage_id cannot be null/
    ],
    [
      422,
      {
        detail: [
          {
            type: 'missing',
            loc: ['body', 'stage_id'],
            msg: 'Field required',
            input: null
          }
        ]
      },
      /HTTP 422: body.stage_id: Field required/
    ],
    [500, 'Internal Server Error', /HTTP 500: Internal Server Error/]
  ])(
    'turns HTTP %i from v1/actions into a clear error',
    async (status, body, message) => {
      const transport = new FakeTransport(() =>
        typeof body === 'string' ? text(body, status) : json(body, status)
      );
      const service = new V1Adapter({ transport });
      const error = await collect(
        service.generating(request(STAGE, STEP))
      ).catch(e => e);
      expect(error).toBeInstanceOf(PlannerError);
      expect(error.message).toMatch(message);
      expect(error.status).toBe(status);
      expect(isRouteMissingError(error)).toBe(false);
    }
  );

  it('marks a route-missing 404 so that detection can run again', async () => {
    const transport = new FakeTransport(() =>
      json({ detail: 'Not Found' }, 404)
    );
    const service = new V1Adapter({ transport });
    const error = await collect(service.generating(request(STAGE, STEP))).catch(
      e => e
    );
    expect(isRouteMissingError(error)).toBe(true);
  });

  it('rejects a reflection answer without a boolean targetAchieved', async () => {
    const transport = new FakeTransport(() => json({ status: 'received' }));
    const service = new V1Adapter({ transport });
    await expect(
      service.planning(request(STAGE, STEP, { feedback: true }))
    ).rejects.toThrow(/boolean "targetAchieved"/);
  });

  it('saves and restores the stored state; a cut-off answer restarts the step', async () => {
    let cut = false;
    const transport = new FakeTransport(req => {
      if (!cut) {
        return oneAddStream(['next'], 'a');
      }
      req.signal?.throwIfAborted();
      return ndjson([
        header,
        {
          action: {
            action: 'add',
            shotType: 'dialogue',
            content: 'a',
            state: state(['later'])
          }
        },
        {
          action: {
            action: 'add',
            shotType: 'dialogue',
            content: 'b',
            state: state(['later'])
          }
        }
      ]);
    });
    const service = new V1Adapter({ transport });
    await collect(service.generating(request(STAGE, STEP)));
    const saved = JSON.parse(JSON.stringify(service.saveState()));
    expect(saved).toMatchObject({
      dialect: 'v1',
      streamComplete: true,
      state: { toDoList: ['next'] }
    });

    const resumed = new V1Adapter({ transport });
    resumed.restoreState(saved);
    const answer = await resumed.planning(request(STAGE, STEP));
    expect(progressUpdatesOf(answer.context_update)[0]?.focus).toBe(
      'next: next'
    );
    expect(answer.behavior?.id).toBe(`${STEP}#b2`);

    // A consumer that stops reading leaves the answer incomplete.
    cut = true;
    for await (const event of resumed.generating(request(STAGE, STEP))) {
      expect(event.kind).toBe('action');
      break;
    }
    const partial = JSON.parse(JSON.stringify(resumed.saveState()));
    expect(partial.streamComplete).toBe(false);
    const third = new V1Adapter({ transport });
    third.restoreState(partial);
    const warned: string[] = [];
    await third.planning(request(STAGE, STEP), {
      onWarning: w => warned.push(w.message)
    });
    expect(warned[0]).toMatch(/cells may repeat/);
    await collect(third.generating(request(STAGE, STEP)));
    const last = transport.bodies('v1/actions').at(-1)?.state as Record<
      string,
      unknown
    >;
    expect(last.toDoList).toEqual([]);
    expect(last.variables).toMatchObject({ column_names: 'x' });

    third.resetState();
    expect(third.saveState().state).toEqual({});
  });

  it('restarts the step with a warning when the answer was cut off and the run resumes with feedback', async () => {
    // Every line carries the end-of-behavior toDoList: here [], so a reflection would say "done".
    const transport = new FakeTransport(req =>
      req.path === 'v1/reflection'
        ? json({ status: 'received', targetAchieved: true, state: {} })
        : ndjson([
            header,
            {
              action: {
                action: 'add',
                shotType: 'dialogue',
                content: 'a',
                state: state([])
              }
            },
            {
              action: {
                action: 'add',
                shotType: 'dialogue',
                content: 'b',
                state: state([])
              }
            }
          ])
    );
    const service = new V1Adapter({ transport });
    await service.planning(request(STAGE, STEP));
    for await (const event of service.generating(request(STAGE, STEP))) {
      expect(event.kind).toBe('action');
      break;
    }
    const resumed = new V1Adapter({ transport });
    resumed.restoreState(JSON.parse(JSON.stringify(service.saveState())));
    for (const adapter of [service, resumed]) {
      const warned: string[] = [];
      const answer = await adapter.planning(
        request(STAGE, STEP, { feedback: true }),
        { onWarning: w => warned.push(w.message) }
      );
      expect(answer.targetAchieved).toBe(false);
      expect(warned).toEqual([expect.stringMatching(/cells may repeat/)]);
    }
    expect(transport.paths()).toEqual(['POST v1/actions']);
    await collect(resumed.generating(request(STAGE, STEP)));
    const restarted = transport.bodies('v1/actions')[1].state as Record<
      string,
      unknown
    >;
    expect(restarted.toDoList).toEqual([]);
    expect(restarted.variables).toMatchObject({ column_names: 'x' });
  });

  it('warns that cells may repeat when a step is retried after its answer broke off', async () => {
    let calls = 0;
    const transport = new FakeTransport(() => {
      calls++;
      if (calls > 1) {
        return oneAddStream(['next'], 'again');
      }
      return breaksAfter([
        header,
        {
          action: {
            action: 'add',
            shotType: 'dialogue',
            content: 'a',
            state: state(['later'])
          }
        }
      ]);
    });
    const service = new V1Adapter({ transport });
    await service.planning(request(STAGE, STEP));
    await expect(
      collect(service.generating(request(STAGE, STEP)))
    ).rejects.toThrow(/network error/);
    const retried = await collect(service.generating(request(STAGE, STEP)));
    expect(
      retried.flatMap(e => (e.kind === 'warning' ? [e.message] : []))
    ).toEqual([expect.stringMatching(/cells may repeat/)]);
    expect(
      (transport.bodies('v1/actions')[1].state as Record<string, unknown>)
        .toDoList
    ).toEqual([]);
  });

  it('resends the same state, without a warning, when an answer breaks before its first action', async () => {
    let calls = 0;
    const transport = new FakeTransport(() => {
      calls++;
      if (calls === 1) {
        return oneAddStream(['next'], 'a');
      }
      if (calls > 2) {
        return oneAddStream(['later'], 'b');
      }
      return breaksAfter([header]);
    });
    const service = new V1Adapter({ transport });
    await collect(service.generating(request(STAGE, STEP)));
    await expect(
      collect(service.generating(request(STAGE, STEP)))
    ).rejects.toThrow(/network error/);
    const retried = await collect(service.generating(request(STAGE, STEP)));
    expect(retried.filter(e => e.kind === 'warning')).toEqual([]);
    const bodies = transport.bodies('v1/actions');
    expect((bodies[2].state as Record<string, unknown>).toDoList).toEqual([
      'next'
    ]);
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

  it('decides a step itself from the stored toDoList when v1/reflection fails', async () => {
    let behaviors = 0;
    const transport = new FakeTransport(req => {
      if (req.path === 'v1/reflection') {
        return json({ detail: 'Bad Gateway' }, 502);
      }
      behaviors++;
      return oneAddStream(
        behaviors === 1 ? ['after_exec'] : [],
        `b${behaviors}`
      );
    });
    const service = new V1Adapter({ transport });
    const warned: string[] = [];
    const options = {
      onWarning: (w: { message: string }) => warned.push(w.message)
    };
    await service.planning(request(STAGE, STEP));
    await collect(service.generating(request(STAGE, STEP)));
    const middle = await service.planning(
      request(STAGE, STEP, { feedback: true }),
      options
    );
    expect(middle.targetAchieved).toBe(false);
    expect(middle.behavior?.id).toBe(`${STEP}#b2`);
    await collect(service.generating(request(STAGE, STEP)));
    const end = await service.planning(
      request(STAGE, STEP, { feedback: true }),
      options
    );
    expect(end.targetAchieved).toBe(true);
    expect(transport.paths()).toEqual([
      'POST v1/actions',
      'POST v1/reflection',
      'POST v1/actions',
      'POST v1/reflection'
    ]);
    expect(warned).toEqual([
      expect.stringMatching(
        /v1\/reflection.*HTTP 502.*decided from the stored toDoList/
      ),
      expect.stringMatching(
        /v1\/reflection.*HTTP 502.*decided from the stored toDoList/
      )
    ]);
  });

  it('stops with a Retry when v1/reflection refuses the request, and lets detection run on a missing route', async () => {
    for (const [answer, needsAnswer, missing] of [
      [json({ detail: 'stage_id cannot be null' }, 422), true, false],
      [json({ detail: 'Not Found' }, 404), false, true]
    ] as const) {
      const transport = new FakeTransport(req =>
        req.path === 'v1/reflection' ? answer.clone() : oneAddStream([], 'a')
      );
      const service = new V1Adapter({ transport });
      await collect(service.generating(request(STAGE, STEP)));
      const error = await service
        .planning(request(STAGE, STEP, { feedback: true }))
        .catch(e => e);
      expect(error).toBeInstanceOf(PlannerError);
      expect(error.needsAnswer).toBe(needsAnswer);
      expect(isRouteMissingError(error)).toBe(missing);
    }
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

  it('uses header.next_step only for the stage whose header it is', async () => {
    const transport = new FakeTransport(() => oneAddStream([], 'a'));
    const service = new V1Adapter({ transport });
    await collect(service.generating(request(STAGE, STEP)));
    const same = await service.planning(request(STAGE, null));
    expect(same.context_update?.stage_steps_update).toEqual({
      stage_id: STAGE,
      steps: [{ id: 'section_3_x', name: 'section_3_x' }]
    });
    const warned: string[] = [];
    const other = await service.planning(
      request('chapter_2_data_cleaning', null),
      { onWarning: w => warned.push(w.message) }
    );
    expect(other.context_update?.stage_steps_update).toBeUndefined();
    expect(other.targetAchieved).toBe(true);
    expect(warned).toEqual([
      expect.stringContaining('chapter_2_data_cleaning')
    ]);
  });

  it('resets toDoList when a new step starts', async () => {
    const transport = new FakeTransport(() => oneAddStream(['pending'], 'a'));
    const service = new V1Adapter({ transport });
    await collect(service.generating(request(STAGE, STEP)));
    await service.planning(request(STAGE, `${STAGE}_section_3_x`));
    await collect(service.generating(request(STAGE, `${STAGE}_section_3_x`)));
    expect(
      (transport.bodies('v1/actions')[1].state as Record<string, unknown>)
        .toDoList
    ).toEqual([]);
  });

  it('stops with a Retry, instead of reflecting, when the server did not move (no state in the answer)', async () => {
    // A step handler that raised: the server sends one `error` line without a state. Reflecting on
    // the unchanged toDoList ([] at the step's start) would mark the step done with nothing run.
    const raised = ndjson([
      header,
      {
        action: {
          action: 'error',
          content: 'Error executing action: KeyError'
        }
      }
    ]);
    // The same as the server's `text` fallback line.
    const fallback = ndjson([
      header,
      { action: { action: 'text', content: 'Error executing action: boom' } }
    ]);
    // The last toDoList entry matches no handler: the answer is the header alone, again and again.
    const headerOnly = ndjson([header]);
    for (const [answer, expected] of [
      [raised, /planner reported an error: Error executing action: KeyError/],
      [fallback, /planner reported an error: Error executing action: boom/],
      [headerOnly, /no action/]
    ] as const) {
      const transport = new FakeTransport(() => answer.clone());
      const service = new V1Adapter({ transport });
      await service.planning(request(STAGE, STEP));
      const run = collect(service.generating(request(STAGE, STEP)));
      await expect(run).rejects.toThrow(expected);
      await expect(run).rejects.toMatchObject({ kind: 'invalid' });
      expect(transport.paths()).toEqual(['POST v1/actions']);
    }
    // `update_stage_steps` lines carry no state, yet such an answer moved the step on.
    const steps = new V1Adapter({
      transport: new FakeTransport(() =>
        ndjson([
          header,
          {
            action: {
              action: 'update_stage_steps',
              stage_id: STAGE,
              updated_steps: []
            }
          }
        ])
      )
    });
    await steps.planning(request(STAGE, STEP));
    await expect(
      collect(steps.generating(request(STAGE, STEP)))
    ).resolves.toBeDefined();
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
