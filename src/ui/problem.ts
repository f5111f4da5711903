/**
 * A planner failure told the way a user acts on it: one sentence of what failed and why (the planner's
 * address and the cause first, so a notification cut at 140 characters still says it), the actions that
 * may fix it, and the whole technical chain for a "Details" fold. Pure functions of a message, so they are
 * tested without a page.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import type { IMessage, IMessageText } from '../engine/messages';
import type { IStartProblem } from '../tokens';
import { translateMessage } from './present';

/** The command and arguments that open the extension's settings. */
export const OPEN_SETTINGS = {
  id: 'settingeditor:open',
  args: { query: 'Notebook-BCC' }
} as const;

/** The Run command's arguments that start `problem`'s run again, the planner checked first. */
export function startArgs(
  notebook: string | null,
  problem: IStartProblem
): ReadonlyPartialJSONObject {
  // Every option as it was (a field IStartOptions gains comes along), the list and the flag made plain.
  const { dataFiles, stepMode, ...rest } = problem.options;
  return {
    ...(notebook ? { notebook } : {}),
    ...rest,
    dataFiles: [...(dataFiles ?? [])],
    stepMode: stepMode === true,
    check: true
  };
}

/** What went wrong, as far as the user can act on it. */
export type PlannerProblemKind =
  /** No answer at all: the planner is not running, or the URL is wrong. */
  | 'unreachable'
  /** The planner (or the Jupyter server) refused the request: a token or a session. */
  | 'refused'
  /** The planner answered with an error. */
  | 'error'
  /** Anything else: the message as it is. */
  | 'other';

/** What the dialog, the panel and the notification may offer. */
export type PlannerProblemAction = 'settings' | 'test' | 'builtin' | 'retry';

export interface IPlannerProblem {
  kind: PlannerProblemKind;
  /** One sentence in the user's words, the cause first. */
  summary: string;
  /** The whole chain (the request, the relay, the cause), translated: for a "Details" fold. */
  details: string;
  /** Where the planner is, when the message names it. */
  url: string | null;
  /** The actions that may fix it, most useful first. */
  actions: PlannerProblemAction[];
}

/** The relay's own words for a planner it could not reach (`handlers.py`, `_fail(502, …)`). */
const RELAY_UNREACHABLE =
  /^Planner at (\S+) (is unreachable|gave no answer): (.+)$/s;

/** `HTTP 403 Forbidden: message` (exchange.ts `httpError`): the status code and the planner's words. */
const HTTP_ANSWER = /^HTTP (\d{3})(?: [^:]*)?(?:: (.*))?$/s;

interface IFound {
  id: string;
  params: IMessage['params'];
}

/** Every message in the chain, outermost first. */
function chain(text: IMessage | undefined): IFound[] {
  const found: IFound[] = [];
  const walk = (message: IMessage) => {
    found.push({ id: message.id, params: message.params });
    for (const param of message.params) {
      if (typeof param === 'object') {
        walk(param);
      }
    }
  };
  if (text) {
    walk(text);
  }
  return found;
}

/** `GET http://host:1/path` -> `http://host:1`. */
function originOf(request: unknown): string | null {
  if (typeof request !== 'string') {
    return null;
  }
  const url = request.replace(/^[A-Z]+ /, '');
  try {
    const parsed = new URL(url);
    return parsed.protocol.startsWith('http') ? parsed.origin : null;
  } catch {
    return null;
  }
}

/** `HTTP 401: {"detail": …}` -> `HTTP 401`. */
function statusOf(detail: unknown): string {
  const text = String(detail);
  const match = /^HTTP \d+/.exec(text);
  return match ? match[0] : text;
}

/**
 * What a failed connection check or a failed run says, for the user. `message` is an `IConnectionCheck`
 * (the Run check, Test connection) or a run's error (`IRunFinished`, `IRunError`).
 */
