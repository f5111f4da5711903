/**
 * The reproducibility check's decisions, pure (docs/architecture.md#reproducibility): which values a
 * run delivered, which cells are run again, how two fingerprints compare, where the first difference
 * appears, and the record written to the notebook's metadata (`notebook_bcc.reproducibility`).
 * `reproduce.ts` runs the cells in a fresh kernel and hands the results here.
 */

/** A value as the kernel helper fingerprints it (`kernelFingerprint.ts`). */
export interface IFingerprint {
  type: string | null;
  /** The variable collection's summary: a scalar, a small container, or `DataFrame(240×4)`. */
  summary: unknown;
  /** A digest of the content, when one was cheap and stable; null: compared by the summary alone. */
  digest: string | null;
}

export type Fingerprints = Record<string, IFingerprint>;

/** What a cell did in the fresh kernel. */
export type CellOutcome =
  | { status: 'ok' }
  | { status: 'error'; ename: string; evalue: string; expected: boolean }
  | { status: 'timeout'; seconds: number };

/** A cell to run: its id, its place in the notebook (from 1) and its code. */
export interface ICheckCell {
  id: string;
  /** 1-based, among all the notebook's cells: "cell 7". */
  index: number;
  source: string;
  /** The run's own `exec` of it failed (`notebook_bcc.exec_error`): an error again is no difference. */
  failedInRun: boolean;
}

/** One cell's run in the fresh kernel: how it ended and the compared values after it. */
export interface ICellStep {
  cell: ICheckCell;
  outcome: CellOutcome;
  values: Fingerprints;
}

export type ValueStatus = 'same' | 'different' | 'missing';

export interface IValueResult {
  name: string;
  status: ValueStatus;
  /** Short texts for the panel: the run's value and the fresh kernel's (null when missing). */
  reference: string;
  fresh: string | null;
  /** The cell after which the fresh value took its (differing) final form, when known. */
  cell_id?: string;
}

export interface IFirstDifference {
  cell_id: string;
  cell_index: number;
  /** The cell's first line, shortened. */
  source: string;
  /** What the cell did, in English: `raised NameError: …`, `left \`total\` different from the run`. */
  reason: string;
  /** The same as data, for the panel's words: the error, the time limit, or the value. */
  kind: 'error' | 'timeout' | 'value';
  error?: string;
  seconds?: number;
  name?: string;
}

/** A data file of the run, hashed in the fresh kernel (where the code reads it). */
export interface IDataFileHash {
  path: string;
  sha256: string | null;
  size?: number;
  error?: string;
}

/** What the notebook's metadata records (`notebook_bcc.reproducibility`). */
export interface IReproducibilityRecord {
  checked_at: string;
  duration_ms: number;
  kernel: { name: string; display_name: string | null };
  python: string | null;
  /** pandas, numpy, matplotlib: the versions of those the cells imported. */
  packages: Record<string, string>;
  data_files: IDataFileHash[];
  /** What the values were compared with: the run's kernel at the end of the run, or as it is now. */
  reference: 'end_of_run' | 'kernel_now';
  cells_run: number;
  cells_total: number;
  reproduced: boolean;
  compared: number;
  matched: number;
  values: IValueResult[];
  first_difference: IFirstDifference | null;
}

/** How many values the record keeps (the first differences first). */
export const MAX_RECORDED_VALUES = 50;
/** How long a value's text is in the record. */
const VALUE_TEXT_CHARS = 120;

/** Below `notebook_bcc` in the notebook's metadata. */
export const REPRODUCIBILITY_KEY = 'reproducibility';

/** A cell as the notebook holds it, for `cellsToRun`. */
export interface INotebookCellView {
  id: string;
  type: string;
  source: string;
  /** The cell's `notebook_bcc` metadata. */
  metadata: Record<string, unknown>;
  executionCount: number | null;
}

/**
 * The cells run again: the run's code cells (they carry its provenance) in notebook order, as they are
 * now, that ran in the run's kernel (an execution count). Cells the user deleted are gone, which is
 * the point; the user's own cells are not the run's.
 */
export function cellsToRun(cells: readonly INotebookCellView[]): ICheckCell[] {
  const run: ICheckCell[] = [];
  cells.forEach((cell, i) => {
    const own = cell.metadata;
    const fromRun =
      typeof own.behavior_id === 'string' ||
      typeof own.step_id === 'string' ||
      typeof own.stage_id === 'string';
    if (
      cell.type === 'code' &&
      fromRun &&
      cell.executionCount !== null &&
      cell.source.trim()
    ) {
      run.push({
        id: cell.id,
        index: i + 1,
        source: cell.source,
        failedInRun: own.exec_error === true
      });
    }
  });
  return run;
}

/** The run's values: its deliverables and its steps' expected variables, once each, in that order. */
export function comparedNames(
  deliverables: readonly string[],
  expected: readonly string[]
): string[] {
  return [...new Set([...deliverables, ...expected])].filter(name =>
    /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)
  );
}

