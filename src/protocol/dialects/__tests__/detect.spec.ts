/**
 * Detection (docs/dialects.md#choosing): the registry's probes, the bodies they send, how an answer
 * is classified, and the `/planning` probe under the first-byte timeout.
 */

import { detectDialect, supersetProbeBody } from '../detect';
import { createDialectSelector, normalizePlannerBaseUrl } from '../selector';
import { FakeTransport, json, text } from './fakeTransport';
import {
  fakeDslc,
  NOTEBOOK,
  request,
  SEED_NOTEBOOK,
  withAdapter
} from './fakeDialects';
import { v1Server } from './v1Fixtures';

describe('dialect detection', () => {
  it('normalises the base URL and remembers a /v1 hint', () => {
    expect(normalizePlannerBaseUrl('http://h:28600/v1/')).toEqual({
      root: 'http://h:28600',
      hint: 'v1'
    });
    expect(normalizePlannerBaseUrl('http://h:28600/')).toEqual({
      root: 'http://h:28600',
      hint: null
    });
  });

  it('sends the superset body: the seed request plus a sibling state at IDLE', () => {
    const body = supersetProbeBody(request) as Record<string, any>;
    expect(body.state.notebook).toEqual({});
    const withCells = supersetProbeBody(
      {
        ...request,
        observation: {
          ...request.observation,
          context: { ...request.observation.context, notebook: SEED_NOTEBOOK }
        }
      },
      NOTEBOOK
    ) as Record<string, any>;
    // The seed part stays the seed's; the sibling state is what a bcc server reads.
    expect(withCells.observation.context.notebook).toEqual(SEED_NOTEBOOK);
    expect(withCells.state.notebook).toEqual(NOTEBOOK);
    expect(body.observation.context.FSM.state).toBe('IDLE');
    expect(body.options).toEqual({ stream: false });
    expect(body.state.FSM.state).toBe('IDLE');
    expect(body.state.variables).toMatchObject({
      user_problem: 'Predict',
      user_submit_files: ['a.csv']
    });
  });

  it.each([
    [
      'XML by content type',
      () => text('<stages/>', 200, 'application/xml'),
      'bcc'
    ],
    [
      'text/plain',
      () => text('stages follow', 200, 'text/plain; charset=utf-8'),
      'bcc'
    ],
    [
      'a body starting with <',
      () => text('  <stages/>', 200, 'application/octet-stream'),
      'bcc'
    ],
    ['JSON with stages', () => json({ stages: [] }), 'bcc'],
    ['JSON with steps', () => json({ steps: [] }), 'bcc'],
    ['JSON with behavior_id', () => json({ behavior_id: 'b' }), 'bcc'],
    ['another JSON object', () => json({ targetAchieved: false }), 'dslc'],
    [
      'a JSON object served as text/plain, by its body',
      () => text('{"targetAchieved": false}', 200, 'text/plain'),
      'dslc'
    ],
    [
      'XML sent as a JSON string',
      () => json('<stages><stage id="s" title="S"/></stages>'),
      'bcc'
    ],
    [
      'bcc JSON served as text/plain',
      () => text('{"stages": []}', 200, 'text/plain'),
      'bcc'
    ],
    [
      'an LLM sentence around XML, as a JSON string',
      () =>
        json('Here is the plan:\n<stages><stage id="s" title="S"/></stages>'),
      'bcc'
    ]
  ])('classifies %s', async (_name, reply, dialect) => {
    const transport = new FakeTransport(reply);
    const result = await detectDialect({ transport, request });
    expect(result.dialect).toBe(dialect);
    expect(transport.paths()).toEqual(['POST planning']);
  });

  it('finds v1 through v2/health or the reflection probe after a 404 or 405', async () => {
    const health = new FakeTransport(v1Server());
    expect((await detectDialect({ transport: health, request })).dialect).toBe(
      'v1'
    );
    expect(health.paths()).toEqual(['POST planning', 'GET v2/health']);

    const noHealth = new FakeTransport(req =>
      req.path === 'planning' ? text('', 405) : v1Server(false)(req)
    );
    expect(
      (await detectDialect({ transport: noHealth, request })).dialect
    ).toBe('v1');
    expect(noHealth.paths()).toEqual([
      'POST planning',
      'GET v2/health',
      'POST v1/reflection'
    ]);
    expect(noHealth.bodies('v1/reflection')[0]).toEqual({
      stage_id: 'chapter_0_planning',
      step_index: 'section_1_design_workflow',
      state: {}
    });

    const hinted = new FakeTransport(v1Server());
    expect(
      (await detectDialect({ transport: hinted, request, hint: 'v1' })).dialect
    ).toBe('v1');
    expect(hinted.paths()).toEqual(['GET v2/health']);
  });

  it('names each probe when nothing answers, and fails visibly on a 5xx', async () => {
    const nothing = new FakeTransport(() => text('nope', 404));
    await expect(
      detectDialect({ transport: nothing, request })
    ).rejects.toThrow(
      'no known DSLC dialect at http://planner.test (POST http://planner.test/planning → HTTP 404; GET http://planner.test/v2/health → HTTP 404; POST http://planner.test/v1/reflection → HTTP 404)'
    );
    const broken = new FakeTransport(() => text('down', 502));
    await expect(detectDialect({ transport: broken, request })).rejects.toThrow(
      /planning failed: HTTP 502: down/
    );
    const invalid = new FakeTransport(() => json([1, 2]));
    await expect(
      detectDialect({ transport: invalid, request })
    ).rejects.toThrow(/no DSLC dialect sends/);
  });

  it('tries the bcc body, then the seed body, when a strict server refuses the superset (422)', async () => {
    // A bcc server whose schema says location.goals is a string and knows no observation.context.
    const strictBcc = new FakeTransport(req => {
      const body = req.body as Record<string, any>;
      return typeof body.observation.location.goals === 'string' &&
        body.observation.context === undefined
        ? text('<stages><stage id="s" title="S"/></stages>')
        : json({ detail: [{ type: 'string_type', loc: ['goals'] }] }, 422);
    });
    const bcc = await detectDialect({
      transport: strictBcc,
      request: {
        ...request,
        observation: {
          ...request.observation,
          location: {
            ...request.observation.location,
            goals: { stage: null, step: null, behavior: null }
          }
        }
      }
    });
    expect(bcc.dialect).toBe('bcc');
    expect(bcc.probes).toEqual([
      'POST http://planner.test/planning → HTTP 422',
      'POST http://planner.test/planning (bcc body) → HTTP 200'
    ]);
    const [, bccBody] = strictBcc.bodies('planning') as Record<string, any>[];
    expect(bccBody.observation.location.goals).toContain('Predict');
    expect(bccBody.state.FSM.state).toBe('IDLE');

    // A seed server that forbids unknown keys (the sibling state).
    const strictSeed = new FakeTransport(req =>
      'state' in (req.body as object)
        ? json({ detail: [{ type: 'extra_forbidden', loc: ['state'] }] }, 422)
        : json({ targetAchieved: false })
    );
    const seed = await detectDialect({ transport: strictSeed, request });
    expect(seed.dialect).toBe('dslc');
    expect(seed.probes.at(-1)).toBe(
      'POST http://planner.test/planning (seed body) → HTTP 200'
    );
    expect(strictSeed.bodies('planning').at(-1)).toEqual({
      ...request,
      observation: {
        ...request.observation,
        context: {
          ...request.observation.context,
          FSM: { state: 'IDLE' }
        }
      },
      options: { stream: false }
    });

    // Refused three times: the error is the last answer's.
    const refusing = new FakeTransport(() =>
      json({ detail: 'no thanks' }, 422)
    );
    await expect(
      detectDialect({ transport: refusing, request })
    ).rejects.toThrow(/planning failed: HTTP 422: \{"detail":"no thanks"\}/);
    expect(refusing.paths()).toEqual([
      'POST planning',
      'POST planning',
      'POST planning'
    ]);
  });
});

describe('the detection probe under the first-byte timeout', () => {
  it('retries a /planning probe that gets no answer in time, telling the run why it waits', async () => {
    let probes = 0;
    const transport = new FakeTransport(
      req =>
        new Promise<Response>((resolve, reject) => {
          probes++;
          if (probes === 1) {
            // The planner thinks past the timeout: only the abort ends this request.
            req.signal?.addEventListener('abort', () =>
              reject(new Error('aborted'))
            );
            return;
          }
          resolve(json({ targetAchieved: false }));
        })
    );
    const warnings: string[] = [];
    const service = createDialectSelector({
      protocol: 'auto',
      transport,
      dialects: withAdapter('dslc', fakeDslc()),
      cache: new Map(),
      probeTiming: {
        firstByteTimeoutMs: 50,
        retries: 3,
        baseDelayMs: 1,
        maxDelayMs: 10
      }
    });
    const answer = await service.planning(request, {
      onWarning: warning => warnings.push(warning.message)
    });
    expect(answer.targetAchieved).toBe(false);
    expect(service.dialect).toBe('dslc');
    expect(probes).toBe(2);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^POST http:\/\/planner\.test\/planning timed out: .*retrying in .* \(retry 1 of 3\)$/
    );
  });
});
