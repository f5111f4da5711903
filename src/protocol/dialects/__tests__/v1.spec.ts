/**
 * The v1 adapter's requests (docs/dialects.md#v1-request): the entry step, the task variables the
 * server requires, the step index it knows, and the body as the server reads it.
 */

import { V1Adapter } from '../v1/adapter';
import { collect, FakeTransport, json, ndjson } from './fakeTransport';
import {
  actions,
  header,
  oneAddStream,
  request,
  STAGE,
  state,
  STEP
} from './v1Fixtures';

describe('v1 adapter: its requests', () => {
  it('starts a run without a template at the entry step, locally', async () => {
    const transport = new FakeTransport(() => json({}));
    const service = new V1Adapter({ transport });
    const answer = await service.planning(request(null, null));
    expect(transport.requests).toHaveLength(0);
    expect(answer.targetAchieved).toBe(false);
    const template = answer.context_update?.workflow_update?.workflowTemplate;
    expect(template?.stages[0].id).toBe('chapter_0_planning');
    expect(template?.stages[0].steps[0].id).toBe('section_1_design_workflow');
  });

  it('answers a step start locally with a made-up behavior id and sends the full step index', async () => {
    const transport = new FakeTransport(() =>
      ndjson([
        header,
        {
          action: {
            action: 'add',
            shotType: 'action',
            content: 'print(1)',
            state: state(['read_columns'])
          }
        },
        {
          action: {
            action: 'exec',
            codecell_id: 'lastAddedCellId',
            auto_debug: false,
            state: state(['read_columns'])
          }
        },
        {
          action: {
            action: 'set_effect_as_thinking',
            thinkingText: 'columns listed',
            state: state(['read_columns'])
          }
        },
        {
          action: {
            action: 'next_event',
            state: state(['read_columns'], { current_workflow: { stages: [] } })
          }
        }
      ])
    );
    const service = new V1Adapter({ transport });
    const start = await service.planning(request(STAGE, 'section_2_x'));
    expect(start.targetAchieved).toBe(false);
    expect(start.behavior?.id).toBe('section_2_x#b1');
    expect(transport.requests).toHaveLength(0);

    const events = await collect(
      service.generating(request(STAGE, STEP, { current: ['old output'] }))
    );
    const sent = transport.bodies('v1/actions')[0];
    expect(sent.stage_id).toBe(STAGE);
    expect(sent.step_index).toBe(STEP);
    expect(sent.stream).toBe(true);
    expect(sent).not.toHaveProperty('observation');
    // The task variables, never the kernel's summaries (`sales_df` only shapes context_description).
    expect(sent.state).toEqual({
      variables: {
        user_goal: 'Predict revenue',
        problem_description: 'Predict revenue',
        csv_file_path: 'data/sales.csv',
        problem_name: 'Predict revenue',
        context_description: 'data/sales.csv, 240 x 4'
      },
      toDoList: [],
      effect: { current: ['old output'], history: [] }
    });
    expect(actions(events)).toEqual([
      { action: 'add', shot_type: 'action', content: 'print(1)' },
      {
        action: 'exec',
        codecell_id: 'lastAddedCellId',
        need_output: true,
        auto_debug: false,
        keep_debug_button_visible: false
      },
      { action: 'set_effect_as_thinking', thinking_text: 'columns listed' }
    ]);
    expect(events.map(e => (e.kind === 'action' ? e.index : -1))).toEqual([
      0, 1, 2
    ]);
    // The last state wins; its effect is the request's echo and is dropped.
    expect(service.serverState).toEqual({
      variables: state([]).variables,
      toDoList: ['read_columns'],
      current_workflow: { stages: [] }
    });
  });

  it('gives the entry step every variable the server requires of it, from the task alone', async () => {
    // The server's DesignWorkflow requires problem_name, user_goal, problem_description and
    // context_description (each non-empty) before it runs anything, and titles the notebook
    // "<problem_name>: Data Science Analysis".
    const transport = new FakeTransport(() => oneAddStream(['next']));
    const service = new V1Adapter({ transport });
    const sentFor = async (task: string, files: string[] = []) => {
      const variables: Record<string, unknown> = { problem_description: task };
      if (files.length > 0) {
        variables.csv_file_path = files[0];
        variables.data_files = files;
      }
      await collect(
        service.generating(
          request('chapter_0_planning', 'section_1_design_workflow', {
            variables
          })
        )
      );
      service.resetState();
      return (
        transport.bodies('v1/actions').at(-1)?.state as {
          variables: Record<string, unknown>;
        }
      ).variables;
    };
    expect(
      await sentFor('预测下个月每个地区的销售额。再解释各地区的差异。')
    ).toEqual({
      user_goal: '预测下个月每个地区的销售额。再解释各地区的差异。',
      problem_description: '预测下个月每个地区的销售额。再解释各地区的差异。',
      problem_name: '预测下个月每个地区的销售额',
      context_description: 'No data file was given.'
    });
    const long = await sentFor(
      'Find out which of the marketing channels in the attached spreadsheet bring customers who stay longest\nand why',
      ['data/channels.csv']
    );
    expect(long.problem_name).toBe(
      'Find out which of the marketing channels in the attached…'
    );
    expect(long.context_description).toBe('data/channels.csv');
  });

  it('describes the data as context_description (file, rows x columns) while the user gives none', async () => {
    const transport = new FakeTransport(() => oneAddStream(['next']));
    const service = new V1Adapter({ transport });
    const sent = async (variables: Record<string, unknown>) => {
      await collect(service.generating(request(STAGE, STEP, { variables })));
      const bodies = transport.bodies('v1/actions');
      return (
        bodies[bodies.length - 1].state as {
          variables: Record<string, unknown>;
        }
      ).variables.context_description;
    };
    // Before the data is loaded: the file; once a DataFrame is in the kernel: its shape too.
    expect(
      await sent({ problem_description: 'p', csv_file_path: 'data/sales.csv' })
    ).toBe('data/sales.csv');
    expect(
      await sent({
        problem_description: 'p',
        csv_file_path: 'data/sales.csv',
        sales_df: 'DataFrame(240×4)'
      })
    ).toBe('data/sales.csv, 240 x 4');
    // One the user gave is sent as it is.
    const own = new V1Adapter({ transport });
    await collect(
      own.generating(
        request(STAGE, STEP, {
          variables: {
            csv_file_path: 'a.csv',
            context_description: 'Monthly sales by region'
          }
        })
      )
    );
    const bodies = transport.bodies('v1/actions');
    expect(
      (
        bodies[bodies.length - 1].state as {
          variables: Record<string, unknown>;
        }
      ).variables.context_description
    ).toBe('Monthly sales by region');
  });

  it('sends the bare section id from then on when the server knows only that form (400 "not found in stage")', async () => {
    // Servers before branch 2025-9-27 check step_index against their bare section ids only.
    const section = 'section_2_data_structure_discovery';
    const transport = new FakeTransport(request =>
      (request.body as { step_index: string }).step_index === section
        ? oneAddStream(['next'])
        : json(
            {
              detail: `Step ${STEP} not found in stage ${STAGE}. Available steps: ['section_1_workflow_initialization', '${section}']`
            },
            400
          )
    );
    const service = new V1Adapter({ transport });
    await service.planning(request(STAGE, STEP));
    const events = await collect(service.generating(request(STAGE, STEP)));
    expect(actions(events).map(a => a.action)).toEqual(['add']);
    await collect(service.generating(request(STAGE, STEP)));
    expect(transport.bodies('v1/actions').map(body => body.step_index)).toEqual(
      [STEP, section, section]
    );
  });

  it('measures the body it sends, without the kernel summaries it never sends', async () => {
    const transport = new FakeTransport(() => oneAddStream(['next'], 'a'));
    const service = new V1Adapter({ transport });
    const summaries: Record<string, unknown> = {
      problem_description: 'Predict revenue',
      csv_file_path: 'data/sales.csv'
    };
    for (let i = 0; i < 40; i++) {
      summaries[`df_${i}`] = `DataFrame(1460×79) ${'x'.repeat(150)}`;
    }
    const output = 'col,'.repeat(3000);
    const seed = request(STAGE, STEP, {
      current: [output],
      variables: summaries
    });
    const measured = service.sentSize(seed);
    await collect(service.generating(seed));
    const sent = JSON.stringify(transport.bodies('v1/actions')[0]).length;
    expect(measured).toBe(sent);
    expect(measured).toBeLessThan(JSON.stringify(seed).length - 6000);
  });

  it('keeps effect.current one entry per exec: the context-trim notice is not sent', async () => {
    const transport = new FakeTransport(req =>
      req.path === 'v1/reflection'
        ? json({ status: 'received', targetAchieved: false, state: {} })
        : oneAddStream(['next'])
    );
    const notice =
      '[context trimmed: 3 history items dropped to fit 18569 characters]';
    const service = new V1Adapter({ transport });
    await service.planning(request(STAGE, STEP));
    await collect(
      service.generating(
        request(STAGE, STEP, {
          current: [notice],
          history: ['older output', notice]
        })
      )
    );
    await service.planning(
      request(STAGE, STEP, {
        feedback: true,
        current: ["['month', 'region']\n", notice]
      })
    );
    expect((transport.bodies('v1/actions')[0].state as any).effect).toEqual({
      current: [],
      history: ['older output']
    });
    expect((transport.bodies('v1/reflection')[0].state as any).effect).toEqual({
      current: ["['month', 'region']\n"],
      history: []
    });
  });

  it('starts a new run at the entry step even when the notebook holds another planner’s template', async () => {
    const transport = new FakeTransport(() => oneAddStream(['next']));
    const service = new V1Adapter({ transport });
    // The runner resets the adapter when a run starts, then installs the last run's template
    // (here a dslc planner's), whose first stage the v1 server does not know.
    service.resetState();
    const start = await service.planning(request('load', 'read_csv'));
    expect(transport.requests).toHaveLength(0);
    const template = start.context_update?.workflow_update;
    expect(template?.workflowTemplate.stages).toMatchObject([
      { id: 'chapter_0_planning', steps: [{ id: 'section_1_design_workflow' }] }
    ]);
    expect(template?.provisional).toBe(true);
    // Once at the entry step, the run goes on as usual.
    const entry = await service.planning(
      request('chapter_0_planning', 'section_1_design_workflow')
    );
    expect(entry.context_update?.workflow_update).toBeUndefined();
    // A resumed run keeps its template: the entry step already ran.
    const resumed = new V1Adapter({ transport });
    resumed.restoreState(service.saveState());
    const resumedStart = await resumed.planning(request(STAGE, STEP));
    expect(resumedStart.context_update?.workflow_update).toBeUndefined();
  });
});
