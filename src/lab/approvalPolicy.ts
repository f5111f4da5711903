/**
 * Who decides whether a behavior's code waits for approval (docs/using.md#approval): the user's
 * interactive mode; the administrator's `c.NotebookBCC.require_approval`, which forces it for every
 * planner (`GET notebook-bcc/config`'s `require_approval`, and the Settings Editor shows it forced); and,
 * for the LLM planner, the answer to the question of its first run (`llmCodeApproval`). Flagged code
 * waits whatever they say (the engine's `approval.ts`). Loaded at startup: the answer is read by hand, and
 * the question itself (`ui/llmApprovalQuestion.ts`) loads the first time it is asked.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';
import type { TranslationBundle } from '@jupyterlab/translation';
import { ISignal, Signal } from '@lumino/signaling';
import type { IRunSettings } from '../engine/settings';
import {
  CONFIG_ROUTE,
  readLlmChoice,
  serverPlannerChanged
} from './llmSettings';

/** What the server says about approval. */
export interface IApprovalPolicy {
  /** The administrator requires approval of every behavior's code. */
  requireApproval: boolean;
  /** The relay serves the LLM planner (the config's `llm`). */
  llmPlanner: boolean;
}

/** `GET notebook-bcc/config`'s answer, read by hand; nothing required when a field is missing. */
export function readApprovalPolicy(body: unknown): IApprovalPolicy {
  const config =
    typeof body === 'object' && body !== null
      ? (body as Record<string, unknown>)
      : {};
  return {
    requireApproval: config.require_approval === true,
    llmPlanner: readLlmChoice(config.llm) !== null
  };
}

/** Whether the LLM planner answers a run made with `settings` (only through the relay). */
function llmRun(
  settings: Pick<IRunSettings, 'transport'>,
  policy: IApprovalPolicy | null
): boolean {
  return settings.transport !== 'browser' && !!policy?.llmPlanner;
}

/**
 * The settings a run uses: interactive mode when the user set it, when the administrator requires it,
 * or for the LLM planner unless the user answered "run without asking".
 */
export function withApprovalPolicy(
  settings: IRunSettings,
  policy: IApprovalPolicy | null
): IRunSettings {
  const interactive =
    settings.interactive ||
    !!policy?.requireApproval ||
    (llmRun(settings, policy) && settings.llmCodeApproval !== 'run');
  return interactive === settings.interactive
    ? settings
    : { ...settings, interactive };
}

export class ApprovalPolicyService {
  constructor(private _options: ApprovalPolicyService.IOptions) {
    serverPlannerChanged.connect(() => void this.refresh(), this);
  }

  /** The last answer of the server; null until it came. */
  get current(): IApprovalPolicy | null {
    return this._current;
  }

  get changed(): ISignal<this, IApprovalPolicy> {
    return this._changed;
  }

  /** Asks the server again; keeps what it knew when the server does not answer. */
  async refresh(): Promise<IApprovalPolicy | null> {
    const { serverSettings } = this._options;
    try {
      const body = await (this._options.fetchConfig ?? fetchConfig)(
        serverSettings
      );
      const policy = readApprovalPolicy(body);
      const before = this._current;
      this._current = policy;
      if (
        before?.requireApproval !== policy.requireApproval ||
        before?.llmPlanner !== policy.llmPlanner
      ) {
        this._changed.emit(policy);
      }
    } catch (reason) {
      console.warn(
        'Notebook-BCC: the approval policy could not be read.',
        reason
      );
    }
    return this._current;
  }

  dispose(): void {
    Signal.clearData(this);
  }

  private _current: IApprovalPolicy | null = null;
  private _changed = new Signal<this, IApprovalPolicy>(this);
}

export namespace ApprovalPolicyService {
  export interface IOptions {
    serverSettings: ServerConnection.ISettings;
    /** `GET notebook-bcc/config`'s body. */
    fetchConfig?: (
      serverSettings: ServerConnection.ISettings
    ) => Promise<unknown>;
  }
}

/**
 * Before a run from the Run dialog: the first time the LLM planner answers a run, asks whether its code
 * may run without approval and remembers the answer. False when the user closed the question (the run
 * does not start).
 */
export async function confirmLlmRun(options: {
  serverSettings: ServerConnection.ISettings;
  /** The user's own settings (not the policy's). */
  settings: () => Promise<IRunSettings>;
  /** Stores the answer (`llmCodeApproval`). */
  remember: (answer: 'ask' | 'run') => Promise<void>;
  trans: TranslationBundle;
  fetchConfig?: (
    serverSettings: ServerConnection.ISettings
  ) => Promise<unknown>;
  ask?: (trans: TranslationBundle) => Promise<'ask' | 'run' | null>;
}): Promise<boolean> {
  const settings = await options.settings();
  if (settings.interactive || settings.llmCodeApproval !== 'ask-first') {
    return true;
  }
  let policy: IApprovalPolicy;
  try {
    policy = readApprovalPolicy(
      await (options.fetchConfig ?? fetchConfig)(options.serverSettings)
    );
  } catch {
    // Not known now: the run goes on, and an LLM run waits for approval until the question is answered.
    return true;
  }
  if (!llmRun(settings, policy) || policy.requireApproval) {
    return true;
  }
  const ask =
    options.ask ??
    (await import('../ui/llmApprovalQuestion')).askLlmCodeApproval;
  const answer = await ask(options.trans);
  if (answer === null) {
    return false;
  }
  await options.remember(answer);
  return true;
}

/** `GET {base_url}notebook-bcc/config`; throws when the server does not answer it. */
export async function fetchConfig(
  serverSettings: ServerConnection.ISettings
): Promise<unknown> {
  const response = await ServerConnection.makeRequest(
    URLExt.join(serverSettings.baseUrl, CONFIG_ROUTE),
    { method: 'GET' },
    serverSettings
  );
  if (!response.ok) {
    throw new Error(`${CONFIG_ROUTE}: HTTP ${response.status}`);
  }
  return response.json();
}
