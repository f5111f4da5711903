/**
 * When a bcc answer fails or does not fit (docs/dialects.md#bcc-loop): the fallbacks the spec names,
 * errors with Retry instead of running a behavior twice, what a Retry asks again, and what a resumed
 * run may trust of a notebook file.
 */

import { BccAdapter } from '../bcc/adapter';
import { collect, FakeTransport, json, ndjson, text } from './fakeTransport';
import {
  actionsOf,
  behavior,
  engineRequest,
  fsmOf,
  GENERATED,
  REFLECT_DONE,
  REFLECT_RUNNING,
  runFirstBehavior,
  scripted,
  STAGE_DONE,
  STAGE_NOT_DONE,
  STAGES,
  STEPS
} from './bccFixtures';

describe('bcc adapter: failures, Retry and resume', () => {
  it('falls back from /reflecting to /planning, then decides locally', async () => {
    let planningServesReflections = true;
    const transport = new FakeTransport(req => {
      if (req.path === 'reflecting') {
        return json({ detail: 'Not Found' }, 404);
      }
      if (req.path === 'generating') {
        return ndjson([{ action: { type: 'add', content: 'x' } }]);
      }
      const state = fsmOf(req);
      if (state === 'BEHAVIOR_COMPLETED' || state === 'STEP_COMPLETED') {
        return planningServesReflections
          ? text(
              state === 'STEP_COMPLETED'
                ? '<stage_reflection stage_is_complete="false"/>'
                : '<reflection current_step_is_complete="true"/>'
            )
          : text('gone', 404);
      }
      return text(
        state === 'IDLE'
          ? '<stages><stage id="s1" title="S1"/></stages>'
          : state === 'STAGE_RUNNING'
            ? '<steps><step id="a" title="A"/><step id="b" title="B"/></steps>'
            : '<behavior id="x"><task>t</task></behavior>'
      );
    });
    const warnings: string[] = [];
    const service = new BccAdapter({ transport });
    await service.planning(engineRequest(null, null));
    await collect(service.generating(engineRequest('s1', 'a')));
    const done = await service.planning(engineRequest('s1', 'a', true));
    expect(done.transition?.next_step_id).toBe('b');
    expect(transport.paths().filter(p => p === 'POST reflecting')).toHaveLength(
      1
    );

    planningServesReflections = false;
    await service.planning(engineRequest('s1', 'b'));
    const local = await service.planning(engineRequest('s1', 'b', true), {
      onWarning: w => warnings.push(w.message)
    });
    expect(local.targetAchieved).toBe(true);
    expect(local.transition?.next_stage_id).toBeUndefined();
    expect(warnings.join()).toContain('client decides');
  });

  it('rejects an answer that does not fit the state, and HTTP errors', async () => {
    const transport = new FakeTransport(req =>
      fsmOf(req) === 'IDLE' ? text('<behavior id="x"/>') : text('boom', 500)
    );
    const service = new BccAdapter({ transport });
    await expect(service.planning(engineRequest(null, null))).rejects.toThrow(
      /<behavior> to FSM state IDLE/
    );
    const bad = new BccAdapter({
      transport: new FakeTransport(() => text('<unknown/>'))
    });
    await expect(bad.planning(engineRequest(null, null))).rejects.toThrow(
      /expected <stages>/
    );
    const failing = new BccAdapter({
      transport: new FakeTransport(() => text('server down', 503))
    });
    await expect(failing.planning(engineRequest(null, null))).rejects.toThrow(
      /HTTP 503: server down/
    );
  });

  it('makes a failed /reflecting an error to retry, never a fallback that runs the behavior again', async () => {
    let fail = true;
    const transport = scripted(() =>
      fail ? text('LLM timeout', 500) : text(REFLECT_RUNNING)
    );
    const service = new BccAdapter({ transport });
    await runFirstBehavior(service);
    const error = await service
      .planning(engineRequest('sales_data_check', 'load_sales', true))
      .catch(e => e);
    expect(error.message).toMatch(/HTTP 500: LLM timeout/);
    expect(error.needsAnswer).toBe(true);
    // Retry: the same question again, and the behavior is recorded once.
    fail = false;
    const answer = await service.planning(
      engineRequest('sales_data_check', 'load_sales', true)
    );
    expect(answer.targetAchieved).toBe(false);
    expect(
      transport.requests.map(r => `${r.path}:${fsmOf(r)}`).slice(-3)
    ).toEqual([
      'reflecting:BEHAVIOR_COMPLETED',
      'reflecting:BEHAVIOR_COMPLETED',
      'planning:STEP_RUNNING'
    ]);
    const plan = (service.saveState() as any).plan;
    expect(plan.behaviors.completed.map((b: any) => b.behavior_id)).toEqual([
      'b1'
    ]);
  });

  it('rejects a reflection whose root does not fit the state just sent', async () => {
    const service = new BccAdapter({
      transport: scripted(() => text(STAGE_DONE))
    });
    await runFirstBehavior(service);
    await expect(
      service.planning(engineRequest('sales_data_check', 'load_sales', true))
    ).rejects.toMatchObject({
      kind: 'invalid',
      message: expect.stringMatching(
        /<stage_reflection> to FSM state BEHAVIOR_COMPLETED/
      )
    });
    const second = new BccAdapter({
      transport: scripted(req =>
        fsmOf(req) === 'BEHAVIOR_COMPLETED'
          ? text(REFLECT_DONE)
          : text(REFLECT_RUNNING)
      )
    });
    await runFirstBehavior(second);
    await expect(
      second.planning(engineRequest('sales_data_check', 'load_sales', true))
    ).rejects.toThrow(/<reflection> to FSM state STEP_COMPLETED/);
  });

  it('asks the stage question again when Retry follows an unreadable stage reflection', async () => {
    let stageAnswer = 'Sorry, I cannot comply.';
    const transport = scripted(req =>
      fsmOf(req) === 'BEHAVIOR_COMPLETED'
        ? text(REFLECT_DONE)
        : text(stageAnswer)
    );
    const service = new BccAdapter({ transport });
    await runFirstBehavior(service);
    await expect(
      service.planning(engineRequest('sales_data_check', 'load_sales', true))
    ).rejects.toMatchObject({ kind: 'invalid' });
    stageAnswer = STAGE_NOT_DONE;
    const answer = await service.planning(
      engineRequest('sales_data_check', 'load_sales', true)
    );
    expect(answer.transition).toMatchObject({ next_step_id: 'check_sales' });
    expect(
      transport.requests.map(r => `${r.path}:${fsmOf(r)}`).slice(-3)
    ).toEqual([
      'reflecting:BEHAVIOR_COMPLETED',
      'reflecting:STEP_COMPLETED',
      'reflecting:STEP_COMPLETED'
    ]);
  });

  it('plans the next behavior on Retry after an unreadable <behavior>, without asking the reflection again', async () => {
    let behaviorAnswers = 0;
    const transport = new FakeTransport(req => {
      if (req.path === 'generating') {
        return text(GENERATED, 200, 'application/json');
      }
      if (req.path === 'reflecting') {
        return text(REFLECT_RUNNING);
      }
      switch (fsmOf(req)) {
        case 'IDLE':
          return text(STAGES);
        case 'STAGE_RUNNING':
          return text(STEPS, 200, 'application/xml');
        default:
          behaviorAnswers++;
          return text(
            behaviorAnswers === 2
              ? 'I cannot plan that.'
              : behavior(`b${behaviorAnswers}`, 'load_sales')
          );
      }
    });
    const service = new BccAdapter({ transport });
    await runFirstBehavior(service);
    await expect(
      service.planning(engineRequest('sales_data_check', 'load_sales', true))
    ).rejects.toMatchObject({ kind: 'invalid' });
    const retried = await service.planning(
      engineRequest('sales_data_check', 'load_sales', true)
    );
    expect(retried.behavior?.id).toBe('b3');
    expect(
      transport.requests.map(r => `${r.path}:${fsmOf(r)}`).slice(-3)
    ).toEqual([
      'reflecting:BEHAVIOR_COMPLETED',
      'planning:STEP_RUNNING',
      'planning:STEP_RUNNING'
    ]);
  });

  it('passes on the step verdict’s variables when Retry follows a failed stage reflection', async () => {
    let stageFails = true;
    const transport = scripted(req =>
      fsmOf(req) === 'BEHAVIOR_COMPLETED'
        ? text(REFLECT_DONE)
        : stageFails
          ? text('LLM timeout', 500)
          : text(STAGE_NOT_DONE)
    );
    const service = new BccAdapter({ transport });
    await runFirstBehavior(service);
    await expect(
      service.planning(engineRequest('sales_data_check', 'load_sales', true))
    ).rejects.toMatchObject({ needsAnswer: true });
    stageFails = false;
    const answer = await service.planning(
      engineRequest('sales_data_check', 'load_sales', true)
    );
    expect(answer.context_update?.variables).toMatchObject({
      shape_text: '(240, 4)',
      rows: '240'
    });
  });

  it('restores only the kinds of cell it writes itself: code or an exec hidden in a notebook file never runs on Resume', async () => {
    const transport = new FakeTransport(req => {
      const state = fsmOf(req);
      return text(
        state === 'IDLE'
          ? '<stages><stage id="s1" title="S1"><goal>g</goal></stage></stages>'
          : state === 'STAGE_RUNNING'
            ? '<steps><step id="a" title="A"><goal>ga</goal></step></steps>'
            : '<behavior id="a_b1"><task>t</task></behavior>'
      );
    });
    const writer = new BccAdapter({ transport });
    await writer.planning(engineRequest(null, null));
    const saved = JSON.parse(JSON.stringify(writer.saveState())) as {
      plan: unknown;
      pending: unknown[];
    };
    saved.pending = [
      { type: 'update_title', title: 'Kept' },
      { type: 'add', shot_type: 'markdown', content: 'kept text' },
      { type: 'new_step', content: 'Kept step' },
      {
        type: 'add',
        shot_type: 'action',
        content: 'import os; os.system("x")'
      },
      { type: 'add', content: 'no shot type' },
      { type: 'exec', codecell_id: 'lastAddedCellId' },
      { type: 'update_stage_steps', stage_id: 's1', updated_steps: [] }
    ];
    const restored = new BccAdapter({ transport });
    restored.restoreState(saved);
    const actions = actionsOf(
      await collect(restored.generating(engineRequest('s1', 'a')))
    );
    expect(actions.map(a => a.action)).not.toContain('exec');
    expect(actions.filter(a => a.action === 'add').map(a => a.content)).toEqual(
      ['kept text']
    );
    expect(actions.slice(0, 3)).toMatchObject([
      { action: 'update_title', title: 'Kept' },
      { action: 'add', content: 'kept text' },
      { action: 'new_step', content: 'Kept step' }
    ]);
    expect(actions.map(a => a.action)).toContain('update_stage_steps');
  });
});
