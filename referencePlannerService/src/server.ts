/**
 * The planner's HTTP service: routing, CORS for named origins only, bearer token, body limit, request validation with the
 * shared protocol schemas, one log line per request, and fault injection on top of either mode
 * (the reference planner or the replay of a recorded trace).
 */
import { createServer, IncomingMessage, ServerResponse } from 'http';
import type { AddressInfo, Socket } from 'net';

import {
  actionLine,
  answerPlannerRequest,
  DEFAULT_NOTEBOOK_ID,
  methodNotAllowedMessage,
  notebookIdOf as notebookIdOfBody,
  notFoundMessage,
  parsePlannerRequest,
  PLANNER_ROUTES,
  PlannerReply
} from '../../src/referencePlanner/exchange';
import { paceDelays, planningDelay } from '../../src/referencePlanner/pace';
import {
  applyFaults,
  errorAnswer,
  IAnswer,
  IWriteHooks,
  jsonAnswer,
  ndjsonAnswer,
  statusFaultAnswer,
  writeAnswer
} from './answer';
import { FaultSchedule, IFaultSpec } from './faults';
import { allowedHosts, hostRefusal, isJsonContentType } from './requestGuard';
import { ReferencePlanner } from '../../src/referencePlanner/referencePlanner';
import { Endpoint, ReplayScript } from './replay';
import { SessionStore } from '../../src/referencePlanner/session';

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 28600;
export const DEFAULT_MAX_BODY = 5 * 1024 * 1024;
export const DEFAULT_LINE_DELAY_MS = 40;
export const NOTEBOOK_ID_HEADER = 'x-notebook-id';
export { DEFAULT_NOTEBOOK_ID };

/** A body this much larger than the limit is not even drained: the connection is dropped. */
const DRAIN_FACTOR = 8;

export interface IPlannerServerOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** When set, API requests need `Authorization: Bearer <token>`. */
  token?: string | null;
  /**
   * Names a request may give in `Host` besides loopback and the listen address (and, on a wildcard
   * bind, this machine's name and addresses): the name clients use for a planner behind a DNS alias.
   */
  allowedHosts?: readonly string[];
  /** Origins (`http://localhost:8888`) a browser page may call from; none by default, so no CORS headers. */
  corsOrigins?: readonly string[];
  /** Request body limit in bytes. */
  maxBodyBytes?: number;
  /** Pause between streamed actions, standing in for generation time. */
  lineDelayMs?: number;
  /**
   * Pace of a planner that thinks (`src/referencePlanner/pace.ts`): when above 0 it replaces `lineDelayMs`,
   * with longer pauses before code and before planning answers. 0 (the default) keeps full speed.
   */
  paceMs?: number;
  /** Failed behaviors after which the planner gives up a step. */
  maxTries?: number;
  /** Serve this recorded run (JSONL of TraceRecord text) instead of planning. */
  replay?: ReplayScript | null;
  faults?: readonly IFaultSpec[];
  /** One line per request; `console.log` by default, `null` for silence. */
  log?: ((line: string) => void) | null;
  hooks?: IWriteHooks;
}

export interface IRunningPlannerServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** `http://host:port` exactly, the form a browser sends in `Origin`; anything else is a usage mistake. */
export function normalizeOrigin(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`"${text}" is not an origin like http://localhost:8888`);
  }
  const bare = text.replace(/\/+$/, '');
  if (!/^https?:$/.test(url.protocol) || url.origin !== bare) {
    throw new Error(
      `"${text}" is not an origin like http://localhost:8888 (scheme, host and port only)`
    );
  }
  return url.origin;
}

const CORS_HEADERS = {
  'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
  'Access-Control-Allow-Headers':
    'Authorization, Content-Type, Accept, X-Notebook-Id',
  'Access-Control-Expose-Headers': 'Retry-After',
  'Access-Control-Max-Age': '600'
};

class BodyError extends Error {
  constructor(
    readonly status: number,
    message: string
  ) {
    super(message);
  }
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit * DRAIN_FACTOR) {
    return Promise.reject(
      new BodyError(
        413,
        `request body of ${declared} bytes exceeds the limit of ${limit} bytes`
      )
    );
  }
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) {
        parts.push(chunk);
      } else if (size > limit * DRAIN_FACTOR) {
        req.destroy();
      }
    });
    req.on('end', () => {
      if (size > limit) {
        reject(
          new BodyError(
            413,
            `request body of ${size} bytes exceeds the limit of ${limit} bytes`
          )
        );
      } else {
        resolve(Buffer.concat(parts));
      }
    });
    req.on('error', reject);
  });
}

/** The session key: the `X-Notebook-Id` header, else an id in the body, else one shared session. */
export function notebookIdOf(req: IncomingMessage, body: unknown): string {
  const header = req.headers[NOTEBOOK_ID_HEADER];
  return notebookIdOfBody(Array.isArray(header) ? header[0] : header, body);
}

function bearerOk(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization ?? '';
  const match = /^Bearer\s+(\S.*)$/i.exec(header.trim());
  return match !== null && match[1] === token;
}

