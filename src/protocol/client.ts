/**
 * HTTP client for the planner service: `POST /planning` (JSON, retried) and `POST /generating`
 * (NDJSON stream, not retried: a failed generation stops the run and the engine offers Retry).
 * Runs anywhere `fetch` and `ReadableStream` exist; nothing here knows about JupyterLab.
 */
import { NdjsonLineSplitter } from './ndjson';
import { isRecord } from './fields';
import { isBuiltInActionName, normalizeAction } from './normalize';
import { normalizePlanningResponse } from './normalizeResponse';
import {
  Action,
  GeneratingRequestInput,
  PlanningRequestInput,
  PlanningResponse,
  UnknownAction
} from './schemas';

export const DEFAULT_PLANNER_BASE_URL = 'http://localhost:28600';

export type PlannerErrorKind =
  'network' | 'http' | 'timeout' | 'abort' | 'invalid';

export class PlannerError extends Error {
  constructor(options: {
    kind: PlannerErrorKind;
    url: string;
    message: string;
    status?: number;
    bodyExcerpt?: string;
    retryAfterMs?: number;
    cause?: unknown;
  }) {
    super(options.message, { cause: options.cause });
    this.name = 'PlannerError';
    this.kind = options.kind;
    this.url = options.url;
    this.status = options.status;
    this.bodyExcerpt = options.bodyExcerpt;
    this.retryAfterMs = options.retryAfterMs;
  }

  readonly kind: PlannerErrorKind;
  readonly url: string;
  readonly status?: number;
  /** At most 200 characters of the response body, whitespace collapsed. */
  readonly bodyExcerpt?: string;
  /** From a `Retry-After` header, in milliseconds. */
  readonly retryAfterMs?: number;
}

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export type SleepLike = (ms: number, signal?: AbortSignal) => Promise<void>;

/** Sees every exchange, e.g. to record a trace of the run. */
export interface IPlannerObserver {
  onRequest?(endpoint: string, body: unknown): void;
  /** `body` is the parsed JSON (or text) of a non-streamed answer, undefined for a stream. */
  onResponse?(
    endpoint: string,
    status: number,
    body: unknown,
    stream: boolean
  ): void;
  onLine?(endpoint: string, line: string): void;
  onEnd?(endpoint: string, error?: PlannerError): void;
}

export interface IPlannerLogger {
  warn(message: string): void;
}

export interface IPlannerClientOptions {
  /** Default `http://localhost:28600`. */
  baseUrl?: string;
  /** Sent as `Authorization: Bearer <token>` when set. */
  token?: string | null;
  /** Extra request headers (e.g. a notebook id); undefined values are left out. */
  headers?: Record<string, string | undefined>;
  fetch?: FetchLike;
  /** Time allowed from sending a request to the first byte of its body; 0 = none. Default 120 s. */
  firstByteTimeoutMs?: number;
  /** Time allowed between two chunks of a body; 0 = none. Default 60 s. */
  stallTimeoutMs?: number;
  /** Retries of /planning after network errors, 5xx and 429. Default 3. */
  planningRetries?: number;
  /** First retry delay, doubled on each further retry. Default 1 s. */
  retryBaseDelayMs?: number;
  /** Upper bound for any retry delay, including `Retry-After`. Default 60 s. */
  maxRetryDelayMs?: number;
  sleep?: SleepLike;
  observer?: IPlannerObserver;
  logger?: IPlannerLogger;
}

export interface IGeneratingOptions {
  signal?: AbortSignal;
}

export interface IPlanningOptions {
  signal?: AbortSignal;
  /** Told about every part of the answer that was not understood (also sent to the logger). */
  onWarning?: (message: string) => void;
}

export type GeneratingEvent =
  | {
      kind: 'action';
      action: Action | UnknownAction;
      index: number;
      line: string;
    }
  | { kind: 'warning'; message: string; line?: string };

const EXCERPT_LENGTH = 200;
const ACCEPT_STREAM = 'application/x-ndjson, application/json';

/** Whitespace collapsed, cut to `max` characters. */
export function excerpt(text: string, max = EXCERPT_LENGTH): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

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

function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}

function describeCause(error: unknown): string {
  if (!(error instanceof Error)) {
    return String(error);
  }
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return cause && cause !== error.message
    ? `${error.message} (${cause})`
    : error.message;
}

