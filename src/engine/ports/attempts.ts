/**
 * The attempts of a rewritten cell (`rewrite_cell`, docs/protocol.md#actions): what a cell keeps of
 * each code a fix replaced (under `notebook_bcc.attempts`, saved with the notebook), whether the run may
 * rewrite a cell at all, and what the observation carries of the attempts. Pure and bounded: the
 * notebook adapter and the in-memory notebook of the tests both use it.
 */
import type { CellAttempts } from '../../protocol';
import { type RewriteStatus, sourceHash } from './driver';

export type { RewriteStatus };

/** One earlier attempt of a cell: the code it held and how it ended. */
export interface ICellAttempt {
  /** The code, cut to a head and a tail past `ATTEMPT_LIMITS.codeChars`. */
  code: string;
  /** Its error's last line (`KeyError: 'region'`), or null when it raised none. */
  error: string | null;
  /** The end of its traceback, ANSI colours removed, or null. */
  traceback: string | null;
  /** When it was replaced (ISO 8601). */
  at: string;
  /** Who replaced it: the planner's fix, or the user restoring another attempt. */
  by: 'planner' | 'user';
}

/** What a cell keeps of its attempts (docs/protocol.md#persistence). */
export const ATTEMPT_LIMITS = {
  /** The newest attempts kept per cell; older ones go. */
  kept: 10,
  codeChars: 20_000,
  errorChars: 300,
  tracebackChars: 2_000
} as const;

/** What the observation carries of them (docs/protocol.md#request-size). */
export const OBSERVED_ATTEMPT_LIMITS = {
  /** The current step's rewritten cells sent, the latest ones. */
  cells: 2,
  /** The latest earlier attempts sent per cell. */
  failed: 3,
  /** Characters of the current code. */
  codeChars: 1_500,
  /** Characters of an earlier attempt's code. */
  failedCodeChars: 600,
  /** Characters of an error line. */
  errorChars: 300
} as const;

/** A cell as the rewrite check sees it. */
export interface IRewriteCandidate {
  kind: 'code' | 'markdown' | 'raw';
  source: string;
  /** `notebook_bcc.source_hash`, the hash of what the run last wrote, or null. */
  stamped: string | null;
}

export function rewriteStatus(cell: IRewriteCandidate | null): RewriteStatus {
  if (!cell) {
    return 'missing';
  }
  if (cell.kind !== 'code') {
    return 'not_code';
  }
  // Without a stamp nothing says the run wrote what the cell holds: it is not the run's to rewrite.
  return cell.stamped !== null && cell.stamped === sourceHash(cell.source)
    ? 'ok'
    : 'edited';
}

/** `text` cut to `max` characters: its head and its tail around a marker. */
export function clipMiddle(text: string, max: number): string {
  if (text.length <= max) {
    return text;
  }
  const marker = (omitted: number) => `\n… [${omitted} characters omitted] …\n`;
  const room = Math.max(0, max - marker(text.length).length);
  const head = Math.ceil(room / 2);
  const tail = room - head;
  return (
    text.slice(0, head) +
    marker(text.length - room) +
    (tail > 0 ? text.slice(-tail) : '')
  );
}

function clipEnd(text: string, max: number): string {
  return text.length <= max ? text : `…${text.slice(-(max - 1))}`;
}

/** How an attempt ended, as the cell's error output says. */
export interface IAttemptFailure {
  ename?: string | null;
  evalue?: string | null;
  traceback?: string | null;
}

/**
 * How the replaced code failed: its error output, or, when it raised nothing, the step's check in the
 * kernel that failed after it ran (`checkFailure`, its reasons); null when neither.
 */
export function attemptFailure(
  output: IAttemptFailure | null,
  checkFailure: string | null | undefined
): IAttemptFailure | null {
  if (output || !checkFailure) {
    return output;
  }
  return { ename: null, evalue: `Check failed: ${checkFailure}` };
}