export function startPlannerServer(
  options: IPlannerServerOptions = {}
): Promise<IRunningPlannerServer> {
  const host = options.host ?? DEFAULT_HOST;
  const token = options.token || null;
  const corsOrigins = new Set((options.corsOrigins ?? []).map(normalizeOrigin));
  const hosts = allowedHosts(host, options.allowedHosts);
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY;
  const lineDelay = options.lineDelayMs ?? DEFAULT_LINE_DELAY_MS;
  const pace = options.paceMs ?? 0;
  const replay = options.replay ?? null;
  const planner = new ReferencePlanner({
    maxTries: options.maxTries,
    sessions: new SessionStore()
  });
  const schedule = new FaultSchedule(options.faults ?? []);
  const log =
    options.log === undefined
      ? (line: string) => console.log(line)
      : options.log;
  const sockets = new Set<Socket>();

  async function answerApi(
    route: Endpoint,
    req: IncomingMessage
  ): Promise<IAnswer> {
    if (token && !bearerOk(req, token)) {
      return errorAnswer(
        401,
        'missing or wrong bearer token (send Authorization: Bearer <token>)',
        {
          'WWW-Authenticate': 'Bearer'
        }
      );
    }
    // A page may send a form or text/plain cross-site without asking first; JSON it may not.
    if (!isJsonContentType(req.headers['content-type'])) {
      return errorAnswer(
        415,
        `send the request body as JSON (Content-Type: application/json), not ${req.headers['content-type'] ?? 'without a Content-Type'}`
      );
    }
    let raw: Buffer;
    try {
      raw = await readBody(req, maxBody);
    } catch (error) {
      if (error instanceof BodyError) {
        return errorAnswer(error.status, error.message, {
          Connection: 'close'
        });
      }
      throw error;
    }
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch (error) {
      return errorAnswer(
        400,
        `request body is not valid JSON: ${(error as Error).message}`
      );
    }
    const notebookId = notebookIdOf(req, body);
    const parsed = parsePlannerRequest(route, body);
    if (!parsed.ok) {
      return errorAnswer(400, parsed.error);
    }
    const faults = schedule.take(route);
    const failed = statusFaultAnswer(faults);
    if (failed) {
      return failed;
    }
    const answer = replay
      ? replay.answer(route)
      : replyAnswer(answerPlannerRequest(planner, parsed.parsed, notebookId));
    if (!replay && route === 'planning' && pace > 0) {
      answer.firstByteDelayMs += planningDelay(pace);
    }
    return applyFaults(answer, faults);
  }

  function replyAnswer(reply: PlannerReply): IAnswer {
    if (reply.kind === 'json') {
      return jsonAnswer(200, reply.body);
    }
    const delays =
      pace > 0
        ? paceDelays(reply.actions, pace)
        : reply.actions.map(() => lineDelay);
    return ndjsonAnswer(reply.actions.map(actionLine), delays);
  }

  async function handle(
    req: IncomingMessage,
    res: ServerResponse
  ): Promise<IAnswer> {
    const path = new URL(req.url ?? '/', 'http://planner').pathname.replace(
      /(.)\/+$/,
      '$1'
    );
    const method = req.method ?? 'GET';
    const refusal = hostRefusal(req.headers.host, hosts);
    if (refusal) {
      return errorAnswer(403, refusal);
    }
    if (method === 'OPTIONS') {
      return {
        status: 204,
        headers: { Allow: 'GET, HEAD, POST, OPTIONS' },
        firstByteDelayMs: 0,
        chunks: [],
        ending: 'end',
        kind: 'none'
      };
    }
    const route = Object.prototype.hasOwnProperty.call(
      PLANNER_ROUTES,
      path.slice(1)
    )
      ? PLANNER_ROUTES[path.slice(1)]
      : undefined;
    if (!route) {
      return errorAnswer(404, notFoundMessage(path));
    }
    if (!route.methods.includes(method)) {
      return errorAnswer(
        405,
        methodNotAllowedMessage(method, path, route.methods),
        {
          Allow: [...route.methods, 'OPTIONS'].join(', ')
        }
      );
    }
    if (route.name === 'health') {
      return jsonAnswer(200, {
        status: 'ok',
        mode: replay ? 'replay' : 'planner',
        ...(replay
          ? { replay: { total: replay.total, remaining: replay.remaining } }
          : {}),
        faults_pending: schedule.pending.map(f => f.name)
      });
    }
    return answerApi(route.name, req);
  }

  const server = createServer((req, res) => {
    const started = process.hrtime.bigint();
    const origin = req.headers.origin;
    if (corsOrigins.size) {
      res.setHeader('Vary', 'Origin');
    }
    // Only a named origin may read answers: any page the user visits could otherwise drive the planner.
    if (origin && corsOrigins.has(origin)) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      for (const [name, value] of Object.entries(CORS_HEADERS)) {
        res.setHeader(name, value);
      }
    }
    let status = 0;
    res.on('close', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const outcome = res.writableFinished
        ? String(status)
        : `${status || '-'} (closed early)`;
      log?.(`${req.method} ${req.url} ${outcome} ${ms.toFixed(0)}ms`);
    });
    handle(req, res)
      .then(answer => {
        status = answer.status;
        return writeAnswer(res, answer, options.hooks);
      })
      .catch((error: unknown) => {
        status = 500;
        const message = error instanceof Error ? error.message : String(error);
        if (!res.headersSent) {
          return writeAnswer(
            res,
            errorAnswer(500, `planner error: ${message}`)
          );
        }
        res.destroy();
      });
  });
  server.on('connection', socket => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEFAULT_PORT, host, () => {
      server.off('error', reject);
      const port = (server.address() as AddressInfo).port;
      const shownHost = host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${shownHost}:${port}`,
        port,
        close: () =>
          new Promise<void>(done => {
            // Stalled streams would otherwise hold the server open forever.
            for (const socket of sockets) {
              socket.destroy();
            }
            server.close(() => done());
          })
      });
    });
  });
}
