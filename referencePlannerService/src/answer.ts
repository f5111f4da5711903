/**
 * An answer as a sequence of timed writes, so that streaming, replayed timings and injected faults
 * all go through one writer.
 */
import type { ServerResponse } from 'http';

import {
  actionLine,
  errorBody,
  JSON_TYPE,
  NDJSON_TYPE
} from '../../src/referencePlanner/exchange';
import { faultValue, IFaultSpec } from './faults';

export { actionLine, JSON_TYPE, NDJSON_TYPE };

export interface IChunk {
  data: Buffer;
  /** Milliseconds to wait before writing this chunk. */
  delayMs: number;
}

export interface IAnswer {
  status: number;
  headers: Record<string, string>;
  firstByteDelayMs: number;
  chunks: IChunk[];
  /** `reset` destroys the socket after the chunks; `stall` keeps it open without ending; `abort` sends nothing at all. */
  ending: 'end' | 'reset' | 'stall' | 'abort';
  /** For the log: `ndjson` answers are streams. */
  kind: 'json' | 'ndjson' | 'none';
}

export function jsonAnswer(
  status: number,
  body: unknown,
  headers: Record<string, string> = {}
): IAnswer {
  return {
    status,
    headers: { 'Content-Type': JSON_TYPE, ...headers },
    firstByteDelayMs: 0,
    chunks: [{ data: Buffer.from(JSON.stringify(body)), delayMs: 0 }],
    ending: 'end',
    kind: 'json'
  };
}

export function errorAnswer(
  status: number,
  message: string,
  headers: Record<string, string> = {}
): IAnswer {
  return jsonAnswer(status, errorBody(status, message), headers);
}

/** One chunk per line; `delays[i]` is the wait before line i. */
export function ndjsonAnswer(
  lines: readonly string[],
  delays: readonly number[],
  status = 200
): IAnswer {
  return {
    status,
    headers: {
      'Content-Type': NDJSON_TYPE,
      'Cache-Control': 'no-cache',
      'X-Content-Type-Options': 'nosniff'
    },
    firstByteDelayMs: 0,
    chunks: lines.map((line, i) => ({
      data: Buffer.from(line + '\n'),
      delayMs: delays[i] ?? 0
    })),
    ending: 'end',
    kind: 'ndjson'
  };
}

/** Wait before a `paused-flood`, for the run to be paused when it comes. */
export const FLOOD_DELAY_MS = 4000;
/** The cell a `paused-flood` adds just before its pause. */
export const FLOOD_AHEAD = 'A flood of actions follows (injected fault).';

/** What `bad-pattern` sets as effects patterns: one exponential, one fine. */
export const BAD_PATTERNS = ['(a+)+$', '.'];

const MULTIBYTE_TEXT = 'Données chargées — ✓ 数据已加载';
/** Pause between the two halves of a split character, so they travel in separate TCP segments. */
const SPLIT_PAUSE_MS = 40;

function oversizedContent(bytes: number): string {
  const sentence = 'This action is deliberately oversized to test the client. ';
  return sentence.repeat(Math.ceil(bytes / sentence.length)).slice(0, bytes);
}

function injectedActions(fault: IFaultSpec): unknown[] {
  switch (fault.name) {
    case 'unknown-action':
      return [
        {
          action: 'bcc_fault_unknown_action',
          shot_type: 'dialogue',
          content: 'An action type no client knows (injected fault).'
        }
      ];
    case 'missing-field':
      // `exec` without its required `codecell_id`.
      return [{ action: 'exec', need_output: true }];
    case 'oversized-action':
      return [
        {
          action: 'add',
          shot_type: 'dialogue',
          content: oversizedContent(faultValue(fault))
        }
      ];
    default:
      return [];
  }
}

function insertChunk(answer: IAnswer, index: number, text: string): void {
  const at = Math.min(index, answer.chunks.length);
  const delayMs = answer.chunks[at]?.delayMs ?? 0;
  answer.chunks.splice(at, 0, { data: Buffer.from(text), delayMs });
}

/** Splits the first multibyte UTF-8 character across two writes; returns false if there is none. */
function splitMultibyte(answer: IAnswer): boolean {
  for (let i = 0; i < answer.chunks.length; i++) {
    const data = answer.chunks[i].data;
    const lead = data.findIndex(byte => byte >= 0xc0);
    if (lead >= 0) {
      answer.chunks.splice(
        i,
        1,
        { data: data.subarray(0, lead + 1), delayMs: answer.chunks[i].delayMs },
        { data: data.subarray(lead + 1), delayMs: SPLIT_PAUSE_MS }
      );
      return true;
    }
  }
  return false;
}

