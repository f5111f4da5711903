/**
 * The v1 adapter's stored state and failures (docs/dialects.md#v1-errors): saved and restored with the
 * run, an answer cut off, a request or a reflection that fails.
 */

import { progressUpdatesOf } from '../../schemas';
import { PlannerError } from '../../errors';
import { isRouteMissingError } from '../common';
import { V1Adapter } from '../v1/adapter';
import {
  breaksAfter,
  collect,
  FakeTransport,
  json,
  ndjson,
  text
} from './fakeTransport';
import {
  header,
  oneAddStream,
  request,
  STAGE,
  state,
  STEP
} from './v1Fixtures';

describe('v1 adapter: the stored state and failures', () => {
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
});
