/**
 * Which dialect a planner speaks (docs/dialects.md#choosing): the registry's probes, sent with the
 * run's first request. `selector.ts` runs them once per run and keeps the adapter they point to.
 *
 * The order comes from the registry: the `/planning` probe carries the seed dialect's body with what
 * each other dialect adds to it (the superset); a strict server's 422 gets each other dialect's own
 * body, then the seed's; a 2xx answer is claimed by the first other dialect that recognises it, else
 * by the seed; when `/planning` is missing, each dialect's own routes are probed.
 */
import { PlannerError } from '../errors';
import {
  defaultSleep,
  ERROR_BODY,
  Exchange,
  PLANNING_BODY,
  SleepLike,
  withRetries
} from '../exchange';
import type { JsonObject } from '../fields';
import { say } from '../messages';
import type { INotebookSummary, PlanningRequestInput } from '../schemas';
import type { IPlannerTransport } from '../transport';
import { PlannerWarning, send } from './common';
import type { IDialect, IProbeContext, ProbeClaim } from './dialect';
import { type DialectName, DIALECTS } from './registry';

/** What detection found: the dialect, the probes it sent, and the claim on the `/planning` answer. */
export interface IDetection {
  dialect: DialectName;
  probes: string[];
  /** Set when the `/planning` probe's answer is the dialect's: its first answer, or the raw answer. */
  claim?: ProbeClaim;
}

/** What detection is given: the run's first request and how to send it. */
export interface IDetectOptions {
  transport: IPlannerTransport;
  request: PlanningRequestInput;
  /** The notebook the engine described beside the request. */
  notebook?: INotebookSummary;
  /** Sent in a dialect's own body where it carries one (bcc). */
  notebookId?: string;
  /** The dialect the configured URL names (`normalizePlannerBaseUrl`): only its routes are probed. */
  hint?: DialectName | null;
  signal?: AbortSignal;
  /** The `/planning` probe is the run's first planning request: it gets the same timeout and retries. */
  timing?: IProbeTiming;
  onWarning?: PlannerWarning;
  /** The dialects to tell apart; default: the registry's. */
  dialects?: readonly IDialect<DialectName>[];
}

/** How long the `/planning` probe may wait for its answer, and how often a silent one is retried. */
export interface IProbeTiming {
  firstByteTimeoutMs: number;
  retries: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  sleep?: SleepLike;
}

/** The registry's dialects with the seed dialect (the first) last: the order claims and bodies are tried in. */
function seedLast<T>(dialects: readonly T[]): T[] {
  return [...dialects.slice(1), ...dialects.slice(0, 1)];
}

/**
 * The seed dialect's own body with what each other dialect adds beside it (the bcc sibling
 * `state`), so that any of their servers can answer it.
 */
export function supersetProbeBody(
  request: PlanningRequestInput,
  notebook?: INotebookSummary,
  dialects: readonly IDialect<DialectName>[] = DIALECTS
): JsonObject {
  const context: IProbeContext = {
    transport: NO_TRANSPORT,
    request,
    notebook
  };
  const [seed, ...others] = dialects;
  return Object.assign(
    seed.probe.ownBody?.build(context) ?? { ...request },
    ...others.map(dialect => dialect.probe.supersetFields?.(context) ?? {})
  );
}

/** Building a body sends nothing. */
const NO_TRANSPORT: IPlannerTransport = {
  label: '',
  urlOf: path => path,
  send: () => Promise.reject(new Error('a probe body is built, not sent'))
};

/** Runs the probes; rejects with a message listing each probe when nothing answers like a dialect. */
export async function detectDialect(
  options: IDetectOptions
): Promise<IDetection> {
  const dialects = options.dialects ?? DIALECTS;
  const probes: string[] = [];
  const hinted = options.hint
    ? dialects.filter(dialect => dialect.name === options.hint)
    : null;
  const found = hinted ? null : await probePlanning(options, dialects, probes);
  return found ?? probeRoutes(options, hinted ?? dialects, probes);
}

/** The `/planning` probe: a dialect, or null when the route is missing (404, 405: routes come next). */
async function probePlanning(
  options: IDetectOptions,
  dialects: readonly IDialect<DialectName>[],
  probes: string[]
): Promise<IDetection | null> {
  const { transport, signal } = options;
  const url = transport.urlOf('planning');
  const context: IProbeContext = { ...options, transport };
  const attempt = async (label: string, body: JsonObject) => {
    const answer = await withRetries(
      () => probeOnce(options, url, body),
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
    probes.push(
      `POST ${url}${label ? ` (${label})` : ''} → HTTP ${answer.response.status}`
    );
    return answer;
  };
  let { response, text } = await attempt(
    '',
    supersetProbeBody(options.request, options.notebook, dialects)
  );
  // A server that validates its body strictly may refuse the superset (422): then each dialect's own
  // body is tried once, the seed's last (docs/dialects.md#choosing).
  for (const dialect of seedLast(dialects)) {
    const own = dialect.probe.ownBody;
    if (response.status !== 422) {
      break;
    }
    if (own) {
      ({ response, text } = await attempt(own.label, own.build(context)));
    }
  }
  if (response.ok) {
    const answer = { contentType: response.headers.get('Content-Type'), text };
    for (const dialect of seedLast(dialects)) {
      const claim = dialect.probe.claim?.(answer, {
        url,
        onWarning: options.onWarning
      });
      if (claim) {
        return { dialect: dialect.name, probes, claim };
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
        `HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}`
      )
    });
  }
  return null;
}

/** One `/planning` probe under the first-byte timeout, its body read whole. */
async function probeOnce(
  options: IDetectOptions,
  url: string,
  body: JsonObject
): Promise<{ response: Response; text: string }> {
  const exchange = new Exchange({
    method: 'POST',
    url,
    signal: options.signal,
    firstByteTimeoutMs: options.timing?.firstByteTimeoutMs ?? 0,
    stallTimeoutMs: options.timing?.firstByteTimeoutMs ?? 0
  });
  try {
    const response = await exchange.guard(
      send(options.transport, 'POST', 'planning', body, exchange.signal)
    );
    return {
      response,
      text: await exchange.text(
        response,
        response.ok ? PLANNING_BODY : ERROR_BODY
      )
    };
  } finally {
    exchange.dispose();
  }
}

/** Each dialect's own routes, in the registry's order; the error naming every probe when none answers. */
async function probeRoutes(
  options: IDetectOptions,
  dialects: readonly IDialect<DialectName>[],
  probes: string[]
): Promise<IDetection> {
  const context: IProbeContext = { ...options };
  for (const dialect of dialects) {
    if (await dialect.probe.routes?.(context, probes)) {
      return { dialect: dialect.name, probes };
    }
  }
  const root = options.transport.urlOf('').replace(/\/$/, '');
  throw new PlannerError({
    kind: 'invalid',
    url: root,
    ...say('noKnownDialect', root, probes.join('; '))
  });
}
