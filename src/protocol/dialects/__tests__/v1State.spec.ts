import { progressUpdatesOf } from '../../schemas';
import { PlannerError } from '../../errors';
import type { GeneratingEvent } from '../../actionStream';
import { isRouteMissingError } from '../common';
import { fullStepIndex, missingVariableNames, V1PlannerService } from '../v1';
import { collect, FakeTransport, json, ndjson, text } from './fakeTransport';
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
    const service = new V1PlannerService({ transport });
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
      const service = new V1PlannerService({ transport });
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
    const service = new V1PlannerService({ transport });
    const error = await collect(service.generating(request(STAGE, STEP))).catch(
      e => e
    );
    expect(isRouteMissingError(error)).toBe(true);
  });

  it('rejects a reflection answer without a boolean targetAchieved', async () => {
    const transport = new FakeTransport(() => json({ status: 'received' }));
    const service = new V1PlannerService({ transport });
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
    const service = new V1PlannerService({ transport });
    await collect(service.generating(request(STAGE, STEP)));
    const saved = JSON.parse(JSON.stringify(service.saveState()));
    expect(saved).toMatchObject({
      dialect: 'v1',
      streamComplete: true,
      state: { toDoList: ['next'] }
    });

    const resumed = new V1PlannerService({ transport });
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
    const third = new V1PlannerService({ transport });
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

  it('resets toDoList when a new step starts', async () => {
    const transport = new FakeTransport(() => oneAddStream(['pending'], 'a'));
    const service = new V1PlannerService({ transport });
    await collect(service.generating(request(STAGE, STEP)));
    await service.planning(request(STAGE, `${STAGE}_section_3_x`));
    await collect(service.generating(request(STAGE, `${STAGE}_section_3_x`)));
    expect(
      (transport.bodies('v1/actions')[1].state as Record<string, unknown>)
        .toDoList
    ).toEqual([]);
  });

  it('finds the missing names at the end of a text', () => {
    expect(missingVariableNames("needs ['a', 'b']")).toEqual(['a', 'b']);
    expect(missingVariableNames('needs ["a"].')).toEqual(['a']);
    expect(missingVariableNames('no list [here]')).toBeNull();
    expect(missingVariableNames('plain text')).toBeNull();
    expect(fullStepIndex('c', 'c_s')).toBe('c_s');
    expect(fullStepIndex('c', 's')).toBe('c_s');
  });
});