const defaultSleep: SleepLike = (ms, signal) =>
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

/**
 * One HTTP exchange: links the caller's signal to the request and enforces the first-byte and stall
 * timeouts on the fetch and on every read of the body.
 */
class Exchange {
  constructor(
    readonly url: string,
    private readonly _signal: AbortSignal | undefined,
    private readonly _firstByteTimeoutMs: number,
    private readonly _stallTimeoutMs: number
  ) {
    if (this._signal?.aborted) {
      this._onAbort();
    } else {
      this._signal?.addEventListener('abort', this._onAbort, { once: true });
    }
  }

  get signal(): AbortSignal {
    return this._controller.signal;
  }

  abortError(): PlannerError {
    return new PlannerError({
      kind: 'abort',
      url: this.url,
      message: `POST ${this.url} aborted`,
      cause: this._signal?.reason
    });
  }

  /** Resolves with `work` unless the caller aborts or no byte arrives in time. */
  guard<T>(work: Promise<T>): Promise<T> {
    const firstByte = !this._receivedData;
    const timeoutMs = firstByte
      ? this._firstByteTimeoutMs > 0
        ? Math.max(0, this._firstByteTimeoutMs - (Date.now() - this._started))
        : 0
      : this._stallTimeoutMs;
    const limited = firstByte
      ? this._firstByteTimeoutMs > 0
      : this._stallTimeoutMs > 0;
    return new Promise<T>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const settle = (done: () => void) => {
        clearTimeout(timer);
        this._signal?.removeEventListener('abort', onAbort);
        done();
      };
      const onAbort = () => settle(() => reject(this.abortError()));
      if (this._signal?.aborted) {
        onAbort();
        return;
      }
      this._signal?.addEventListener('abort', onAbort, { once: true });
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

  /** The next chunk of the body, or undefined at its end. */
  async read(
    reader: ReadableStreamDefaultReader<Uint8Array>
  ): Promise<Uint8Array | undefined> {
    const result = await this.guard(reader.read());
    if (result.done) {
      return undefined;
    }
    this._receivedData = true;
    return result.value;
  }

  /** The whole body as text, under the same timeouts. */
  async text(response: Response): Promise<string> {
    if (!response.body) {
      return this.guard(response.text());
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder('utf-8');
    let text = '';
    try {
      for (
        let chunk = await this.read(reader);
        chunk;
        chunk = await this.read(reader)
      ) {
        text += decoder.decode(chunk, { stream: true });
      }
    } finally {
      reader.cancel().catch(() => undefined);
    }
    return text + decoder.decode();
  }

  mapError(error: unknown): PlannerError {
    if (this._signal?.aborted) {
      return this.abortError();
    }
    if (error instanceof PlannerError) {
      return error;
    }
    return new PlannerError({
      kind: 'network',
      url: this.url,
      message: `POST ${this.url} failed: ${describeCause(error)}`,
      cause: error
    });
  }

  dispose(): void {
    this._signal?.removeEventListener('abort', this._onAbort);
  }

  private _timeoutError(firstByte: boolean): PlannerError {
    const ms = firstByte ? this._firstByteTimeoutMs : this._stallTimeoutMs;
    const detail = firstByte
      ? 'after the request was sent'
      : 'since the last chunk (stream stalled)';
    return new PlannerError({
      kind: 'timeout',
      url: this.url,
      message: `POST ${this.url} timed out: no data from the planner for ${formatSeconds(ms)} ${detail}`
    });
  }

  private _onAbort = () => this._controller.abort(this._signal?.reason);
  private readonly _controller = new AbortController();
  private readonly _started = Date.now();
  private _receivedData = false;
}

/** What one parsed NDJSON message (or a whole JSON body) holds: raw actions, or why it holds none. */
function actionsInMessage(
  message: unknown
): { actions: unknown[] } | { ignored: string } {
  const unwrap = (item: unknown) =>
    isRecord(item) && isRecord(item.action) ? item.action : item;
  if (Array.isArray(message)) {
    return { actions: message.map(unwrap) };
  }
  if (!isRecord(message)) {
    return { ignored: 'ignored line that is not a JSON object' };
  }
  if (isRecord(message.action)) {
    return { actions: [message.action] };
  }
  if (typeof message.action === 'string') {
    return { actions: [message] };
  }
  if (Array.isArray(message.actions)) {
    return { actions: message.actions.map(unwrap) };
  }
  if (typeof message.type === 'string' && isBuiltInActionName(message.type)) {
    return { actions: [message] };
  }
  if (message.error !== undefined) {
    const error =
      typeof message.error === 'string'
        ? message.error
        : JSON.stringify(message.error);
    return { ignored: `the planner reported an error: ${excerpt(error)}` };
  }
  return { ignored: 'ignored line without action' };
}

/**
 * Turns the lines of a /generating answer into events. A first line that is not JSON on its own
 * suggests one pretty-printed JSON document, so from then on lines are kept and parsed together at
 * the end (and one by one if that fails too).
 */
class ActionLineParser {
  constructor(
    private readonly _url: string,
    private readonly _log: (message: string) => void
  ) {}

  line(line: string): GeneratingEvent[] {
    if (this._wholeBody) {
      this._kept.push(line);
      return [];
    }
    return this._parseLine(line, true);
  }

  end(): GeneratingEvent[] {
    if (!this._wholeBody) {
      return [];
    }
    const text = this._kept.join('\n');
    try {
      return this._fromMessage(JSON.parse(text), text);
    } catch {
      return this._kept.flatMap(line => this._parseLine(line, false));
    }
  }

  private _parseLine(
    line: string,
    mayStartWholeBody: boolean
  ): GeneratingEvent[] {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch (error) {
      if (mayStartWholeBody && this._wholeBody === undefined) {
        this._wholeBody = true;
        this._kept.push(line);
        return [];
      }
      return [
        this._warning(
          `malformed JSON line ignored (${describeCause(error)})`,
          line
        )
      ];
    }
    this._wholeBody ??= false;
    return this._fromMessage(message, line);
  }

  private _fromMessage(message: unknown, line: string): GeneratingEvent[] {
    const found = actionsInMessage(message);
    if ('ignored' in found) {
      return [this._warning(found.ignored, line)];
    }
    const events: GeneratingEvent[] = [];
    for (const raw of found.actions) {
      const normalized = normalizeAction(raw);
      if (!normalized.ok) {
        events.push(this._warning(`action ignored: ${normalized.error}`, line));
        continue;
      }
      for (const warning of normalized.warnings) {
        events.push(this._warning(warning, line));
      }
      for (const action of normalized.actions) {
        events.push({ kind: 'action', action, index: this._index++, line });
      }
    }
    return events;
  }

  private _warning(problem: string, line: string): GeneratingEvent {
    const message = `POST ${this._url}: ${problem}: ${excerpt(line)}`;
    this._log(message);
    return { kind: 'warning', message, line };
  }

  private _wholeBody: boolean | undefined;
  private readonly _kept: string[] = [];
  private _index = 0;
}

export class PlannerClient {
  constructor(options: IPlannerClientOptions = {}) {
    this._baseUrl = (
      options.baseUrl?.trim() || DEFAULT_PLANNER_BASE_URL
    ).replace(/\/+$/, '');
    this._token = options.token?.trim() || undefined;
    this._headers = {};
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      if (value !== undefined) {
        this._headers[name] = value;
      }
    }
    this._fetch =
      options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this._firstByteTimeoutMs = options.firstByteTimeoutMs ?? 120_000;
    this._stallTimeoutMs = options.stallTimeoutMs ?? 60_000;
    this._planningRetries = options.planningRetries ?? 3;
    this._retryBaseDelayMs = options.retryBaseDelayMs ?? 1000;
    this._maxRetryDelayMs = options.maxRetryDelayMs ?? 60_000;
    this._sleep = options.sleep ?? defaultSleep;
    this._observer = options.observer ?? {};
    this._logger = options.logger ?? { warn: message => console.warn(message) };
  }

  get baseUrl(): string {
    return this._baseUrl;
  }

  /**
   * Asks whether the current step's target is achieved (and gets context updates). Retried with
   * exponential backoff on network errors, 5xx and 429 (honouring `Retry-After`).
   */
  async planning(
    request: PlanningRequestInput,
    options: IPlanningOptions = {}
  ): Promise<PlanningResponse> {
    const url = `${this._baseUrl}/planning`;
    for (let retry = 0; ; retry++) {
      try {
        return await this._planningOnce(url, request, options);
      } catch (error) {
        const failure =
          error instanceof PlannerError
            ? error
            : new PlannerError({
                kind: 'network',
                url,
                message: `POST ${url} failed: ${describeCause(error)}`
              });
        if (!this._isRetryable(failure) || retry >= this._planningRetries) {
          throw failure;
        }
        const delay = Math.min(
          failure.retryAfterMs ?? this._retryBaseDelayMs * 2 ** retry,
          this._maxRetryDelayMs
        );
        this._logger.warn(
          `${failure.message}; retrying in ${formatSeconds(delay)} (retry ${retry + 1} of ${this._planningRetries})`
        );
        try {
          await this._sleep(delay, options.signal);
        } catch (sleepError) {
          throw new PlannerError({
            kind: 'abort',
            url,
            message: `POST ${url} aborted`,
            cause: sleepError
          });
        }
        if (options.signal?.aborted) {
          throw new PlannerError({
            kind: 'abort',
            url,
            message: `POST ${url} aborted`
          });
        }
      }
    }
  }

  /**
   * Streams the actions of the next behavior as they arrive. Falls back to `/generate` when
   * `/generating` answers 404. Problems with single lines are yielded as warnings; the stream goes on.
   */
  async *generating(
    request: GeneratingRequestInput,
    options: IGeneratingOptions = {}
  ): AsyncGenerator<GeneratingEvent, void, undefined> {
    const primary = `${this._baseUrl}/generating`;
    let opened: { exchange: Exchange; response: Response };
    try {
      opened = await this._openGenerating(primary, request, options);
    } catch (error) {
      if (!(error instanceof PlannerError && error.status === 404)) {
        throw error;
      }
      const fallback = `${this._baseUrl}/generate`;
      const notice = `POST ${primary} answered 404; trying ${fallback}`;
      this._logger.warn(notice);
      yield { kind: 'warning', message: notice };
      opened = await this._openGenerating(fallback, request, options);
    }
    const { exchange, response } = opened;
    let failure: PlannerError | undefined;
    try {
      yield* this._readActions(exchange, response);
    } catch (error) {
      failure = exchange.mapError(error);
      throw failure;
    } finally {
      // Also reached when the consumer stops early.
      this._notify(() => this._observer.onEnd?.(exchange.url, failure));
      exchange.dispose();
    }
  }

  /** Sends a /generating request and resolves once a successful answer starts. */
  private async _openGenerating(
    url: string,
    request: GeneratingRequestInput,
    options: IGeneratingOptions
  ): Promise<{ exchange: Exchange; response: Response }> {
    const exchange = this._exchange(url, options);
    try {
      const response = await this._send(exchange, request, ACCEPT_STREAM);
      if (!response.ok) {
        const body = await exchange.text(response).catch(() => '');
        this._notify(() =>
          this._observer.onResponse?.(url, response.status, body, false)
        );
        throw this._httpError(url, response, body);
      }
      this._notify(() =>
        this._observer.onResponse?.(url, response.status, undefined, true)
      );
      return { exchange, response };
    } catch (error) {
      const failure = exchange.mapError(error);
      this._notify(() => this._observer.onEnd?.(url, failure));
      exchange.dispose();
      throw failure;
    }
  }

  private async _planningOnce(
    url: string,
    request: PlanningRequestInput,
    options: IPlanningOptions
  ): Promise<PlanningResponse> {
    const exchange = this._exchange(url, options);
    try {
      const response = await this._send(exchange, request, 'application/json');
      const text = await exchange.text(response);
      let body: unknown = text;
      let parseError: unknown;
      try {
        body = JSON.parse(text);
      } catch (error) {
        parseError = error;
      }
      this._notify(() =>
        this._observer.onResponse?.(url, response.status, body, false)
      );
      if (!response.ok) {
        throw this._httpError(url, response, text);
      }
      if (parseError !== undefined) {
        throw this._invalid(
          url,
          response.status,
          `the body is not JSON (${describeCause(parseError)})`,
          text
        );
      }
      const normalized = normalizePlanningResponse(body);
      if (!normalized.ok) {
        throw this._invalid(url, response.status, normalized.error, text);
      }
      for (const warning of normalized.warnings) {
        this._warn(`POST ${url}: ${warning}`, options);
      }
      this._notify(() => this._observer.onEnd?.(url));
      return normalized.response;
    } catch (error) {
      const failure = exchange.mapError(error);
      this._notify(() => this._observer.onEnd?.(url, failure));
      throw failure;
    } finally {
      exchange.dispose();
    }
  }

  private async *_readActions(
    exchange: Exchange,
    response: Response
  ): AsyncGenerator<GeneratingEvent, void, undefined> {
    const url = exchange.url;
    const parser = new ActionLineParser(url, message =>
      this._logger.warn(message)
    );
    const splitter = new NdjsonLineSplitter();
    const onLine = (line: string): GeneratingEvent[] => {
      this._notify(() => this._observer.onLine?.(url, line));
      return parser.line(line);
    };
    if (!response.body) {
      const text = await exchange.text(response);
      for (const line of [
        ...splitter.push(new TextEncoder().encode(text)),
        ...splitter.flush()
      ]) {
        yield* onLine(line);
      }
    } else {
      const reader = response.body.getReader();
      try {
        for (
          let chunk = await exchange.read(reader);
          chunk;
          chunk = await exchange.read(reader)
        ) {
          for (const line of splitter.push(chunk)) {
            yield* onLine(line);
          }
        }
      } finally {
        reader.cancel().catch(() => undefined);
      }
      for (const line of splitter.flush()) {
        yield* onLine(line);
      }
    }
    yield* parser.end();
  }

  private _exchange(url: string, options: { signal?: AbortSignal }): Exchange {
    return new Exchange(
      url,
      options.signal,
      this._firstByteTimeoutMs,
      this._stallTimeoutMs
    );
  }

  private async _send(
    exchange: Exchange,
    request: unknown,
    accept: string
  ): Promise<Response> {
    if (exchange.signal.aborted) {
      throw exchange.abortError();
    }
    let body: string;
    try {
      body = JSON.stringify(request);
    } catch (error) {
      throw new PlannerError({
        kind: 'invalid',
        url: exchange.url,
        message: `POST ${exchange.url} not sent: the request cannot be serialized (${describeCause(error)})`,
        cause: error
      });
    }
    const headers: Record<string, string> = {
      ...this._headers,
      'Content-Type': 'application/json',
      Accept: accept
    };
    if (this._token) {
      headers.Authorization = `Bearer ${this._token}`;
    }
    this._notify(() => this._observer.onRequest?.(exchange.url, request));
    return exchange.guard(
      this._fetch(exchange.url, {
        method: 'POST',
        headers,
        body,
        signal: exchange.signal
      })
    );
  }

  private _httpError(
    url: string,
    response: Response,
    body: string
  ): PlannerError {
    const bodyExcerpt = excerpt(body) || undefined;
    const status = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
    return new PlannerError({
      kind: 'http',
      url,
      status: response.status,
      bodyExcerpt,
      retryAfterMs: parseRetryAfter(response.headers.get('Retry-After')),
      message: `POST ${url} failed: ${status}${bodyExcerpt ? `: ${bodyExcerpt}` : ''}`
    });
  }

  private _invalid(
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
      message: `POST ${url} answered HTTP ${status} with an invalid response: ${problem}${
        bodyExcerpt ? `: ${bodyExcerpt}` : ''
      }`
    });
  }

  private _isRetryable(error: PlannerError): boolean {
    if (error.kind === 'network') {
      return true;
    }
    return (
      error.kind === 'http' &&
      error.status !== undefined &&
      (error.status >= 500 || error.status === 429)
    );
  }

  private _warn(message: string, options: IPlanningOptions): void {
    this._logger.warn(message);
    this._notify(() => options.onWarning?.(message));
  }

  /** Observers must not be able to break a run. */
  private _notify(call: () => void): void {
    try {
      call();
    } catch (error) {
      this._logger.warn(
        `planner client observer failed: ${describeCause(error)}`
      );
    }
  }

  private readonly _baseUrl: string;
  private readonly _token: string | undefined;
  private readonly _headers: Record<string, string>;
  private readonly _fetch: FetchLike;
  private readonly _firstByteTimeoutMs: number;
  private readonly _stallTimeoutMs: number;
  private readonly _planningRetries: number;
  private readonly _retryBaseDelayMs: number;
  private readonly _maxRetryDelayMs: number;
  private readonly _sleep: SleepLike;
  private readonly _observer: IPlannerObserver;
  private readonly _logger: IPlannerLogger;
}
