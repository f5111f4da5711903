/**
 * The planner client: `POST /planning` (JSON, retried) and `POST /generating` (NDJSON stream, not
 * retried: a failed generation stops the run and the engine offers Retry). The stream becomes actions in
 * `actionStream.ts`, timing and retries live in `exchange.ts`. Nothing here knows about JupyterLab.
 *
 * Everything the client has to tell besides its answers goes through one channel, `IPlannerObserver`:
 * the exchanges (for the trace) and every warning (`onWarning`). Observers are given to the client, to
 * one call, or both; without any `onWarning`, warnings go to `console.warn`.
 */
import { actionEvents, GeneratingEvent } from './actionStream';
import { describeCause, PlannerError } from './errors';
import {
  DEFAULT_FIRST_BYTE_TIMEOUT_MS,
  DEFAULT_STALL_TIMEOUT_MS,
  defaultSleep,
  Exchange,
  httpError,
  invalidResponse,
  IRetryPolicy,
  SleepLike,
  withRetries
} from './exchange';
import { normalizePlanningResponse } from './normalizeResponse';
import {
  GeneratingRequestInput,
  PlanningRequestInput,
  PlanningResponse
} from './schemas';

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** Sees every exchange (e.g. to record a trace of the run) and hears every warning. */
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
  /** Something the user should know that does not stop the request: a retry, an ignored line. */
  onWarning?(endpoint: string, message: string): void;
}

/** One observer or several, each told everything. */
export type PlannerObservers = IPlannerObserver | readonly IPlannerObserver[];

export interface IPlannerClientOptions {
  /** Default `http://localhost:28600`. */
  baseUrl?: string;
  /** Sent as `Authorization: Bearer <token>` when set. */
  token?: string | null;
  /** Extra request headers (e.g. a notebook id); undefined values are left out. */
  headers?: Record<string, string | undefined>;
  fetch?: FetchLike;
  /** Time allowed from sending a request to the first byte of its body; 0 = none. */
  firstByteTimeoutMs?: number;
  /** Time allowed between two chunks of a body; 0 = none. */
  stallTimeoutMs?: number;
  /** Retries of /planning after network errors, 5xx and 429. Default 3. */
  planningRetries?: number;
  /** First retry delay, doubled on each further retry. Default 1 s. */
  retryBaseDelayMs?: number;
  /** Upper bound for any retry delay, including `Retry-After`. Default 60 s. */
  maxRetryDelayMs?: number;
  sleep?: SleepLike;
  observer?: PlannerObservers;
}

export interface IRequestOptions {
  signal?: AbortSignal;
  /** Told about this request only, besides the client's observers. */
  observer?: PlannerObservers;
}

export type IGeneratingOptions = IRequestOptions;
export type IPlanningOptions = IRequestOptions;

const DEFAULT_BASE_URL = 'http://localhost:28600';
const ACCEPT_STREAM = 'application/x-ndjson, application/json';

function observersOf(observers?: PlannerObservers): IPlannerObserver[] {
  if (!observers) {
    return [];
  }
  return Array.isArray(observers) ? [...observers] : [observers];
}

