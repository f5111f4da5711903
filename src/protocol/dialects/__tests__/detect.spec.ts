import type { GeneratingEvent } from '../../actionStream';
import type { INotebookSummary, PlanningRequestInput } from '../../schemas';
import type { IPlannerRequest } from '../../transport';
import { RouteMissingError } from '../common';
import { detectDialect, supersetProbeBody } from '../detect';
import type { IDialectAdapter } from '../dialect';
import type { DialectName } from '../registry';
import { createDialectSelector, normalizePlannerBaseUrl } from '../selector';
import { withAdapter } from './fakeDialects';
import { collect, FakeTransport, json, ndjson, text } from './fakeTransport';

const request: PlanningRequestInput = {
  observation: {
    location: { current: { stage_id: null, step_id: null } },
    context: {
      variables: { problem_description: 'Predict', data_files: ['a.csv'] },
      FSM: { state: 'STEP_RUNNING' }
    }
  }
};

const SEED_NOTEBOOK = {
  title: 'T',
  cell_count: 1,
  last_cell_type: 'code',
  last_output: '1'
};

const NOTEBOOK: INotebookSummary = {
  ...SEED_NOTEBOOK,
  execution_count: 1,
  cells: [
    { id: 'c', type: 'code', content: 'print(1)', outputs: ['1'], metadata: {} }
  ]
};

function fakeDslc(): IDialectAdapter & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    async planning() {
      calls.push('planning');
      return { targetAchieved: true };
    },
    async *generating(): AsyncGenerator<GeneratingEvent> {
      calls.push('generating');
      yield { kind: 'warning', message: 'dslc' };
    }
  };
}

function v1Server(health = true) {
  return (req: IPlannerRequest) => {
    if (req.path === 'v2/health') {
      return health
        ? json({ status: 'ok', message: 'up' })
        : json({ detail: 'Not Found' }, 404);
    }
    if (req.path === 'v1/reflection') {
      return json({ status: 'received', targetAchieved: false, state: {} });
    }
    if (req.path === 'v1/actions') {
      return ndjson([
        { header: { stage_id: 's', step: null, next_step: null } },
        {
          action: {
            action: 'add',
            shotType: 'dialogue',
            content: 'v1!',
            state: {}
          }
        }
      ]);
    }
    return json({ detail: 'Not Found' }, 404);
  };
}

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