/** A JSON answer's body, re-serialized after `edit`; faults on JSON answers work on the parsed body. */
function editJsonBody(
  answer: IAnswer,
  edit: (body: Record<string, unknown>) => void
): void {
  const text = Buffer.concat(answer.chunks.map(c => c.data)).toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return;
  }
  const record = body as Record<string, unknown>;
  edit(record);
  answer.chunks = [
    {
      data: Buffer.from(JSON.stringify(record)),
      delayMs: answer.chunks[0]?.delayMs ?? 0
    }
  ];
}

function halve(answer: IAnswer): void {
  const whole = Buffer.concat(answer.chunks.map(c => c.data));
  answer.chunks = [
    {
      data: whole.subarray(0, Math.max(1, Math.floor(whole.length / 2))),
      delayMs: 0
    }
  ];
}

/**
 * Applies the faults that fired for this request to a successful answer. Status faults
 * (`http-500`, `http-429`) are handled before an answer exists; see `statusFaultAnswer`.
 */
export function applyFaults(
  answer: IAnswer,
  faults: readonly IFaultSpec[]
): IAnswer {
  for (const fault of faults) {
    if (fault.name === 'slow-first-byte') {
      answer.firstByteDelayMs += faultValue(fault);
      continue;
    }
    if (answer.kind === 'ndjson') {
      applyStreamFault(answer, fault);
    } else if (answer.kind === 'json') {
      applyJsonFault(answer, fault);
    }
  }
  return answer;
}

