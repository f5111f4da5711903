/**
 * Every form a bcc answer takes (docs/dialects.md#bcc-planning-answers): XML and JSON planning
 * answers, reflections as XML or NDJSON, bodies told by their first character, answers without ids,
 * damaged documents, streamed actions.
 */

import type { GeneratingEvent } from '../../actionStream';
import { BccAdapter } from '../bcc/adapter';
import { collect, FakeTransport, json, ndjson, text } from './fakeTransport';
import {
  actionsOf,
  engineRequest,
  fsmOf,
  GENERATED,
  REFLECT_RUNNING,
  scripted
} from './bccFixtures';

describe('bcc adapter: reading its answers', () => {
  it('reads the NDJSON reflection form and JSON planning answers', async () => {
    let complete = false;
    const transport = new FakeTransport(req => {
      if (req.path === 'reflecting') {
        return ndjson([
          { action: { type: 'add-text', content: 'Looks fine' } },
          ...(complete
            ? [
                { action: { type: 'mark_step_complete' } },
                { action: { type: 'mark_stage_complete' } }
              ]
            : []),
          { action: { type: 'complete_reflection' } }
        ]);
      }
      if (req.path === 'generating') {
        return ndjson([
          { type: 'add', shotType: 'action', content: 'x = 1' },
          { type: 'update_last_text', text: 'edited' },
          { type: 'comment_result', content: 'x is set.' }
        ]);
      }
      const state = fsmOf(req);
      return json(
        state === 'IDLE'
          ? {
              stages: [
                {
                  stage_id: 's1',
                  title: 'S1',
                  verified_artifacts: { sales_df: 'the data' },
                  required_variables: { user_submit_files: 'the CSV' }
                }
              ]
            }
          : state === 'STAGE_RUNNING'
            ? {
                steps: [
                  {
                    step_id: 'a',
                    title: 'A',
                    verified_artifacts: [
                      { name: 'sales_df', description: 'df' }
                    ]
                  }
                ]
              }
            : {
                behavior_id: 'a_b1',
                task: 'do',
                inputs: [{ name: 'path', description: 'data/sales.csv' }],
                outputs: { sales_df: 'loaded' }
              }
      );
    });
    const service = new BccAdapter({ transport });
    const start = await service.planning(engineRequest(null, null));
    expect(start.behavior?.id).toBe('a_b1');
    // Maps and lists alike, whichever way a JSON answer names its artifacts.
    expect(
      start.context_update?.workflow_update?.workflowTemplate.stages
    ).toMatchObject([
      {
        id: 's1',
        expected_outputs: ['sales_df'],
        steps: [{ id: 'a', expected_outputs: ['sales_df'] }]
      }
    ]);
    expect(start.context_update?.progress_update).toMatchObject({
      level: 'behaviors',
      current_outputs: { expected: ['sales_df'] }
    });
    expect(
      (transport.requests[2].body as Record<string, any>).observation.location
        .progress.stages.current
    ).toMatchObject({
      verified_artifacts: { sales_df: 'the data' },
      required_variables: { user_submit_files: 'the CSV' }
    });
    const first = actionsOf(
      await collect(service.generating(engineRequest('s1', 'a')))
    );
    expect(first.map(a => a.action)).toEqual([
      'new_section',
      'new_step',
      'add',
      'update_last_text',
      'add',
      'archive_effects'
    ]);
    // comment_result: a markdown cell, then effects.current moves into history (§3.4).
    expect(first[4]).toMatchObject({
      shot_type: 'dialogue',
      content: 'x is set.'
    });
    const again = await service.planning(engineRequest('s1', 'a', true));
    expect(again.targetAchieved).toBe(false);
    // NDJSON: no planning call; the next /generating follows directly.
    expect(transport.paths().slice(-1)).toEqual(['POST reflecting']);
    const second = actionsOf(
      await collect(service.generating(engineRequest('s1', 'a')))
    );
    expect(second[0]).toMatchObject({ action: 'add', content: 'Looks fine' });
    // The behavior is recorded, and /generating runs its next iteration (NEXT_BEHAVIOR), a plan object too.
    expect(again.behavior).toMatchObject({ id: 'a_b2', iteration: 2 });
    const sent = transport.bodies('generating')[1] as Record<string, any>;
    expect(sent.state.FSM).toMatchObject({
      state: 'BEHAVIOR_RUNNING',
      last_transition: 'NEXT_BEHAVIOR'
    });
    const behaviorsSent = sent.observation.location.progress.behaviors;
    expect(behaviorsSent.current).toMatchObject({
      behavior_id: 'a_b2',
      task: 'do',
      outputs: { sales_df: 'loaded' }
    });
    expect(
      behaviorsSent.completed.map((b: { behavior_id: string }) => b.behavior_id)
    ).toEqual(['a_b1']);
    complete = true;
    const done = await service.planning(engineRequest('s1', 'a', true));
    expect(done.targetAchieved).toBe(true);
  });

  it('reads a body by its first character before its content type: NDJSON and JSON served as text/plain', async () => {
    const transport = new FakeTransport(req => {
      if (req.path === 'generating') {
        return ndjson([{ action: { type: 'add', content: 'x' } }]);
      }
      if (req.path === 'reflecting') {
        return text(
          [
            { action: { type: 'add-text', content: 'Done.' } },
            { action: { type: 'mark_step_complete' } },
            { action: { type: 'mark_stage_complete' } },
            { action: { type: 'complete_reflection' } }
          ]
            .map(line => JSON.stringify(line))
            .join('\n'),
          200,
          'text/plain; charset=utf-8'
        );
      }
      const state = fsmOf(req);
      return text(
        JSON.stringify(
          state === 'IDLE'
            ? { stages: [{ stage_id: 's1', title: 'S1' }] }
            : state === 'STAGE_RUNNING'
              ? { steps: [{ step_id: 'a', title: 'A' }] }
              : { behavior_id: 'a_b1', task: 'do' }
        ),
        200,
        'text/plain'
      );
    });
    const service = new BccAdapter({ transport });
    const start = await service.planning(engineRequest(null, null));
    expect(start.behavior?.id).toBe('a_b1');
    await collect(service.generating(engineRequest('s1', 'a')));
    const done = await service.planning(engineRequest('s1', 'a', true));
    expect(done.targetAchieved).toBe(true);
    expect(done.transition).toMatchObject({ stage_complete: true });
  });

  it('reads XML sent as a JSON string (a FastAPI handler returning a str), with the LLM’s sentence around it', async () => {
    const transport = new FakeTransport(req => {
      if (req.path === 'generating') {
        return ndjson([{ action: { type: 'add', content: 'x' } }]);
      }
      if (req.path === 'reflecting') {
        return json(
          fsmOf(req) === 'STEP_COMPLETED'
            ? '<stage_reflection stage_is_complete="true"/>'
            : 'The step is done.\n<reflection current_step_is_complete="true"/>'
        );
      }
      const state = fsmOf(req);
      return json(
        state === 'IDLE'
          ? 'Here is the plan:\n```xml\n<stages><stage id="s1" title="S1"/></stages>\n```'
          : state === 'STAGE_RUNNING'
            ? '<steps><step id="a" title="A"/><step id="b" title="B"/></steps>'
            : '<behavior id="a_b1"><task>t</task></behavior>'
      );
    });
    const service = new BccAdapter({ transport });
    const start = await service.planning(engineRequest(null, null));
    expect(start.behavior?.id).toBe('a_b1');
    expect(
      start.context_update?.workflow_update?.workflowTemplate.stages[0].steps
    ).toHaveLength(2);
    await collect(service.generating(engineRequest('s1', 'a')));
    const done = await service.planning(engineRequest('s1', 'a', true));
    expect(done.transition).toEqual({
      target_achieved: true,
      stage_complete: true
    });
  });

  it.each([
    [
      'one pretty-printed JSON array',
      (actions: object[]) =>
        text(JSON.stringify(actions, null, 2), 200, 'application/json')
    ],
    [
      '{"actions": [...]}',
      (actions: object[]) =>
        json({ actions: actions.map(a => ({ action: a })) })
    ]
  ])(
    'reads a reflection sent as %s, like a /generating answer',
    async (_form, answer) => {
      let complete = false;
      const transport = new FakeTransport(req => {
        if (req.path === 'generating') {
          return ndjson([{ action: { type: 'add', content: 'x' } }]);
        }
        if (req.path === 'reflecting') {
          return answer([
            { type: 'add-text', content: 'Looks fine' },
            ...(complete ? [{ type: 'mark_step_complete' }] : []),
            { type: 'complete_reflection' }
          ]);
        }
        const state = fsmOf(req);
        return text(
          state === 'IDLE'
            ? '<stages><stage id="s1" title="S1"/></stages>'
            : state === 'STAGE_RUNNING'
              ? '<steps><step id="a" title="A"/></steps>'
              : '<behavior id="a_b1"><task>t</task></behavior>'
        );
      });
      const service = new BccAdapter({ transport });
      await service.planning(engineRequest(null, null));
      await collect(service.generating(engineRequest('s1', 'a')));
      const again = await service.planning(engineRequest('s1', 'a', true));
      expect(again.targetAchieved).toBe(false);
      const next = actionsOf(
        await collect(service.generating(engineRequest('s1', 'a')))
      );
      expect(next[0]).toMatchObject({ action: 'add', content: 'Looks fine' });
      complete = true;
      const done = await service.planning(engineRequest('s1', 'a', true));
      expect(done.targetAchieved).toBe(true);
    }
  );

  it('runs a plan whose stages, steps and behavior have no ids (named from their titles)', async () => {
    const transport = new FakeTransport(req => {
      if (req.path === 'generating') {
        return ndjson([{ action: { type: 'add', content: 'x' } }]);
      }
      if (req.path === 'reflecting') {
        return text(
          fsmOf(req) === 'STEP_COMPLETED'
            ? '<stage_reflection stage_is_complete="false"/>'
            : '<reflection current_step_is_complete="true"/>'
        );
      }
      const state = fsmOf(req);
      return text(
        state === 'IDLE'
          ? '<stages><stage title="Load"><goal>g</goal></stage><stage title="Model"/></stages>'
          : state === 'STAGE_RUNNING'
            ? '<steps><step title="Read it"/><step title="Check"/></steps>'
            : '<behavior><task>do it</task></behavior>'
      );
    });
    const service = new BccAdapter({ transport });
    const start = await service.planning(engineRequest(null, null));
    const stages =
      start.context_update?.workflow_update?.workflowTemplate.stages ?? [];
    expect(stages.map(s => [s.id, s.steps.map(step => step.id)])).toEqual([
      ['load', ['read_it', 'check']],
      ['model', []]
    ]);
    expect(start.behavior?.id).toBe('read_it_b1');
    await collect(service.generating(engineRequest('load', 'read_it')));
    const done = await service.planning(engineRequest('load', 'read_it', true));
    expect(done.transition).toMatchObject({ next_step_id: 'check' });
    const sent = transport.bodies('generating')[0] as Record<string, any>;
    expect(sent.observation.location.progress.steps.current).toMatchObject({
      step_id: 'read_it',
      title: 'Read it'
    });
  });

  it('accepts a <workflow> root and a truncated document; saves and restores the plan and the cells still to write', async () => {
    const transport = new FakeTransport(req => {
      const state = fsmOf(req);
      return text(
        state === 'IDLE'
          ? '<workflow><title>Sales study</title><description>About sales</description><stages><stage id="s1" title="S1"><goal>g</goal></stage></stages></workflow>'
          : state === 'STAGE_RUNNING'
            ? '<steps><step id="a" title="A"><goal>ga</gaol></step><step id="b" title="B"><goal>trunc'
            : '<behavior id="a_b1"><task>t</task></behavior>'
      );
    });
    const service = new BccAdapter({ transport });
    const start = await service.planning(engineRequest(null, null));
    expect(
      start.context_update?.workflow_update?.workflowTemplate
    ).toMatchObject({
      name: 'Sales study',
      stages: [
        {
          id: 's1',
          steps: [
            { id: 'a', goal: 'ga' },
            { id: 'b', goal: 'trunc' }
          ]
        }
      ]
    });
    const saved = JSON.parse(JSON.stringify(service.saveState()));
    const restored = new BccAdapter({ transport });
    restored.restoreState(saved);
    // A reload between the planning answer and its /generating (e.g. while an interactive run waits
    // for the user's go-ahead) still writes the title, the description and the stage's heading.
    const actions = actionsOf(
      await collect(restored.generating(engineRequest('s1', 'a')))
    );
    expect(actions).toMatchObject([
      { action: 'update_title', title: 'Sales study' },
      { action: 'add', content: 'About sales' },
      { action: 'new_section', content: 'S1' },
      { action: 'new_step', content: 'A' }
    ]);
    const again = new BccAdapter({ transport });
    again.restoreState(JSON.parse(JSON.stringify(restored.saveState())));
    expect(
      actionsOf(await collect(again.generating(engineRequest('s1', 'a'))))
    ).toEqual([]);
    expect(
      (
        restored.saveState() as {
          plan: { steps: { current: { step_id: string } } };
        }
      ).plan.steps.current.step_id
    ).toBe('a');
    const fresh = actionsOf(
      await collect(service.generating(engineRequest('s1', 'a')))
    );
    expect(fresh.slice(0, 3)).toMatchObject([
      { action: 'update_title', title: 'Sales study' },
      { action: 'add', content: 'About sales' },
      { action: 'new_section', content: 'S1' }
    ]);
  });

  it('applies the NDJSON actions after a malformed line as they arrive, not when the body ends', async () => {
    const lines = [
      JSON.stringify({ action: { type: 'add', content: 'first' } }),
      'data: {"type": "add", "content": ',
      JSON.stringify({ action: { type: 'add', content: 'second' } })
    ];
    const head = new TextEncoder().encode(lines.join('\n') + '\n');
    let sent = false;
    // The body breaks off after these lines: what was held back until its end is never applied.
    const breaking = () =>
      new Response(
        new ReadableStream<Uint8Array>({
          pull(controller) {
            if (sent) {
              controller.error(new TypeError('network error'));
            } else {
              sent = true;
              controller.enqueue(head);
            }
          }
        }),
        { status: 200, headers: { 'Content-Type': 'application/x-ndjson' } }
      );
    const transport = scripted(() => text(REFLECT_RUNNING), breaking);
    const service = new BccAdapter({ transport });
    await service.planning(engineRequest(null, null));
    const events: GeneratingEvent[] = [];
    await expect(
      (async () => {
        for await (const event of service.generating(
          engineRequest('sales_data_check', 'load_sales')
        )) {
          events.push(event);
        }
      })()
    ).rejects.toThrow();
    const contents = actionsOf(events).map(
      a => (a as { content?: string }).content
    );
    expect(contents).toEqual(expect.arrayContaining(['first', 'second']));
    expect(
      events.some(
        e => e.kind === 'warning' && e.message.includes('data: {"type"')
      )
    ).toBe(true);
  });

  it('still reads a pretty-printed JSON array whole when its first line opens it', async () => {
    const transport = scripted(
      () => text(REFLECT_RUNNING),
      () => text(GENERATED, 200, 'application/x-ndjson')
    );
    const service = new BccAdapter({ transport });
    const events = await (async () => {
      await service.planning(engineRequest(null, null));
      return collect(
        service.generating(engineRequest('sales_data_check', 'load_sales'))
      );
    })();
    expect(actionsOf(events).map(a => a.action)).toContain('exec');
    expect(events.filter(e => e.kind === 'warning')).toEqual([]);
  });
});
