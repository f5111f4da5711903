/**
 * The dslc adapter, the seed dialect's (docs/protocol.md): `POST /planning` (JSON, retried) and `POST
 * /generating` (NDJSON stream, not retried: a failed generation stops the run and the engine offers
 * Retry). The stream becomes actions in `actionStream.ts`, timing and retries live in `exchange.ts`.
 * Everything it tells besides its answers goes to its observers (`observers.ts`). Nothing here knows
 * about JupyterLab.
 */
import { actionEvents, GeneratingEvent } from '../../actionStream';
import { createBrowserTransport, FetchLike } from '../../browserTransport';
import { describeCause, PlannerError } from '../../errors';
import {
  defaultSleep,
  ERROR_BODY,
  Exchange,
  httpError,
  invalidResponse,
  IRetryPolicy,
  PLANNING_BODY,
  SleepLike,
  withRetries
} from '../../exchange';
import {
  DEFAULT_FIRST_BYTE_TIMEOUT_MS,
  DEFAULT_STALL_TIMEOUT_MS
} from '../../timeouts';
import { type IMessageText, type ProtocolMessageId, say } from '../../messages';
import { normalizePlanningResponse } from '../../normalizeResponse';
import {
  GeneratingRequestInput,
  PlanningRequestInput,
  PlanningResponse
} from '../../schemas';
import {
  IPlannerTransport,
  NOTEBOOK_ID_HEADER,
  notebookIdOverhead
} from '../../transport';
import type { IDialectAdapter } from '../dialect';
import {
  IPlannerObserver,
  type ITeller,
  observersOf,
  PlannerObservers,
  teller,
  WaitReport
} from './observers';

export interface IDslcAdapterOptions {
  /** Where requests go. Without one, a browser transport to `baseUrl` with `token` and `fetch`. */
  transport?: IPlannerTransport;
  /** Only without `transport`: the planner root, default `http://localhost:28600`. */
  baseUrl?: string;
  /** Only without `transport`: sent as `Authorization: Bearer <token>` when set. */
  token?: string | null;
  /** Only without `transport`. */
  fetch?: FetchLike;
  /** Sent as the `X-Notebook-Id` header (percent-encoded) and as `notebook_id` in every body. */
  notebookId?: string;
  /** Extra request headers; undefined values are left out. */
  headers?: Record<string, string | undefined>;
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

/** Per-call options of the dslc adapter's requests. */
export interface IDslcRequestOptions {
  signal?: AbortSignal;
  /** Told about this request only, besides the adapter's observers. */
  observer?: PlannerObservers;
  /** Hears this request's warnings (a retry…), as the other adapters' callers do. */
  onWarning?: (warning: IMessageText<ProtocolMessageId>) => void;
}

/** How often a failed or silent `/planning` request is retried before the run falls back. */
export const PLANNING_RETRIES = 3;

const ACCEPT_STREAM = 'application/x-ndjson, application/json';
export class DslcAdapter implements IDialectAdapter {
  constructor(options: IDslcAdapterOptions = {}) {
    this._transport =
      options.transport ??
      createBrowserTransport({
        baseUrl: options.baseUrl,
        token: options.token,
        fetch: options.fetch
      });
    this._notebookId = options.notebookId || undefined;
    this._headers = {};
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      if (value !== undefined) {
        this._headers[name] = value;
      }
    }
    if (this._notebookId) {
      this._headers[NOTEBOOK_ID_HEADER] = this._notebookId;
    }
    this._firstByteTimeoutMs =
      options.firstByteTimeoutMs ?? DEFAULT_FIRST_BYTE_TIMEOUT_MS;
    this._stallTimeoutMs = options.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
    this._retry = {
      retries: options.planningRetries ?? PLANNING_RETRIES,
      baseDelayMs: options.retryBaseDelayMs ?? 1000,
      maxDelayMs: options.maxRetryDelayMs ?? 60_000,
      sleep: options.sleep ?? defaultSleep
    };
    this._observers = observersOf(options.observer);
  }

  readonly dialect = 'dslc';

  /** Where requests go, for messages. */
  get transport(): IPlannerTransport {
    return this._transport;
  }

  /** Characters this adapter adds to every body (`notebook_id`), so callers can fit the rest. */
  requestOverhead(): number {
    return notebookIdOverhead(this._notebookId);
  }

