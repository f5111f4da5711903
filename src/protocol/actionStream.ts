/**
 * Where a /generating answer becomes actions: bytes -> lines (`readLines`, the one reader of a
 * streamed body, which every dialect uses) -> messages -> normalised actions (`ActionLineParser`), as
 * events in arrival order. Nothing here does HTTP: the adapters hand in the body's chunks (see
 * `docs/architecture.md#from-an-ndjson-line-to-a-cell`).
 */
import { describeCause, excerpt, PlannerError } from './errors';
import { isRecord } from './fields';
import {
  type IMessage,
  type MessageParam,
  msg,
  type ProtocolMessageId,
  say
} from './messages';
import { isBuiltInActionName, normalizeAction } from './normalize';
import { GeneratingBatchSchema, GeneratingLineSchema } from './schemas';
import { Action, UnknownAction } from './actionSchemas';

export type GeneratingEvent =
  | {
      kind: 'action';
      action: Action | UnknownAction;
      index: number;
      line: string;
      /**
       * The line named a type that is not built in under `type` only: a registered handler claims it,
       * otherwise the engine treats it as a line without action.
       */
      typeOnly?: boolean;
    }
  /** Shown to the user and sent to the planner as an effect (`message`, in English). */
  | IStreamWarning<'warning'>
  /** Shown to the user and logged, never an effect (docs/protocol.md#generating-answer). */
  | IStreamWarning<'notice'>;

/** A warning or a notice of a stream: its English `message`, and its `text` the UI translates. */
export interface IStreamWarning<Kind extends 'warning' | 'notice'> {
  kind: Kind;
  message: string;
  text?: IMessage<ProtocolMessageId>;
  line?: string;
}

/** Longest NDJSON line read, in characters: a longer one is dropped (docs/protocol.md#limits). */
export const MAX_LINE_CHARS = 4 * 1024 * 1024;

/** A line dropped for its length: how long it was and how it began. */
export interface IOverlongLine {
  overlong: number;
  head: string;
}

/** How many characters of an over-long line are kept to name it. */
const HEAD_CHARS = 80;

/**
 * Splits a byte stream into NDJSON lines. Bytes are decoded in streaming mode so that a UTF-8
 * character cut between two chunks survives; the unfinished last line is kept until more bytes (or
 * `flush()`) arrive. `\r\n` endings are accepted and blank lines are skipped. Each character is
 * scanned once; a line longer than `maxLineChars` is not kept but reported by `pushItems`.
 */
export class NdjsonLineSplitter {
  constructor(options: { maxLineChars?: number } = {}) {
    this._maxLineChars = options.maxLineChars ?? MAX_LINE_CHARS;
  }

  /** Complete lines found in `chunk`, in order (over-long lines left out). */
  push(chunk: Uint8Array): string[] {
    return this.pushItems(chunk).filter(isLine);
  }

  /** The lines left when the stream ends, including a last line without a newline. */
  flush(): string[] {
    return this.flushItems().filter(isLine);
  }

  /** Complete lines found in `chunk`, and the over-long lines dropped, in order. */
  pushItems(chunk: Uint8Array): Array<string | IOverlongLine> {
    return this._scan(this._decoder.decode(chunk, { stream: true }), false);
  }

  flushItems(): Array<string | IOverlongLine> {
    return this._scan(this._decoder.decode(), true);
  }

  private _scan(text: string, end: boolean): Array<string | IOverlongLine> {
    const items: Array<string | IOverlongLine> = [];
    let start = 0;
    for (;;) {
      const newline = text.indexOf('\n', start);
      if (newline < 0) {
        this._append(text.slice(start));
        break;
      }
      this._append(text.slice(start, newline));
      this._endLine(items);
      start = newline + 1;
    }
    if (end) {
      this._endLine(items);
    }
    return items;
  }

  private _append(piece: string): void {
    if (piece.length === 0) {
      return;
    }
    if (this._head.length < HEAD_CHARS) {
      this._head += piece.slice(0, HEAD_CHARS - this._head.length);
    }
    this._length += piece.length;
    if (this._length > this._maxLineChars) {
      this._pieces = [];
    } else {
      this._pieces.push(piece);
    }
  }

  private _endLine(items: Array<string | IOverlongLine>): void {
    if (this._length > this._maxLineChars) {
      items.push({ overlong: this._length, head: this._head.trim() });
    } else if (this._length > 0) {
      const line = this._pieces.join('').trim();
      if (line) {
        items.push(line);
      }
    }
    this._pieces = [];
    this._length = 0;
    this._head = '';
  }

