/**
 * How planner requests leave the browser. The protocol code names a path relative to the planner's root
 * (`planning`, `v1/actions`, `v2/health`); a transport decides where that goes: straight to the planner
 * (`browser`) or through the Jupyter server's relay (`server`), which adds the admin's token itself.
 */
import { describeCause, PlannerError } from './errors';
import { type IMessage, type ProtocolMessageId, say } from './messages';

/** The header the reference planner keys its sessions by; the id also travels as `notebook_id`. */
export const NOTEBOOK_ID_HEADER = 'X-Notebook-Id';

/** Characters `notebook_id` adds to a request body (docs/protocol.md#notebook-id), so callers can fit the rest. */
export function notebookIdOverhead(notebookId: string | undefined): number {
  return notebookId ? JSON.stringify({ notebook_id: notebookId }).length : 0;
}

/** One HTTP request to the planner. */
export interface IPlannerRequest {
  method: 'GET' | 'POST';
  /** Relative to the planner root, without a leading slash: `planning`, `v1/actions`. */
  path: string;
  /** Sent as JSON (`Content-Type: application/json`); absent for GET. */
  body?: unknown;
  /** Extra headers; every value must be ASCII (the transport percent-encodes what is not). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export interface IPlannerTransport {
  /** Where requests go, for messages: the planner URL, or the relay's URL and the planner it serves. */
  readonly label: string;
  /** The label as a message the UI translates, when it is words and not a URL. */
  readonly labelText?: IMessage<ProtocolMessageId>;
  /** The URL a path is sent to, for messages and the trace. */
  urlOf(path: string): string;
  /**
   * Sends the request and resolves once the answer's headers arrive; the body is read as it streams.
   * Rejects only when no answer came (network failure, abort); any HTTP status resolves.
   */
  send(request: IPlannerRequest): Promise<Response>;
}

/**
 * `transport` sending through `send`, its label and URLs read through (a deferred transport names its
 * choice once it is made): what a wrapper around a transport changes is how it sends.
 */
export function withSend(
  transport: IPlannerTransport,
  send: (request: IPlannerRequest) => Promise<Response>
): IPlannerTransport {
  return {
    get label() {
      return transport.label;
    },
    get labelText() {
      return transport.labelText;
    },
    urlOf: path => transport.urlOf(path),
    send
  };
}

/**
 * A header value any `fetch` accepts: visible ASCII stays, everything else (spaces, `%`, non-ASCII such
 * as `数据分析 📈.ipynb`) is percent-encoded as UTF-8, so `decodeURIComponent` (Python: `unquote`) gives
 * the value back.
 */
export function asciiHeaderValue(value: string): string {
  const encoder = new TextEncoder();
  return value.replace(/[^\x21-\x24\x26-\x7E]+/gu, run =>
    Array.from(
      encoder.encode(run),
      byte => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
    ).join('')
  );
}

/** Every value made ASCII-safe (`asciiHeaderValue`). */
export function asciiHeaders(
  headers: Record<string, string> = {}
): Record<string, string> {
  const safe: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    safe[name] = asciiHeaderValue(value);
  }
  return safe;
}

/** The request's body as JSON text; a body that cannot be serialized is never sent. */
export function jsonBody(
  request: IPlannerRequest,
  url: string
): string | undefined {
  if (request.body === undefined) {
    return undefined;
  }
  try {
    return JSON.stringify(request.body);
  } catch (error) {
    throw new PlannerError({
      kind: 'invalid',
      url,
      ...say(
        'notSerializable',
        `${request.method} ${url}`,
        describeCause(error)
      ),
      cause: error
    });
  }
}
