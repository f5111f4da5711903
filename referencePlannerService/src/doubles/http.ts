/**
 * What the dialect doubles share: a small HTTP server with permissive CORS, a log of the requests
 * it received (`GET /__requests`, optionally a JSONL file), and Python-flavoured JSON text.
 */
import { appendFileSync } from 'fs';
import { createServer, IncomingMessage } from 'http';
import type { AddressInfo, Socket } from 'net';

import { IAnswer, writeAnswer } from '../answer';
import type { IRunningPlannerServer } from '../server';

/** The test-only route that lists (GET) or clears (DELETE) the recorded requests. */
export const REQUESTS_PATH = '/__requests';

const MAX_BODY_BYTES = 5 * 1024 * 1024;

export interface IRecordedRequest {
  /** From 1, in arrival order. */
  seq: number;
  at: string;
  method: string;
  path: string;
  contentType: string | null;
  /** The parsed JSON body, or the raw text when it is not JSON (null when empty). */
  body: unknown;
  status: number;
}

export interface IDialectServerOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Append one JSON line per request to this file as well. */
  recordFile?: string | null;
  /** One line per request; `console.log` by default, `null` for silence. */
  log?: ((line: string) => void) | null;
}

export interface IRunningDoubleServer extends IRunningPlannerServer {
  /** The requests received so far (the test-only route excluded). */
  requests(): IRecordedRequest[];
}

export interface IDoubleRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** Raw body text (empty for GET). */
  text: string;
  /** The parsed body, or `undefined` when it is empty or not JSON. */
  json: unknown;
}

export type DoubleHandler = (request: IDoubleRequest) => IAnswer;

/** Starlette's CORSMiddleware with every origin, method and header allowed. */
const ALLOWED_METHODS = 'DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT';

/** Body bytes as a single chunk with the given type; FastAPI's `JSONResponse` is compact JSON. */
export function textAnswer(
  status: number,
  contentType: string,
  text: string
): IAnswer {
  return {
    status,
    headers: { 'Content-Type': contentType },
    firstByteDelayMs: 0,
    chunks: [{ data: Buffer.from(text), delayMs: 0 }],
    ending: 'end',
    kind: 'json'
  };
}

export function fastApiJson(status: number, body: unknown): IAnswer {
  return textAnswer(status, 'application/json', JSON.stringify(body));
}

/** FastAPI's answer for a route that does not exist. */
export const notFound = (): IAnswer =>
  fastApiJson(404, { detail: 'Not Found' });

/** Lines written one chunk each; `delays[i]` is the wait before line i. */
export function streamAnswer(
  contentType: string,
  lines: readonly string[],
  delays: readonly number[]
): IAnswer {
  return {
    status: 200,
    headers: { 'Content-Type': contentType },
    firstByteDelayMs: 0,
    chunks: lines.map((line, i) => ({
      data: Buffer.from(line + '\n'),
      delayMs: delays[i] ?? 0
    })),
    ending: 'end',
    kind: 'ndjson'
  };
}

/** `json.dumps` with its defaults: `", "` and `": "` separators, non-ASCII as `\uXXXX` (surrogate pairs for emoji). */
export function pythonJson(value: unknown): string {
  if (value === null || value === undefined) {
    return 'null';
  }
  if (typeof value === 'string') {
    return JSON.stringify(value).replace(
      /[\u007f-\uffff]/g,
      char => '\\u' + char.charCodeAt(0).toString(16).padStart(4, '0')
    );
  }
  if (Array.isArray(value)) {
    return '[' + value.map(pythonJson).join(', ') + ']';
  }
  if (typeof value === 'object') {
    return (
      '{' +
      Object.entries(value as Record<string, unknown>)
        .filter(([, item]) => item !== undefined)
        .map(([key, item]) => `${pythonJson(key)}: ${pythonJson(item)}`)
        .join(', ') +
      '}'
    );
  }
  return JSON.stringify(value);
}

/** A Python list literal of strings, as the v1 server prints missing names: `['a', 'b']`. */
export function pythonList(names: readonly string[]): string {
  return '[' + names.map(name => `'${name}'`).join(', ') + ']';
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) {
        parts.push(chunk);
      }
    });
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function parseJson(text: string): unknown {
  if (!text.trim()) {
    return undefined;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export function startDoubleServer(
  name: string,
  options: IDialectServerOptions,
  handler: DoubleHandler
): Promise<IRunningDoubleServer> {
  const host = options.host ?? '127.0.0.1';
  const log =
    options.log === undefined
      ? (line: string) => console.log(line)
      : options.log;
  const recorded: IRecordedRequest[] = [];
  const sockets = new Set<Socket>();

  const server = createServer((req, res) => {
    const method = req.method ?? 'GET';
    const path = new URL(req.url ?? '/', 'http://double').pathname;
    const origin = req.headers.origin;
    res.setHeader('Access-Control-Allow-Origin', '*');
    if (method === 'OPTIONS' && origin) {
      const asked = req.headers['access-control-request-headers'];
      res.writeHead(200, {
        'Access-Control-Allow-Methods': ALLOWED_METHODS,
        'Access-Control-Max-Age': '600',
        ...(asked ? { 'Access-Control-Allow-Headers': asked } : {}),
        'Content-Type': 'text/plain; charset=utf-8'
      });
      res.end('OK');
      log?.(`[${name}] OPTIONS ${path} 200`);
      return;
    }
    if (path === REQUESTS_PATH) {
      if (method === 'DELETE') {
        recorded.length = 0;
      }
      void writeAnswer(res, fastApiJson(200, recorded));
      return;
    }
    readBody(req)
      .then(text => {
        const answer = handler({
          method,
          path,
          headers: req.headers,
          text,
          json: parseJson(text)
        });
        const entry: IRecordedRequest = {
          seq: recorded.length + 1,
          at: new Date().toISOString(),
          method,
          path,
          contentType: req.headers['content-type'] ?? null,
          body: parseJson(text) ?? (text ? text : null),
          status: answer.status
        };
        recorded.push(entry);
        if (options.recordFile) {
          appendFileSync(options.recordFile, JSON.stringify(entry) + '\n');
        }
        log?.(`[${name}] ${method} ${path} ${answer.status}`);
        return writeAnswer(res, answer);
      })
      .catch((error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        log?.(`[${name}] ${method} ${path} failed: ${message}`);
        if (!res.headersSent) {
          res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
          res.end('Internal Server Error');
        } else {
          res.destroy();
        }
      });
  });
  server.on('connection', socket => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      const port = (server.address() as AddressInfo).port;
      const shownHost = host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${shownHost}:${port}`,
        port,
        requests: () => recorded.slice(),
        close: () =>
          new Promise<void>(done => {
            for (const socket of sockets) {
              socket.destroy();
            }
            server.close(() => done());
          })
      });
    });
  });
}