/** The attempt a cell's code makes once it is replaced, bounded. */
export function newAttempt(
  code: string,
  failure: IAttemptFailure | null,
  at: Date,
  by: ICellAttempt['by']
): ICellAttempt {
  const name = failure?.ename?.trim() ?? '';
  const value = failure?.evalue?.trim() ?? '';
  const line = name && value ? `${name}: ${value}` : name || value;
  const error = line
    ? clipEnd(line.split('\n').pop() ?? line, ATTEMPT_LIMITS.errorChars)
    : failure
      ? 'The cell raised an error'
      : null;
  const traceback = failure?.traceback?.trim()
    ? clipEnd(failure.traceback.trim(), ATTEMPT_LIMITS.tracebackChars)
    : null;
  return {
    code: clipMiddle(code, ATTEMPT_LIMITS.codeChars),
    error,
    traceback,
    at: at.toISOString(),
    by
  };
}

/** `history` with `attempt` last, keeping the newest `ATTEMPT_LIMITS.kept`. */
export function withAttempt(
  history: readonly ICellAttempt[],
  attempt: ICellAttempt
): ICellAttempt[] {
  return [...history, attempt].slice(-ATTEMPT_LIMITS.kept);
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** The attempts kept in a cell's metadata, read leniently: what cannot be read is left out. */
export function readAttempts(value: unknown): ICellAttempt[] {
  if (!Array.isArray(value)) {
    return [];
  }
  return value.flatMap((item: unknown): ICellAttempt[] => {
    if (typeof item !== 'object' || item === null) {
      return [];
    }
    const record = item as Record<string, unknown>;
    const code = text(record.code);
    if (code === null) {
      return [];
    }
    return [
      {
        code,
        error: text(record.error),
        traceback: text(record.traceback),
        at: text(record.at) ?? '',
        by: record.by === 'user' ? 'user' : 'planner'
      }
    ];
  });
}

/**
 * Restoring attempt `index`: its code goes back into the cell and the cell's code now (`current`)
 * becomes its newest attempt. Null when there is no such attempt.
 */
export function restoreAttempt(
  history: readonly ICellAttempt[],
  index: number,
  current: ICellAttempt
): { code: string; history: ICellAttempt[] } | null {
  const chosen = history[index];
  if (!chosen) {
    return null;
  }
  const rest = history.filter((_, i) => i !== index);
  return { code: chosen.code, history: withAttempt(rest, current) };
}

/**
 * A rewind put `source` back into a cell: when that is the newest attempt's code, the attempt is the
 * cell's code again and leaves the history.
 */
export function afterSourceRestored(
  history: readonly ICellAttempt[],
  source: string
): ICellAttempt[] {
  const last = history[history.length - 1];
  return last && last.code === source ? history.slice(0, -1) : [...history];
}

/** A rewritten cell as the observation carries it, bounded (`OBSERVED_ATTEMPT_LIMITS`). */
export function observedAttempts(cell: {
  id: string;
  storeId: string | null;
  stepId: string | null;
  source: string;
  history: readonly ICellAttempt[];
}): CellAttempts {
  const { failed, codeChars, failedCodeChars, errorChars } =
    OBSERVED_ATTEMPT_LIMITS;
  const first = Math.max(0, cell.history.length - failed);
  return {
    cell_id: cell.id,
    store_id: cell.storeId,
    step_id: cell.stepId,
    attempts: cell.history.length + 1,
    code: clipMiddle(cell.source, codeChars),
    failed: cell.history.slice(first).map((attempt, i) => ({
      attempt: first + i + 1,
      code: clipMiddle(attempt.code, failedCodeChars),
      error: attempt.error === null ? null : clipEnd(attempt.error, errorChars)
    }))
  };
}

/** The rewritten cells of step `stepId` that the observation carries: the latest ones. */
export function stepAttempts(
  cells: readonly CellAttempts[] | undefined,
  stepId: string | null
): CellAttempts[] {
  if (!cells || stepId === null) {
    return [];
  }
  return cells
    .filter(cell => cell.step_id === stepId)
    .slice(-OBSERVED_ATTEMPT_LIMITS.cells);
}
