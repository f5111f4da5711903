/**
 * The planner as one run sees it: a `PlannerClient` built from the current settings, rebuilt when the
 * base URL, token, notebook id or timeouts change, so a changed setting applies to the next request.
 */
import {
  FetchLike,
  GeneratingEvent,
  GeneratingRequestInput,
  IPlannerObserver,
  IPlannerTransport,
  PlannerClient,
  PlanningRequestInput,
  PlanningResponse
} from '../protocol';
import type { IRunSettings } from '../engine/settings';
import type { IPlannerService } from '../engine/types';

export class SettingsPlannerService implements IPlannerService {
  constructor(private _options: SettingsPlannerService.IOptions) {}

  /** The client's warnings during this request (e.g. "retrying in 3 s" after a 429) reach the run too. */
  async planning(
    request: PlanningRequestInput,
    options: {
      signal?: AbortSignal;
      onWarning?: (message: string) => void;
    } = {}
  ): Promise<PlanningResponse> {
    const { signal, onWarning } = options;
    return this._client().planning(request, {
      signal,
      observer: { onWarning: (_endpoint, message) => onWarning?.(message) }
    });
  }

  generating(
    request: GeneratingRequestInput,
    options?: { signal?: AbortSignal }
  ): AsyncIterable<GeneratingEvent> {
    return this._client().generating(request, options);
  }

  private _client(): PlannerClient {
    const settings = this._options.settings();
    const notebookId = settings.notebookId || this._options.notebookId();
    const options = {
      transport: settings.transport,
      baseUrl: settings.baseUrl,
      token: settings.token || null,
      notebookId,
      firstByteTimeoutMs: settings.firstByteTimeout * 1000,
      stallTimeoutMs: settings.stallTimeout * 1000
    };
    const key = JSON.stringify(options);
    if (!this._current || key !== this._key) {
      this._key = key;
      this._current = new PlannerClient({
        ...options,
        transport: this._options.transport?.(settings),
        fetch: this._options.fetch,
        observer: [
          ...(this._options.observer ? [this._options.observer] : []),
          {
            onWarning: (_, message) => console.warn(`Notebook-BCC: ${message}`)
          }
        ]
      });
    }
    return this._current;
  }

  private _current: PlannerClient | null = null;
  private _key = '';
}

export namespace SettingsPlannerService {
  export interface IOptions {
    settings: () => IRunSettings;
    /** The notebook id sent when the setting is empty: the notebook's path, read at each request. */
    notebookId: () => string;
    /** The run's trace. */
    observer?: IPlannerObserver;
    /** How requests leave for these settings (`createPlannerTransport`); default: straight to `baseUrl`. */
    transport?: (settings: IRunSettings) => IPlannerTransport;
    /** For the default transport; default: the browser's `fetch`. */
    fetch?: FetchLike;
  }
}
