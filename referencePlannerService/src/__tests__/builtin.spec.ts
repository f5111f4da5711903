/** The built-in (in-browser) planner and the HTTP planner are one implementation: same request, same answer. */
import type { IPlannerTransport } from '../../../src/protocol/transport';
import { createBuiltinPlannerTransport } from '../../../src/referencePlanner/transport';
import { IRunningPlannerServer, startPlannerServer } from '../server';
import {
  IObservationOptions,
  postJson,
  rawRequest,
  requestBody
} from './helpers';

const LOAD = { stageId: 'data_loading', stepId: 'load_data' };
const LOAD_EFFECT =
  'Loaded data/housing.csv: 400 rows x 25 columns\n 24  SalePrice     400 non-null    int64';

/** A run's first exchanges: the load step planned, generated, failed once, retried, then done. */
const EXCHANGES: Array<[string, IObservationOptions]> = [
  ['planning', {}],
  ['generating', { ...LOAD, stream: true }],
  [
    'planning',
    {
      ...LOAD,
      iteration: 1,
      feedback: 'error',
      effects: ['FileNotFoundError: data/housing.csv']
    }
  ],
  ['generating', { ...LOAD, iteration: 1, stream: true }],
  [
    'planning',
    {
      ...LOAD,
      iteration: 2,
      feedback: 'success',
      effects: [LOAD_EFFECT],
      variables: { df: 'DataFrame(400×25)' }
    }
  ],
  [
    'generate',
    {
      stageId: 'data_cleaning',
      stepId: 'missing_values',
      variables: { df: 'DataFrame(400×25)' },
      stream: false
    }
  ],
  [
    'generating',
    {
      stageId: 'exploratory_analysis',
      stepId: 'distributions',
      variables: { df_clean: 'DataFrame(400×24)' },
      stream: true
    }
  ]
];

async function viaTransport(
  transport: IPlannerTransport,
  path: string,
  body: unknown
): Promise<{ status: number; type: string | null; text: string }> {
  const res = await transport.send({
    method: 'POST',
    path,
    body,
    headers: { 'X-Notebook-Id': 'same.ipynb' }
  });
  return {
    status: res.status,
    type: res.headers.get('Content-Type'),
    text: await res.text()
  };
}

describe('the built-in planner answers as the HTTP planner does', () => {
  let server: IRunningPlannerServer;

  beforeEach(async () => {
    server = await startPlannerServer({ port: 0, lineDelayMs: 0, log: null });
  });

  afterEach(async () => {
    await server.close();
  });

  it('gives the same status, type and lines for the same requests in the same order', async () => {
    const transport = createBuiltinPlannerTransport({ paceMs: 0 });
    let streamed = 0;
    for (const [path, options] of EXCHANGES) {
      const body = requestBody(options);
      const http = await postJson(`${server.url}/${path}`, body, {
        'X-Notebook-Id': 'same.ipynb'
      });
      const builtin = await viaTransport(transport, path, body);
      expect(builtin.status).toBe(http.status);
      expect(builtin.type).toBe(http.headers['content-type']);
      expect(builtin.text).toBe(http.text);
      if (builtin.type?.includes('ndjson')) {
        streamed++;
        expect(builtin.text.split('\n').length).toBeGreaterThan(3);
      }
    }
    expect(streamed).toBe(3);
  });

  it('gives the same 400 for an invalid request', async () => {
    const transport = createBuiltinPlannerTransport({ paceMs: 0 });
    const body = { observation: { location: 'nowhere' } };
    const http = await postJson(`${server.url}/planning`, body);
    const builtin = await viaTransport(transport, 'planning', body);
    expect(http.status).toBe(400);
    expect(builtin.status).toBe(400);
    expect(builtin.text).toBe(http.text);
  });
});

describe('the HTTP planner paced with --pace', () => {
  it('waits before planning answers and between lines, longer before code', async () => {
    const server = await startPlannerServer({
      port: 0,
      paceMs: 40,
      log: null
    });
    try {
      const started = Date.now();
      const planned = await postJson(`${server.url}/planning`, requestBody());
      expect(planned.headersAfterMs).toBeGreaterThanOrEqual(70);
      const arrivals: Array<{ at: number; text: string }> = [];
      const streamStart = Date.now();
      const res = await rawRequest(`${server.url}/generating`, {
        body: JSON.stringify(requestBody({ ...LOAD, stream: true })),
        onChunk: chunk =>
          arrivals.push({
            at: Date.now() - streamStart,
            text: chunk.toString('utf8')
          })
      });
      expect(res.status).toBe(200);
      const codeChunk = arrivals.findIndex(chunk =>
        chunk.text.includes('"action":"add","shot_type":"action"')
      );
      expect(codeChunk).toBeGreaterThan(0);
      // The pause before the code line is four times the pace.
      expect(
        arrivals[codeChunk].at - arrivals[codeChunk - 1].at
      ).toBeGreaterThanOrEqual(150);
      const lines = res.text.trim().split('\n');
      expect(Date.now() - started).toBeGreaterThan(lines.length * 20);
    } finally {
      await server.close();
    }
  });
});
