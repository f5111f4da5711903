/**
 * The planner connection: the planner as one run sees it, built from the current settings: a
 * transport and the dialect selector (`createDialectSelector`) over the registry's dialects. The
 * selector (and the dialect it found) is rebuilt only when the planner itself changes (base URL,
 * transport, token, the `protocol` setting, a dialect's own settings); timeouts and the notebook id are
 * read at each request, so they apply to the next one without losing the run's dialect state
 * (docs/architecture.md#adding-a-dialect). The engine streams each behavior from the adapter the
 * selector chose (`adapter()`), not through here.
 *
 * It also tells the views what the engine does not need: how long a request has been waiting for the
 * planner's first byte, and where the planner is.
 */
import { ISignal, Signal } from '@lumino/signaling';
import {
  checkConnection,
  createBrowserTransport,
  FetchLike,
  GeneratingEvent,
  GeneratingRequestInput,
  IConnectionCheck,
  IPlannerObserver,
  IPlannerRequest,
  IPlannerTransport,
  ITimeouts,
  NOTEBOOK_ID_HEADER,
  notebookIdOverhead,
  ObservationInput,
  PLANNING_RETRIES,
  PlanningRequestInput,
  PlanningResponse,
  withSend
} from '../protocol';
import {
  createDialectSelector,
  DIALECTS,
  DialectSelector,
  IDialectAdapter,
  IGeneratingOptions,
  IPlanningOptions,
  normalizePlannerBaseUrl,
  readProtocolSetting
} from '../protocol/dialects';
import type { IRunSettings } from '../engine/settings';
import type { IPlannerService } from '../engine/types';
import type { ILlmChoice, IPlannerLocation, IPlannerStatus } from '../tokens';

/** What the relay's `GET notebook-bcc/config` says about the planner it serves. */
export interface IPlannerWhereabouts {
  url?: string;
  source?: string;
  /** No planner is configured: the built-in demo planner answers. */
  builtin?: boolean;
  /** The relay serves the LLM planner (`notebook-bcc/config`'s `llm`). */
  llm?: ILlmChoice;
}

interface ISelection {
  key: string;
  transport: IPlannerTransport;
  selector: DialectSelector;
}

export class PlannerConnection implements IPlannerService, IPlannerStatus {
  constructor(private _options: PlannerConnection.IOptions) {}

  /** Location or waiting time changed. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** The dialect of the current run, once known. */
  get dialect(): string | null {
    return this._selection?.selector.dialect ?? null;
  }

  get needsPlanningFirst(): boolean {
    return this._select().selector.needsPlanningFirst;
  }

  /** Since when (ms since the epoch) a request waits for the planner's first byte; null when none does. */
  get waitingSince(): number | null {
    const times = [this._adapterSince, ...this._sending.values()].filter(
      (time): time is number => time !== null
    );
    return times.length > 0 ? Math.min(...times) : null;
  }

  /** Where requests go, for the panel; asks the relay where it forwards when the planner changed. */
  get location(): IPlannerLocation | null {
    const selection = this._select();
    if (this._located !== selection.key) {
      this._located = selection.key;
      this._location = {
        via: selection.transport.label,
        viaText: selection.transport.labelText
      };
      void this._describe(selection);
    }
    return this._location;
  }

  saveState(): unknown {
    return this._select().selector.saveState();
  }

  restoreState(saved: unknown): void {
    this._select().selector.restoreState(saved);
  }

  resetState(): void {
    this._select().selector.resetState();
  }

  /** Characters every request body carries besides its own (`notebook_id`), so the engine fits the rest. */
  requestOverhead(): number {
    return notebookIdOverhead(this._notebookId(this._options.settings()));
  }

  sentSize(request: { observation: ObservationInput }): number | null {
    return this._select().selector.sentSize?.(request) ?? null;
  }

  /** The adapter's warnings during this request (e.g. "retrying in 3 s" after a 429) reach the run too. */
  async planning(
    request: PlanningRequestInput,
    options: IPlanningOptions = {}
  ): Promise<PlanningResponse> {
    return this._select().selector.planning(request, options);
  }

  generating(
    request: GeneratingRequestInput,
    options?: IGeneratingOptions
  ): AsyncIterable<GeneratingEvent> {
    return this._select().selector.generating(request, options);
  }

  /** The adapter the selector chose for this run, once it is to be trusted (null before). */
  adapter(): IDialectAdapter | null {
    return this._select().selector.adapter();
  }

  /**
   * The planner the server relays to changed (e.g. the user saved their LLM settings): the transport
   * asks the server again at the next request, and the panel is told where the planner is now.
   */
  reconfigure(): void {
    this._revision++;
    this._located = null;
    this._changed.emit();
  }

  /** Whether the planner answers at all, with a message the user can act on (Run dialog, Test connection). */
  async checkConnection(): Promise<IConnectionCheck> {
    this._located = null;
    const check = await checkConnection(this._select().transport);
    this._changed.emit();
    return check;
  }