export class PlannerClient {
  constructor(options: IPlannerClientOptions = {}) {
    this._baseUrl = (options.baseUrl?.trim() || DEFAULT_BASE_URL).replace(
      /\/+$/,
      ''
    );
    this._token = options.token?.trim() || undefined;
    this._headers = {};
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      if (value !== undefined) {
        this._headers[name] = value;
      }
    }
    this._fetch =
      options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this._firstByteTimeoutMs =
      options.firstByteTimeoutMs ?? DEFAULT_FIRST_BYTE_TIMEOUT_MS;
    this._stallTimeoutMs = options.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
    this._retry = {
      retries: options.planningRetries ?? 3,
      baseDelayMs: options.retryBaseDelayMs ?? 1000,
      maxDelayMs: options.maxRetryDelayMs ?? 60_000,
      sleep: options.sleep ?? defaultSleep
    };
    this._observers = observersOf(options.observer);
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
    const tell = this._teller(options);
    return withRetries(
      () => this._planningOnce(url, request, options),
      this._retry,
      {
        request: `POST ${url}`,
        url,
        signal: options.signal,
        onRetry: message => tell.warning(url, message)
      }
    );
  }

  /**
   * Streams the actions of the next behavior as they arrive. Falls back to `/generate` when
   * `/generating` answers 404. Problems with single lines are yielded as warnings; the stream goes on.
   */
  async *generating(
    request: GeneratingRequestInput,
    options: IGeneratingOptions = {}
  ): AsyncGenerator<GeneratingEvent, void, undefined> {
    const tell = this._teller(options);
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
      tell.warning(primary, notice);
      yield { kind: 'warning', message: notice };
      opened = await this._openGenerating(fallback, request, options);
    }
    const { exchange, response } = opened;
    let failure: PlannerError | undefined;
    try {
      const events = actionEvents(
        exchange.chunks(response),
        exchange.request,
        line => tell.each(o => o.onLine?.(exchange.url, line))
      );
      for await (const event of events) {
        if (event.kind === 'warning') {
          tell.warning(exchange.url, event.message);
        }
        yield event;
      }
    } catch (error) {
      failure = exchange.mapError(error);
      throw failure;
    } finally {
      // Also reached when the consumer stops early.
      tell.each(o => o.onEnd?.(exchange.url, failure));
      exchange.dispose();
    }
  }

  /** Sends a /generating request and resolves once a successful answer starts. */
  private async _openGenerating(
    url: string,
    request: GeneratingRequestInput,
    options: IGeneratingOptions
  ): Promise<{ exchange: Exchange; response: Response }> {
    const tell = this._teller(options);
    const exchange = this._exchange(url, options);
    try {
      const response = await this._send(
        exchange,
        request,
        ACCEPT_STREAM,
        options
      );
      if (!response.ok) {
        const body = await exchange.text(response).catch(() => '');
        tell.each(o => o.onResponse?.(url, response.status, body, false));
        throw httpError(exchange.request, url, response, body);
      }
      tell.each(o => o.onResponse?.(url, response.status, undefined, true));
      return { exchange, response };
    } catch (error) {
      const failure = exchange.mapError(error);
      tell.each(o => o.onEnd?.(url, failure));
      exchange.dispose();
      throw failure;
    }
  }

  private async _planningOnce(
    url: string,
    request: PlanningRequestInput,
    options: IPlanningOptions
  ): Promise<PlanningResponse> {
    const tell = this._teller(options);
    const exchange = this._exchange(url, options);
    try {
      const response = await this._send(
        exchange,
        request,
        'application/json',
        options
      );
      const text = await exchange.text(response);
      let body: unknown = text;
      let parseError: unknown;
      try {
        body = JSON.parse(text);
      } catch (error) {
        parseError = error;
      }
      tell.each(o => o.onResponse?.(url, response.status, body, false));
      if (!response.ok) {
        throw httpError(exchange.request, url, response, text);
      }
      if (parseError !== undefined) {
        throw invalidResponse(
          exchange.request,
          url,
          response.status,
          `the body is not JSON (${describeCause(parseError)})`,
          text
        );
      }
      const normalized = normalizePlanningResponse(body);
      if (!normalized.ok) {
        throw invalidResponse(
          exchange.request,
          url,
          response.status,
          normalized.error,
          text
        );
      }
      for (const warning of normalized.warnings) {
        tell.warning(url, `${exchange.request}: ${warning}`);
      }
      tell.each(o => o.onEnd?.(url));
      return normalized.response;
    } catch (error) {
      const failure = exchange.mapError(error);
      tell.each(o => o.onEnd?.(url, failure));
      throw failure;
    } finally {
      exchange.dispose();
    }
  }

  private _exchange(url: string, options: IRequestOptions): Exchange {
    return new Exchange({
      method: 'POST',
      url,
      signal: options.signal,
      firstByteTimeoutMs: this._firstByteTimeoutMs,
      stallTimeoutMs: this._stallTimeoutMs
    });
  }

  private async _send(
    exchange: Exchange,
    request: unknown,
    accept: string,
    options: IRequestOptions
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
        message: `${exchange.request} not sent: the request cannot be serialized (${describeCause(error)})`,
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
    this._teller(options).each(o => o.onRequest?.(exchange.url, request));
    return exchange.guard(
      this._fetch(exchange.url, {
        method: 'POST',
        headers,
        body,
        signal: exchange.signal
      })
    );
  }

  /** The client's observers and the call's, each shielded: an observer must not be able to break a run. */
  private _teller(options: IRequestOptions) {
    const observers = [...this._observers, ...observersOf(options.observer)];
    const shielded = (
      call: () => void,
      fallback: (message: string) => void
    ) => {
      try {
        call();
      } catch (error) {
        fallback(`planner client observer failed: ${describeCause(error)}`);
      }
    };
    const warning = (endpoint: string, message: string) => {
      const hearing = observers.filter(o => o.onWarning);
      if (hearing.length === 0) {
        console.warn(message);
      }
      for (const observer of hearing) {
        shielded(
          () => observer.onWarning?.(endpoint, message),
          text => console.warn(text)
        );
      }
    };
    return {
      warning,
      each(call: (observer: IPlannerObserver) => void): void {
        for (const observer of observers) {
          shielded(
            () => call(observer),
            text => warning('', text)
          );
        }
      }
    };
  }

  private readonly _baseUrl: string;
  private readonly _token: string | undefined;
  private readonly _headers: Record<string, string>;
  private readonly _fetch: FetchLike;
  private readonly _firstByteTimeoutMs: number;
  private readonly _stallTimeoutMs: number;
  private readonly _retry: IRetryPolicy;
  private readonly _observers: IPlannerObserver[];
}
