/**
 * The run trace: every request and its answer (a stream as its lines) with timings, as JSONL records
 * (`protocol/traceFormat.ts`) that the reference planner's `--replay` reads.
 *
 * A `RunTrace` is an `IPlannerObserver`: give the same instance to the `DslcAdapter` (`observer`) and to
 * the `WorkflowRunner` (`trace`), so that the raw lines, statuses and the `/generate` fallback are recorded
 * exactly as they went over the wire.
 */
import type { IPlannerObserver, PlannerError } from '../protocol';
import type { TraceRecord } from '../protocol/traceFormat';
import type { IRewindRecord } from './state/rewind';

/**
 * About 8 MB of UTF-16 text. Past it the oldest requests are dropped whole (request, answer, lines and
 * end together) so that every request left in the trace can still be replayed.
 */
export const DEFAULT_TRACE_MAX_CHARS = 4_000_000;

export interface IRunTraceOptions {
  /** Milliseconds; `Date.now` by default. */
  now?: () => number;
  maxChars?: number;
}

/** A request body whose kernel variables (`known`) hold their types and shapes instead of values. */
function withVariableTypes(
  body: unknown,
  known: Record<string, string>
): unknown {
  const observation = field(body, 'observation');
  const context = field(observation, 'context');
  const variables = field(context, 'variables');
  if (!variables) {
    return body;
  }
  const typed = { ...variables };
  for (const name of Object.keys(variables)) {
    if (Object.prototype.hasOwnProperty.call(known, name)) {
      typed[name] = known[name];
    }
  }
  return {
    ...(body as object),
    observation: { ...observation, context: { ...context, variables: typed } }
  };
}

function field(
  value: unknown,
  key: string
): Record<string, unknown> | undefined {
  if (typeof value !== 'object' || value === null) {
    return undefined;
  }
  const inner = (value as Record<string, unknown>)[key];
  return typeof inner === 'object' && inner !== null && !Array.isArray(inner)
    ? (inner as Record<string, unknown>)
    : undefined;
}

/** A record is kept as its JSON line only: parsed bodies would hold several times the memory. */
interface IStoredRecord {
  seq: number;
  json: string;
  /** Not an exchange record (the dialect, a rewind): left out of `records`. */
  note?: 'dialect' | 'rewind';
}

/**
 * The planner's dialect, written once in the JSONL when it becomes known. Readers of the trace skip
 * kinds they do not know, so it is kept apart from the exchange records (`TraceRecord`).
 */
export interface ITraceDialectRecord {
  kind: 'dialect';
  /** The sequence number of the last request when the dialect became known. */
  seq: number;
  t: number;
  dialect: string;
}

/** A rewind, written in the JSONL where it happened; kept apart from the exchange records too. */
export interface ITraceRewindRecord {
  kind: 'rewind';
  /** The sequence number of the last request at the time. */
  seq: number;
  t: number;
  rewind: IRewindRecord;
}

