/**
 * The dslc adapter (the seed dialect's own client): `POST /planning` (JSON, retried) and `POST
 * /generating` (NDJSON stream, not retried: a failed generation stops the run and the engine offers
 * Retry). The stream becomes actions in
 * `actionStream.ts`, timing and retries live in `exchange.ts`. Nothing here knows about JupyterLab.
 *
 * Everything the client has to tell besides its answers goes through one channel, `IPlannerObserver`:
 * the exchanges (for the trace) and every warning (`onWarning`). Observers are given to the client, to
 * one call, or both; without any `onWarning`, warnings go to `console.warn`.
 */
import { actionEvents, GeneratingEvent } from './actionStream';
import { createBrowserTransport, FetchLike } from './browserTransport';
import { describeCause, excerpt, PlannerError } from './errors';
import {
  DEFAULT_FIRST_BYTE_TIMEOUT_MS,
  DEFAULT_STALL_TIMEOUT_MS,
  defaultSleep,
  ERROR_BODY,
  Exchange,
  httpError,
  invalidResponse,
  IRetryPolicy,
  PLANNING_BODY,
  SleepLike,
  withRetries
} from './exchange';
import {
  type IMessageText,
  type ProtocolMessageId,
  say,
  textOf
} from './messages';
import { normalizePlanningResponse } from './normalizeResponse';
import {
  GeneratingRequestInput,
  PlanningRequestInput,
  PlanningResponse
} from './schemas';
import { IPlannerTransport } from './transport';
import type { IDialectPlannerService } from './dialects/common';

/** The header the reference planner keys its sessions by; the id also travels as `notebook_id`. */
export const NOTEBOOK_ID_HEADER = 'X-Notebook-Id';

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
  onWarning?(endpoint: string, warning: IMessageText<ProtocolMessageId>): void;
  /**
   * A call waits for the planner's first byte since `since` (ms since the epoch, kept across retries),
   * or no longer (`null`: bytes arrived, or the call ended). A view shows "Waiting for the planner… 1 min 12 s".
   */
  onWaiting?(endpoint: string, since: number | null): void;
}

/** What `checkConnection` found, with a message a user can act on (`text`: translated by the UI). */
export interface IConnectionCheck extends IMessageText<ProtocolMessageId> {
  ok: boolean;
  /** The HTTP status, when the planner (or the relay) answered. */
  status?: number;
}

/** One observer or several, each told everything. */
export type PlannerObservers = IPlannerObserver | readonly IPlannerObserver[];

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

export interface IRequestOptions {
  signal?: AbortSignal;
  /** Told about this request only, besides the client's observers. */
  observer?: PlannerObservers;
  /** Hears this request's warnings (a retry…), as the other adapters' callers do. */
  onWarning?: (warning: IMessageText<ProtocolMessageId>) => void;
}

export type IGeneratingOptions = IRequestOptions;
export type IPlanningOptions = IRequestOptions;

/** How often a failed or silent `/planning` request is retried before the run falls back. */
export const PLANNING_RETRIES = 3;

const ACCEPT_STREAM = 'application/x-ndjson, application/json';
const CONNECTION_CHECK_TIMEOUT_MS = 10_000;

interface ITeller {
  warning(endpoint: string, warning: IMessageText<ProtocolMessageId>): void;
  each(call: (observer: IPlannerObserver) => void): void;
}

/** The "waiting since" of one call: shown when a request leaves, hidden at the first byte or the end. */
class WaitReport {
  constructor(
    private readonly _tell: ITeller,
    private readonly _url: string
  ) {}

  start(): void {
    this._since ??= Date.now();
    if (!this._shown) {
      this._shown = true;
      const since = this._since;
      this._tell.each(o => o.onWaiting?.(this._url, since));
    }
  }

  stop(): void {
    if (this._shown) {
      this._shown = false;
      this._tell.each(o => o.onWaiting?.(this._url, null));
    }
  }

  private _since: number | undefined;
  private _shown = false;
}