  private _select(): ISelection {
    const settings = this._options.settings();
    const plugin = this._options.pluginSettings?.() ?? {};
    const protocol = readProtocolSetting(plugin.protocol);
    const planner = {
      baseUrl: settings.baseUrl,
      transport: settings.transport,
      token: settings.token || null,
      protocol,
      dialects: DIALECTS.map(dialect => dialect.settings.read(plugin))
    };
    const key = JSON.stringify({ ...planner, revision: this._revision });
    if (this._selection?.key === key) {
      return this._selection;
    }
    const transport = this._watch(
      this._options.transport?.(settings) ??
        createBrowserTransport({
          baseUrl: normalizePlannerBaseUrl(settings.baseUrl).root,
          token: planner.token,
          fetch: this._options.fetch
        })
    );
    const selector = createDialectSelector({
      protocol,
      settings: plugin,
      transport,
      baseUrl: settings.baseUrl,
      // Read at each request: a changed timeout or notebook id applies to the next one.
      timeouts: () => this._timeouts(),
      notebookId: () => this._notebookId(this._options.settings()),
      observer: [
        ...(this._options.observer ? [this._options.observer] : []),
        {
          onWarning: (_, warning) =>
            console.warn(`Notebook-BCC: ${warning.message}`),
          onWaiting: (_, since) => {
            this._adapterSince = since;
            this._changed.emit();
          }
        }
      ],
      // The probe is the run's first /planning request: the same timeout and retries as the dslc adapter's.
      probeTiming: () => ({
        firstByteTimeoutMs: this._timeouts().firstByteTimeoutMs,
        retries: PLANNING_RETRIES
      }),
      log: message => console.debug(`Notebook-BCC: ${message}`)
    });
    this._selection = { key, transport, selector };
    return this._selection;
  }

  private _notebookId(settings: IRunSettings): string {
    return settings.notebookId || this._options.notebookId();
  }

  /**
   * The v1 and bcc adapters send through the transport directly: their wait is the time to the
   * headers, and their requests (detection's probe included) carry the notebook id, in the header and
   * the body, as the dslc adapter's do.
   */
  private _watch(transport: IPlannerTransport): IPlannerTransport {
    return withSend(transport, async (request: IPlannerRequest) => {
      const id = ++this._sends;
      this._sending.set(id, Date.now());
      this._changed.emit();
      const notebookId = this._notebookId(this._options.settings());
      try {
        return await transport.send({
          ...request,
          body: withNotebookId(request.body, notebookId),
          headers: {
            ...(notebookId ? { [NOTEBOOK_ID_HEADER]: notebookId } : {}),
            ...request.headers
          }
        });
      } finally {
        this._sending.delete(id);
        this._changed.emit();
      }
    });
  }

  /** The first-byte and stall timeouts of every planner request, from the settings. */
  private _timeouts(): ITimeouts {
    const settings = this._options.settings();
    return {
      firstByteTimeoutMs: settings.firstByteTimeout * 1000,
      stallTimeoutMs: settings.stallTimeout * 1000
    };
  }

  private async _describe(selection: ISelection): Promise<void> {
    const where = this._options.where;
    if (!where) {
      return;
    }
    try {
      const found = await where(this._options.settings());
      if (found && this._located === selection.key) {
        this._location = {
          via: selection.transport.label,
          viaText: selection.transport.labelText,
          ...found
        };
        this._changed.emit();
      }
    } catch (reason) {
      console.debug(
        'Notebook-BCC: where the relay forwards is unknown',
        reason
      );
    }
  }

  private _selection: ISelection | null = null;
  private _revision = 0;
  /** Since when the dslc adapter's call waits for the planner's first byte (its `onWaiting`). */
  private _adapterSince: number | null = null;
  private _sending = new Map<number, number>();
  private _sends = 0;
  private _location: IPlannerLocation | null = null;
  private _located: string | null = null;
  private _changed = new Signal<this, void>(this);
}

/** Every JSON body carries the notebook id as `notebook_id` (docs/protocol.md#notebook-id). */
function withNotebookId(body: unknown, notebookId: string): unknown {
  if (
    !notebookId ||
    typeof body !== 'object' ||
    body === null ||
    Array.isArray(body) ||
    'notebook_id' in body
  ) {
    return body;
  }
  return { ...body, notebook_id: notebookId };
}

export namespace PlannerConnection {
  export interface IOptions {
    settings: () => IRunSettings;
    /**
     * The plugin's settings as JupyterLab holds them (schema/plugin.json): the `protocol` setting and
     * each dialect's own, which the engine's settings do not carry. Default: none set.
     */
    pluginSettings?: () => Readonly<Record<string, unknown>>;
    /** The notebook id sent when the setting is empty: the notebook's path, read at each request. */
    notebookId: () => string;
    /** The run's trace. */
    observer?: IPlannerObserver;
    /** How requests leave for these settings (`createPlannerTransport`); default: straight to `baseUrl`. */
    transport?: (settings: IRunSettings) => IPlannerTransport;
    /** For the default transport; default: the browser's `fetch`. */
    fetch?: FetchLike;
    /** Where the planner really is for these settings (the relay's config), when the transport hides it. */
    where?: (settings: IRunSettings) => Promise<IPlannerWhereabouts | null>;
  }
}