/** `http://host:28600/planning?x=1` -> `/planning`. */
export function endpointOf(url: string): string {
  const path = url
    .replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '')
    .replace(/[?#].*$/, '');
  return path || '/';
}

export class RunTrace implements IPlannerObserver {
  constructor(options: IRunTraceOptions = {}) {
    this._now = options.now ?? (() => Date.now());
    this._maxChars = options.maxChars ?? DEFAULT_TRACE_MAX_CHARS;
    this._start = this._now();
  }

  /** Requests dropped to stay within the cap. */
  get droppedRequests(): number {
    return this._dropped;
  }

  /** The records, parsed again from their lines (for export and inspection, not for hot paths). */
  get records(): TraceRecord[] {
    return this._records
      .filter(r => !r.note)
      .map(r => JSON.parse(r.json) as TraceRecord);
  }

  /** The dialect recorded, if any. */
  get plannerDialect(): string | null {
    const note = this._records.find(r => r.note === 'dialect');
    return note ? (JSON.parse(note.json) as ITraceDialectRecord).dialect : null;
  }

  /** Records the planner's dialect (once per run: a later call replaces nothing). */
  dialect(name: string): void {
    if (this._records.some(r => r.note === 'dialect')) {
      return;
    }
    const record: ITraceDialectRecord = {
      kind: 'dialect',
      seq: this._seq,
      t: this._elapsed(),
      dialect: name
    };
    const json = JSON.stringify(record);
    this._records.push({ seq: record.seq, json, note: 'dialect' });
    this._chars += json.length + 1;
  }

  /** Records a rewind (docs/architecture.md#rewind); readers that do not know the kind skip it. */
  rewind(record: IRewindRecord): void {
    const line: ITraceRewindRecord = {
      kind: 'rewind',
      seq: this._seq,
      t: this._elapsed(),
      rewind: record
    };
    const json = JSON.stringify(line);
    this._records.push({ seq: line.seq, json, note: 'rewind' });
    this._chars += json.length + 1;
  }

  /** How many records the trace holds. */
  get length(): number {
    return this._records.length;
  }

  /** The kernel's types of the variables (set by the run), preferred over a guess from the value. */
  variableTypes: () => Record<string, string> = () => ({});

  /**
   * Records a request and returns its sequence number, used by the records that follow. Variable
   * values are replaced by their types: a trace is shared and must not carry them.
   */
  request(endpoint: string, body: unknown): number {
    const seq = ++this._seq;
    this._push({
      kind: 'request',
      seq,
      t: this._elapsed(),
      endpoint,
      body: withVariableTypes(body, this.variableTypes())
    });
    return seq;
  }

  response(
    seq: number,
    endpoint: string,
    status: number,
    answer: { body?: unknown; stream?: boolean }
  ): void {
    const record: TraceRecord = {
      kind: 'response',
      seq,
      t: this._elapsed(),
      endpoint,
      status
    };
    if (answer.body !== undefined) {
      record.body = answer.body;
    }
    if (answer.stream) {
      record.stream = true;
    }
    this._push(record);
  }

  line(seq: number, endpoint: string, line: string): void {
    this._push({ kind: 'line', seq, t: this._elapsed(), endpoint, line });
  }

  end(seq: number, endpoint: string, error?: string): void {
    const record: TraceRecord = {
      kind: 'end',
      seq,
      t: this._elapsed(),
      endpoint
    };
    if (error !== undefined) {
      record.error = error;
    }
    this._push(record);
  }

  onRequest(url: string, body: unknown): void {
    const endpoint = endpointOf(url);
    this._open.set(endpoint, this.request(endpoint, body));
  }

  onResponse(
    url: string,
    status: number,
    body: unknown,
    stream: boolean
  ): void {
    const endpoint = endpointOf(url);
    this.response(this._seqOf(endpoint), endpoint, status, { body, stream });
  }

  onLine(url: string, line: string): void {
    const endpoint = endpointOf(url);
    this.line(this._seqOf(endpoint), endpoint, line);
  }

  onEnd(url: string, error?: PlannerError): void {
    const endpoint = endpointOf(url);
    this.end(this._seqOf(endpoint), endpoint, error?.message);
    this._open.delete(endpoint);
  }

  toJSONL(): string {
    return this._records.map(r => r.json + '\n').join('');
  }

  clear(): void {
    this._records = [];
    this._chars = 0;
    this._dropped = 0;
    this._seq = 0;
    this._open.clear();
    this._start = this._now();
  }

  private _seqOf(endpoint: string): number {
    return this._open.get(endpoint) ?? this._seq;
  }

  private _elapsed(): number {
    return Math.max(0, this._now() - this._start);
  }

  private _push(record: TraceRecord): void {
    const json = JSON.stringify(record);
    this._records.push({ seq: record.seq, json });
    this._chars += json.length + 1;
    while (this._chars > this._maxChars && this._records.length > 0) {
      const oldest = this._records[0].seq;
      if (oldest === record.seq) {
        // The request being recorded is kept even if it alone exceeds the cap.
        break;
      }
      const kept: IStoredRecord[] = [];
      for (const stored of this._records) {
        if (stored.seq === oldest) {
          this._chars -= stored.json.length + 1;
        } else {
          kept.push(stored);
        }
      }
      this._records = kept;
      this._dropped++;
    }
  }

  private _now: () => number;
  private _maxChars: number;
  private _start: number;
  private _seq = 0;
  private _chars = 0;
  private _dropped = 0;
  private _records: IStoredRecord[] = [];
  /** The request in flight per endpoint, for the observer callbacks that do not carry it. */
  private _open = new Map<string, number>();
}
