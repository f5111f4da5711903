/**
 * The dialect selector: what the engine drives whatever the planner speaks. It picks one of the
 * registry's dialects once per run (fixed by the `protocol` setting, remembered, restored or detected,
 * docs/dialects.md#choosing) and hands its adapter out (`adapter()`), so that a behavior's events go
 * from the adapter to the engine with nothing in between.
 */
import type { GeneratingEvent } from '../actionStream';
import { isRecord } from '../fields';
import type {
  GeneratingRequestInput,
  ObservationInput,
  PlanningRequestInput,
  PlanningResponse
} from '../schemas';
import {
  DialectLog,
  IGeneratingOptions,
  IPlanningOptions,
  isRouteMissingError
} from './common';
import { detectDialect, IProbeTiming } from './detect';
import {
  type IAdapterContext,
  type IDialect,
  type IDialectAdapter,
  timedTransport
} from './dialect';
import {
  type DialectName,
  DIALECTS,
  isDialectName,
  type ProtocolSetting
} from './registry';

/**
 * Drops a trailing `/`, then a dialect's URL suffix (`/v1`): the dialect it names is a hint for
 * detection.
 */
export function normalizePlannerBaseUrl(
  url: string,
  dialects: readonly IDialect<DialectName>[] = DIALECTS
): { root: string; hint: DialectName | null } {
  const trimmed = url.trim().replace(/\/+$/, '');
  for (const dialect of dialects) {
    const suffix = dialect.probe.urlSuffix;
    if (suffix && trimmed.toLowerCase().endsWith(suffix.toLowerCase())) {
      return { root: trimmed.slice(0, -suffix.length), hint: dialect.name };
    }
  }
  return { root: trimmed, hint: null };
}

/** How the dialect of a run was chosen. */
export type DialectChoice = 'fixed' | 'cached' | 'detected' | 'restored';

export interface IDialectSelectorOptions extends Omit<IAdapterContext, 'log'> {
  protocol: ProtocolSetting;
  /** The plugin's settings; each dialect reads its own (`IDialect.settings`). Default: none set. */
  settings?: Readonly<Record<string, unknown>>;
  /** The configured planner URL, for its dialect hint; default: the transport's root. */
  baseUrl?: string;
  /** `{root → dialect}`; shared by every selector of the page unless given. */
  cache?: Map<string, DialectName>;
  log?: DialectLog;
  /** Told once per run which dialect the run speaks, how it was chosen, and the probes sent. */
  onDialect?: (
    dialect: DialectName,
    how: DialectChoice,
    detail: string
  ) => void;
  /** The first-byte timeout and retries of the `/planning` probe (none when absent), read per probe. */
  probeTiming?: IProbeTiming | (() => IProbeTiming);
  /** The dialects to choose from; default: the registry's. */
  dialects?: readonly IDialect<DialectName>[];
}

const sharedCache = new Map<string, DialectName>();

