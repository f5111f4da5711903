import { mkdtempSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';

import type { TraceRecord } from '../../../src/protocol/traceFormat';
import { parseCli, UsageError } from '../cli';
import { endpointOf, parseTrace, ReplayScript } from '../replay';
import { IRunningPlannerServer, startPlannerServer } from '../server';
import { linesOf, postJson, rawRequest, requestBody } from './helpers';

const BASE = 'http://127.0.0.1:28600';

function jsonl(records: TraceRecord[]): string {
  return records.map(record => JSON.stringify(record) + '\n').join('');
}

const PLANNING_ANSWER = {
  targetAchieved: false,
  transition: { continue_behaviors: true }
};
const LINES = [
  '{"action":{"action":"add","shot_type":"dialogue","content":"first"}}',
  '{"action":{"action":"add","shot_type":"action","content":"x = 1"}}',
  '{"action":{"action":"exec","codecell_id":"lastAddedCellId"}}'
];

/** planning (200) -> generating stream of three lines -> generating that broke mid-stream. */
const RECORDED: TraceRecord[] = [
  { kind: 'request', seq: 1, t: 0, endpoint: `${BASE}/planning`, body: {} },
  {
    kind: 'response',
    seq: 1,
    t: 5,
    endpoint: `${BASE}/planning`,
    status: 200,
    body: PLANNING_ANSWER
  },
  { kind: 'end', seq: 1, t: 5, endpoint: `${BASE}/planning` },
  { kind: 'request', seq: 2, t: 10, endpoint: `${BASE}/generating`, body: {} },
  {
    kind: 'response',
    seq: 2,
    t: 20,
    endpoint: `${BASE}/generating`,
    status: 200,
    stream: true
  },
  {
    kind: 'line',
    seq: 2,
    t: 20,
    endpoint: `${BASE}/generating`,
    line: LINES[0]
  },
  {
    kind: 'line',
    seq: 2,
    t: 420,
    endpoint: `${BASE}/generating`,
    line: LINES[1]
  },
  {
    kind: 'line',
    seq: 2,
    t: 430,
    endpoint: `${BASE}/generating`,
    line: LINES[2]
  },
  { kind: 'end', seq: 2, t: 430, endpoint: `${BASE}/generating` },
  { kind: 'request', seq: 3, t: 500, endpoint: `${BASE}/generate`, body: {} },
  {
    kind: 'response',
    seq: 3,
    t: 501,
    endpoint: `${BASE}/generate`,
    status: 200,
    stream: true
  },
  {
    kind: 'line',
    seq: 3,
    t: 502,
    endpoint: `${BASE}/generate`,
    line: LINES[0]
  },
  {
    kind: 'end',
    seq: 3,
    t: 503,
    endpoint: `${BASE}/generate`,
    error: 'network error'
  }
];

describe('replay of a recorded run', () => {
  let server: IRunningPlannerServer;

  afterEach(async () => {
    await server?.close();
  });

  it('reads the trace format and names endpoints liberally', () => {
    const exchanges = parseTrace(jsonl(RECORDED));
    expect(
      exchanges.map(e => [e.endpoint, e.lines.length, e.end?.error ?? null])
    ).toEqual([
      ['planning', 0, null],
      ['generating', 3, null],
      ['generating', 1, 'network error']
    ]);
    expect(endpointOf('/generate')).toBe('generating');
    expect(endpointOf('planning')).toBe('planning');
    expect(() => parseTrace('{"kind":"line"}\n', 'run.jsonl')).toThrow(
      /run\.jsonl:1: not a trace record/
    );
  });

  it('skips the notes a trace carries beside its exchanges (the dialect, a rewind, kinds it does not know)', () => {
    const notes = [
      { kind: 'dialect', seq: 1, t: 5, dialect: 'dslc' },
      { kind: 'rewind', seq: 2, t: 9, rewind: { kind: 'undo' } },
      { kind: 'a-later-note', seq: 2, t: 10 }
    ];
    const [first, ...rest] = RECORDED.map(record => JSON.stringify(record));
    const withNotes = [
      first,
      ...notes.map(note => JSON.stringify(note)),
      ...rest
    ];
    expect(parseTrace(withNotes.join('\n') + '\n')).toEqual(
      parseTrace(jsonl(RECORDED))
    );
  });

  it('answers in order with the recorded answers, lines verbatim', async () => {
    server = await startPlannerServer({
      port: 0,
      log: null,
      replay: new ReplayScript(parseTrace(jsonl(RECORDED)), 0)
    });
    const planning = await postJson(`${server.url}/planning`, requestBody());
    expect(JSON.parse(planning.text)).toEqual(PLANNING_ANSWER);
    const stream = await postJson(
      `${server.url}/generating`,
      requestBody({ stream: true })
    );
    expect(stream.headers['content-type']).toMatch(/ndjson/);
    expect(linesOf(stream.text)).toEqual(LINES);
    const broken = await postJson(
      `${server.url}/generating`,
      requestBody({ stream: true })
    );
    expect(linesOf(broken.text)).toEqual([LINES[0]]);
    expect(broken.outcome).toBe('error');
    const after = await postJson(`${server.url}/planning`, requestBody());
    expect(after.status).toBe(410);
  });

  it('refuses a request for the wrong endpoint without losing its place', async () => {
    server = await startPlannerServer({
      port: 0,
      log: null,
      replay: new ReplayScript(parseTrace(jsonl(RECORDED)), 0)
    });
    const wrong = await postJson(`${server.url}/generating`, requestBody());
    expect(wrong.status).toBe(409);
    expect(JSON.parse(wrong.text).error).toMatch(/request #1 was \/planning/);
    const right = await postJson(`${server.url}/planning`, requestBody());
    expect(right.status).toBe(200);
  });

  it('keeps the recorded gaps between lines, scaled by the speed', async () => {
    // Recorded: 400 ms between line 1 and line 2. At speed 4 the replay holds line 2 back for about 100 ms.
    const exchanges = parseTrace(jsonl(RECORDED));
    const script = new ReplayScript(exchanges, 4);
    server = await startPlannerServer({ port: 0, log: null, replay: script });
    await postJson(`${server.url}/planning`, requestBody());
    const arrivals: number[] = [];
    const started = Date.now();
    const res = await rawRequest(`${server.url}/generating`, {
      body: JSON.stringify(requestBody({ stream: true })),
      onChunk: () => {
        arrivals.push(Date.now() - started);
      }
    });
    expect(linesOf(res.text)).toEqual(LINES);
    expect(arrivals.length).toBeGreaterThanOrEqual(2);
    expect(arrivals[1] - arrivals[0]).toBeGreaterThanOrEqual(80);
  });

  it('is started from the command line with --replay and --replay-speed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bcc-replay-'));
    const file = join(dir, 'run.jsonl');
    writeFileSync(file, jsonl(RECORDED));
    const options = parseCli([
      '--port',
      '0',
      '--replay',
      file,
      '--replay-speed',
      '2',
      '--fault',
      'reset@2',
      '--quiet'
    ]);
    expect(options.server.replay?.total).toBe(3);
    expect(options.server.faults).toEqual([
      { name: 'reset', scope: 'generating', nth: 2 }
    ]);
    expect(options.server.log).toBeNull();
    expect(() => parseCli(['--replay', join(dir, 'missing.jsonl')])).toThrow(
      UsageError
    );
    expect(() => parseCli(['--fault', 'explode'])).toThrow(/unknown fault/);
    expect(parseCli(['--max-body', '512kb']).server.maxBodyBytes).toBe(
      512 * 1024
    );
  });
});
