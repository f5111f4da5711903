/**
 * What the dialect adapters share: their per-call options, HTTP error mapping, and reading an answer's
 * body (line by line through `readLines` of `actionStream.ts`; docs/dialects.md). The plug-in contract
 * they implement is in `dialect.ts`.
 */
import { excerpt, PlannerError } from '../errors';
import {
  bodyChunks,
  collectText,
  ERROR_BODY,
  IBodyLimit,
  invalidResponse,
  PLANNING_BODY
} from '../exchange';
import { type GeneratingEvent, readLines } from '../actionStream';
import { unwrapCodeFence } from '../codeFence';
import { isRecord } from '../fields';
import {
  type IMessageText,
  type ProtocolMessageId,
  type ProtocolText,
  say
} from '../messages';
import type { INotebookSummary } from '../schemas';
import type { IPlannerTransport } from '../transport';

/** What an adapter warns about during a request, in English and as a message id. */
export type PlannerWarning = (warning: IMessageText<ProtocolMessageId>) => void;

/** Per-call options of an adapter's `/generating` request. */
export interface IGeneratingOptions {
  signal?: AbortSignal;
  /** The notebook now, for a dialect whose requests describe more of it than the observation does. */
  notebook?: INotebookSummary;
}

/** Per-call options of a `/planning` request: also its own warning channel for this request. */
export interface IPlanningOptions extends IGeneratingOptions {
  onWarning?: PlannerWarning;
}

/** Informational lines (the choices an adapter makes); never sent to the planner. */
export type DialectLog = (message: string) => void;

/** A 404 that says the route does not exist (not an answer of the dialect): detection may run again. */
export class RouteMissingError extends PlannerError {
  readonly routeMissing = true;
}

export function isRouteMissingError(error: unknown): boolean {
  return error instanceof PlannerError && 'routeMissing' in error;
}

/** FastAPI's `{"detail":"Not Found"}` or a 404 whose body is not JSON (docs/dialects.md#choosing). */
export function isRouteMissingBody(status: number, body: string): boolean {
  if (status !== 404) {
    return false;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return true;
  }
  return (
    isRecord(parsed) &&
    Object.keys(parsed).length === 1 &&
    parsed.detail === 'Not Found'
  );
}

export function parseJson(text: string):
  | { ok: true; value: unknown }
  | {
      ok: false;
      error: string;
    } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return {
      ok: false,
      error: error instanceof Error ? error.message : String(error)
    };
  }
}

/** The error for an answer with status >= 400; a route-missing 404 gives a `RouteMissingError`. */
export function httpError(
  method: string,
  url: string,
  status: number,
  body: string,
  message?: ProtocolText
): PlannerError {
  const bodyExcerpt = excerpt(body) || undefined;
  const options = {
    kind: 'http' as const,
    url,
    status,
    bodyExcerpt,
    ...(message ??
      say(
        'requestFailed',
        `${method} ${url}`,
        `HTTP ${status}${bodyExcerpt ? `: ${bodyExcerpt}` : ''}`
      ))
  };
  return isRouteMissingBody(status, body)
    ? new RouteMissingError(options)
    : new PlannerError(options);
}

export function invalidAnswer(
  url: string,
  status: number,
  problem: string,
  body: string
): PlannerError {
  return invalidResponse(`POST ${url}`, url, status, problem, body);
}

/** Sends a request; a network failure or abort becomes a `PlannerError`. */
export async function send(
  transport: IPlannerTransport,
  method: 'GET' | 'POST',
  path: string,
  body: unknown,
  signal?: AbortSignal,
  headers?: Record<string, string>
): Promise<Response> {
  const url = transport.urlOf(path);
  if (signal?.aborted) {
    throw new PlannerError({
      kind: 'abort',
      url,
      ...say('requestAborted', `${method} ${url}`)
    });
  }
  try {
    return await transport.send({ method, path, body, signal, headers });
  } catch (error) {
    if (error instanceof PlannerError) {
      throw error;
    }
    const aborted = signal?.aborted === true;
    return Promise.reject(
      new PlannerError({
        kind: aborted ? 'abort' : 'network',
        url,
        ...(aborted
          ? say('requestAborted', `${method} ${url}`)
          : say(
              'requestFailed',
              `${method} ${url}`,
              error instanceof Error ? error.message : String(error)
            )),
        cause: error
      })
    );
  }
}

/** The body as text, bounded (an error body is cut, an answer over its limit is an error). */
export async function readText(
  response: Response,
  limit: IBodyLimit = response.ok ? PLANNING_BODY : ERROR_BODY
): Promise<string> {
  try {
    return await collectText(bodyChunks(response), limit);
  } catch (error) {
    if (limit.over === 'fail' && error instanceof PlannerError) {
      throw error;
    }
    if (limit.over === 'fail' && error instanceof Error) {
      throw invalidResponse(
        'POST',
        response.url,
        response.status,
        error.message,
        ''
      );
    }
    return '';
  }
}

/** The text of a body that is one JSON string (a FastAPI handler returning a `str`); any other body as it is. */
export function unquotedBody(body: string): string {
  if (!body.trimStart().startsWith('"')) {
    return body;
  }
  const parsed = parseJson(body);
  return parsed.ok && typeof parsed.value === 'string' ? parsed.value : body;
}

/**
 * Whether an answer is XML, by its body first: one starting with `<` (inside an optional Markdown
 * fence) is, one starting with `{` or `[` is JSON or NDJSON whatever its type (servers send NDJSON as
 * `text/plain`); any other body is XML when the Content-Type says `xml` or `text`, or when it holds
 * an element (an LLM's sentence before the XML, sent as `application/json` in a JSON string).
 */
export function looksLikeXml(
  contentType: string | null,
  body: string
): boolean {
  const unwrapped = unwrapCodeFence(body).trimStart();
  const start = unwrapped.charAt(0);
  if (start === '<') {
    return true;
  }
  if (start === '{' || start === '[') {
    return false;
  }
  const type = (contentType ?? '').toLowerCase();
  return (
    type.includes('xml') || type.includes('text') || /<[A-Za-z]/.test(unwrapped)
  );
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A dialect's reader of one streamed answer: the events of each line, and of the body's end. */
export interface IAnswerLineReader {
  line(line: string): GeneratingEvent[];
  end(): GeneratingEvent[];
}

/**
 * The events of a streamed answer's lines, read by the one reader (`readLines`) and handed to the
 * dialect's `reader`, each event passed through `numbered`; a line the reader refuses (too long, a
 * cut character) is logged and passed on as its warning. The caller adds `reader.end()`'s events.
 */
export async function* answerLineEvents(
  response: Response,
  url: string,
  reader: IAnswerLineReader,
  options: {
    signal?: AbortSignal;
    log: DialectLog;
    numbered: (event: GeneratingEvent) => GeneratingEvent;
  }
): AsyncGenerator<GeneratingEvent, void, undefined> {
  const lines = readLines(bodyChunks(response), `POST ${url}`, {
    signal: options.signal,
    url: response.url
  });
  for await (const line of lines) {
    if (typeof line !== 'string') {
      options.log(line.message);
      yield line;
      continue;
    }
    yield* reader.line(line).map(options.numbered);
  }
}