  private readonly _maxLineChars: number;
  private _decoder = new TextDecoder('utf-8');
  /** The unfinished line, in pieces joined once when it ends. */
  private _pieces: string[] = [];
  private _length = 0;
  private _head = '';
}

function isLine(item: string | IOverlongLine): item is string {
  return typeof item === 'string';
}

/** The warning of `request` (`POST <url>`) for a line dropped for its length; `head` names the line. */
function overlongLineWarning(
  request: string,
  item: IOverlongLine,
  head: string
): IStreamWarning<'warning'> {
  return {
    kind: 'warning',
    ...say(
      'lineProblem',
      request,
      msg(
        'lineTooLong',
        item.overlong.toLocaleString('en-US'),
        MAX_LINE_CHARS.toLocaleString('en-US')
      ),
      head
    )
  };
}

/** What one parsed NDJSON message (or a whole JSON body) holds: raw actions, or why it holds none. */
export function actionsInMessage(
  sent: unknown
):
  | { actions: unknown[] }
  | { ignored: IMessage<ProtocolMessageId>; notice?: boolean } {
  // A null field is an absent one (a status line `{"status": …, "action": null, "error": null}`).
  const message = isRecord(sent)
    ? Object.fromEntries(
        Object.entries(sent).filter(([, value]) => value !== null)
      )
    : sent;
  const unwrap = (item: unknown) => {
    const wrapped = GeneratingLineSchema.safeParse(item);
    return wrapped.success ? wrapped.data.action : item;
  };
  if (Array.isArray(message)) {
    return { actions: message.map(unwrap) };
  }
  if (!isRecord(message)) {
    return { ignored: msg('lineNotAnObject') };
  }
  const line = GeneratingLineSchema.safeParse(message);
  if (line.success) {
    return { actions: [line.data.action] };
  }
  if (typeof message.action === 'string') {
    return { actions: [message] };
  }
  const batch = GeneratingBatchSchema.safeParse(message);
  if (batch.success) {
    return { actions: batch.data.actions.map(unwrap) };
  }
  // A bare action keyed `type`, as older planners send it.
  if (typeof message.type === 'string' && isBuiltInActionName(message.type)) {
    return { actions: [message] };
  }
  if (message.error !== undefined) {
    const error =
      typeof message.error === 'string'
        ? message.error
        : JSON.stringify(message.error);
    return { ignored: msg('plannerReportedError', excerpt(error)) };
  }
  // A custom action keyed `type`: its registered handler may claim it.
  if (typeof message.type === 'string' && message.type.trim()) {
    return { actions: [message] };
  }
  if (message.action !== undefined) {
    return { ignored: msg('lineWithoutAction') };
  }
  // A heartbeat or a status line must not push real outputs out of the planner's view.
  return { ignored: msg('lineWithoutAction'), notice: true };
}

/** Fields of a /planning answer that a /generating body may carry but that are not applied there. */
const GENERATING_DECISIONS = ['transition', 'context_update'] as const;

/** A raw action that names a type that is not built in under `type` only (see `typeOnly`). */
function namedByTypeOnly(raw: unknown): boolean {
  return (
    isRecord(raw) &&
    (raw.action === undefined || raw.action === null) &&
    typeof raw.type === 'string' &&
    !isBuiltInActionName(raw.type)
  );
}

/**
 * Turns the lines of a /generating answer into events. A first line that opens a JSON object or array
 * but is not JSON on its own suggests one pretty-printed JSON document, so from then on lines are kept
 * and parsed together at the end (and one by one if that fails too). Any other line that is not JSON
 * (a status text) is a warning, and the lines after it are read one by one as they arrive.
 */
export class ActionLineParser {
  /** `request` (`POST <url>`) prefixes every warning. */
  constructor(private readonly _request: string) {}

  line(line: string): GeneratingEvent[] {
    if (this._wholeBody) {
      this._kept.push(line);
      return [];
    }
    return this._parseLine(line, true);
  }

  end(): GeneratingEvent[] {
    if (!this._wholeBody) {
      return [];
    }
    const text = this._kept.join('\n');
    try {
      return this._fromMessage(JSON.parse(text), text);
    } catch {
      return this._kept.flatMap(line => this._parseLine(line, false));
    }
  }

