/**
 * Which dialect a planner speaks (docs/dialects.md#choosing), and the service the engine
 * drives whatever the answer: a façade that picks the `dslc`, `bcc` or `v1` adapter once per run and
 * hands it out (`adapter()`), so that a behavior's events go from the adapter to the engine with
 * nothing in between.
 */
import type { GeneratingEvent } from '../actionStream';
import { ITimeouts, withTimeouts } from '../exchange';
import { isRecord } from '../fields';
import type {
  GeneratingRequestInput,
  ObservationInput,
  PlanningRequestInput,
  PlanningResponse
} from '../schemas';
import type { IPlannerTransport } from '../transport';
import { BccAdapter } from './bcc/adapter';
import type { IBccOptions } from './bcc/plan';
import {
  Dialect,
  DialectLog,
  DIALECTS,
  IDialectPlannerService,
  IGeneratingOptions,
  IPlanningOptions,
  isRouteMissingError
} from './common';
import { detectDialect, IProbeTiming } from './probe';
import { V1Adapter } from './v1/adapter';
import type { IV1Options } from './v1/state';

export type ProtocolSetting = 'auto' | Dialect;

/** Drops a trailing `/`, then a trailing `/v1` (a hint that the server speaks v1). */
export function normalizePlannerBaseUrl(url: string): {
  root: string;
  v1Hint: boolean;
} {
  const trimmed = url.trim().replace(/\/+$/, '');
  const v1Hint = /\/v1$/i.test(trimmed);
  return { root: v1Hint ? trimmed.slice(0, -3) : trimmed, v1Hint };
}

/** How the dialect of a run was chosen. */
export type DialectChoice = 'fixed' | 'cached' | 'detected' | 'restored';

export interface IPlannerServiceOptions {
  protocol: ProtocolSetting;
  transport: IPlannerTransport;
  /**
   * The dslc adapter, or how to get the current one (the planner connection builds a new one when a
   * timeout or the notebook id changes).
   */
  dslc: IDialectPlannerService | (() => IDialectPlannerService);
  /** The configured planner URL, for the `/v1` hint; default: the transport's root. */
  baseUrl?: string;
  v1?: Omit<IV1Options, 'transport'>;
  bcc?: Omit<IBccOptions, 'transport'>;
  /** `{root → dialect}`; shared by every service of the page unless given. */
  cache?: Map<string, Dialect>;
  log?: DialectLog;
  /** Told once per run which dialect the run speaks, how it was chosen, and the probes sent. */
  onDialect?: (dialect: Dialect, how: DialectChoice, detail: string) => void;
  /** The first-byte timeout and retries of the `/planning` probe (none when absent), read per probe. */
  probeTiming?: IProbeTiming | (() => IProbeTiming);
  /** The timeouts of the v1 and bcc adapters' requests (none when absent), read per request. */
  timeouts?: () => ITimeouts;
}

const sharedCache = new Map<string, Dialect>();

function isDialect(value: unknown): value is Dialect {
  return (DIALECTS as readonly unknown[]).includes(value);
}

/**
 * The service the engine drives: the dialect is fixed by the setting or detected on the run's first
 * request, reported through `onDialect`, and kept for the run. A route-missing answer re-runs
 * detection once before the request fails.
 */
