/**
 * The timing of planner requests: first-byte and stall timeouts on one exchange, and the retry policy
 * (exponential backoff, `Retry-After`) of the requests that may be repeated.
 */
import { abortError, excerpt, networkError, PlannerError } from './errors';
import { isRecord } from './fields';
import { type ProtocolText, say, textOf } from './messages';
import { type IPlannerTransport, withSend } from './transport';

/** Longest `/planning` answer read, in characters (docs/protocol.md#limits). */
export const MAX_PLANNING_BODY_CHARS = 8 * 1024 * 1024;
/** Longest part of an error answer read: only an excerpt of it is ever shown. */
export const MAX_ERROR_BODY_CHARS = 64 * 1024;

/** How a body is read: up to `maxChars`, then cut (an error body) or failed (an answer). */
export interface IBodyLimit {
  maxChars: number;
  over: 'cut' | 'fail';
}

export const PLANNING_BODY: IBodyLimit = {
  maxChars: MAX_PLANNING_BODY_CHARS,
  over: 'fail'
};
export const ERROR_BODY: IBodyLimit = {
  maxChars: MAX_ERROR_BODY_CHARS,
  over: 'cut'
};

/** A body longer than its limit, not read to its end. */
export class BodyTooLong extends Error {
  constructor(readonly maxChars: number) {
    super(
      `the body is over ${maxChars.toLocaleString('en-US')} characters; the rest was not read`
    );
  }
}

/**
 * Decodes `chunks` into text, up to `limit.maxChars`: past it, reading stops (the stream is left, so
 * its producer cancels it) and the text is cut or `BodyTooLong` is thrown.
 */
export async function collectText(
  chunks: AsyncIterable<Uint8Array>,
  limit: IBodyLimit
): Promise<string> {
  const decoder = new TextDecoder('utf-8');
  const pieces: string[] = [];
  let length = 0;
  for await (const chunk of chunks) {
    const piece = decoder.decode(chunk, { stream: true });
    pieces.push(piece);
    length += piece.length;
    if (length > limit.maxChars) {
      if (limit.over === 'fail') {
        throw new BodyTooLong(limit.maxChars);
      }
      return pieces.join('').slice(0, limit.maxChars);
    }
  }
  pieces.push(decoder.decode());
  return pieces.join('');
}

