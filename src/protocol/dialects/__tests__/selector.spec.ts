/**
 * The dialect selector: the dialect fixed, remembered, restored or detected once per run, its adapter
 * handed out, detection run again once when a route goes missing.
 */

import { RouteMissingError } from '../common';
import type { IDialectAdapter } from '../dialect';
import type { DialectName } from '../registry';
import { createDialectSelector } from '../selector';
import { collect, FakeTransport, json, text } from './fakeTransport';
import { fakeDslc, NOTEBOOK, request, withAdapter } from './fakeDialects';
import { v1Server } from './v1Fixtures';

describe('the dialect selector', () => {
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