function applyStreamFault(answer: IAnswer, fault: IFaultSpec): void {
  switch (fault.name) {
    case 'unknown-action':
    case 'missing-field':
    case 'oversized-action':
      for (const action of injectedActions(fault)) {
        insertChunk(answer, 1, actionLine(action) + '\n');
      }
      return;
    case 'many-warnings':
      // Lines whose `action` is no action: each one a warning of the stream.
      insertChunk(
        answer,
        1,
        Array.from(
          { length: faultValue(fault) },
          (_, i) => `{"action": null, "bcc_fault_warning": ${i}}\n`
        ).join('')
      );
      return;
    case 'long-line':
      insertChunk(
        answer,
        1,
        actionLine({
          action: 'add',
          shot_type: 'dialogue',
          content: oversizedContent(faultValue(fault))
        }) + '\n'
      );
      return;
    case 'many-actions':
      insertChunk(
        answer,
        1,
        (
          actionLine({ action: 'next_event', event_type: 'bcc_fault_tick' }) +
          '\n'
        ).repeat(faultValue(fault))
      );
      return;
    case 'paused-flood': {
      // 10 KB actions after a pause long enough for the test to pause the run first.
      const line =
        actionLine({
          action: 'next_event',
          event_type: `bcc_fault_flood ${'f'.repeat(10_000)}`
        }) + '\n';
      const count = Math.ceil(faultValue(fault) / line.length);
      insertChunk(answer, 1, line.repeat(count));
      answer.chunks[Math.min(1, answer.chunks.length - 1)].delayMs =
        FLOOD_DELAY_MS;
      // A cell that says the flood is next, for a test to pause on.
      insertChunk(
        answer,
        1,
        actionLine({
          action: 'add',
          shot_type: 'dialogue',
          content: FLOOD_AHEAD
        }) + '\n'
      );
      answer.chunks[1].delayMs = 0;
      return;
    }
    case 'malformed-line':
      insertChunk(
        answer,
        1,
        '{"action": {"action": "add", "shot_type": "dialogue", "content": "malformed\n'
      );
      return;
    case 'split-utf8':
      if (!splitMultibyte(answer)) {
        insertChunk(
          answer,
          1,
          actionLine({
            action: 'add',
            shot_type: 'dialogue',
            content: MULTIBYTE_TEXT
          }) + '\n'
        );
        splitMultibyte(answer);
      }
      return;
    case 'truncated-line': {
      const last = answer.chunks[answer.chunks.length - 1];
      if (last) {
        // Drop the newline and the closing brace: the last line never completes.
        last.data = last.data.subarray(0, Math.max(0, last.data.length - 2));
      }
      return;
    }
    case 'reset':
      answer.chunks = answer.chunks.slice(
        0,
        Math.max(1, Math.ceil(answer.chunks.length / 2))
      );
      answer.ending = 'reset';
      return;
    case 'stall':
      answer.chunks = answer.chunks.slice(0, 1);
      answer.ending = 'stall';
      return;
    default:
      return;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function applyJsonFault(answer: IAnswer, fault: IFaultSpec): void {
  switch (fault.name) {
    case 'bad-pattern':
      editJsonBody(answer, body => {
        const filter = isObject(body.context_filter) ? body.context_filter : {};
        const config = isObject(filter.effects_config)
          ? filter.effects_config
          : {};
        body.context_filter = {
          ...filter,
          effects_config: {
            ...config,
            patterns: { include: BAD_PATTERNS }
          }
        };
      });
      return;
    case 'unknown-action':
    case 'missing-field':
    case 'oversized-action':
      editJsonBody(answer, body => {
        const actions = Array.isArray(body.actions) ? body.actions : [];
        actions.splice(
          Math.min(1, actions.length),
          0,
          ...injectedActions(fault)
        );
        body.actions = actions;
      });
      return;
    case 'malformed-line': {
      const text = Buffer.concat(answer.chunks.map(c => c.data)).toString(
        'utf8'
      );
      answer.chunks = [
        { data: Buffer.from(text.replace(/^\{/, '{,,')), delayMs: 0 }
      ];
      return;
    }
    case 'split-utf8':
      if (!splitMultibyte(answer)) {
        editJsonBody(answer, body => {
          body.fault_note = MULTIBYTE_TEXT;
        });
        splitMultibyte(answer);
      }
      return;
    case 'truncated-line': {
      const whole = Buffer.concat(answer.chunks.map(c => c.data));
      answer.chunks = [
        { data: whole.subarray(0, Math.max(0, whole.length - 1)), delayMs: 0 }
      ];
      return;
    }
    case 'reset':
      halve(answer);
      answer.ending = 'reset';
      return;
    case 'stall':
      halve(answer);
      answer.ending = 'stall';
      return;
    default:
      return;
  }
}

/** `http-500` / `http-429` replace the answer before the planner (or the replay) is consulted. */
export function statusFaultAnswer(
  faults: readonly IFaultSpec[]
): IAnswer | null {
  for (const fault of faults) {
    if (fault.name === 'http-500') {
      return errorAnswer(500, 'injected fault: internal server error');
    }
    if (fault.name === 'http-429') {
      const seconds = faultValue(fault);
      return errorAnswer(
        429,
        `injected fault: too many requests, retry after ${seconds} s`,
        {
          'Retry-After': String(seconds)
        }
      );
    }
  }
  return null;
}

const sleep = (ms: number): Promise<void> =>
  new Promise(resolve =>
    ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)
  );

export interface IWriteHooks {
  /** Awaited before chunk `index` (from 0) is written; tests use it to hold a stream mid-way. */
  beforeChunk?(index: number): Promise<void> | void;
}

/** Resolves when the answer has been written (or the socket is gone); a stalled answer resolves at once. */
export async function writeAnswer(
  res: ServerResponse,
  answer: IAnswer,
  hooks: IWriteHooks = {}
): Promise<void> {
  const gone = (): boolean => res.destroyed || res.writableEnded;
  if (answer.firstByteDelayMs > 0) {
    await sleep(answer.firstByteDelayMs);
  }
  if (gone()) {
    return;
  }
  if (answer.ending === 'abort') {
    res.destroy();
    return;
  }
  res.socket?.setNoDelay(true);
  res.writeHead(answer.status, answer.headers);
  res.flushHeaders();
  for (let i = 0; i < answer.chunks.length; i++) {
    const chunk = answer.chunks[i];
    if (i > 0 || chunk.delayMs > 0) {
      await sleep(chunk.delayMs);
    }
    await hooks.beforeChunk?.(i);
    if (gone()) {
      return;
    }
    const drained = res.write(chunk.data);
    if (!drained) {
      await new Promise<void>(resolve => {
        res.once('drain', resolve);
        res.once('close', resolve);
      });
    }
  }
  if (answer.ending === 'reset') {
    // Let the last chunk leave before the reset, so the client sees a partial stream, not nothing.
    await sleep(20);
    res.destroy();
  } else if (answer.ending === 'end') {
    res.end();
  }
}