/** `url` without its user info, query and fragment (a URL that cannot be parsed stays as it is). */
function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname.replace(/\/+$/, '')}`;
  } catch {
    return url;
  }
}

/**
 * The dialect is fixed by the setting or detected on the run's first request, reported through
 * `onDialect`, and kept for the run. A route-missing answer re-runs detection once before the request
 * fails.
 */
export class DialectSelector implements IDialectAdapter {
  constructor(private readonly _options: IDialectSelectorOptions) {
    this._dialects = _options.dialects ?? DIALECTS;
    const { root, hint } = normalizePlannerBaseUrl(
      _options.baseUrl ?? _options.transport.urlOf(''),
      this._dialects
    );
    // Saved with the run and shown in logs: never with a `user:password@`, a query key or a fragment.
    this._root = withoutCredentials(root);
    this._hint = hint;
    this._cache = _options.cache ?? sharedCache;
    this._log = _options.log ?? (() => undefined);
    const context: IAdapterContext = { ..._options, log: this._log };
    this._context = context;
    const settings = _options.settings ?? {};
    this._adapters = new Map(
      this._dialects.map(dialect => [
        dialect.name,
        dialect.createAdapter(context, dialect.settings.read(settings))
      ])
    );
  }

  /** The dialect of the run, or null before it is known. */
  get dialect(): DialectName | null {
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
    return known === null || this._adapterOf(known).needsPlanningFirst === true;
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
      const answer = await this._adapter().planning(request, options);
      this._confirmed = true;
      return answer;
    } catch (error) {
      if (!this._redetect(error)) {
        throw error;
      }
      return (
        (await this._choose(request, options)) ??
        this._adapter().planning(request, options)
      );
    }
  }

  /**
   * The adapter of the run's dialect once it is chosen and to be trusted (set in the settings, or
   * confirmed by an answer), else null. A fixed or cached dialect is chosen here without a request;
   * a cached or restored one is confirmed by the run's first answer, since a missing route may still
   * send it back to detection.
   */
  adapter(): IDialectAdapter | null {
    if (!this._dialect) {
      this._chooseKnown();
    }
    return this._dialect && this._confirmed ? this._adapter() : null;
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
      for await (const event of this._adapter().generating(request, options)) {
        yielded = true;
        this._confirmed = true;
        yield event;
      }
    } catch (error) {
      if (yielded || !this._redetect(error)) {
        throw error;
      }
      await this._choose(asPlanning, options);
      yield* this._adapter().generating(request, options);
    }
    this._confirmed = true;
  }

  sentSize(request: { observation: ObservationInput }): number | null {
    return this._dialect ? (this._adapter().sentSize?.(request) ?? null) : null;
  }

  saveState(): unknown {
    return {
      dialect: this._dialect,
      root: this._root,
      adapter: this._dialect ? this._adapter().saveState?.() : undefined
    };
  }

  restoreState(saved: unknown): void {
    this.resetState();
    if (!isRecord(saved) || !isDialectName(saved.dialect)) {
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
    const adapterState = this._dialectOf(saved.dialect).savedState.read(
      saved.adapter
    );
    if (adapterState) {
      this._adapter().restoreState?.(adapterState);
    }
  }

  resetState(): void {
    this._dialect = null;
    this._confirmed = false;
    this._redetected = false;
    for (const adapter of this._adapters.values()) {
      adapter().resetState?.();
    }
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
    const probeTiming = this._options.probeTiming;
    const result = await detectDialect({
      transport: timedTransport(this._context),
      request,
      notebook: options.notebook,
      notebookId: this._options.notebookId?.(),
      hint: this._hint,
      signal: options.signal,
      timing: typeof probeTiming === 'function' ? probeTiming() : probeTiming,
      onWarning: options.onWarning,
      dialects: this._dialects
    });
    this._cache.set(this._root, result.dialect);
    this._set(result.dialect, 'detected', result.probes.join('; '));
    const claim = result.claim;
    if (claim && 'firstAnswer' in claim) {
      return claim.firstAnswer;
    }
    if (claim) {
      this._adapter().usePrefetched?.(claim.prefetched);
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

  private _set(dialect: DialectName, how: DialectChoice, detail: string): void {
    this._dialect = dialect;
    // A fixed dialect is never detected again; a probe's answer is the dialect's own.
    this._confirmed = how === 'fixed' || how === 'detected';
    this._log(`Planner: ${dialect} dialect (${how}: ${detail})`);
    this._options.onDialect?.(dialect, how, detail);
  }

  /** The adapter of the run's dialect (the seed's before one is chosen). */
  private _adapter(): IDialectAdapter {
    return this._adapterOf(this._dialect ?? this._dialects[0].name);
  }

  private _adapterOf(name: DialectName): IDialectAdapter {
    const adapter = this._adapters.get(name);
    if (!adapter) {
      throw new Error(`no ${name} adapter among the selector's dialects`);
    }
    return adapter();
  }

  private _dialectOf(name: DialectName): IDialect<DialectName> {
    return this._dialects.find(dialect => dialect.name === name) ?? DIALECTS[0];
  }

  private readonly _dialects: readonly IDialect<DialectName>[];
  private readonly _context: IAdapterContext;
  private readonly _adapters: Map<DialectName, () => IDialectAdapter>;
  private readonly _root: string;
  private readonly _hint: DialectName | null;
  private readonly _cache: Map<string, DialectName>;
  private readonly _log: DialectLog;
  private _dialect: DialectName | null = null;
  /** The chosen dialect is to be trusted: `adapter()` hands it out. */
  private _confirmed = false;
  private _redetected = false;
}

export function createDialectSelector(
  options: IDialectSelectorOptions
): DialectSelector {
  return new DialectSelector(options);
}