/** `url` without its user info, query and fragment (a URL that cannot be parsed stays as it is). */
function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname.replace(/\/+$/, '')}`;
  } catch {
    return url;
  }
}

export class DialectPlannerService implements IDialectPlannerService {
  constructor(private readonly _options: IPlannerServiceOptions) {
    const { root, v1Hint } = normalizePlannerBaseUrl(
      _options.baseUrl ?? _options.transport.urlOf('')
    );
    // Saved with the run and shown in logs: never with a `user:password@`, a query key or a fragment.
    this._root = withoutCredentials(root);
    this._v1Hint = v1Hint;
    this._cache = _options.cache ?? sharedCache;
    this._log = _options.log ?? (() => undefined);
    const timeouts = _options.timeouts;
    const transport = timeouts
      ? withTimeouts(_options.transport, timeouts)
      : _options.transport;
    this._transport = transport;
    this._v1 = new V1Adapter({
      ..._options.v1,
      log: _options.v1?.log ?? this._log,
      transport
    });
    this._bcc = new BccAdapter({
      ..._options.bcc,
      log: _options.bcc?.log ?? this._log,
      transport
    });
  }

  /** The dialect of the run, or null before it is known. */
  get dialect(): Dialect | null {
    return this._dialect;
  }

  /**
   * Detection is due (`auto`, nothing known for this root): it sends the run's first real request as a
   * `/planning` probe, whose answer belongs to a planning request, so the run asks for one first. A
   * new `v1` run asks for one too: its answer installs the server's entry step (docs/dialects.md#v1-loop).
   */
  get needsPlanningFirst(): boolean {
    const protocol = this._options.protocol;
    const known =
      this._dialect ??
      (protocol === 'auto' ? this._cache.get(this._root) : protocol) ??
      null;
    if (known === null) {
      return true;
    }
    // A new v1 run starts at the server's entry step, which a planning answer installs.
    return known === 'v1' && this._v1.needsPlanningFirst;
  }

  async planning(
    request: PlanningRequestInput,
    options: IPlanningOptions = {}
  ): Promise<PlanningResponse> {
    const first = await this._choose(request, options);
    if (first) {
      return first;
    }
    try {
      const answer = await this._service().planning(request, options);
      this._confirmed = true;
      return answer;
    } catch (error) {
      if (!this._redetect(error)) {
        throw error;
      }
      return (
        (await this._choose(request, options)) ??
        this._service().planning(request, options)
      );
    }
  }

  /**
   * The adapter of the run's dialect once it is chosen and to be trusted (set in the settings, or
   * confirmed by an answer), else null. A fixed or cached dialect is chosen here without a request;
   * a cached or restored one is confirmed by the run's first answer, since a missing route may still
   * send it back to detection.
   */
  adapter(): IDialectPlannerService | null {
    if (!this._dialect) {
      this._chooseKnown();
    }
    return this._dialect && this._confirmed ? this._service() : null;
  }

  /** The chosen adapter's own stream; before a choice is trusted, detection first (`adapter()`). */
  generating(
    request: GeneratingRequestInput,
    options: IGeneratingOptions = {}
  ): AsyncIterable<GeneratingEvent> {
    const adapter = this.adapter();
    return adapter
      ? adapter.generating(request, options)
      : this._generatingFirst(request, options);
  }

  /** The run's first stream before its dialect is trusted: a missing route re-runs detection once. */
  private async *_generatingFirst(
    request: GeneratingRequestInput,
    options: IGeneratingOptions
  ): AsyncGenerator<GeneratingEvent, void, undefined> {
    const asPlanning: PlanningRequestInput = {
      observation: request.observation
    };
    await this._choose(asPlanning, options);
    let yielded = false;
    try {
      for await (const event of this._service().generating(request, options)) {
        yielded = true;
        this._confirmed = true;
        yield event;
      }
    } catch (error) {
      if (yielded || !this._redetect(error)) {
        throw error;
      }
      await this._choose(asPlanning, options);
      yield* this._service().generating(request, options);
    }
    this._confirmed = true;
  }

  sentSize(request: { observation: ObservationInput }): number | null {
    return this._dialect ? (this._service().sentSize?.(request) ?? null) : null;
  }

  saveState(): unknown {
    return {
      dialect: this._dialect,
      root: this._root,
      adapter: this._dialect ? this._service().saveState?.() : undefined
    };
  }

  restoreState(saved: unknown): void {
    this.resetState();
    if (!isRecord(saved) || !isDialect(saved.dialect)) {
      return;
    }
    if (
      this._options.protocol !== 'auto' &&
      saved.dialect !== this._options.protocol
    ) {
      return;
    }
    if (typeof saved.root !== 'string') {
      // A notebook file is untrusted input: a dialect (and its queued cells) for no named planner is not taken.
      return;
    }
    if (saved.root !== this._root) {
      // The run was saved with another planner: what that one spoke says nothing about this one.
      this._log(
        `the run was saved with the planner at ${saved.root}, not ${this._root}: its dialect is detected again`
      );
      return;
    }
    this._set(
      saved.dialect,
      'restored',
      `saved with the run for ${this._root}`
    );
    this._service().restoreState?.(saved.adapter);
  }

  resetState(): void {
    this._dialect = null;
    this._confirmed = false;
    this._redetected = false;
    this._v1.resetState();
    this._bcc.resetState();
    this._dslc().resetState?.();
  }

  // ------------------------------------------------------------------------------------------

  /** Picks the dialect when none is chosen; returns the first answer when detection already got it. */
  private async _choose(
    request: PlanningRequestInput,
    options: IPlanningOptions
  ): Promise<PlanningResponse | null> {
    if (this._dialect || this._chooseKnown()) {
      return null;
    }
    const result = await detectDialect({
      transport: this._transport,
      request,
      notebook: options.notebook,
      bcc: this._options.bcc,
      v1Hint: this._v1Hint,
      signal: options.signal,
      timing:
        typeof this._options.probeTiming === 'function'
          ? this._options.probeTiming()
          : this._options.probeTiming,
      onWarning: options.onWarning
    });
    this._cache.set(this._root, result.dialect);
    this._set(result.dialect, 'detected', result.probes.join('; '));
    if (result.dialect === 'dslc') {
      return result.firstAnswer;
    }
    if (result.dialect === 'bcc') {
      this._bcc.usePrefetched(result.firstAnswer);
    }
    return null;
  }

  /** Chooses the dialect the settings fix or the cache knows, without a request; false when neither does. */
  private _chooseKnown(): boolean {
    const protocol = this._options.protocol;
    if (protocol !== 'auto') {
      this._set(protocol, 'fixed', 'set in the settings');
      return true;
    }
    const cached = this._cache.get(this._root);
    if (cached) {
      this._set(cached, 'cached', `detected earlier for ${this._root}`);
      return true;
    }
    return false;
  }

  /** True when `error` says the route is missing and detection may run again (once per run). */
  private _redetect(error: unknown): boolean {
    if (
      this._options.protocol !== 'auto' ||
      this._redetected ||
      !isRouteMissingError(error)
    ) {
      return false;
    }
    this._redetected = true;
    this._log(
      `${this._root}: ${(error as Error).message}; the route is missing, detecting the dialect again`
    );
    this._cache.delete(this._root);
    this._dialect = null;
    this._confirmed = false;
    return true;
  }

  private _set(dialect: Dialect, how: DialectChoice, detail: string): void {
    this._dialect = dialect;
    // A fixed dialect is never detected again; a probe's answer is the dialect's own.
    this._confirmed = how === 'fixed' || how === 'detected';
    this._log(`Planner: ${dialect} dialect (${how}: ${detail})`);
    this._options.onDialect?.(dialect, how, detail);
  }

  private _service(): IDialectPlannerService {
    switch (this._dialect) {
      case 'v1':
        return this._v1;
      case 'bcc':
        return this._bcc;
      default:
        return this._dslc();
    }
  }

  private _dslc(): IDialectPlannerService {
    const dslc = this._options.dslc;
    return typeof dslc === 'function' ? dslc() : dslc;
  }

  private readonly _root: string;
  /** The planner's transport, under the timeouts when they are given. */
  private readonly _transport: IPlannerTransport;
  private readonly _v1Hint: boolean;
  private readonly _cache: Map<string, Dialect>;
  private readonly _log: DialectLog;
  private readonly _v1: V1Adapter;
  private readonly _bcc: BccAdapter;
  private _dialect: Dialect | null = null;
  /** The chosen dialect is to be trusted: `adapter()` hands it out. */
  private _confirmed = false;
  private _redetected = false;
}

export function createPlannerService(
  options: IPlannerServiceOptions
): DialectPlannerService {
  return new DialectPlannerService(options);
}
