/**
 * Which dialect a planner speaks (docs/dialects.md#choosing), and the service the engine
 * drives whatever the answer: a façade that picks the `dslc`, `bcc` or `v1` adapter once per run.
 */
import { PlannerError } from '../errors';
import {
  defaultSleep,
  ERROR_BODY,
  Exchange,
  ITimeouts,
  PLANNING_BODY,
  SleepLike,
  withRetries,
  withTimeouts
} from '../exchange';
import type { GeneratingEvent } from '../actionStream';
import type {
  IGeneratingOptions,
  IPlanningOptions,
  PlannerWarning
} from './common';
import { isRecord, JsonObject } from '../fields';
import { say } from '../messages';
import { normalizePlanningResponse } from '../normalizeResponse';
import type {
  GeneratingRequestInput,
  INotebookSummary,
  ObservationInput,
  PlanningRequestInput,
  PlanningResponse
} from '../schemas';
import type { IPlannerTransport } from '../transport';
import { BccPlannerService, IBccOptions, IPrefetchedAnswer } from './bcc';
import {
  Dialect,
  DialectLog,
  DIALECTS,
  IDialectPlannerService,
  isRouteMissingError,
  looksLikeXml,
  parseJson,
  readText,
  send,
  unquotedBody
} from './common';
import {
  IV1Options,
  V1_ENTRY_STAGE_ID,
  V1_ENTRY_STEP_ID,
  V1PlannerService
} from './v1';

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

export type DetectionResult =
  | { dialect: 'dslc'; firstAnswer: PlanningResponse; probes: string[] }
  | { dialect: 'bcc'; firstAnswer: IPrefetchedAnswer; probes: string[] }
  | { dialect: 'v1'; probes: string[] };

/**
 * The seed request plus a sibling `state`, so that a bcc server can answer it too; its notebook is
 * `notebook` (with the last cells) when the engine gave one, else the seed's.
 */
export function supersetProbeBody(
  request: PlanningRequestInput,
  notebook?: INotebookSummary
): JsonObject {
  const observation = request.observation;
  const context = observation.context ?? {};
  const fsm = { ...(context.FSM ?? {}), state: 'IDLE' };
  const variables: JsonObject = { ...(context.variables ?? {}) };
  variables.user_problem ??= variables.problem_description ?? '';
  variables.user_submit_files ??=
    variables.data_files ??
    (variables.csv_file_path ? [variables.csv_file_path] : []);
  return {
    ...request,
    observation: { ...observation, context: { ...context, FSM: fsm } },
    options: { ...(request.options ?? {}), stream: false },
    state: {
      variables,
      effects: context.effects ?? { current: [], history: [] },
      notebook: notebook ?? context.notebook ?? {},
      FSM: fsm
    }
  };
}

/** The superset without the sibling `state`: the seed's own request. */
export function seedProbeBody(superset: JsonObject): JsonObject {
  const seed = { ...superset };
  delete seed.state;
  return seed;
}

function statusText(response: Response): string {
  return `HTTP ${response.status}`;
}