describe('the planner service façade', () => {
  it('detects dslc, returns the probe answer, then delegates; the cache skips detection next run', async () => {
    const transport = new FakeTransport(() =>
      json({ targetAchieved: false, context_update: { variables: { a: 1 } } })
    );
    const dslc = fakeDslc();
    const cache = new Map<string, DialectName>();
    const chosen: string[] = [];
    const service = createDialectSelector({
      protocol: 'auto',
      transport,
      dialects: withAdapter('dslc', dslc),
      cache,
      onDialect: (d, how) => chosen.push(`${d}:${how}`)
    });
    const first = await service.planning(request);
    expect(first.context_update?.variables).toEqual({ a: 1 });
    expect(dslc.calls).toEqual([]);
    expect(service.dialect).toBe('dslc');
    await service.planning(request);
    expect(dslc.calls).toEqual(['planning']);
    expect(cache.get('http://planner.test/')).toBeUndefined();
    expect([...cache.values()]).toEqual(['dslc']);

    service.resetState();
    expect(service.dialect).toBeNull();
    await service.planning(request);
    expect(chosen).toEqual(['dslc:detected', 'dslc:cached']);
    expect(transport.requests).toHaveLength(1);
  });

  it('shows the warnings of the dslc answer that detection got, as the client does for any answer', async () => {
    const transport = new FakeTransport(() =>
      json({
        targetAchieved: false,
        transition: { continue_behaviors: 'perhaps' }
      })
    );
    const warnings: string[] = [];
    const service = createDialectSelector({
      protocol: 'auto',
      transport,
      dialects: withAdapter('dslc', fakeDslc()),
      cache: new Map<string, DialectName>()
    });
    await service.planning(request, {
      onWarning: warning => warnings.push(warning.message)
    });
    expect(warnings).toEqual([
      expect.stringContaining(
        'transition.continue_behaviors ignored: expected a boolean'
      )
    ]);
  });

  it('asks for a planning request first only while detection is due', async () => {
    const transport = new FakeTransport(() => json({ targetAchieved: false }));
    const cache = new Map<string, DialectName>();
    const auto = createDialectSelector({
      protocol: 'auto',
      transport,
      dialects: withAdapter('dslc', fakeDslc()),
      cache
    });
    expect(auto.needsPlanningFirst).toBe(true);
    await auto.planning(request);
    expect(auto.needsPlanningFirst).toBe(false);
    // Known for this root: the next run may generate first.
    auto.resetState();
    expect(auto.needsPlanningFirst).toBe(false);
    const fixed = createDialectSelector({
      protocol: 'dslc',
      transport,
      dialects: withAdapter('dslc', fakeDslc()),
      cache: new Map<string, DialectName>()
    });
    expect(fixed.needsPlanningFirst).toBe(false);
  });

  it('asks for a planning request first when a new v1 run must begin at the entry step', async () => {
    const transport = new FakeTransport(v1Server());
    const cache = new Map<string, DialectName>();
    for (const protocol of ['v1', 'auto'] as const) {
      const service = createDialectSelector({
        protocol,
        transport,
        dialects: withAdapter('dslc', fakeDslc()),
        cache
      });
      if (protocol === 'auto') {
        cache.set('http://planner.test', 'v1');
      }
      // The runner resets the service when a run starts, then reads this to choose its first request.
      service.resetState();
      expect(service.needsPlanningFirst).toBe(true);
      const start = await service.planning({
        observation: {
          location: { current: { stage_id: 'load', step_id: 'read_csv' } }
        }
      });
      expect(
        start.context_update?.workflow_update?.workflowTemplate.stages[0].id
      ).toBe('chapter_0_planning');
      expect(service.needsPlanningFirst).toBe(false);
    }
  });

  it('hands the detected bcc answer to the bcc adapter without asking twice', async () => {
    const transport = new FakeTransport(req => {
      const state = (req.body as { state: { FSM: { state: string } } }).state
        .FSM.state;
      return text(
        state === 'IDLE'
          ? '<stages><stage id="s" title="S"/></stages>'
          : state === 'STAGE_RUNNING'
            ? '<steps><step id="a" title="A"/></steps>'
            : '<behavior id="a_b1"><task>t</task></behavior>'
      );
    });
    const service = createDialectSelector({
      protocol: 'auto',
      transport,
      dialects: withAdapter('dslc', fakeDslc()),
      cache: new Map()
    });
    const answer = await service.planning(request, { notebook: NOTEBOOK });
    expect(service.dialect).toBe('bcc');
    expect(answer.behavior?.id).toBe('a_b1');
    expect(transport.bodies('planning').map(body => body.state)).toEqual([
      expect.objectContaining({ notebook: NOTEBOOK }),
      expect.objectContaining({
        notebook: { ...NOTEBOOK, notebook_id: null }
      }),
      expect.objectContaining({
        notebook: { ...NOTEBOOK, notebook_id: null }
      })
    ]);
    expect(transport.paths()).toEqual([
      'POST planning',
      'POST planning',
      'POST planning'
    ]);
  });

  it('starts a v1 run at the entry step and streams its actions', async () => {
    const transport = new FakeTransport(v1Server());
    const service = createDialectSelector({
      protocol: 'auto',
      transport,
      dialects: withAdapter('dslc', fakeDslc()),
      cache: new Map()
    });
    const answer = await service.planning(request);
    expect(service.dialect).toBe('v1');
    expect(
      answer.context_update?.workflow_update?.workflowTemplate.stages[0].id
    ).toBe('chapter_0_planning');
    const events = await collect(
      service.generating({
        observation: {
          location: {
            current: {
              stage_id: 'chapter_0_planning',
              step_id: 'section_1_design_workflow'
            }
          }
        }
      })
    );
    expect(events).toHaveLength(1);
    const saved = JSON.parse(JSON.stringify(service.saveState()));
    expect(saved).toMatchObject({ dialect: 'v1', adapter: { dialect: 'v1' } });
    const restored = createDialectSelector({
      protocol: 'auto',
      transport,
      dialects: withAdapter('dslc', fakeDslc()),
      cache: new Map()
    });
    restored.restoreState(saved);
    expect(restored.dialect).toBe('v1');
    // The planner URL changed since: the saved dialect is another server's, so it is detected again.
    const elsewhere = createDialectSelector({
      protocol: 'auto',
      transport,
      dialects: withAdapter('dslc', fakeDslc()),
      baseUrl: 'http://other-planner.test:28600',
      cache: new Map()
    });
    elsewhere.restoreState(saved);
    expect(elsewhere.dialect).toBeNull();
  });

  it('saves the planner root without credentials, and trusts no saved dialect that names no root', () => {
    const service = createDialectSelector({
      protocol: 'auto',
      transport: new FakeTransport(() => new Response('{}')),
      dialects: withAdapter('dslc', fakeDslc()),
      baseUrl: 'http://alice:pw-123@planner.test:28600/api/?key=s3cret#x',
      cache: new Map()
    });
    service.restoreState({ dialect: 'bcc', adapter: { dialect: 'bcc' } });
    expect(service.dialect).toBeNull();
    const saved = JSON.stringify(service.saveState());
    expect(saved).toContain('"root":"http://planner.test:28600/api"');
    expect(saved).not.toMatch(/alice|pw-123|s3cret/);
  });

  it('bounds the v1 and bcc requests by the first-byte and stall timeouts', async () => {
    // Headers come at once; the body never does (a planner thinking, or one that hangs).
    const silent = () =>
      new Response(
        new ReadableStream<Uint8Array>({
          pull: () => new Promise(() => undefined)
        }),
        {
          status: 200,
          headers: { 'Content-Type': 'application/json' }
        }
      );
    // One line, then silence.
    const stalls = () => {
      let sent = false;
      return new Response(
        new ReadableStream<Uint8Array>({
          pull(controller) {
            if (sent) {
              return new Promise(() => undefined);
            }
            sent = true;
            controller.enqueue(
              new TextEncoder().encode(
                JSON.stringify({
                  header: { stage_id: 'c', step: null, next_step: null }
                }) + '\n'
              )
            );
          }
        }),
        { status: 200, headers: { 'Content-Type': 'application/json' } }
      );
    };
    const timeouts = () => ({ firstByteTimeoutMs: 40, stallTimeoutMs: 60 });
    const where = {
      observation: {
        location: {
          current: {
            stage_id: 'chapter_0_planning',
            step_id: 'section_1_design_workflow'
          }
        }
      }
    };
    let answer = silent;
    const v1 = createDialectSelector({
      protocol: 'v1',
      transport: new FakeTransport(() => answer()),
      dialects: withAdapter('dslc', fakeDslc()),
      timeouts
    });
    await expect(collect(v1.generating(where))).rejects.toMatchObject({
      kind: 'timeout',
      message: expect.stringMatching(
        /v1\/actions timed out: no data from the planner for 0\.04 s after the request was sent/
      )
    });
    answer = stalls;
    await expect(collect(v1.generating(where))).rejects.toMatchObject({
      kind: 'timeout',
      message: expect.stringMatching(
        /v1\/actions timed out: no data from the planner for 0\.06 s since the last chunk/
      )
    });
    const bcc = createDialectSelector({
      protocol: 'bcc',
      transport: new FakeTransport(() => silent()),
      dialects: withAdapter('dslc', fakeDslc()),
      timeouts
    });
    // Detection's probes too (here with no retries of its own for the /planning probe).
    const auto = createDialectSelector({
      protocol: 'auto',
      transport: new FakeTransport(() => silent()),
      dialects: withAdapter('dslc', fakeDslc()),
      cache: new Map(),
      timeouts
    });
    await expect(auto.planning(request)).rejects.toMatchObject({
      kind: 'timeout'
    });
    await expect(bcc.planning(request)).rejects.toMatchObject({
      kind: 'timeout',
      message: expect.stringMatching(
        /\/planning timed out: no data from the planner for 0\.04 s after the request was sent/
      )
    });
  });

  it('measures what the chosen dialect sends; nothing before a dialect is known, nothing for dslc', async () => {
    const transport = new FakeTransport(v1Server());
    const auto = createDialectSelector({
      protocol: 'auto',
      transport,
      dialects: withAdapter('dslc', fakeDslc()),
      cache: new Map()
    });
    expect(auto.sentSize(request)).toBeNull();
    await auto.planning(request);
    expect(auto.dialect).toBe('v1');
    expect(auto.sentSize(request)).toEqual(expect.any(Number));
    const dslc = createDialectSelector({
      protocol: 'dslc',
      transport,
      dialects: withAdapter('dslc', fakeDslc())
    });
    await dslc.planning(request);
    expect(dslc.sentSize(request)).toBeNull();
  });

  it('skips detection for a fixed protocol', async () => {
    const transport = new FakeTransport(v1Server());
    const dslc = fakeDslc();
    const service = createDialectSelector({
      protocol: 'dslc',
      transport,
      dialects: withAdapter('dslc', dslc)
    });
    await service.planning(request);
    expect(transport.requests).toHaveLength(0);
    expect(dslc.calls).toEqual(['planning']);
    const v1 = createDialectSelector({
      protocol: 'v1',
      transport,
      dialects: withAdapter('dslc', dslc)
    });
    await v1.planning(request);
    expect(v1.dialect).toBe('v1');
    expect(transport.requests).toHaveLength(0);
  });

  it('re-detects once when a route goes missing, never for a dialect 404', async () => {
    let server: 'dslc' | 'v1' = 'dslc';
    const transport = new FakeTransport(req =>
      server === 'dslc' ? json({ targetAchieved: false }) : v1Server()(req)
    );
    const cache = new Map<string, DialectName>();
    const dslc: IDialectAdapter = {
      async planning() {
        throw new RouteMissingError({
          kind: 'http',
          url: 'u',
          status: 404,
          message: 'gone'
        });
      },
      async *generating() {
        yield* [];
      }
    };
    const service = createDialectSelector({
      protocol: 'auto',
      transport,
      dialects: withAdapter('dslc', dslc),
      cache
    });
    await service.planning(request);
    expect(service.dialect).toBe('dslc');
    server = 'v1';
    const answer = await service.planning(request);
    expect(service.dialect).toBe('v1');
    expect(answer.context_update?.workflow_update).toBeDefined();

    // A 404 that is an answer of v1 (Sequence …) fails the request without detection.
    const sequence = new FakeTransport(req =>
      req.path === 'v1/actions'
        ? json({ detail: 'Sequence for section s not found' }, 404)
        : v1Server()(req)
    );
    const v1 = createDialectSelector({
      protocol: 'auto',
      transport: sequence,
      dialects: withAdapter('dslc', fakeDslc()),
      cache: new Map([['http://planner.test', 'v1' as DialectName]])
    });
    const error = await collect(
      v1.generating({
        observation: { location: { current: { stage_id: 'c', step_id: 's' } } }
      })
    ).catch(e => e);
    expect(error.message).toBe(
      'planner failed in step s (no details returned)'
    );
    expect(sequence.paths()).toEqual(['POST v1/actions']);
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