  /**
   * Asks whether the current step's target is achieved (and gets context updates). Retried with
   * exponential backoff on network errors, timeouts, 5xx and 429 (honouring `Retry-After`).
   */
  async planning(
    request: PlanningRequestInput,
    options: IDslcRequestOptions = {}
  ): Promise<PlanningResponse> {
    const url = this._transport.urlOf('planning');
    const tell = this._teller(options);
    const wait = new WaitReport(tell, url);
    try {
      return await withRetries(
        () => this._planningOnce('planning', request, options, wait),
        this._retry,
        {
          request: `POST ${url}`,
          url,
          signal: options.signal,
          onRetry: warning => tell.warning(url, warning)
        }
      );
    } finally {
      wait.stop();
    }
  }

  /**
   * Streams the actions of the next behavior as they arrive. Falls back to `/generate` when
   * `/generating` answers 404. Problems with single lines are yielded as warnings; the stream goes on.
   */
  async *generating(
    request: GeneratingRequestInput,
    options: IDslcRequestOptions = {}
  ): AsyncGenerator<GeneratingEvent, void, undefined> {
    const tell = this._teller(options);
    const primary = this._transport.urlOf('generating');
    const wait = new WaitReport(tell, primary);
    let opened: { exchange: Exchange; response: Response };
    try {
      opened = await this._openGenerating('generating', request, options, wait);
    } catch (error) {
      if (!(error instanceof PlannerError && error.status === 404)) {
        wait.stop();
        throw error;
      }
      const fallback = this._transport.urlOf('generate');
      const notice = say('generatingNotFound', `POST ${primary}`, fallback);
      tell.warning(primary, notice);
      yield { kind: 'warning', ...notice };
      try {
        opened = await this._openGenerating('generate', request, options, wait);
      } catch (error) {
        wait.stop();
        throw error;
      }
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
          tell.warning(exchange.url, event);
        }
        yield event;
      }
    } catch (error) {
      failure = exchange.mapError(error);
      throw failure;
    } finally {
      // Also reached when the consumer stops early.
      wait.stop();
      tell.each(o => o.onEnd?.(exchange.url, failure));
      exchange.dispose();
    }
  }

  /** Sends a /generating request and resolves once a successful answer starts. */
  private async _openGenerating(
    path: string,
    request: GeneratingRequestInput,
    options: IDslcRequestOptions,
    wait: WaitReport
  ): Promise<{ exchange: Exchange; response: Response }> {
    const tell = this._teller(options);
    const exchange = this._exchange(path, options, wait);
    const url = exchange.url;
    try {
      const response = await this._send(
        exchange,
        path,
        request,
        ACCEPT_STREAM,
        options
      );
      if (!response.ok) {
        const body = await exchange.text(response, ERROR_BODY).catch(() => '');
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
    path: string,
    request: PlanningRequestInput,
    options: IDslcRequestOptions,
    wait: WaitReport
  ): Promise<PlanningResponse> {
    const tell = this._teller(options);
    const exchange = this._exchange(path, options, wait);
    const url = exchange.url;
    try {
      const response = await this._send(
        exchange,
        path,
        request,
        'application/json',
        options
      );
      const text = await exchange.text(
        response,
        response.ok ? PLANNING_BODY : ERROR_BODY
      );
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
        tell.warning(url, say('requestProblem', exchange.request, warning));
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

  private _exchange(
    path: string,
    options: IDslcRequestOptions,
    wait: WaitReport
  ): Exchange {
    wait.start();
    return new Exchange({
      method: 'POST',
      url: this._transport.urlOf(path),
      signal: options.signal,
      firstByteTimeoutMs: this._firstByteTimeoutMs,
      stallTimeoutMs: this._stallTimeoutMs,
      onFirstByte: () => wait.stop()
    });
  }

  private async _send(
    exchange: Exchange,
    path: string,
    request: object,
    accept: string,
    options: IDslcRequestOptions
  ): Promise<Response> {
    if (exchange.signal.aborted) {
      throw exchange.abortError();
    }
    const body = this._notebookId
      ? { ...request, notebook_id: this._notebookId }
      : request;
    this._teller(options).each(o => o.onRequest?.(exchange.url, body));
    return exchange.guard(
      this._transport.send({
        method: 'POST',
        path,
        body,
        headers: { ...this._headers, Accept: accept },
        signal: exchange.signal
      })
    );
  }

  /** The adapter's observers and the call's, each shielded: an observer must not be able to break a run. */
  private _teller(options: IDslcRequestOptions): ITeller {
    return teller(
      [...this._observers, ...observersOf(options.observer)],
      options.onWarning
    );
  }

  private readonly _transport: IPlannerTransport;
  private readonly _notebookId: string | undefined;
  private readonly _headers: Record<string, string>;
  private readonly _firstByteTimeoutMs: number;
  private readonly _stallTimeoutMs: number;
  private readonly _retry: IRetryPolicy;
  private readonly _observers: IPlannerObserver[];
}