/** Runs §1's probes; rejects with a message listing each probe when nothing answers like a dialect. */
export async function detectDialect(options: {
  transport: IPlannerTransport;
  request: PlanningRequestInput;
  /** The notebook the engine described beside the request. */
  notebook?: INotebookSummary;
  /** The bcc adapter's options, for the body it would send itself (the second `/planning` probe). */
  bcc?: Omit<IBccOptions, 'transport'>;
  v1Hint?: boolean;
  signal?: AbortSignal;
  /** The `/planning` probe is the run's first planning request: it gets the same timeout and retries. */
  timing?: IProbeTiming;
  onWarning?: PlannerWarning;
}): Promise<DetectionResult> {
  const { transport, signal } = options;
  const probes: string[] = [];
  if (!options.v1Hint) {
    const url = transport.urlOf('planning');
    const probe = (body: JsonObject) => async () => {
      const exchange = new Exchange({
        method: 'POST',
        url,
        signal,
        firstByteTimeoutMs: options.timing?.firstByteTimeoutMs ?? 0,
        stallTimeoutMs: options.timing?.firstByteTimeoutMs ?? 0
      });
      try {
        const answer = await exchange.guard(
          send(transport, 'POST', 'planning', body, exchange.signal)
        );
        return {
          response: answer,
          text: await exchange.text(
            answer,
            answer.ok ? PLANNING_BODY : ERROR_BODY
          )
        };
      } finally {
        exchange.dispose();
      }
    };
    // A server that validates its body strictly may refuse the superset (422): then each dialect's own
    // body is tried once, bcc's first (docs/dialects.md#choosing).
    const attempt = async (label: string, body: JsonObject) => {
      const answer = await withRetries(
        probe(body),
        {
          retries: options.timing?.retries ?? 0,
          baseDelayMs: options.timing?.baseDelayMs ?? 1000,
          maxDelayMs: options.timing?.maxDelayMs ?? 60_000,
          sleep: options.timing?.sleep ?? defaultSleep
        },
        {
          request: `POST ${url}`,
          url,
          signal,
          onRetry: warning => options.onWarning?.(warning)
        }
      );
      probes.push(`POST ${url}${label} → ${statusText(answer.response)}`);
      return answer;
    };
    const superset = supersetProbeBody(options.request, options.notebook);
    let { response, text } = await attempt('', superset);
    const fallbacks: [string, JsonObject][] = [
      [
        ' (bcc body)',
        new BccPlannerService({ ...options.bcc, transport }).idleBody(
          options.request,
          options.notebook
        )
      ],
      [' (seed body)', seedProbeBody(superset)]
    ];
    for (const [label, body] of fallbacks) {
      if (response.status !== 422) {
        break;
      }
      ({ response, text } = await attempt(label, body));
    }
    if (response.ok) {
      const contentType = response.headers.get('Content-Type');
      const unquoted = unquotedBody(text);
      if (looksLikeXml(contentType, unquoted)) {
        return { dialect: 'bcc', firstAnswer: { contentType, text }, probes };
      }
      const parsed = parseJson(unquoted);
      if (parsed.ok && isRecord(parsed.value)) {
        const answer = parsed.value;
        if (
          Array.isArray(answer.stages) ||
          Array.isArray(answer.steps) ||
          answer.behavior_id !== undefined
        ) {
          return { dialect: 'bcc', firstAnswer: { contentType, text }, probes };
        }
        const normalized = normalizePlanningResponse(answer);
        if (normalized.ok) {
          for (const warning of normalized.warnings) {
            options.onWarning?.(say('requestProblem', `POST ${url}`, warning));
          }
          return { dialect: 'dslc', firstAnswer: normalized.response, probes };
        }
      }
      throw new PlannerError({
        kind: 'invalid',
        url,
        status: response.status,
        ...say(
          'noDialectAnswer',
          `POST ${url}`,
          response.status,
          text.slice(0, 200)
        )
      });
    }
    if (response.status !== 404 && response.status !== 405) {
      throw new PlannerError({
        kind: 'http',
        url,
        status: response.status,
        ...say(
          'requestFailed',
          `POST ${url}`,
          `${statusText(response)}${text ? `: ${text.slice(0, 200)}` : ''}`
        )
      });
    }
  }
  const health = await send(
    transport,
    'GET',
    'v2/health',
    undefined,
    signal
  ).catch((error: unknown) => error as PlannerError);
  if (health instanceof Response) {
    const parsed = parseJson(await readText(health));
    probes.push(`GET ${transport.urlOf('v2/health')} → ${statusText(health)}`);
    if (
      health.status === 200 &&
      parsed.ok &&
      isRecord(parsed.value) &&
      parsed.value.status === 'ok'
    ) {
      return { dialect: 'v1', probes };
    }
  } else {
    probes.push(`GET ${transport.urlOf('v2/health')} → ${health.message}`);
  }
  const reflection = await send(
    transport,
    'POST',
    'v1/reflection',
    {
      stage_id: V1_ENTRY_STAGE_ID,
      step_index: V1_ENTRY_STEP_ID,
      state: {}
    },
    signal
  ).catch((error: unknown) => error as PlannerError);
  if (reflection instanceof Response) {
    const parsed = parseJson(await readText(reflection));
    probes.push(
      `POST ${transport.urlOf('v1/reflection')} → ${statusText(reflection)}`
    );
    if (
      reflection.status === 200 &&
      parsed.ok &&
      isRecord(parsed.value) &&
      typeof parsed.value.targetAchieved === 'boolean'
    ) {
      return { dialect: 'v1', probes };
    }
  } else {
    probes.push(
      `POST ${transport.urlOf('v1/reflection')} → ${reflection.message}`
    );
  }
  const root = transport.urlOf('').replace(/\/$/, '');
  throw new PlannerError({
    kind: 'invalid',
    url: root,
    ...say('noKnownDialect', root, probes.join('; '))
  });
}

