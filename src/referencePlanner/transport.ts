/**
 * The demo planner built into the extension: the reference planner answering in the browser, offline,
 * behind the same `IPlannerTransport` seam as a remote planner. Answers are real `Response`s with a
 * streamed NDJSON body, so the client reads them exactly as it reads HTTP (`docs/architecture.md#demo-planner`).
 *
 * Load it lazily (`await import('../referencePlanner/transport')`): importing it has no side effects.
 */
import { say } from '../protocol/messages';
import type { IPlannerRequest, IPlannerTransport } from '../protocol/transport';
import {
  actionLine,
  answerPlannerRequest,
  errorBody,
  JSON_TYPE,
  methodNotAllowedMessage,
  NDJSON_TYPE,
  notebookIdOf,
  notFoundMessage,
  parsePlannerRequest,
  routeOf
} from './exchange';
import { DEMO_PACE_MS, paceDelays, planningDelay } from './pace';
import { ReferencePlanner } from './referencePlanner';
import { SessionStore } from './session';

export { DEMO_PACE_MS };

const LABEL = say('builtinLabel');
export const BUILTIN_PLANNER_LABEL = LABEL.message;

/** Not fetched: names the built-in planner in messages and traces. */
export const BUILTIN_PLANNER_URL = 'builtin://demo-planner';

export type PaceSleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface IBuiltinPlannerOptions {
  /** Pause per streamed line in milliseconds (longer before code); 0 = full speed. Default `DEMO_PACE_MS`. */
  paceMs?: number;
  /** Failed behaviors after which a step is given up. */
  maxTries?: number;
  /** Waits `ms`, rejecting when `signal` aborts; tests replace it to control time. */
  sleep?: PaceSleep;
}

export function createBuiltinPlannerTransport(
  options: IBuiltinPlannerOptions = {}
): IPlannerTransport {
  return new BuiltinPlannerTransport(options);
}

class BuiltinPlannerTransport implements IPlannerTransport {
  constructor(options: IBuiltinPlannerOptions) {
    this._pace = Math.max(0, options.paceMs ?? DEMO_PACE_MS);
    this._sleep = options.sleep ?? sleep;
    // One planner per transport: its sessions live as long as the page.
    this._planner = new ReferencePlanner({
      maxTries: options.maxTries,
      sessions: new SessionStore()
    });
  }

  readonly label = LABEL.message;
  readonly labelText = LABEL.text;

  urlOf(path: string): string {
    return `${BUILTIN_PLANNER_URL}/${path.replace(/^\/+/, '')}`;
  }

  async send(request: IPlannerRequest): Promise<Response> {
    const { signal } = request;
    throwIfAborted(signal);
    const path = '/' + request.path.split(/[?#]/)[0].replace(/^\/+|\/+$/g, '');
    const route = routeOf(request.path);
    if (!route) {
      return jsonResponse(404, errorBody(404, notFoundMessage(path)));
    }
    if (!route.methods.includes(request.method)) {
      return jsonResponse(
        405,
        errorBody(
          405,
          methodNotAllowedMessage(request.method, path, route.methods)
        ),
        { Allow: [...route.methods, 'OPTIONS'].join(', ') }
      );
    }
    if (route.name === 'health') {
      return jsonResponse(200, { status: 'ok', mode: 'builtin' });
    }
    let body: unknown;
    try {
      // Through JSON text, as over HTTP: the planner sees what a server would have parsed.
      body = JSON.parse(
        request.body === undefined ? '' : JSON.stringify(request.body)
      );
    } catch (error) {
      return jsonResponse(
        400,
        errorBody(
          400,
          `request body is not valid JSON: ${(error as Error).message}`
        )
      );
    }
    const parsed = parsePlannerRequest(route.name, body);
    if (!parsed.ok) {
      return jsonResponse(400, errorBody(400, parsed.error));
    }
    const notebookId = notebookIdOf(
      headerOf(request.headers, 'x-notebook-id'),
      body
    );
    const reply = answerPlannerRequest(
      this._planner,
      parsed.parsed,
      notebookId
    );
    if (reply.kind === 'json') {
      if (route.name === 'planning') {
        await this._sleep(planningDelay(this._pace), signal);
      }
      return jsonResponse(200, reply.body);
    }
    return ndjsonResponse(
      reply.actions.map(actionLine),
      paceDelays(reply.actions, this._pace),
      this._sleep,
      signal
    );
  }

  private readonly _pace: number;
  private readonly _sleep: PaceSleep;
  private readonly _planner: ReferencePlanner;
}

function headerOf(
  headers: Record<string, string> | undefined,
  name: string
): string | undefined {
  for (const [key, value] of Object.entries(headers ?? {})) {
    if (key.toLowerCase() === name) {
      return value;
    }
  }
  return undefined;
}

function jsonResponse(
  status: number,
  body: unknown,
  headers: Record<string, string> = {}
): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': JSON_TYPE, ...headers }
  });
}

/** A body that yields one line per read, each after its delay, and errors as soon as `signal` aborts. */
function ndjsonResponse(
  lines: readonly string[],
  delays: readonly number[],
  wait: PaceSleep,
  signal: AbortSignal | undefined
): Response {
  const encoder = new TextEncoder();
  let next = 0;
  let finished = false;
  let onAbort: (() => void) | null = null;
  const finish = (): void => {
    finished = true;
    if (onAbort) {
      signal?.removeEventListener('abort', onAbort);
    }
  };
  const stream = new ReadableStream<Uint8Array>(
    {
      start: controller => {
        onAbort = () => {
          if (!finished) {
            finish();
            controller.error(abortReason(signal));
          }
        };
        signal?.addEventListener('abort', onAbort, { once: true });
      },
      pull: async controller => {
        if (finished) {
          return;
        }
        if (next >= lines.length) {
          finish();
          controller.close();
          return;
        }
        try {
          await wait(delays[next] ?? 0, signal);
        } catch (error) {
          if (!finished) {
            finish();
            controller.error(error);
          }
          return;
        }
        if (finished) {
          return;
        }
        controller.enqueue(encoder.encode(lines[next] + '\n'));
        next++;
      },
      cancel: () => finish()
    },
    // Nothing is produced ahead of the reader, so a line leaves only when the client asks for it.
    { highWaterMark: 0 }
  );
  return new Response(stream, {
    status: 200,
    headers: {
      'Content-Type': NDJSON_TYPE,
      'Cache-Control': 'no-cache'
    }
  });
}

function abortReason(signal: AbortSignal | undefined): unknown {
  return (
    signal?.reason ??
    new DOMException('The operation was aborted.', 'AbortError')
  );
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw abortReason(signal);
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    if (ms <= 0) {
      resolve();
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