function observersOf(observers?: PlannerObservers): IPlannerObserver[] {
  if (!observers) {
    return [];
  }
  return Array.isArray(observers) ? [...observers] : [observers];
}

export class DslcAdapter implements IDialectPlannerService {
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

  /**
   * Asks whether the current step's target is achieved (and gets context updates). Retried with
   * exponential backoff on network errors, timeouts, 5xx and 429 (honouring `Retry-After`).
   */
  /** Characters this client adds to every body (`notebook_id`), so callers can fit the rest. */
  requestOverhead(): number {
    return this._notebookId
      ? JSON.stringify({ notebook_id: this._notebookId }).length
      : 0;
  }

  async planning(
    request: PlanningRequestInput,
    options: IPlanningOptions = {}
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
    options: IGeneratingOptions = {}
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

  /**
   * Probes the planner's root (`GET /`) through the transport, for the Run dialog and "Test connection".
   * Any answer but a refusal or a server error means the planner is there.
   */
  async checkConnection(
    options: { signal?: AbortSignal; timeoutMs?: number } = {}
  ): Promise<IConnectionCheck> {
    const where = this._transport.labelText ?? this._transport.label;
    const exchange = new Exchange({
      method: 'GET',
      url: this._transport.urlOf(''),
      signal: options.signal,
      firstByteTimeoutMs: options.timeoutMs ?? CONNECTION_CHECK_TIMEOUT_MS,
      stallTimeoutMs: options.timeoutMs ?? CONNECTION_CHECK_TIMEOUT_MS
    });
    try {
      const response = await exchange.guard(
        this._transport.send({
          method: 'GET',
          path: '',
          headers: { ...this._headers, Accept: 'application/json' },
          signal: exchange.signal
        })
      );
      const status = response.status;
      const body = excerpt(
        await exchange.text(response, ERROR_BODY).catch(() => '')
      );
      const detail = `HTTP ${status}${body ? `: ${body}` : ''}`;
      if (status === 401 || status === 403) {
        return {
          ok: false,
          status,
          ...say('connectionRefused', where, detail)
        };
      }
      if (status >= 500) {
        return { ok: false, status, ...say('connectionError', where, detail) };
      }
      return { ok: true, status, ...say('connectionOk', where, status) };
    } catch (error) {
      const failure = exchange.mapError(error);
      return {
        ok: false,
        status: failure.status,
        ...say('connectionUnreachable', where, textOf(failure))
      };
    } finally {
      exchange.dispose();
    }
  }

  /** Sends a /generating request and resolves once a successful answer starts. */
  private async _openGenerating(
    path: string,
    request: GeneratingRequestInput,
    options: IGeneratingOptions,
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
    options: IPlanningOptions,
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
    options: IRequestOptions,
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
    options: IRequestOptions
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

  /** The client's observers and the call's, each shielded: an observer must not be able to break a run. */
  private _teller(options: IRequestOptions) {
    const onWarning = options.onWarning;
    const observers = [
      ...this._observers,
      ...observersOf(options.observer),
      ...(onWarning
        ? [
            {
              onWarning: (_: string, w: IMessageText<ProtocolMessageId>) =>
                onWarning(w)
            }
          ]
        : [])
    ];
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
    const warning = (
      endpoint: string,
      report: IMessageText<ProtocolMessageId>
    ) => {
      const hearing = observers.filter(o => o.onWarning);
      if (hearing.length === 0) {
        console.warn(report.message);
      }
      for (const observer of hearing) {
        shielded(
          () => observer.onWarning?.(endpoint, report),
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
            text => warning('', { message: text })
          );
        }
      }
    };
  }

  private readonly _transport: IPlannerTransport;
  private readonly _notebookId: string | undefined;
  private readonly _headers: Record<string, string>;
  private readonly _firstByteTimeoutMs: number;
  private readonly _stallTimeoutMs: number;
  private readonly _retry: IRetryPolicy;
  private readonly _observers: IPlannerObserver[];
}
