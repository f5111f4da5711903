import { PlannerError } from '../../protocol';
import { endpointOf, RunTrace } from '../trace';
import type { TraceRecord } from '../../protocol/traceFormat';

describe('RunTrace', () => {
  it('records exchanges from the client observer as JSONL with timings', () => {
    let now = 1000;
    const trace = new RunTrace({ now: () => now });
    now = 1005;
    trace.onRequest('http://localhost:28600/planning', { observation: {} });
    now = 1010;
    trace.onResponse(
      'http://localhost:28600/planning',
      200,
      { targetAchieved: false },
      false
    );
    trace.onEnd('http://localhost:28600/planning');
    now = 1020;
    trace.onRequest('http://localhost:28600/generating', { observation: {} });
    trace.onResponse('http://localhost:28600/generating', 200, undefined, true);
    now = 1030;
    trace.onLine(
      'http://localhost:28600/generating',
      '{"action":{"action":"add"}}'
    );
    trace.onEnd(
      'http://localhost:28600/generating',
      new PlannerError({
        kind: 'network',
        url: 'u',
        message: 'connection reset'
      })
    );
    const lines = trace.toJSONL().split('\n');
    expect(lines.pop()).toBe('');
    const records = lines.map(l => JSON.parse(l) as TraceRecord);
    expect(records).toEqual([
      {
        kind: 'request',
        seq: 1,
        t: 5,
        endpoint: '/planning',
        body: { observation: {} }
      },
      {
        kind: 'response',
        seq: 1,
        t: 10,
        endpoint: '/planning',
        status: 200,
        body: { targetAchieved: false }
      },
      { kind: 'end', seq: 1, t: 10, endpoint: '/planning' },
      {
        kind: 'request',
        seq: 2,
        t: 20,
        endpoint: '/generating',
        body: { observation: {} }
      },
      {
        kind: 'response',
        seq: 2,
        t: 20,
        endpoint: '/generating',
        status: 200,
        stream: true
      },
      {
        kind: 'line',
        seq: 2,
        t: 30,
        endpoint: '/generating',
        line: '{"action":{"action":"add"}}'
      },
      {
        kind: 'end',
        seq: 2,
        t: 30,
        endpoint: '/generating',
        error: 'connection reset'
      }
    ]);
  });

  it('drops the oldest requests whole past its cap, never the newest', () => {
    const trace = new RunTrace({ now: () => 0, maxChars: 1000 });
    for (let i = 0; i < 10; i++) {
      const seq = trace.request('/planning', { pad: 'p'.repeat(150) });
      trace.end(seq, '/planning');
    }
    expect(trace.toJSONL().length).toBeLessThanOrEqual(1000);
    expect(trace.droppedRequests).toBeGreaterThan(0);
    const seqs = trace.records.map(r => r.seq);
    expect(seqs[seqs.length - 1]).toBe(10);
    for (const seq of new Set(seqs)) {
      expect(trace.records.filter(r => r.seq === seq).map(r => r.kind)).toEqual(
        ['request', 'end']
      );
    }
    const huge = trace.request('/generating', { pad: 'x'.repeat(5000) });
    expect(trace.records.map(r => r.seq)).toEqual([huge]);
  });

  it('keeps what was sent, not the live object, and counts its records', () => {
    const trace = new RunTrace({ now: () => 0 });
    const body = { observation: { variables: { df: 'DataFrame(3×2)' } } };
    const seq = trace.request('/planning', body);
    body.observation.variables.df = 'changed later';
    trace.end(seq, '/planning');
    expect(trace.length).toBe(2);
    expect(trace.records[0]).toMatchObject({
      kind: 'request',
      body: { observation: { variables: { df: 'DataFrame(3×2)' } } }
    });
    const [request] = trace.records;
    expect(request.kind === 'request' && request.body).not.toBe(body);
  });

  it('names endpoints by their path', () => {
    expect(endpointOf('http://localhost:28600/generating')).toBe('/generating');
    expect(endpointOf('https://h/api/generate?x=1')).toBe('/api/generate');
    expect(endpointOf('/planning')).toBe('/planning');
  });
});
