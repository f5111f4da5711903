/**
 * What a dialect is to the rest of the extension: a plug-in, one folder under `dialects/`, listed once
 * in `registry.ts` (docs/dialects.md#adding-a-dialect). It names itself, says how detection recognises
 * its server, builds its adapter, reads its own settings and its own saved state, and names its test
 * double in the reference planner service.
 */
import type { GeneratingEvent } from '../actionStream';
import { type ITimeouts, withTimeouts } from '../exchange';
import type { JsonObject } from '../fields';
import type {
  GeneratingRequestInput,
  INotebookSummary,
  ObservationInput,
  PlanningRequestInput,
  PlanningResponse
} from '../schemas';
import type { IPlannerTransport } from '../transport';
import type {
  DialectLog,
  IGeneratingOptions,
  IPlanningOptions,
  PlannerWarning
} from './common';
import type { PlannerObservers } from './dslc/observers';

/**
 * The extension's side of one dialect: the engine's canonical requests out, canonical answers and
 * actions in. It implements the engine's `IPlannerService` (`engine/types.ts`) with the optional
 * members a dialect adds.
 */
export interface IDialectAdapter {
  readonly dialect?: string | null;
  /** A new run must ask `/planning` first, whatever the start mode (v1: its entry step). */
  readonly needsPlanningFirst?: boolean;
  planning(
    request: PlanningRequestInput,
    options?: IPlanningOptions
  ): Promise<PlanningResponse>;
  generating(
    request: GeneratingRequestInput,
    options?: IGeneratingOptions
  ): AsyncIterable<GeneratingEvent>;
  /** What the adapter must remember across a reload (saved with the run). */
  saveState?(): unknown;
  restoreState?(saved: unknown): void;
  /** A new run starts. */
  resetState?(): void;
  /** The length of the body sent for `request` when it is not the request itself (engine `sentSize`). */
  sentSize?(request: { observation: ObservationInput }): number | null;
  /** Detection's `/planning` probe already got the run's first answer: read it instead of asking again. */
  usePrefetched?(answer: IProbeAnswer): void;
}

/** What every adapter is built from: the planner connection's, the same for every dialect. */
export interface IAdapterContext {
  /** The planner's transport; paths are relative to the planner root. */
  transport: IPlannerTransport;
  /** The first-byte and stall timeouts of every request, read per request; none when absent. */
  timeouts?: () => ITimeouts;
  /** The notebook id the planner keys its sessions by; none when absent or empty. */
  notebookId?: () => string;
  /** Who sees each exchange and hears each warning (the run's trace, the panel's waiting time). */
  observer?: PlannerObservers;
  log: DialectLog;
}

/** The transport under the context's timeouts (for adapters that do not time their own exchanges). */
export function timedTransport(context: IAdapterContext): IPlannerTransport {
  return context.timeouts
    ? withTimeouts(context.transport, context.timeouts)
    : context.transport;
}

/** A 2xx answer to detection's `/planning` probe, as it came. */
export interface IProbeAnswer {
  contentType: string | null;
  text: string;
}

/** What detection's probes are given: the run's first request and where it goes. */
export interface IProbeContext {
  transport: IPlannerTransport;
  request: PlanningRequestInput;
  /** The notebook the engine described beside the request. */
  notebook?: INotebookSummary;
  notebookId?: string;
  signal?: AbortSignal;
}

/** A dialect's claim on the `/planning` probe's answer. */
export type ProbeClaim =
  /** The answer is the run's first planning answer, in canonical form. */
  | { firstAnswer: PlanningResponse }
  /** The adapter reads the answer itself when the engine asks (`IDialectAdapter.usePrefetched`). */
  | { prefetched: IProbeAnswer };

/**
 * How detection recognises the dialect's server (docs/dialects.md#choosing). Every member is
 * optional: a dialect takes part in the steps it has a member for, in the registry's order, the seed
 * dialect (the registry's first) last wherever an answer is claimed or a body tried.
 */
export interface IDialectProbe {
  /**
   * Its own body for the run's first `/planning`, tried once when a strict server refuses the
   * superset (422); `label` names it in the probe list (`POST …/planning (bcc body)`).
   */
  ownBody?: {
    label: string;
    build(context: IProbeContext): JsonObject;
  };
  /** What it adds to the seed's body in the superset (bcc: the sibling `state`). */
  supersetFields?(context: IProbeContext): JsonObject;
  /** Whether a 2xx answer to the `/planning` probe is its server's; null when not. */
  claim?(
    answer: IProbeAnswer,
    where: { url: string; onWarning?: PlannerWarning }
  ): ProbeClaim | null;
  /**
   * A configured URL ending in this (`/v1`) names the dialect: the root drops it, and detection sends
   * only `routes`.
   */
  urlSuffix?: string;
  /**
   * Its own routes, probed when `/planning` is missing (404, 405); each probe is described in
   * `probes`. True when the server answered like this dialect.
   */
  routes?(context: IProbeContext, probes: string[]): Promise<boolean>;
}

/** The dialect's settings (schema/plugin.json): its keys with their defaults, and how it reads them. */
export interface IDialectSettings<TSettings> {
  /** Each key and its default; a test holds them equal to the schema's. */
  readonly defaults: Readonly<Record<string, string | number | boolean>>;
  /** The plugin's composite settings → the adapter's; anything invalid keeps its default. */
  read(composite: Readonly<Record<string, unknown>>): TSettings;
}

/** What the adapter saves with the run (`saveState`): the check before a saved value is restored. */
export interface ISavedStateFormat {
  /** The saved value when it is this dialect's saved state (a notebook is untrusted input), else null. */
  read(saved: unknown): JsonObject | null;
}

/** One dialect, as the registry lists it. */
export interface IDialect<
  TName extends string = string,
  TSettings = unknown,
  TDouble extends string = string
> {
  /** The `protocol` setting's value, and what the panel, the saved run and the trace call it. */
  readonly name: TName;
  /** The reference planner service's double of its server: `--dialect <testDouble>`. */
  readonly testDouble: TDouble;
  readonly probe: IDialectProbe;
  readonly settings: IDialectSettings<TSettings>;
  /**
   * The adapter factory: the adapter of one planner connection, read at each use. An adapter that
   * keeps state is built once; a stateless one may be rebuilt when the context's values change.
   */
  createAdapter(
    context: IAdapterContext,
    settings: TSettings
  ): () => IDialectAdapter;
  readonly savedState: ISavedStateFormat;
}

/** Declares a dialect with its names' literal types, so that the registry's names form union types. */
export function defineDialect<
  const TName extends string,
  TSettings,
  const TDouble extends string
>(
  dialect: IDialect<TName, TSettings, TDouble>
): IDialect<TName, TSettings, TDouble> {
  return dialect;
}
