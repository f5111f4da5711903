/**
 * How a planner request fails. Every failure the client reports is a `PlannerError` whose message names
 * the request (`POST <url>`) and the cause, so a user can act on it without opening the console; its
 * `text` is the same as a message id the UI translates.
 */
import { type IMessage, type ProtocolMessageId, say } from './messages';

export type PlannerErrorKind =
  'network' | 'http' | 'timeout' | 'abort' | 'invalid';

export class PlannerError extends Error {
  constructor(options: {
    kind: PlannerErrorKind;
    url: string;
    message: string;
    /** The message as an id with parameters (`say(…)` gives both). */
    text?: IMessage<ProtocolMessageId>;
    status?: number;
    bodyExcerpt?: string;
    retryAfterMs?: number;
    /** Variables the planner says it lacks to do what was asked (v1's missing-variables answer). */
    missingVariables?: readonly string[];
    /** The run cannot go on without this answer (no fallback to `/generating`): the user retries. */
    needsAnswer?: boolean;
    /** What the planner's error body asks the user to do (`"action": "open-llm-settings"`). */
    action?: string;
    cause?: unknown;
  }) {
    super(options.message, { cause: options.cause });
    this.name = 'PlannerError';
    this.kind = options.kind;
    this.url = options.url;
    this.text = options.text;
    this.status = options.status;
    this.bodyExcerpt = options.bodyExcerpt;
    this.retryAfterMs = options.retryAfterMs;
    this.missingVariables = options.missingVariables;
    this.needsAnswer = options.needsAnswer === true;
    this.action = options.action;
  }

  readonly kind: PlannerErrorKind;
  readonly url: string;
  readonly text?: IMessage<ProtocolMessageId>;
  readonly status?: number;
  /** At most 200 characters of the response body, whitespace collapsed. */
  readonly bodyExcerpt?: string;
  /** From a `Retry-After` header, in milliseconds. */
  readonly retryAfterMs?: number;
  /** Variables the planner says it lacks: the user can set them and retry. */
  readonly missingVariables?: readonly string[];
  /**
   * The run cannot go on without this answer: a failed planning request the engine would otherwise
   * pass over (continuing with `/generating` without a plan) stops the run with a Retry instead.
   */
  readonly needsAnswer: boolean;
  /**
   * What the planner's error body says the user should do (its `action`, our extension): the LLM
   * planner sends `open-llm-settings` when its model settings are wrong.
   */
  readonly action?: string;
}

/** `error` marked as an answer the run cannot do without (`PlannerError.needsAnswer`). */
export function answerNeeded(error: PlannerError): PlannerError {
  return new PlannerError({
    kind: error.kind,
    url: error.url,
    message: error.message,
    text: error.text,
    status: error.status,
    bodyExcerpt: error.bodyExcerpt,
    retryAfterMs: error.retryAfterMs,
    missingVariables: error.missingVariables,
    needsAnswer: true,
    action: error.action,
    cause: error.cause
  });
}

const EXCERPT_LENGTH = 200;

/** Whitespace collapsed, cut to `max` characters. */
export function excerpt(text: string, max = EXCERPT_LENGTH): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** An error's message, with its cause's when that says more (`fetch failed (connect ECONNREFUSED)`). */
export function describeCause(error: unknown): string {
  if (!(error instanceof Error)) {
    return String(error);
  }
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return cause && cause !== error.message
    ? `${error.message} (${cause})`
    : error.message;
}

/** The abort of a request, named like every other failure. */
export function abortError(request: string, url: string, cause?: unknown) {
  return new PlannerError({
    kind: 'abort',
    url,
    ...say('requestAborted', request),
    cause
  });
}

/** A request that got no answer at all. */
export function networkError(
  request: string,
  url: string,
  error: unknown
): PlannerError {
  return new PlannerError({
    kind: 'network',
    url,
    ...say('requestFailed', request, describeCause(error)),
    cause: error
  });
}