/** A response's body as chunks, cancelled when the reader stops early. */
export async function* bodyChunks(
  response: Response
): AsyncGenerator<Uint8Array, void, undefined> {
  if (!response.body) {
    yield new Uint8Array(await response.arrayBuffer());
    return;
  }
  const reader = response.body.getReader();
  try {
    for (;;) {
      const result = await reader.read();
      if (result.done) {
        return;
      }
      yield result.value;
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

export type SleepLike = (ms: number, signal?: AbortSignal) => Promise<void>;

/** `Retry-After` as seconds or an HTTP date -> milliseconds from `now`. */
export function parseRetryAfter(
  value: string | null,
  now = Date.now()
): number | undefined {
  const text = value?.trim();
  if (!text) {
    return undefined;
  }
  if (/^\d+(\.\d+)?$/.test(text)) {
    return Math.round(parseFloat(text) * 1000);
  }
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Milliseconds as the seconds of a message (`%1 s`): `1500` → `1.5`. */
export function seconds(ms: number): number {
  return Number((ms / 1000).toFixed(3));
}

export const defaultSleep: SleepLike = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** Longest `message` of a JSON error body shown: it is written for the user, so more of it is kept. */
const ERROR_MESSAGE_LENGTH = 1000;

/** A string field of a JSON error body (`{"message": "…"}`, the LLM planner's and the relay's form), or ''. */
function jsonField(body: string, field: 'message' | 'action'): string {
  try {
    const parsed: unknown = JSON.parse(body);
    return isRecord(parsed) && typeof parsed[field] === 'string'
      ? excerpt(parsed[field], ERROR_MESSAGE_LENGTH)
      : '';
  } catch {
    return '';
  }
}

/**
 * An answer with an error status, as a `PlannerError` naming the request, the status and the body: the
 * body's own `message` when it is a JSON object with one, else an excerpt of the body.
 */
export function httpError(
  request: string,
  url: string,
  response: Response,
  body: string
): PlannerError {
  const bodyExcerpt = excerpt(body) || undefined;
  const shown = jsonField(body, 'message') || bodyExcerpt;
  const action = jsonField(body, 'action');
  const status = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
  return new PlannerError({
    kind: 'http',
    url,
    status: response.status,
    bodyExcerpt,
    retryAfterMs: parseRetryAfter(response.headers.get('Retry-After')),
    ...(action ? { action } : {}),
    ...say('requestFailed', request, `${status}${shown ? `: ${shown}` : ''}`)
  });
}

/** A successful status with a body that cannot be understood. */
export function invalidResponse(
  request: string,
  url: string,
  status: number,
  problem: string,
  body: string
): PlannerError {
  const bodyExcerpt = excerpt(body) || undefined;
  return new PlannerError({
    kind: 'invalid',
    url,
    status,
    bodyExcerpt,
    ...(bodyExcerpt
      ? say('invalidResponseWithBody', request, status, problem, bodyExcerpt)
      : say('invalidResponse', request, status, problem))
  });
}

/** The first-byte and stall timeouts of a planner's answers, in milliseconds (0 = none). */
export interface ITimeouts {
  /** From sending the request to the first byte of its body. */
  firstByteTimeoutMs: number;
  /** Between two chunks of a body. */
  stallTimeoutMs: number;
}

export interface IExchangeOptions extends ITimeouts {
  method: 'GET' | 'POST';
  url: string;
  /** The caller's signal (Stop). */
  signal?: AbortSignal;
  /** Called once, when the first byte of the body arrives. */
  onFirstByte?: () => void;
}

/**
 * One HTTP exchange: links the caller's signal to the request and enforces the first-byte and stall
 * timeouts on sending and on every read of the body.
 */
export class Exchange {
  constructor(private readonly _options: IExchangeOptions) {
    this.url = _options.url;
    this.request = `${_options.method} ${_options.url}`;
    const signal = _options.signal;
    if (signal?.aborted) {
      this._onAbort();
    } else {
      signal?.addEventListener('abort', this._onAbort, { once: true });
    }
  }

  readonly url: string;
  /** `POST <url>`, the prefix of every message about this exchange. */
  readonly request: string;

  /** Aborted on the caller's abort and on a timeout: give it to the request. */
  get signal(): AbortSignal {
    return this._controller.signal;
  }

  abortError(): PlannerError {
    return abortError(this.request, this.url, this._options.signal?.reason);
  }

  /** Resolves with `work` unless the caller aborts or no byte arrives in time. */
  guard<T>(work: Promise<T>): Promise<T> {
    const firstByte = !this._receivedData;
    const { firstByteTimeoutMs, stallTimeoutMs } = this._options;
    const signal = this._options.signal;
    const timeoutMs = firstByte
      ? Math.max(0, firstByteTimeoutMs - (Date.now() - this._started))
      : stallTimeoutMs;
    const limited = firstByte ? firstByteTimeoutMs > 0 : stallTimeoutMs > 0;
    return new Promise<T>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const settle = (done: () => void) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        done();
      };
      const onAbort = () => settle(() => reject(this.abortError()));
      if (signal?.aborted) {
        onAbort();
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      if (limited) {
        timer = setTimeout(() => {
          const error = this._timeoutError(firstByte);
          this._controller.abort(error);
          settle(() => reject(error));
        }, timeoutMs);
      }
      work.then(
        value => settle(() => resolve(value)),
        (error: unknown) => settle(() => reject(this.mapError(error)))
      );
    });
  }

  /** The chunks of the body as they arrive, each read under the timeouts. */
  async *chunks(
    response: Response
  ): AsyncGenerator<Uint8Array, void, undefined> {
    if (!response.body) {
      const text = await this.guard(response.text());
      this._firstByte();
      yield new TextEncoder().encode(text);
      return;
    }
    const reader = response.body.getReader();
    try {
      for (;;) {
        const result = await this.guard(reader.read());
        if (result.done) {
          return;
        }
        this._firstByte();
        yield result.value;
      }
    } finally {
      // Also reached when the consumer stops early: the planner sees the connection close.
      reader.cancel().catch(() => undefined);
    }
  }

  /** The body as text, under the same timeouts, up to `limit`; an answer over it is invalid. */
  async text(response: Response, limit: IBodyLimit): Promise<string> {
    try {
      return await collectText(this.chunks(response), limit);
    } catch (error) {
      if (error instanceof BodyTooLong) {
        throw invalidResponse(
          this.request,
          this.url,
          response.status,
          error.message,
          ''
        );
      }
      throw error;
    }
  }

  mapError(error: unknown): PlannerError {
    if (this._options.signal?.aborted) {
      return this.abortError();
    }
    if (error instanceof PlannerError) {
      return error;
    }
    return networkError(this.request, this.url, error);
  }

  dispose(): void {
    this._options.signal?.removeEventListener('abort', this._onAbort);
  }

  private _firstByte(): void {
    if (!this._receivedData) {
      this._receivedData = true;
      this._options.onFirstByte?.();
    }
  }

  private _timeoutError(firstByte: boolean): PlannerError {
    return new PlannerError({
      kind: 'timeout',
      url: this.url,
      ...(firstByte
        ? say(
            'firstByteTimeout',
            this.request,
            seconds(this._options.firstByteTimeoutMs)
          )
        : say(
            'stallTimeout',
            this.request,
            seconds(this._options.stallTimeoutMs)
          ))
    });
  }

  private _onAbort = () => this._controller.abort(this._options.signal?.reason);
  private readonly _controller = new AbortController();
  private readonly _started = Date.now();
  private _receivedData = false;
}

/**
 * `transport` whose every answer is bounded by the timeouts `timeouts()` gives when the request is
 * sent: its headers and first byte by the first-byte timeout, each later chunk by the stall timeout;
 * the body is read as it streams. The v1 and bcc adapters and detection send through it (the dslc
 * adapter runs its own exchanges).
 */
export function withTimeouts(
  transport: IPlannerTransport,
  timeouts: () => ITimeouts
): IPlannerTransport {
  return withSend(transport, async request => {
    const exchange = new Exchange({
      method: request.method,
      url: transport.urlOf(request.path),
      signal: request.signal,
      ...timeouts()
    });
    let response: Response;
    try {
      response = await exchange.guard(
        transport.send({ ...request, signal: exchange.signal })
      );
    } catch (error) {
      exchange.dispose();
      throw error;
    }
    if (!response.body || [101, 204, 205, 304].includes(response.status)) {
      // No body to time: a status without one, or a `fetch` whose answers have no stream.
      exchange.dispose();
      return response;
    }
    // The stream class of the answer's own body: the one its `Response` takes (a test
    // environment's `fetch` may not share the global one, or have none global).
    const body = streamOf(
      response.body.constructor as typeof ReadableStream,
      exchange.chunks(response),
      () => exchange.dispose()
    );
    const timed = new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers
    });
    Object.defineProperty(timed, 'url', { value: response.url });
    return timed;
  });
}

