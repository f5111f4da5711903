import { request as httpRequest } from 'http';

import {
  IPlannerServerOptions,
  IRunningPlannerServer,
  startPlannerServer
} from '../server';

export {
  DATA_PATH,
  requestBody,
  TASK
} from '../../../src/referencePlanner/__tests__/fixture';
export type { IObservationOptions } from '../../../src/referencePlanner/__tests__/fixture';

export interface IRawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  chunks: Buffer[];
  /** Milliseconds from sending the request to the response headers. */
  headersAfterMs: number;
  /** `end`: the body completed; `error`: the connection broke; `timeout`: still open when we gave up. */
  outcome: 'end' | 'error' | 'timeout';
  body: Buffer;
  text: string;
}

/** A plain `http.request`, so that the chunks and the way the connection ends are visible. */
export function rawRequest(
  url: string,
  options: {
    method?: string;
    body?: string | Buffer;
    headers?: Record<string, string>;
    /** Give up (and destroy the request) this long after the last byte. */
    idleMs?: number;
    onChunk?: (chunk: Buffer, all: Buffer[]) => void;
  } = {}
): Promise<IRawResponse> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const chunks: Buffer[] = [];
    let status = 0;
    let headers: IRawResponse['headers'] = {};
    let headersAfterMs = -1;
    let settled = false;
    let idle: NodeJS.Timeout | undefined;
    const finish = (outcome: IRawResponse['outcome']): void => {
      if (settled) {
        return;
      }
      settled = true;
      clearTimeout(idle);
      const body = Buffer.concat(chunks);
      resolve({
        status,
        headers,
        chunks,
        headersAfterMs,
        outcome,
        body,
        text: body.toString('utf8')
      });
    };
    const armIdle = (): void => {
      if (options.idleMs) {
        clearTimeout(idle);
        idle = setTimeout(() => {
          finish('timeout');
          req.destroy();
        }, options.idleMs);
      }
    };
    const req = httpRequest(
      url,
      {
        method: options.method ?? 'POST',
        headers: {
          ...(options.body !== undefined
            ? { 'Content-Type': 'application/json' }
            : {}),
          ...(options.headers ?? {})
        }
      },
      res => {
        status = res.statusCode ?? 0;
        headers = res.headers;
        headersAfterMs = Date.now() - started;
        armIdle();
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          options.onChunk?.(chunk, chunks);
          armIdle();
        });
        res.on('end', () => finish('end'));
        res.on('error', () => finish('error'));
        res.on('aborted', () => finish('error'));
        res.on('close', () => finish(res.complete ? 'end' : 'error'));
      }
    );
    req.on('error', error =>
      settled ? undefined : status ? finish('error') : reject(error)
    );
    if (options.body !== undefined) {
      req.write(options.body);
    }
    req.end();
  });
}

export function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {}
): Promise<IRawResponse> {
  return rawRequest(url, { body: JSON.stringify(body), headers });
}

export function linesOf(text: string): string[] {
  return text.split('\n').filter(line => line.trim().length > 0);
}

/** The actions of an NDJSON body, failing the test if a line is not `{"action": {...}}`. */
export function actionsOf(text: string): Array<Record<string, unknown>> {
  return linesOf(text).map(line => {
    const parsed = JSON.parse(line) as { action?: Record<string, unknown> };
    if (!parsed.action || typeof parsed.action !== 'object') {
      throw new Error(`not an action line: ${line.slice(0, 200)}`);
    }
    return parsed.action;
  });
}

export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>(r => (resolve = r));
  return { promise, resolve };
}

/** The first step of the reference planner's workflow, as a `/generating` request names it. */
export const LOAD_STEP = {
  stageId: 'data_loading',
  stepId: 'load_data',
  iteration: 1,
  stream: true
};

/**
 * The reference planner service of one spec file: `start` runs it on a free port (its log lines kept
 * in `logLines`), and it is closed after each test.
 */
export function servedPlanner(): {
  readonly server: IRunningPlannerServer;
  readonly logLines: string[];
  start(options?: IPlannerServerOptions): Promise<IRunningPlannerServer>;
} {
  let server: IRunningPlannerServer | undefined;
  let logLines: string[] = [];
  afterEach(async () => {
    await server?.close();
  });
  return {
    get server(): IRunningPlannerServer {
      if (!server) {
        throw new Error('the planner was not started');
      }
      return server;
    },
    get logLines(): string[] {
      return logLines;
    },
    async start(options: IPlannerServerOptions = {}) {
      logLines = [];
      const lines = logLines;
      server = await startPlannerServer({
        port: 0,
        lineDelayMs: 0,
        log: line => lines.push(line),
        ...options
      });
      return server;
    }
  };
}
