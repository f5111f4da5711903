/**
 * What the v1 adapter makes of the server's answers (docs/dialects.md#v1-stream): the stream's actions
 * and state, the reflection after a behavior, and an answer that moved nothing.
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
  STEP,
  warnings
} from './v1Fixtures';

describe('v1 adapter: its answers', () => {
  it('asks v1/reflection after a behavior with the exec outputs in effect.current', async () => {
    let achieved = false;
    const transport = new FakeTransport(req =>
      req.path === 'v1/reflection'
        ? json({
            status: 'received',
            message: 'Feedback processed',
            targetAchieved: achieved,
            state: {}
          })
        : oneAddStream(['b', 'a'])
    );
    const service = new V1Adapter({ transport });
    await service.planning(request(STAGE, STEP));
    await collect(service.generating(request(STAGE, STEP)));
    const again = await service.planning(
      request(STAGE, STEP, {
        feedback: true,
        current: [
          "['month', 'region']\n",
          '⚠️ WARN: something',
          'next_event: x'
        ]
      })
    );
    expect(again.targetAchieved).toBe(false);
    expect(again.transition?.continue_behaviors).toBe(true);
    expect(again.behavior?.id).toBe(`${STEP}#b2`);
    expect(again.context_update?.progress_update).toEqual({
      level: 'behaviors',
      focus: 'next: a'
    });
    const reflection = transport.bodies('v1/reflection')[0];
    expect(reflection.step_index).toBe(STEP);
    expect((reflection.state as Record<string, unknown>).effect).toEqual({
      current: ["['month', 'region']\n"],
      history: []
    });
    expect((reflection.state as Record<string, unknown>).toDoList).toEqual([
      'b',
      'a'
    ]);

    // The next behavior resumes with the stored state.
    await collect(
      service.generating(request(STAGE, STEP, { current: ['out'] }))
    );
    expect(
      (transport.bodies('v1/actions')[1].state as Record<string, unknown>)
        .toDoList
    ).toEqual(['b', 'a']);

    achieved = true;
    const done = await service.planning(
      request(STAGE, STEP, { feedback: true })
    );
    expect(done.targetAchieved).toBe(true);
  });

  it('maps update_workflow, update_stage_steps and the declared or fallback actions', async () => {
    const template = {
      workflowTemplate: {
        name: 'Sales',
        stages: [
          {
            id: STAGE,
            title: 'Data existence',
            description: 'd',
            steps: [
              {
                id: STEP,
                step_id: 'section_2_data_structure_discovery',
                title: 'Structure',
                description: 's'
              }
            ]
          }
        ]
      },
      nextStageId: STAGE
    };
    const transport = new FakeTransport(req =>
      req.path === 'v1/reflection'
        ? json({ targetAchieved: true, state: {} })
        : ndjson([
            header,
            { other: 1 },
            {
              action: {
                action: 'is_thinking',
                shotType: 'thinking',
                textArray: ['a'],
                agentName: '',
                customText: null,
                state: state([])
              }
            },
            { action: { action: 'finish_thinking', state: state([]) } },
            {
              action: {
                action: 'new_chapter',
                shotType: 'dialogue',
                content: 'Ch',
                state: state([])
              }
            },
            {
              action: {
                action: 'add',
                shotType: 'dialogue',
                content: 'x',
                delay: 50,
                metadata: { is_step: true },
                state: state([])
              }
            },
            {
              action: { action: 'update_title', title: 'T', state: state([]) }
            },
            {
              action: {
                action: 'update_stage_steps',
                stage_id: STAGE,
                updated_steps: [
                  {
                    id: STEP,
                    step_id: 's2',
                    name: 'Structure',
                    description: 'd',
                    status: 'completed'
                  }
                ],
                next_step_id: STEP
              }
            },
            {
              action: {
                action: 'command_call',
                command: '/image chart',
                command_id: 'c1',
                state: state([])
              }
            },
            {
              action: {
                action: 'comunicate_with_agent',
                agent_name: 'Critic',
                content: 'ok?',
                state: state([])
              }
            },
            {
              action: {
                action: 'error',
                error_message: 'invalid event: [x]',
                state: state([])
              }
            },
            {
              action: {
                action: 'text',
                content: 'Error executing action: boom'
              }
            },
            {
              action: {
                action: 'error',
                content: 'Error executing action: bad'
              }
            },
            'not json',
            {
              action: {
                action: 'update_workflow',
                updated_workflow: template,
                state: state([])
              }
            }
          ])
    );
    const logs: string[] = [];
    const service = new V1Adapter({ transport, log: m => logs.push(m) });
    const events = await collect(service.generating(request(STAGE, STEP)));
    const got = actions(events);
    expect(got.map(a => a.action)).toEqual([
      'is_thinking',
      'finish_thinking',
      'new_chapter',
      'add',
      'update_title',
      'update_stage_steps',
      'add',
      'add',
      'update_workflow'
    ]);
    expect(got[0]).toMatchObject({ text_array: ['a'], agent_name: '' });
    expect(got[0]).not.toHaveProperty('custom_text');
    expect(got[3]).toEqual({
      action: 'add',
      shot_type: 'dialogue',
      content: 'x',
      metadata: { is_step: true }
    });
    expect(got[5]).toMatchObject({
      stage_id: STAGE,
      updated_steps: [{ id: STEP, name: 'Structure', status: 'completed' }]
    });
    expect(got[5]).not.toHaveProperty('next_step_id');
    expect(got[6]).toMatchObject({
      content: '(planner requested: `/image chart`)'
    });
    expect(got[7]).toMatchObject({ content: '**Critic:** ok?' });
    expect(got[8]).toMatchObject({
      updated_workflow: {
        name: 'Sales',
        stages: [
          {
            id: STAGE,
            name: 'Data existence',
            steps: [{ id: STEP, name: 'Structure' }]
          }
        ]
      }
    });
    const warned = warnings(events);
    expect(warned).toHaveLength(3);
    expect(warned[0]).toContain('invalid event: [x]');
    expect(warned[1]).toContain('Error executing action: bad');
    expect(warned[2]).toContain('malformed line');
    expect(logs.join('\n')).toContain('Error executing action: boom');
    expect(logs.join('\n')).toContain('line without action');
    // Shown but never an effect: the server reads effect.current[0] as the exec output.
    const notices = events.flatMap(e =>
      e.kind === 'notice' ? [e.message] : []
    );
    expect(notices).toHaveLength(1);
    expect(notices[0]).toContain('line without action');
    expect(logs.join('\n')).toContain('next step section_3_x');

    // update_workflow's nextStageId becomes the transition after the step.
    const done = await service.planning(
      request(STAGE, STEP, { feedback: true })
    );
    expect(done.transition?.next_stage_id).toBe(STAGE);
  });

  it('sends a skipped behavior’s request again, as it was, instead of reflecting on work that never ran', async () => {
    // The stream carries the end-of-behavior toDoList on every line; the user then skips the behavior.
    const transport = new FakeTransport(req =>
      req.path === 'v1/reflection'
        ? json({ status: 'received', targetAchieved: true, state: {} })
        : ndjson([
            header,
            {
              action: {
                action: 'add',
                shotType: 'action',
                content: 'print(sorted(df.columns))',
                state: state([])
              }
            },
            {
              action: {
                action: 'exec',
                codecell_id: 'lastAddedCellId',
                state: state([])
              }
            }
          ])
    );
    const service = new V1Adapter({ transport });
    await service.planning(request(STAGE, STEP));
    await collect(
      service.generating(request(STAGE, STEP, { current: ['(240, 4)\n'] }))
    );
    const skipped = request(STAGE, STEP, {
      current: [
        '(240, 4)\n',
        `Behavior ${STEP}#b1 was skipped by the user: its 2 actions were not applied.`
      ]
    });
    skipped.behavior_feedback = {
      actions_executed: 0,
      last_action_result: 'skipped'
    };
    const answer = await service.planning(skipped);
    // toDoList [] would make the reflection say "done" for a step whose code never ran.
    expect(transport.bodies('v1/reflection')).toEqual([]);
    expect(answer.targetAchieved).toBe(false);
    expect(answer.transition?.continue_behaviors).toBe(true);
    await collect(service.generating(skipped));
    const [before, again] = transport.bodies('v1/actions');
    // The same state and the same effect: effect.current[0] is still the last exec output.
    expect(again.state).toEqual(before.state);
    expect((again.state as any).effect.current).toEqual(['(240, 4)\n']);
    // Saved with the run: a reload before the request sends it as it was too.
    const restored = new V1Adapter({ transport });
    const second = await service.planning(skipped);
    expect(second.targetAchieved).toBe(false);
    restored.restoreState(JSON.parse(JSON.stringify(service.saveState())));
    await collect(restored.generating(skipped));
    expect(transport.bodies('v1/actions').at(-1)?.state).toEqual(before.state);
  });

  it('rejects a reflection answer without a boolean targetAchieved', async () => {
    const transport = new FakeTransport(() => json({ status: 'received' }));
    const service = new V1Adapter({ transport });
    await expect(
      service.planning(request(STAGE, STEP, { feedback: true }))
    ).rejects.toThrow(/boolean "targetAchieved"/);
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
});
