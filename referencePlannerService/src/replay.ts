/**
 * Replay mode: answers requests in order with the answers of a recorded run trace (JSONL of
 * `TraceRecord`, written by the engine's `RunTrace`), with the recorded timings scaled by a speed.
 */
import { z } from 'zod';

import type { TraceRecord } from '../../src/protocol/traceFormat';
import { errorAnswer, IAnswer, jsonAnswer, ndjsonAnswer } from './answer';

const TraceRecordSchema: z.ZodType<TraceRecord> = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('request'),
    seq: z.number(),
    t: z.number(),
    endpoint: z.string(),
    body: z.unknown()
  }),
  z.object({
    kind: z.literal('response'),
    seq: z.number(),
    t: z.number(),
    endpoint: z.string(),
    status: z.number(),
    body: z.unknown().optional(),
    stream: z.boolean().optional()
  }),
  z.object({
    kind: z.literal('line'),
    seq: z.number(),
    t: z.number(),
    endpoint: z.string(),
    line: z.string()
  }),
  z.object({
    kind: z.literal('end'),
    seq: z.number(),
    t: z.number(),
    endpoint: z.string(),
    error: z.string().optional()
  })
]);

export type Endpoint = 'planning' | 'generating';

export interface IRecordedExchange {
  seq: number;
  endpoint: Endpoint;
  requestT: number;
  response: {
    t: number;
    status: number;
    body?: unknown;
    stream?: boolean;
  } | null;
  lines: Array<{ t: number; line: string }>;
  end: { t: number; error?: string } | null;
}

/** `/generate`, `http://host/generating` and `generating` all name the same endpoint. */
export function endpointOf(text: string): Endpoint | null {
  const last =
    text
      .replace(/[?#].*$/, '')
      .replace(/\/+$/, '')
      .split('/')
      .pop() ?? '';
  if (last === 'planning') {
    return 'planning';
  }
  if (last === 'generating' || last === 'generate') {
    return 'generating';
  }
  return null;
}

const EXCHANGE_KINDS = new Set(['request', 'response', 'line', 'end']);

/**
 * A record that is not part of an exchange: the dialect, a rewind, or a kind a later version writes.
 * The trace's writer (`RunTrace`) promises readers may skip these; a record without a `kind` string is
 * not one, and is refused like any malformed record.
 */
function isNote(json: unknown): boolean {
  if (typeof json !== 'object' || json === null || !('kind' in json)) {
    return false;
  }
  const kind = (json as { kind: unknown }).kind;
  return typeof kind === 'string' && !EXCHANGE_KINDS.has(kind);
}

export function parseTrace(
  text: string,
  source = 'trace'
): IRecordedExchange[] {
  const bySeq = new Map<number, IRecordedExchange>();
  const lines = text.split('\n');
  lines.forEach((raw, index) => {
    if (!raw.trim()) {
      return;
    }
    const where = `${source}:${index + 1}`;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (error) {
      throw new Error(`${where}: not JSON (${(error as Error).message})`);
    }
    if (isNote(json)) {
      return;
    }
    const parsed = TraceRecordSchema.safeParse(json);
    if (!parsed.success) {
      throw new Error(
        `${where}: not a trace record (${parsed.error.issues.map(i => `${i.path.join('.')}: ${i.message}`).join('; ')})`
      );
    }
    const record = parsed.data;
    if (record.kind === 'request') {
      const endpoint = endpointOf(record.endpoint);
      if (!endpoint) {
        throw new Error(`${where}: unknown endpoint "${record.endpoint}"`);
      }
      bySeq.set(record.seq, {
        seq: record.seq,
        endpoint,
        requestT: record.t,
        response: null,
        lines: [],
        end: null
      });
      return;
    }
    const exchange = bySeq.get(record.seq);
    if (!exchange) {
      // The trace was capped and lost this request's beginning; its remains cannot be replayed.
      return;
    }
    if (record.kind === 'response') {
      exchange.response = {
        t: record.t,
        status: record.status,
        body: record.body,
        stream: record.stream
      };
    } else if (record.kind === 'line') {
      exchange.lines.push({ t: record.t, line: record.line });
    } else {
      exchange.end = {
        t: record.t,
        ...(record.error !== undefined ? { error: record.error } : {})
      };
    }
  });
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
}

export class ReplayScript {
  /** `speed` 2 plays twice as fast; 0 drops every recorded delay. */
  constructor(
    private readonly _exchanges: IRecordedExchange[],
    private readonly _speed = 1
  ) {}

  get total(): number {
    return this._exchanges.length;
  }

  get remaining(): number {
    return this._exchanges.length - this._next;
  }

  /** The answer to the next request, which must be for the endpoint recorded next. */
  answer(endpoint: Endpoint): IAnswer {
    const exchange = this._exchanges[this._next];
    if (!exchange) {
      return errorAnswer(
        410,
        `replay finished: all ${this._exchanges.length} recorded requests have been answered`
      );
    }
    if (exchange.endpoint !== endpoint) {
      return errorAnswer(
        409,
        `replay out of step: request #${this._next + 1} was /${exchange.endpoint} in the recording, got /${endpoint}`
      );
    }
    this._next++;
    return this._toAnswer(exchange);
  }

  private _scale(ms: number): number {
    return this._speed > 0 ? Math.max(0, Math.round(ms / this._speed)) : 0;
  }

  private _toAnswer(exchange: IRecordedExchange): IAnswer {
    const response = exchange.response;
    if (!response) {
      // The recorded request got no answer at all (network error, timeout): neither does this one.
      return {
        status: 0,
        headers: {},
        firstByteDelayMs: 0,
        chunks: [],
        ending: 'abort',
        kind: 'none'
      };
    }
    const firstByteDelayMs = this._scale(response.t - exchange.requestT);
    let answer: IAnswer;
    if (response.stream) {
      let previous = response.t;
      const delays = exchange.lines.map(line => {
        const delay = this._scale(line.t - previous);
        previous = line.t;
        return delay;
      });
      answer = ndjsonAnswer(
        exchange.lines.map(line => line.line),
        delays,
        response.status
      );
      if (exchange.end?.error) {
        answer.ending = 'reset';
      }
    } else {
      answer = jsonAnswer(response.status, response.body ?? null);
    }
    answer.firstByteDelayMs = firstByteDelayMs;
    return answer;
  }

  private _next = 0;
}
