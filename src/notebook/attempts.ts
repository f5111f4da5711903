/**
 * A rewritten cell's attempts in the notebook (docs/protocol.md#persistence): under
 * `notebook_bcc.attempts` in the cell's metadata, saved with the notebook. A rewrite (the planner's fix)
 * and a restore (the user's choice of an earlier attempt) are each one edit, one step of the notebook's
 * undo history. What is kept and how it is bounded is `engine/ports/attempts.ts`.
 */
import type { ICodeCellModel } from '@jupyterlab/cells';
import type { INotebookModel } from '@jupyterlab/notebook';
import type { PartialJSONObject } from '@lumino/coreutils';
import {
  afterSourceRestored,
  attemptFailure,
  type IAttemptFailure,
  type ICellAttempt,
  newAttempt,
  observedAttempts,
  readAttempts,
  restoreAttempt,
  rewriteStatus,
  withAttempt
} from '../engine/ports/attempts';
import type { RewriteStatus } from '../engine/ports/driver';
import { sourceHash } from '../engine/ports/driver';
import type { CellAttempts } from '../protocol';
import { stripAnsi } from './ansi';
import { asObject, toJSON } from './json';
import { asOneUndoStep } from './undo';
import {
  ATTEMPTS_KEY,
  CELL_METADATA_KEY,
  EXEC_ERROR_KEY,
  SOURCE_HASH_KEY
} from './metadata';

type SharedNotebook = INotebookModel['sharedModel'];
type SharedCell = SharedNotebook['cells'][number];
type SharedCodeCell = ICodeCellModel['sharedModel'];

function ownMetadata(cell: SharedCell): PartialJSONObject {
  return asObject(cell.getMetadata(CELL_METADATA_KEY));
}

/** The attempts a cell keeps, oldest first. */
export function attemptsOf(cell: SharedCell): ICellAttempt[] {
  return readAttempts(ownMetadata(cell)[ATTEMPTS_KEY]);
}

/** How the cell's code ended, from its error output (null when it holds none). */
export function failureOf(cell: SharedCell): IAttemptFailure | null {
  if (cell.cell_type !== 'code') {
    return null;
  }
  for (const output of (cell as SharedCodeCell).getOutputs()) {
    if (output.output_type === 'error') {
      const traceback = Array.isArray(output.traceback)
        ? (output.traceback as unknown[]).map(String).join('\n')
        : '';
      return {
        ename: typeof output.ename === 'string' ? output.ename : null,
        evalue: typeof output.evalue === 'string' ? output.evalue : null,
        traceback: stripAnsi(traceback)
      };
    }
  }
  return ownMetadata(cell)[EXEC_ERROR_KEY] === true
    ? {
        ename: null,
        evalue: 'the run stopped it (a timeout, a stop or a lost kernel)'
      }
    : null;
}

export function rewriteStatusOf(cell: SharedCell | null): RewriteStatus {
  if (!cell) {
    return 'missing';
  }
  const stamped = ownMetadata(cell)[SOURCE_HASH_KEY];
  return rewriteStatus({
    kind:
      cell.cell_type === 'code' || cell.cell_type === 'markdown'
        ? cell.cell_type
        : 'raw',
    source: cell.getSource(),
    stamped: typeof stamped === 'string' ? stamped : null
  });
}

/**
 * Replaces the cell's code: the code now becomes its newest attempt, `source` goes in (stamped as the
 * run's when `stamp`), the outputs and the failure mark go. One transaction, kept apart from the edits
 * before and after it in the undo history: the notebook's undo brings the earlier code back in one step.
 */
function replaceCode(
  shared: SharedNotebook,
  cell: SharedCell,
  source: string,
  history: ICellAttempt[],
  stamp: boolean
): void {
  asOneUndoStep(shared, () => {
    const next: PartialJSONObject = {
      ...ownMetadata(cell),
      [ATTEMPTS_KEY]: toJSON(history)
    };
    // Its failure mark belonged to the code replaced (`EXEC_ERROR_KEY`).
    delete next[EXEC_ERROR_KEY];
    if (stamp) {
      next[SOURCE_HASH_KEY] = sourceHash(source);
    }
    cell.setSource(source);
    cell.setMetadata(CELL_METADATA_KEY, next);
    if (cell.cell_type === 'code') {
      const code = cell as SharedCodeCell;
      code.setOutputs([]);
      code.execution_count = null;
    }
  });
}

/** The planner's fix of a cell of the run (`rewrite_cell`); null when `rewriteStatusOf` is not `ok`. */
export function rewriteCode(
  shared: SharedNotebook,
  cell: SharedCell,
  source: string,
  at: Date,
  checkFailure: string | null = null
): { previous: string; attempts: number } | null {
  if (rewriteStatusOf(cell) !== 'ok') {
    return null;
  }
  const previous = cell.getSource();
  const history = withAttempt(
    attemptsOf(cell),
    newAttempt(
      previous,
      attemptFailure(failureOf(cell), checkFailure),
      at,
      'planner'
    )
  );
  replaceCode(shared, cell, source, history, true);
  return { previous, attempts: history.length };
}

/**
 * The user puts attempt `index` back: the code now becomes an attempt. What the user chose is the
 * user's (not stamped as the run's), so the planner never rewrites it again and a rewind keeps it.
 */
