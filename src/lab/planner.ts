/**
 * The planner as one run sees it: a `PlannerClient` built from the current settings, rebuilt when the
 * base URL, token, notebook id or timeouts change, so a changed setting applies to the next request.
 */
import {
  FetchLike,
  GeneratingEvent,
  GeneratingRequestInput,
  IPlannerObserver,
  PlannerClient,
  PlanningRequestInput,
  PlanningResponse
} from '../protocol';
import type { IRunSettings } from '../engine/settings';
import type { IPlannerService } from '../engine/types';

/** The header the reference planner keys its sessions by. */
export const NOTEBOOK_ID_HEADER = 'X-Notebook-Id';

export class SettingsPlannerService implements IPlannerService {
  constructor(private _options: SettingsPlannerService.IOptions) {}

  /**
   * What the client only logs during this request (e.g. "retrying in 3 s" after a 429) reaches the run's
   * warnings too, so the user sees why nothing happens for a while.
   */
  async planning(
    request: PlanningRequestInput,
    options: {
      signal?: AbortSignal;
      onWarning?: (message: string) => void;
    } = {}
  ): Promise<PlanningResponse> {
    const onWarning = options.onWarning;
    let logged: string | null = null;
    this._forward = message => {
      logged = message;
      onWarning?.(message);
    };
    try {
      return await this._client().planning(request, {
        ...options,
        // A warning both logged and reported would be shown twice.
        onWarning: message => {
          if (message === logged) {
            logged = null;
          } else {
            onWarning?.(message);
          }
        }
      });
    } finally {
      this._forward = null;
    }
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
      baseUrl: settings.baseUrl,
      token: settings.token || null,
      headers: notebookId ? { [NOTEBOOK_ID_HEADER]: notebookId } : {},
      firstByteTimeoutMs: settings.firstByteTimeout * 1000,
      stallTimeoutMs: settings.stallTimeout * 1000
    };
    const key = JSON.stringify(options);
    if (!this._current || key !== this._key) {
      this._key = key;
      this._current = new PlannerClient({
        ...options,
        fetch: this._options.fetch,
        observer: this._options.observer,
        logger: {
          warn: message => {
            console.warn(`Notebook-BCC: ${message}`);
            this._forward?.(message);
          }
        }
      });
    }
    return this._current;
  }

  private _current: PlannerClient | null = null;
  private _forward: ((message: string) => void) | null = null;
  private _key = '';
}

export namespace SettingsPlannerService {
  export interface IOptions {
    settings: () => IRunSettings;
    /** The notebook id sent when the setting is empty: the notebook's path, read at each request. */
    notebookId: () => string;
    /** The run's trace. */
    observer?: IPlannerObserver;
    /** Default: the browser's `fetch`. */
    fetch?: FetchLike;
  }
}