/**
 * The chunks as a body. Nothing is read ahead (`highWaterMark` 0): a chunk is asked for, and its
 * timeout runs, only when the reader wants one, as with `Exchange.chunks`; and a cancel finds no read
 * pending, so it reaches the answer's connection at once.
 */
function streamOf(
  Stream: typeof ReadableStream,
  chunks: AsyncGenerator<Uint8Array, void, undefined>,
  done: () => void
): ReadableStream<Uint8Array> {
  return new Stream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const next = await chunks.next();
          if (next.done) {
            done();
            controller.close();
          } else {
            controller.enqueue(next.value);
          }
        } catch (error) {
          done();
          controller.error(error);
        }
      },
      async cancel() {
        done();
        await chunks.return(undefined);
      }
    },
    { highWaterMark: 0 }
  );
}

export interface IRetryPolicy {
  /** Retries after the first attempt. */
  retries: number;
  /** First retry delay, doubled on each further retry. */
  baseDelayMs: number;
  /** Upper bound for any retry delay, including `Retry-After`. */
  maxDelayMs: number;
  sleep: SleepLike;
}

/** Failures worth another attempt: no answer (or none in time), a server error, "too many requests". */
export function isRetryable(error: PlannerError): boolean {
  if (error.kind === 'network' || error.kind === 'timeout') {
    return true;
  }
  return (
    error.kind === 'http' &&
    error.status !== undefined &&
    (error.status >= 500 || error.status === 429)
  );
}

/**
 * Whether a warning only reports the client's own work (a retry): shown to the user, never handed to
 * the planner as an effect, which is what the code produced.
 */
export function isClientNotice(warning: {
  text?: { id: string } | null;
}): boolean {
  return warning.text?.id === 'retrying';
}

/**
 * Runs `attempt` until it succeeds, fails for good, or the retries are spent. `onRetry` hears why it
 * waits ("...; retrying in 2 s (retry 1 of 3)"), a notice (`isClientNotice`).
 */
export async function withRetries<T>(
  attempt: () => Promise<T>,
  policy: IRetryPolicy,
  context: {
    request: string;
    url: string;
    signal?: AbortSignal;
    onRetry: (warning: ProtocolText) => void;
  }
): Promise<T> {
  for (let retry = 0; ; retry++) {
    try {
      return await attempt();
    } catch (error) {
      const failure =
        error instanceof PlannerError
          ? error
          : networkError(context.request, context.url, error);
      if (!isRetryable(failure) || retry >= policy.retries) {
        throw failure;
      }
      const delay = Math.min(
        failure.retryAfterMs ?? policy.baseDelayMs * 2 ** retry,
        policy.maxDelayMs
      );
      context.onRetry(
        say(
          'retrying',
          textOf(failure),
          seconds(delay),
          retry + 1,
          policy.retries
        )
      );
      try {
        await policy.sleep(delay, context.signal);
      } catch (sleepError) {
        throw abortError(context.request, context.url, sleepError);
      }
      if (context.signal?.aborted) {
        throw abortError(context.request, context.url);
      }
    }
  }
}