export function restoreCode(
  shared: SharedNotebook,
  cell: SharedCell,
  index: number,
  at: Date
): boolean {
  const restored = restoreAttempt(
    attemptsOf(cell),
    index,
    newAttempt(cell.getSource(), failureOf(cell), at, 'user')
  );
  if (!restored) {
    return false;
  }
  replaceCode(shared, cell, restored.code, restored.history, false);
  return true;
}

/**
 * Within a rewind's transaction: the source put back is the newest attempt's code, which leaves the
 * history (it is the cell's code again). Its outputs were the fix's: the cell shows that attempt's
 * error again (what it showed before the fix), so a later fix keeps the error with the attempt.
 */
export function forgetRestoredAttempt(cell: SharedCell, source: string): void {
  const history = attemptsOf(cell);
  const kept = afterSourceRestored(history, source);
  if (kept.length === history.length) {
    return;
  }
  cell.setMetadata(CELL_METADATA_KEY, {
    ...ownMetadata(cell),
    [ATTEMPTS_KEY]: toJSON(kept)
  });
  if (cell.cell_type === 'code') {
    const code = cell as SharedCodeCell;
    const { error, traceback } = history[history.length - 1];
    code.setOutputs(error ? [errorOutput(error, traceback)] : []);
    code.execution_count = null;
  }
}

/** An attempt's error as the error output it came from (`KeyError: 'region'`, its traceback's end). */
function errorOutput(
  error: string,
  traceback: string | null
): {
  output_type: 'error';
  ename: string;
  evalue: string;
  traceback: string[];
} {
  const colon = error.indexOf(': ');
  return {
    output_type: 'error',
    ename: colon < 0 ? error : error.slice(0, colon),
    evalue: colon < 0 ? '' : error.slice(colon + 2),
    traceback: (traceback ?? error).split('\n')
  };
}

/** Every cell with attempts, as the observation carries them (bounded). */
export function notebookAttempts(shared: SharedNotebook): CellAttempts[] {
  const found: CellAttempts[] = [];
  for (const cell of shared.cells) {
    const meta = ownMetadata(cell);
    if (!Array.isArray(meta[ATTEMPTS_KEY])) {
      continue;
    }
    const history = attemptsOf(cell);
    if (history.length === 0) {
      continue;
    }
    const text = (key: string) =>
      typeof meta[key] === 'string' ? (meta[key] as string) : null;
    found.push(
      observedAttempts({
        id: cell.getId(),
        storeId: text('store_id'),
        stepId: text('step_id'),
        source: cell.getSource(),
        history
      })
    );
  }
  return found;
}

/** A cell's attempts as the attempts view shows them. */
export interface ICellAttemptsView {
  cellId: string;
  /** Its place in the notebook, from 1. */
  position: number;
  stepId: string | null;
  /** The code it holds now. */
  code: string;
  /** Its earlier attempts, oldest first. */
  attempts: ICellAttempt[];
}

function viewOf(cell: SharedCell, index: number): ICellAttemptsView {
  const stepId = ownMetadata(cell).step_id;
  return {
    cellId: cell.getId(),
    position: index + 1,
    stepId: typeof stepId === 'string' ? stepId : null,
    code: cell.getSource(),
    attempts: attemptsOf(cell)
  };
}

/** The attempts of cell `cellId`, or null when it has none (or there is no such cell). */
export function cellAttempts(
  shared: SharedNotebook,
  cellId: string
): ICellAttemptsView | null {
  const index = shared.cells.findIndex(cell => cell.getId() === cellId);
  const view = index < 0 ? null : viewOf(shared.cells[index], index);
  return view && view.attempts.length > 0 ? view : null;
}

/** The cells of step `stepId` that have attempts, in notebook order. */
export function stepAttemptsOf(
  shared: SharedNotebook,
  stepId: string
): ICellAttemptsView[] {
  return shared.cells.flatMap((cell, index) => {
    const meta = ownMetadata(cell);
    if (meta.step_id !== stepId || !Array.isArray(meta[ATTEMPTS_KEY])) {
      return [];
    }
    const view = viewOf(cell, index);
    return view.attempts.length > 0 ? [view] : [];
  });
}

/**
 * The steps whose cells have attempts, read again only after the notebook changed: the panel asks
 * for each step it shows, and a scan per question would grow with the notebook.
 */
export function stepsWithAttempts(model: INotebookModel): ReadonlySet<string> {
  let known = STEPS_WITH_ATTEMPTS.get(model);
  if (!known) {
    const entry = { steps: null as Set<string> | null };
    model.contentChanged.connect(() => {
      entry.steps = null;
    });
    STEPS_WITH_ATTEMPTS.set(model, entry);
    known = entry;
  }
  if (!known.steps) {
    const steps = new Set<string>();
    for (const cell of model.sharedModel.cells) {
      const meta = ownMetadata(cell);
      const history = meta[ATTEMPTS_KEY];
      if (
        typeof meta.step_id === 'string' &&
        Array.isArray(history) &&
        history.length > 0
      ) {
        steps.add(meta.step_id);
      }
    }
    known.steps = steps;
  }
  return known.steps;
}

const STEPS_WITH_ATTEMPTS = new WeakMap<
  INotebookModel,
  { steps: Set<string> | null }
>();