export function describePlannerProblem(
  message: IMessageText,
  trans: TranslationBundle
): IPlannerProblem {
  const details = translateMessage(message, trans);
  const found = chain(message.text);
  const all: PlannerProblemAction[] = ['settings', 'test', 'builtin', 'retry'];
  for (const { id, params } of found) {
    if (id === 'relayUnreachable') {
      const relay = RELAY_UNREACHABLE.exec(String(params[1] ?? ''));
      if (relay) {
        const [, url, state, cause] = relay;
        return {
          kind: 'unreachable',
          summary:
            state === 'gave no answer'
              ? trans.__(
                  'The planner at %1 did not answer: %2.',
                  url,
                  cause.replace(/\.$/, '')
                )
              : trans.__(
                  'Notebook-BCC could not reach the planner at %1: %2.',
                  url,
                  cause.replace(/\.$/, '')
                ),
          details,
          url,
          actions: all
        };
      }
    }
  }
  for (const { id, params } of found) {
    switch (id) {
      case 'requestFailed': {
        // An answer with an error status: `POST <url> failed: HTTP 403 Forbidden: <the planner's message>`.
        const answered =
          typeof params[1] === 'string' ? HTTP_ANSWER.exec(params[1]) : null;
        if (answered) {
          const [, code, said] = answered;
          const refused = code === '401' || code === '403';
          const cause = said ? `: ${said.replace(/\.$/, '')}` : '';
          return {
            kind: refused ? 'refused' : 'error',
            summary: refused
              ? trans.__(
                  'The planner refused the request (HTTP %1)%2.',
                  code,
                  cause
                )
              : said
                ? // The planner's own words first: the status is in the details.
                  trans.__('The planner reports: %1.', said.replace(/\.$/, ''))
                : trans.__(
                    'The planner answered with an error (HTTP %1).',
                    code
                  ),
            details,
            url: null,
            actions: refused ? ['settings'] : ['retry', 'settings']
          };
        }
        // No answer at all (the browser transport): `GET <url> failed: <cause>`.
        const url = originOf(params[0]);
        if (url && typeof params[1] === 'string') {
          return {
            kind: 'unreachable',
            summary: trans.__(
              'Notebook-BCC could not reach the planner at %1: %2.',
              url,
              params[1].replace(/\.$/, '')
            ),
            details,
            url,
            actions: all
          };
        }
        break;
      }
      case 'connectionRefused':
        return {
          kind: 'refused',
          summary: trans.__(
            'The planner refused the request (%1): check the token in Settings.',
            statusOf(params[1])
          ),
          details,
          url: null,
          actions: ['settings', 'retry']
        };
      case 'jupyterRefused':
        return {
          kind: 'refused',
          summary: trans.__(
            'The Jupyter server refused the request (HTTP %1): your session may have ended. Reload the page, then Retry.',
            String(params[1])
          ),
          details,
          url: null,
          actions: ['retry']
        };
      case 'connectionError':
        return {
          kind: 'error',
          summary: trans.__(
            'The planner answered with an error (%1).',
            statusOf(params[1])
          ),
          details,
          url: null,
          actions: ['settings', 'test', 'retry']
        };
      default:
        break;
    }
  }
  return {
    kind: 'other',
    summary: details,
    details,
    url: null,
    actions: ['settings', 'retry']
  };
}

/**
 * The actions this page can carry out: "Use the built-in demo" only when it would change something (the
 * command exists, the planner is not the demo already, and no administrator's URL takes precedence).
 */
export function offeredActions(
  actions: readonly PlannerProblemAction[],
  canUseBuiltin: boolean,
  location: { source?: string; builtin?: boolean } | null
): PlannerProblemAction[] {
  const source = location?.source;
  const builtin =
    canUseBuiltin &&
    source !== 'server' &&
    source !== 'overrides' &&
    !location?.builtin;
  return actions.filter(action => action !== 'builtin' || builtin);
}

/** The label of an action's button, in the user's language. */
export function problemActionLabel(
  action: PlannerProblemAction,
  trans: TranslationBundle
): string {
  switch (action) {
    case 'settings':
      return trans.__('Open Settings');
    case 'test':
      return trans.__('Test connection');
    case 'builtin':
      return trans.__('Use the built-in demo');
    case 'retry':
      return trans.__('Retry');
  }
}