/** How the dialect of a run was chosen. */
export type DialectChoice = 'fixed' | 'cached' | 'detected' | 'restored';

export interface IPlannerServiceOptions {
  protocol: ProtocolSetting;
  transport: IPlannerTransport;
  /** The seed protocol's service (the `PlannerClient`-based one). */
  dslc: IDialectPlannerService;
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

/** How long the `/planning` probe may wait for its answer, and how often a silent one is retried. */
export interface IProbeTiming {
  firstByteTimeoutMs: number;
  retries: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  sleep?: SleepLike;
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
    this._v1 = new V1PlannerService({
      ..._options.v1,
      log: _options.v1?.log ?? this._log,
      transport
    });
    this._bcc = new BccPlannerService({
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
      return await this._service().planning(request, options);
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

  async *generating(
    request: GeneratingRequestInput,
    options: IGeneratingOptions = {}
  ): AsyncGenerator<GeneratingEvent, void, undefined> {
    const asPlanning: PlanningRequestInput = {
      observation: request.observation
    };
    await this._choose(asPlanning, options);
    let yielded = false;
    try {
      for await (const event of this._service().generating(request, options)) {
        yielded = true;
        yield event;
      }
    } catch (error) {
      if (yielded || !this._redetect(error)) {
        throw error;
      }
      await this._choose(asPlanning, options);
      yield* this._service().generating(request, options);
    }
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
    this._redetected = false;
    this._v1.resetState();
    this._bcc.resetState();
    this._options.dslc.resetState?.();
  }

  // ------------------------------------------------------------------------------------------

  /** Picks the dialect when none is chosen; returns the first answer when detection already got it. */
  private async _choose(
    request: PlanningRequestInput,
    options: IPlanningOptions
  ): Promise<PlanningResponse | null> {
    if (this._dialect) {
      return null;
    }
    const protocol = this._options.protocol;
    if (protocol !== 'auto') {
      this._set(protocol, 'fixed', 'set in the settings');
      return null;
    }
    const cached = this._cache.get(this._root);
    if (cached) {
      this._set(cached, 'cached', `detected earlier for ${this._root}`);
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
    return true;
  }

  private _set(dialect: Dialect, how: DialectChoice, detail: string): void {
    this._dialect = dialect;
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
        return this._options.dslc;
    }
  }

  private readonly _root: string;
  /** The planner's transport, under the timeouts when they are given. */
  private readonly _transport: IPlannerTransport;
  private readonly _v1Hint: boolean;
  private readonly _cache: Map<string, Dialect>;
  private readonly _log: DialectLog;
  private readonly _v1: V1PlannerService;
  private readonly _bcc: BccPlannerService;
  private _dialect: Dialect | null = null;
  private _redetected = false;
}

export function createPlannerService(
  options: IPlannerServiceOptions
): DialectPlannerService {
  return new DialectPlannerService(options);
}
