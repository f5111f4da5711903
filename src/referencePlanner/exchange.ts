/**
 * One request to the reference planner, from a parsed JSON body to its answer, whatever carries it:
 * the Node HTTP service (`referencePlannerService/src/server.ts`) and the in-browser transport both go through here,
 * so the same request gets the same lines from either.
 */
import {
  GeneratingRequest,
  normalizeGeneratingRequest,
  normalizePlanningRequest,
  PlanningRequest
} from '../protocol';
import type {
  ActionInput,
  PlanningAnswer,
  ReferencePlanner
} from './referencePlanner';

export type PlannerEndpoint = 'planning' | 'generating';

export type PlannerRouteName = PlannerEndpoint | 'health';

/** Paths relative to the planner root, as `IPlannerRequest.path` names them. */
export const PLANNER_ROUTES: Readonly<
  Record<string, { name: PlannerRouteName; methods: readonly string[] }>
> = {
  planning: { name: 'planning', methods: ['POST'] },
  generating: { name: 'generating', methods: ['POST'] },
  generate: { name: 'generating', methods: ['POST'] },
  health: { name: 'health', methods: ['GET', 'HEAD'] }
};

export const DEFAULT_NOTEBOOK_ID = 'default';

export const NDJSON_TYPE = 'application/x-ndjson; charset=utf-8';
export const JSON_TYPE = 'application/json; charset=utf-8';

export type ParsedPlannerRequest =
  | { endpoint: 'planning'; request: PlanningRequest }
  | { endpoint: 'generating'; request: GeneratingRequest };

export type ParseResult =
  { ok: true; parsed: ParsedPlannerRequest } | { ok: false; error: string };

/** What the planner answers: a JSON body, or actions that go out as NDJSON lines. */
export type PlannerReply =
  | { kind: 'json'; body: PlanningAnswer | { actions: ActionInput[] } }
  | { kind: 'stream'; actions: ActionInput[] };

/** The route a path names (`planning`, `/generate/`), or undefined. */
export function routeOf(
  path: string
): (typeof PLANNER_ROUTES)[string] | undefined {
  const name = path.split(/[?#]/)[0].replace(/^\/+|\/+$/g, '');
  return Object.prototype.hasOwnProperty.call(PLANNER_ROUTES, name)
    ? PLANNER_ROUTES[name]
    : undefined;
}

export function notFoundMessage(path: string): string {
  return `no such endpoint: ${path} (try POST /planning, POST /generating, GET /health)`;
}

export function methodNotAllowedMessage(
  method: string,
  path: string,
  methods: readonly string[]
): string {
  return `${method} is not allowed on ${path}; use ${methods.join(' or ')}`;
}

/** The JSON body of every error answer. */
export function errorBody(
  status: number,
  message: string
): { error: string; status: number } {
  return { error: message, status };
}

export function parsePlannerRequest(
  endpoint: PlannerEndpoint,
  body: unknown
): ParseResult {
  if (endpoint === 'planning') {
    const parsed = normalizePlanningRequest(body);
    return parsed.ok
      ? { ok: true, parsed: { endpoint, request: parsed.request } }
      : { ok: false, error: parsed.error };
  }
  const parsed = normalizeGeneratingRequest(body);
  return parsed.ok
    ? { ok: true, parsed: { endpoint, request: parsed.request } }
    : { ok: false, error: parsed.error };
}

export function answerPlannerRequest(
  planner: ReferencePlanner,
  parsed: ParsedPlannerRequest,
  notebookId: string
): PlannerReply {
  if (parsed.endpoint === 'planning') {
    return { kind: 'json', body: planner.plan(parsed.request, notebookId) };
  }
  const actions = planner.generate(parsed.request, notebookId);
  return parsed.request.options?.stream
    ? { kind: 'stream', actions }
    : { kind: 'json', body: { actions } };
}

/** One NDJSON line of a generating stream, without its newline. */
export function actionLine(action: unknown): string {
  return JSON.stringify({ action });
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/**
 * The session key: the `X-Notebook-Id` header (percent-encoded by clients, see
 * `docs/protocol.md#notebook-id`), else an id in the body, else one shared session.
 */
export function notebookIdOf(
  header: string | undefined,
  body: unknown
): string {
  const fromHeader = header?.trim();
  if (fromHeader) {
    try {
      return decodeURIComponent(fromHeader);
    } catch {
      return fromHeader;
    }
  }
  const top = record(body);
  const notebook = record(record(record(top.observation).context).notebook);
  for (const candidate of [
    top.notebook_id,
    top.notebookId,
    notebook.id,
    notebook.notebook_id,
    notebook.path
  ]) {
    if (typeof candidate === 'string' && candidate.trim()) {
      return candidate.trim();
    }
  }
  return DEFAULT_NOTEBOOK_ID;
}