  private _parseLine(
    line: string,
    mayStartWholeBody: boolean
  ): GeneratingEvent[] {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch (error) {
      if (
        mayStartWholeBody &&
        this._wholeBody === undefined &&
        /^\s*[[{]/.test(line)
      ) {
        this._wholeBody = true;
        this._kept.push(line);
        return [];
      }
      this._wholeBody ??= false;
      return [
        this._warning(msg('malformedJsonLine', describeCause(error)), line)
      ];
    }
    this._wholeBody ??= false;
    return this._fromMessage(message, line);
  }

  private _fromMessage(message: unknown, line: string): GeneratingEvent[] {
    const found = actionsInMessage(message);
    if ('ignored' in found) {
      return [this._warning(found.ignored, line, found.notice)];
    }
    const events: GeneratingEvent[] = [];
    // An ARCHITECTURE-style body (`{behavior, actions, transition, context_update}`): the decisions
    // belong to /planning (docs/protocol.md#the-loop); dropping them silently would hide that.
    const dropped = isRecord(message)
      ? GENERATING_DECISIONS.filter(
          key => message[key] !== undefined && message[key] !== null
        )
      : [];
    for (const raw of found.actions) {
      const normalized = normalizeAction(raw);
      if (!normalized.ok) {
        events.push(
          this._warning(msg('actionIgnored', normalized.error), line)
        );
        continue;
      }
      for (const warning of normalized.warnings) {
        events.push(this._warning(warning, line));
      }
      const typeOnly = namedByTypeOnly(raw);
      for (const action of normalized.actions) {
        events.push({
          kind: 'action',
          action,
          index: this._index++,
          line,
          ...(typeOnly ? { typeOnly } : {})
        });
      }
    }
    if (dropped.length > 0) {
      events.push(
        this._warning(msg('generatingFieldsIgnored', dropped.join(', ')), line)
      );
    }
    return events;
  }

  /** `problem`: a message of ours, or a normaliser's report (in English). */
  private _warning(
    problem: MessageParam<ProtocolMessageId>,
    line: string,
    notice = false
  ): GeneratingEvent {
    return {
      kind: notice ? 'notice' : 'warning',
      ...say('lineProblem', this._request, problem, excerpt(line)),
      line
    };
  }

  private _wholeBody: boolean | undefined;
  private readonly _kept: string[] = [];
  private _index = 0;
}

/** How `readLines` reads one body. */
export interface IReadLinesOptions {
  /** Checked before each chunk: Stop ends the reading with an abort naming `url`. */
  signal?: AbortSignal;
  url?: string;
  /** Longest line kept, in characters; default `MAX_LINE_CHARS`. */
  maxLineChars?: number;
}

/**
 * The one reader of a streamed body, used by every dialect (dslc, v1, bcc): its complete lines as
 * they arrive (a UTF-8 character cut between chunks survives, blank lines are skipped, the last line
 * needs no newline), and in place of a line over the limit the warning of `request` that names it.
 * The body's limits in time are its chunks' (`Exchange.chunks`, `withTimeouts`).
 */
export async function* readLines(
  chunks: AsyncIterable<Uint8Array>,
  request: string,
  options: IReadLinesOptions = {}
): AsyncGenerator<string | IStreamWarning<'warning'>, void, undefined> {
  const splitter = new NdjsonLineSplitter(options);
  const take = (item: string | IOverlongLine) =>
    typeof item === 'string'
      ? item
      : overlongLineWarning(request, item, excerpt(item.head));
  for await (const chunk of chunks) {
    if (options.signal?.aborted) {
      throw new PlannerError({
        kind: 'abort',
        url: options.url ?? '',
        ...say('readingAborted', options.url || 'the answer')
      });
    }
    yield* splitter.pushItems(chunk).map(take);
  }
  yield* splitter.flushItems().map(take);
}

/**
 * The events of a streamed answer, yielded as soon as each line is complete. `onLine` sees every raw
 * line first (the run trace records them).
 */
export async function* actionEvents(
  chunks: AsyncIterable<Uint8Array>,
  request: string,
  onLine?: (line: string) => void
): AsyncGenerator<GeneratingEvent, void, undefined> {
  const parser = new ActionLineParser(request);
  for await (const item of readLines(chunks, request)) {
    if (typeof item === 'string') {
      onLine?.(item);
      yield* parser.line(item);
    } else {
      yield item;
    }
  }
  yield* parser.end();
}