function sameJSON(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Two fingerprints of one name are the same value: same type and summary, and same digest if both have one. */
export function sameValue(a: IFingerprint, b: IFingerprint): boolean {
  return (
    a.type === b.type &&
    sameJSON(a.summary, b.summary) &&
    (a.digest === null || b.digest === null || a.digest === b.digest)
  );
}

/** A fingerprint in a few words, for the panel. */
export function shownValue(value: IFingerprint): string {
  const summary =
    typeof value.summary === 'string'
      ? value.summary
      : JSON.stringify(value.summary);
  // A container's summary says its content, its type says its size: `dict(len=2) {"a": 1, …}`.
  const text =
    value.type && typeof value.summary === 'object' && value.summary !== null
      ? `${value.type} ${summary}`
      : summary;
  return text.length > VALUE_TEXT_CHARS
    ? `${text.slice(0, VALUE_TEXT_CHARS - 1)}…`
    : text;
}

function firstLine(source: string): string {
  const line =
    source
      .split('\n')
      .map(l => l.trim())
      .find(l => l && !l.startsWith('#')) ?? source.trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

/**
 * The cell after which the fresh value of `name` took its final form for good: the start of the
 * trailing stretch of cells after which it no longer equals the run's value. Null when it never held
 * a value.
 */
function settledAt(
  steps: readonly ICellStep[],
  name: string,
  reference: IFingerprint
): ICellStep | null {
  let found: ICellStep | null = null;
  for (const step of steps) {
    const value = step.values[name];
    if (value === undefined || sameValue(value, reference)) {
      found = null;
    } else if (found === null) {
      found = step;
    }
  }
  return found;
}

type Reason = Pick<
  IFirstDifference,
  'reason' | 'kind' | 'error' | 'seconds' | 'name'
>;

function errorReason(outcome: CellOutcome): Reason | null {
  switch (outcome.status) {
    case 'error': {
      if (outcome.expected) {
        return null;
      }
      const error = `${outcome.ename}${outcome.evalue ? `: ${outcome.evalue}` : ''}`;
      return { kind: 'error', error, reason: `raised ${error}` };
    }
    case 'timeout':
      return {
        kind: 'timeout',
        seconds: outcome.seconds,
        reason: `did not finish within ${outcome.seconds} s`
      };
    default:
      return null;
  }
}

export interface ICompareInput {
  names: readonly string[];
  /** The run's values (names the run's kernel does not hold are not compared). */
  reference: Fingerprints;
  steps: readonly ICellStep[];
  /** The values after the last cell that ran. */
  fresh: Fingerprints;
}

export interface IComparison {
  values: IValueResult[];
  compared: number;
  matched: number;
  first_difference: IFirstDifference | null;
}

/** Compares the fresh kernel's values with the run's and finds where the first difference appears. */
export function compareRuns(input: ICompareInput): IComparison {
  const { reference, steps, fresh } = input;
  const values: IValueResult[] = [];
  let first: { step: ICellStep; reason: Reason } | null = null;
  const consider = (step: ICellStep, reason: Reason) => {
    if (!first || step.cell.index < first.step.cell.index) {
      first = { step, reason };
    }
  };
  for (const step of steps) {
    const reason = errorReason(step.outcome);
    if (reason) {
      consider(step, reason);
      break;
    }
  }
  for (const name of input.names) {
    const expected = reference[name];
    if (!expected) {
      continue;
    }
    const now = fresh[name];
    const result: IValueResult = {
      name,
      status: !now
        ? 'missing'
        : sameValue(now, expected)
          ? 'same'
          : 'different',
      reference: shownValue(expected),
      fresh: now ? shownValue(now) : null
    };
    if (result.status === 'different') {
      const step = settledAt(steps, name, expected);
      if (step) {
        result.cell_id = step.cell.id;
        consider(step, {
          kind: 'value',
          name,
          reason: `left \`${name}\` different from the run`
        });
      }
    }
    values.push(result);
  }
  const matched = values.filter(v => v.status === 'same').length;
  const found = first as { step: ICellStep; reason: Reason } | null;
  return {
    values,
    compared: values.length,
    matched,
    first_difference: found
      ? {
          cell_id: found.step.cell.id,
          cell_index: found.step.cell.index,
          source: firstLine(found.step.cell.source),
          ...found.reason
        }
      : null
  };
}

/** The values kept in the record: those that differ first, then the others, bounded. */
export function recordedValues(
  values: readonly IValueResult[]
): IValueResult[] {
  const order: Record<ValueStatus, number> = {
    different: 0,
    missing: 1,
    same: 2
  };
  return [...values]
    .sort((a, b) => order[a.status] - order[b.status])
    .slice(0, MAX_RECORDED_VALUES);
}

/** A record read back from the notebook's metadata, liberally; null when it is not one. */
export function readReproducibilityRecord(
  raw: unknown
): IReproducibilityRecord | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return null;
  }
  const record = raw as Partial<IReproducibilityRecord>;
  if (
    typeof record.checked_at !== 'string' ||
    typeof record.reproduced !== 'boolean' ||
    typeof record.compared !== 'number' ||
    typeof record.matched !== 'number' ||
    !Array.isArray(record.values)
  ) {
    return null;
  }
  return record as IReproducibilityRecord;
}
