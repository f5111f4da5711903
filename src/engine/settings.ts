/**
 * Run settings (docs/protocol.md#settings). The plugin maps JupyterLab settings onto this; the engine
 * reads only this object, so a changed setting applies to the next request without a reload.
 *
 * `schema/plugin.json` is the source of every default and minimum; `DEFAULT_SETTINGS` and
 * `SETTING_MINIMA` repeat them for code that runs without the schema, and a test holds them equal.
 * The dialect settings (`protocol` and each dialect's own) are not here: the planner connection reads
 * them through the dialect registry (`protocol/dialects/registry.ts`).
 */
import {
  DEFAULT_FIRST_BYTE_TIMEOUT_MS,
  DEFAULT_STALL_TIMEOUT_MS
} from '../protocol/timeouts';

export interface IRunSettings {
  /** Planner base URL, e.g. `http://localhost:28600`; empty = no planner configured (the built-in demo planner). */
  baseUrl: string;
  /** Optional bearer token; empty = none. */
  token: string;
  /** Optional notebook id sent to the planner; empty = the notebook's path. */
  notebookId: string;
  /** `server`: through the Jupyter server's relay (default); `browser`: straight to the planner. */
  transport: 'server' | 'browser';
  /** 0 = unlimited. Counted in behaviors. */
  maxExecutionSteps: number;
  /** Confirm before each behavior's code runs. */
  interactive: boolean;
  /**
   * The LLM planner's code: `ask` waits for approval of each behavior (interactive mode for its runs),
   * `run` does not; `ask-first` is not answered yet: the Run dialog asks, and until then it is `ask`.
   */
  llmCodeApproval: 'ask-first' | 'ask' | 'run';
  /** `reflection` = planning first (default); `generation` = generating first. */
  startMode: 'reflection' | 'generation';
  /** Per exec, in seconds; 0 = none. */
  executionTimeout: number;
  /** Upper bound of a planning/generating request body, in characters. */
  maxContextLength: number;
  /** Bound of effects history (and other histories). */
  maxHistoryItems: number;
  /** truncateOutput limit, in characters. */
  effectTruncation: number;
  /** Accept major workflow updates without asking. */
  autoAcceptWorkflowUpdates: boolean;
  /** Scroll to new cells as they appear. */
  followNewCells: boolean;
  /** Timeout for the first byte of a response, in seconds. */
  firstByteTimeout: number;
  /** Timeout for a stream that stops sending, in seconds. */
  stallTimeout: number;
  /** Send `<redacted>` for the variables whose names match `redactVariablePatterns`. */
  redactVariables: boolean;
  /** Glob patterns (`*` = anything), case-insensitive. */
  redactVariablePatterns: string[];
  /** `exec` may run any cell by its id, not only the run's own and the ones marked for it. */
  allowPlannerToRunAnyCell: boolean;
  /** At the end of every completed run, check that its kept cells reproduce its values in a fresh kernel. */
  checkReproducibility: boolean;
  /** The reproducibility check's limit for one cell, in seconds. */
  reproducibilityCellTimeout: number;
}

/**
 * Names whose last segments say secret (docs/protocol.md#context): `api_key`, `OPENAI_API_KEY`,
 * `auth_token`, `db_password`, `mySecret`; not `tokens`, `keywords`, `primary_key` or `monkey_df`.
 */
export const REDACT_DEFAULTS: readonly string[] = [
  '*_password',
  '*_passwd',
  '*_secret',
  '*_token',
  '*_api_key',
  '*_apikey',
  '*_access_key',
  '*_secret_key',
  '*_private_key'
];

export const DEFAULT_SETTINGS: IRunSettings = {
  baseUrl: '',
  token: '',
  notebookId: '',
  transport: 'server',
  maxExecutionSteps: 0,
  interactive: false,
  llmCodeApproval: 'ask-first',
  startMode: 'reflection',
  executionTimeout: 0,
  maxContextLength: 18600,
  maxHistoryItems: 50,
  effectTruncation: 16000,
  autoAcceptWorkflowUpdates: false,
  followNewCells: true,
  firstByteTimeout: DEFAULT_FIRST_BYTE_TIMEOUT_MS / 1000,
  stallTimeout: DEFAULT_STALL_TIMEOUT_MS / 1000,
  redactVariables: true,
  redactVariablePatterns: [...REDACT_DEFAULTS],
  allowPlannerToRunAnyCell: false,
  checkReproducibility: false,
  reproducibilityCellTimeout: 600
};

