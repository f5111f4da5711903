/**
 * The LLM planner's settings on the Jupyter server (`notebook-bcc/llm/…`): read them, store the user's
 * own, remove them, test an endpoint, and the model choice `notebook-bcc/config` offers a run. The API
 * key only ever goes to the server; it never comes back. This module is loaded at startup: it reads
 * the answers by hand, without zod (docs/architecture.md#lazy-loading).
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';
import type { ILlmChoice } from '../tokens';
import type {
  ILlmSettings,
  ILlmSettingsUpdate,
  ILlmTestRequest,
  ILlmSettingsBackend,
  ILlmTestResult
} from '../ui/llmSettingsDialog';

export const LLM_SETTINGS_ROUTE = 'notebook-bcc/llm/settings';
export const LLM_TEST_ROUTE = 'notebook-bcc/llm/test';
/**
 * What the server says about the planner it relays to (never the token), under its base URL; its `llm`
 * names the models a run may pick. Defined here, in a module loaded at startup, for the relay transport too.
 */
export const CONFIG_ROUTE = 'notebook-bcc/config';

/** The run variable the LLM planner reads the run's model from (`IStartOptions.llmModel`). */
export const LLM_MODEL_VARIABLE = 'llm_model';

/** A request the server refused or could not answer, with the server's own sentence when it gave one. */
export class LlmSettingsError extends Error {
  constructor(
    message: string,
    readonly status: number | null
  ) {
    super(message);
    this.name = 'LlmSettingsError';
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function texts(value: unknown): string[] {
  return Array.isArray(value)
    ? value.filter((item): item is string => typeof item === 'string' && !!item)
    : [];
}

/** The settings as the server sent them; fields it left out are empty. */
export function readLlmSettings(value: unknown): ILlmSettings {
  const body = isRecord(value) ? value : {};
  const source =
    body.source === 'server' || body.source === 'user' ? body.source : 'none';
  return {
    source,
    readonly: body.readonly === true,
    base_url: text(body.base_url),
    model: text(body.model),
    models: texts(body.models),
    api_key_set: body.api_key_set === true
  };
}

/** The config's `llm` object, or null when the relay serves no LLM planner. */
export function readLlmChoice(value: unknown): ILlmChoice | null {
  if (!isRecord(value) || !text(value.model)) {
    return null;
  }
  const model = text(value.model);
  const models = texts(value.models);
  return {
    model,
    models: models.includes(model) ? models : [model, ...models],
    base_url: text(value.base_url),
    readonly: value.readonly === true
  };
}

const changed = new Signal<object, void>({});

/**
 * The planner the server relays to may have changed (the user saved or removed their LLM settings):
 * each notebook's planner asks the server again before its next request.
 */
export const serverPlannerChanged: ISignal<object, void> = changed;

/** The HTTP calls of the LLM Planner Settings dialog and of the Run dialog's model choice. */
export class LlmSettingsService implements ILlmSettingsBackend {
  constructor(private _serverSettings: ServerConnection.ISettings) {}

  /** The settings were saved or removed (also announced by `serverPlannerChanged`). */
  get changed(): ISignal<this, ILlmSettings | null> {
    return this._changed;
  }

  async get(): Promise<ILlmSettings> {
    return readLlmSettings(await this._json(LLM_SETTINGS_ROUTE, 'GET'));
  }

  /** Stores the user's settings; refused (403) when the administrator configured them. */
  async save(update: ILlmSettingsUpdate): Promise<ILlmSettings> {
    const saved = readLlmSettings(
      await this._json(LLM_SETTINGS_ROUTE, 'PUT', update)
    );
    this._changed.emit(saved);
    changed.emit();
    return saved;
  }

  /** Removes the user's settings: the demo planner answers again (unless a planner URL is set). */
  async remove(): Promise<void> {
    await this._json(LLM_SETTINGS_ROUTE, 'DELETE');
    this._changed.emit(null);
    changed.emit();
  }

  /** Whether the model answers with these values (the stored ones for the fields left out). */
  async test(request: ILlmTestRequest): Promise<ILlmTestResult> {
    const body = await this._json(LLM_TEST_ROUTE, 'POST', request);
    const result = isRecord(body) ? body : {};
    const answer: ILlmTestResult = {
      ok: result.ok === true,
      message: text(result.message)
    };
    if (text(result.model)) {
      answer.model = text(result.model);
    }
    if (Array.isArray(result.models)) {
      answer.models = texts(result.models);
    }
    if (typeof result.served === 'boolean') {
      answer.served = result.served;
    }
    return answer;
  }

  /** The models a run may pick, or null when the relay serves no LLM planner (or cannot say). */
  async choice(): Promise<ILlmChoice | null> {
    try {
      const config = await this._json(CONFIG_ROUTE, 'GET');
      return isRecord(config) ? readLlmChoice(config.llm) : null;
    } catch (reason) {
      console.debug('Notebook-BCC: the LLM planner config is unknown', reason);
      return null;
    }
  }

  private async _json(
    route: string,
    method: string,
    body?: unknown
  ): Promise<unknown> {
    const settings = this._serverSettings;
    let response: Response;
    try {
      response = await ServerConnection.makeRequest(
        URLExt.join(settings.baseUrl, route),
        {
          method,
          ...(body === undefined
            ? {}
            : {
                body: JSON.stringify(body),
                headers: { 'Content-Type': 'application/json' }
              })
        },
        settings
      );
    } catch (reason) {
      throw new LlmSettingsError(
        reason instanceof Error ? reason.message : String(reason),
        null
      );
    }
    const raw = await response.text();
    let parsed: unknown = null;
    try {
      parsed = raw ? JSON.parse(raw) : null;
    } catch {
      parsed = null;
    }
    if (!response.ok) {
      const message =
        isRecord(parsed) && typeof parsed.message === 'string' && parsed.message
          ? parsed.message
          : `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
      throw new LlmSettingsError(message, response.status);
    }
    return parsed;
  }

  private _changed = new Signal<this, ILlmSettings | null>(this);
}
