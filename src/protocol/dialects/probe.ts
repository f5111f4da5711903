/**
 * Which dialect a planner speaks: the probes of docs/dialects.md#choosing, sent with the run's first
 * request. `detect.ts` runs them once per run and keeps the adapter they point to.
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
import { isRecord, JsonObject } from '../fields';
import { say } from '../messages';
import { normalizePlanningResponse } from '../normalizeResponse';
import type {
  INotebookSummary,
  PlanningRequestInput,
  PlanningResponse
} from '../schemas';
import type { IPlannerTransport } from '../transport';
import { BccAdapter } from './bcc/adapter';
import type { IBccOptions, IPrefetchedAnswer } from './bcc/plan';
import {
  looksLikeXml,
  parseJson,
  PlannerWarning,
  readText,
  send,
  unquotedBody
} from './common';
import { V1_ENTRY_STAGE_ID, V1_ENTRY_STEP_ID } from './v1/state';

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

/** What detection is given: the run's first request and how to send it. */
export interface IDetectOptions {
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
}

/** Runs §1's probes; rejects with a message listing each probe when nothing answers like a dialect. */
export async function detectDialect(
  options: IDetectOptions
): Promise<DetectionResult> {
  const probes: string[] = [];
  const found = options.v1Hint ? null : await probePlanning(options, probes);
  return found ?? probeV1(options.transport, probes, options.signal);
}

/** The `/planning` probe: a dialect, or null when the route is missing (404, 405: v1 is probed next). */
async function probePlanning(
  options: IDetectOptions,
  probes: string[]
): Promise<DetectionResult | null> {
  const { transport, signal } = options;
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
      new BccAdapter({ ...options.bcc, transport }).idleBody(
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
  return null;
}

/** The v1 probes (`GET v2/health`, then `POST v1/reflection`); the error naming every probe else. */
async function probeV1(
  transport: IPlannerTransport,
  probes: string[],
  signal?: AbortSignal
): Promise<DetectionResult> {
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

/** How long the `/planning` probe may wait for its answer, and how often a silent one is retried. */
export interface IProbeTiming {
  firstByteTimeoutMs: number;
  retries: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  sleep?: SleepLike;
}