type NumericSetting = {
  [K in keyof IRunSettings]: IRunSettings[K] extends number ? K : never;
}[keyof IRunSettings];

/** The smallest accepted value of each number setting; a smaller one keeps the default. */
export const SETTING_MINIMA: Record<NumericSetting, number> = {
  maxExecutionSteps: 0,
  executionTimeout: 0,
  maxContextLength: 1000,
  maxHistoryItems: 1,
  effectTruncation: 200,
  firstByteTimeout: 1,
  stallTimeout: 1,
  reproducibilityCellTimeout: 1
};

/**
 * The longest time limit a browser timer can hold (2^31 - 1 ms, about 24.8 days): a longer one fires at
 * once. A user who types a huge limit means "never", so a longer limit is no limit (0).
 */
export const MAX_TIMEOUT_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

function text(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback;
}

function flag(value: unknown, fallback: boolean): boolean {
  return typeof value === 'boolean' ? value : fallback;
}

function oneOf<T extends string>(
  value: unknown,
  allowed: readonly T[],
  fallback: T
): T {
  return allowed.find(item => item === value) ?? fallback;
}

/** Composite settings (schema/plugin.json) -> engine settings; anything invalid keeps its default. */
export function toRunSettings(
  composite: Readonly<Record<string, unknown>>
): IRunSettings {
  const d = DEFAULT_SETTINGS;
  const count = (key: NumericSetting): number => {
    const value = composite[key];
    return typeof value === 'number' &&
      Number.isFinite(value) &&
      value >= SETTING_MINIMA[key]
      ? value
      : d[key];
  };
  const limit = (
    key: 'executionTimeout' | 'firstByteTimeout' | 'stallTimeout'
  ) => {
    const seconds = count(key);
    return seconds > MAX_TIMEOUT_SECONDS ? 0 : seconds;
  };
  const baseUrl = text(composite.baseUrl, d.baseUrl).trim().replace(/\/+$/, '');
  return {
    baseUrl,
    token: text(composite.token, d.token).trim(),
    notebookId: text(composite.notebookId, d.notebookId).trim(),
    transport: oneOf(composite.transport, ['server', 'browser'], d.transport),
    maxExecutionSteps: Math.floor(count('maxExecutionSteps')),
    interactive: flag(composite.interactive, d.interactive),
    llmCodeApproval: oneOf(
      composite.llmCodeApproval,
      ['ask-first', 'ask', 'run'],
      d.llmCodeApproval
    ),
    startMode: oneOf(
      composite.startMode,
      ['reflection', 'generation'],
      d.startMode
    ),
    executionTimeout: limit('executionTimeout'),
    maxContextLength: count('maxContextLength'),
    maxHistoryItems: count('maxHistoryItems'),
    effectTruncation: count('effectTruncation'),
    autoAcceptWorkflowUpdates: flag(
      composite.autoAcceptWorkflowUpdates,
      d.autoAcceptWorkflowUpdates
    ),
    followNewCells: flag(composite.followNewCells, d.followNewCells),
    firstByteTimeout: limit('firstByteTimeout'),
    stallTimeout: limit('stallTimeout'),
    redactVariables: flag(composite.redactVariables, d.redactVariables),
    redactVariablePatterns: Array.isArray(composite.redactVariablePatterns)
      ? composite.redactVariablePatterns.filter(
          (p): p is string => typeof p === 'string'
        )
      : [...d.redactVariablePatterns],
    allowPlannerToRunAnyCell: flag(
      composite.allowPlannerToRunAnyCell,
      d.allowPlannerToRunAnyCell
    ),
    checkReproducibility: flag(
      composite.checkReproducibility,
      d.checkReproducibility
    ),
    // A limit it always has: a huge one is the longest a timer holds.
    reproducibilityCellTimeout: Math.min(
      count('reproducibilityCellTimeout'),
      MAX_TIMEOUT_SECONDS
    )
  };
}
