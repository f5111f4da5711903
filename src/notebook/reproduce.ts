/**
 * The reproducibility check (docs/architecture.md#reproducibility): the run's kept code cells, top to
 * bottom, in a fresh kernel of the notebook's kernel spec, started through JupyterLab's session
 * manager beside the notebook (same directory, so relative data paths hold) and shut down afterwards;
 * the notebook's own kernel and cells are never touched (its outputs are not written anywhere). After
 * each cell the compared values are fingerprinted there; `reproducibility.ts` compares them with the
 * run's and finds the first difference.
 */
import { PathExt } from '@jupyterlab/coreutils';
import type { INotebookModel } from '@jupyterlab/notebook';
import type { Kernel, KernelSpec, Session } from '@jupyterlab/services';
import type { TranslationBundle } from '@jupyterlab/translation';
import { UUID } from '@lumino/coreutils';
import { evaluateSilently } from './kernel';
import {
  environmentExpression,
  fingerprintExpression
} from './kernelFingerprint';
import { asObject, toJSON } from './json';
import { CELL_METADATA_KEY } from './metadata';
import {
  type CellOutcome,
  type Fingerprints,
  type ICellStep,
  type ICheckCell,
  type IDataFileHash,
  type INotebookCellView,
  type IReproducibilityRecord,
  compareRuns,
  recordedValues,
  REPRODUCIBILITY_KEY
} from './reproducibility';

type SharedNotebook = INotebookModel['sharedModel'];

/** How long the fresh kernel may take to start and answer (fixed). */
export const KERNEL_START_TIMEOUT_MS = 120_000;
/** How long one silent inspection may take (the fingerprints after a cell, the environment). */
const INSPECT_TIMEOUT_MS = 60_000;

/** Why a check could not give a result: its kernel, a stop, nothing to run. */
export class ReproduceError extends Error {
  constructor(
    readonly kind: 'kernel' | 'stopped' | 'nothing',
    message: string
  ) {
    super(message);
  }
}

export interface IReproduceProgress {
  phase: 'starting' | 'running' | 'comparing';
  /** The cell running now, from 1 among the cells run, and how many there are. */
  cell?: number;
  cells?: number;
}

export interface IReproduceOptions {
  /** Where the notebook is (its directory is the fresh kernel's). */
  path: string;
  /** The notebook's kernel spec: its name, and its display name when known. */
  kernel: { name: string; display_name: string | null };
  cells: readonly ICheckCell[];
  /** The run's values (deliverables, expected variables) to compare. */
  names: readonly string[];
  /** The run's values as its kernel held them; `at` says when they were taken. */
  reference: { values: Fingerprints; at: 'end_of_run' | 'kernel_now' };
  /** The run's data files, relative to the notebook's directory: hashed where the code reads them. */
  dataFiles: readonly string[];
  /** Name patterns whose values are never shown (the settings' redaction). */
  redacted: readonly string[];
  /** One cell's limit, in ms. */
  cellTimeoutMs: number;
  sessions: Session.IManager;
  signal: AbortSignal;
  onProgress?: (progress: IReproduceProgress) => void;
  trans: TranslationBundle;
  now?: () => Date;
}

/** The notebook's cells as the check reads them. */
export function notebookCells(shared: SharedNotebook): INotebookCellView[] {
  return shared.cells.map(cell => {
    const count =
      cell.cell_type === 'code'
        ? (cell as unknown as { execution_count: number | null })
            .execution_count
        : null;
    return {
      id: cell.getId(),
      type: cell.cell_type,
      source: cell.getSource(),
      metadata: { ...asObject(cell.getMetadata(CELL_METADATA_KEY)) },
      executionCount: typeof count === 'number' ? count : null
    };
  });
}

/** Writes the record under `notebook_bcc.reproducibility`; the rest of the notebook stays as it is. */
export function writeReproducibilityRecord(
  shared: SharedNotebook,
  record: IReproducibilityRecord
): void {
  shared.setMetadata(CELL_METADATA_KEY, {
    ...asObject(shared.getMetadata(CELL_METADATA_KEY)),
    [REPRODUCIBILITY_KEY]: toJSON(record)
  });
}

/** The record kept in the notebook's metadata, unchecked (read it with `readReproducibilityRecord`). */
export function storedReproducibilityRecord(shared: SharedNotebook): unknown {
  return asObject(shared.getMetadata(CELL_METADATA_KEY))[REPRODUCIBILITY_KEY];
}

/** The values of `names` in `kernel`, fingerprinted; empty when the kernel is not Python. */
export async function fingerprintValues(
  kernel: Kernel.IKernelConnection,
  names: readonly string[],
  redacted: readonly string[],
  trans: TranslationBundle
): Promise<Fingerprints> {
  if (!names.length) {
    return {};
  }
  const reply = await evaluateSilently(
    kernel,
    fingerprintExpression(names, redacted),
    INSPECT_TIMEOUT_MS,
    trans
  );
  return (reply ?? {}) as Fingerprints;
}

/** Settles with `promise`, or with `fallback()` after `ms`, or rejects as stopped when `signal` aborts. */
function within<T>(
  promise: Promise<T>,
  ms: number,
  signal: AbortSignal,
  fallback: () => T,
  trans: TranslationBundle
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = ms > 0 ? setTimeout(() => done(fallback()), ms) : null;
    const stop = () =>
      fail(new ReproduceError('stopped', trans.__('The check was stopped.')));
    const settle = () => {
      if (timer !== null) {
        clearTimeout(timer);
      }
      signal.removeEventListener('abort', stop);
    };
    const done = (value: T) => {
      settle();
      resolve(value);
    };
    const fail = (reason: unknown) => {
      settle();
      reject(reason);
    };
    if (signal.aborted) {
      stop();
      return;
    }
    signal.addEventListener('abort', stop);
    promise.then(done, fail);
  });
}

/** A fresh session of the notebook's kernel spec beside the notebook; rejects with a `kernel` error. */
async function startFresh(
  options: IReproduceOptions
): Promise<Session.ISessionConnection> {
  const { trans, signal } = options;
  const directory = PathExt.dirname(options.path);
  const name = PathExt.basename(options.path);
  const starting = options.sessions.startNew(
    {
      // Its own path: a session of the notebook's path would be the notebook's own kernel.
      path: PathExt.join(
        directory,
        `.${name}.reproducibility-${UUID.uuid4().slice(0, 8)}`
      ),
      type: 'reproducibility-check',
      name: trans.__('Reproducibility check of %1', name),
      kernel: { name: options.kernel.name }
    },
    { kernelConnectionOptions: { handleComms: false } }
  );
  let session: Session.ISessionConnection | null = null;
  const late = () => null;
  try {
    session = await within(
      starting,
      KERNEL_START_TIMEOUT_MS,
      signal,
      late,
      trans
    );
    const kernel = session?.kernel;
    if (!session || !kernel) {
      throw new Error(
        trans.__(
          'no kernel answered within %1 s',
          KERNEL_START_TIMEOUT_MS / 1000
        )
      );
    }
    const info = await within(
      kernel.info.then(() => true),
      KERNEL_START_TIMEOUT_MS,
      signal,
      () => false,
      trans
    );
    if (!info) {
      throw new Error(
        trans.__(
          'the kernel did not answer within %1 s',
          KERNEL_START_TIMEOUT_MS / 1000
        )
      );
    }
    return session;
  } catch (reason) {
    // A session that comes after all is shut down at once.
    void starting.then(late => late.shutdown()).catch(() => undefined);
    if (session) {
      void session.shutdown().catch(() => undefined);
    }
    if (reason instanceof ReproduceError) {
      throw reason;
    }
    throw new ReproduceError(
      'kernel',
      trans.__(
        'A fresh %1 kernel could not be started: %2',
        options.kernel.display_name ?? options.kernel.name,
        reason instanceof Error ? reason.message : String(reason)
      )
    );
  }
}

/** Runs one cell as a user would (history, outputs on the wire, not in the notebook). */
async function runCell(
  kernel: Kernel.IKernelConnection,
  cell: ICheckCell,
  options: IReproduceOptions
): Promise<CellOutcome> {
  const future = kernel.requestExecute({
    code: cell.source,
    silent: false,
    store_history: true,
    allow_stdin: false,
    stop_on_error: true
  });
  const seconds = Math.round(options.cellTimeoutMs / 1000);
  try {
    const reply = await within(
      future.done.then(done => done as KernelReply),
      options.cellTimeoutMs,
      options.signal,
      () => null,
      options.trans
    );
    if (reply === null) {
      await kernel.interrupt().catch(() => undefined);
      return { status: 'timeout', seconds };
    }
    const content = reply.content;
    return content.status === 'error'
      ? {
          status: 'error',
          ename: content.ename,
          evalue: content.evalue,
          expected: cell.failedInRun
        }
      : { status: 'ok' };
  } finally {
    future.dispose();
  }
}

type KernelReply = {
  content:
    { status: 'ok' } | { status: 'error'; ename: string; evalue: string };
};

/**
 * Runs the check and returns its record. Rejects with a `ReproduceError` when it cannot give one (the
 * kernel cannot start, it was stopped, no cell to run); a cell that errors or times out is a result.
 */
export async function checkReproducibility(
  options: IReproduceOptions
): Promise<IReproducibilityRecord> {
  const { trans, cells, names, redacted, signal } = options;
  const now = options.now ?? (() => new Date());
  const started = now();
  if (!cells.length) {
    throw new ReproduceError(
      'nothing',
      trans.__('The run has no code cell that ran: there is nothing to check.')
    );
  }
  options.onProgress?.({ phase: 'starting' });
  const session = await startFresh(options);
  const kernel = session.kernel!;
  try {
    const steps: ICellStep[] = [];
    let fresh: Fingerprints = {};
    for (const [i, cell] of cells.entries()) {
      options.onProgress?.({
        phase: 'running',
        cell: i + 1,
        cells: cells.length
      });
      const outcome = await runCell(kernel, cell, options);
      fresh = await within(
        fingerprintValues(kernel, names, redacted, trans).catch(
          () => ({}) as Fingerprints
        ),
        INSPECT_TIMEOUT_MS,
        signal,
        () => ({}),
        trans
      );
      steps.push({ cell, outcome, values: fresh });
      if (
        outcome.status === 'timeout' ||
        (outcome.status === 'error' && !outcome.expected)
      ) {
        break;
      }
    }
    options.onProgress?.({ phase: 'comparing' });
    const environment = await within(
      evaluateSilently(
        kernel,
        environmentExpression(options.dataFiles),
        INSPECT_TIMEOUT_MS,
        trans
      ).catch(() => null),
      INSPECT_TIMEOUT_MS,
      signal,
      () => null,
      trans
    );
    const comparison = compareRuns({
      names,
      reference: options.reference.values,
      steps,
      fresh
    });
    const env = asObject(toJSON(environment ?? {}));
    return {
      checked_at: started.toISOString(),
      duration_ms: now().getTime() - started.getTime(),
      kernel: { ...options.kernel },
      python: typeof env.python === 'string' ? env.python : null,
      packages: Object.fromEntries(
        Object.entries(asObject(env.packages)).filter(
          (entry): entry is [string, string] => typeof entry[1] === 'string'
        )
      ),
      data_files: Array.isArray(env.data_files)
        ? (env.data_files as unknown as IDataFileHash[])
        : options.dataFiles.map(path => ({
            path,
            sha256: null,
            error: 'not hashed'
          })),
      reference: options.reference.at,
      cells_run: steps.length,
      cells_total: cells.length,
      reproduced:
        comparison.first_difference === null &&
        comparison.compared > 0 &&
        comparison.matched === comparison.compared,
      compared: comparison.compared,
      matched: comparison.matched,
      values: recordedValues(comparison.values),
      first_difference: comparison.first_difference
    };
  } finally {
    // Its kernel goes with it, whatever happened (a stop included).
    await session.shutdown().catch(() => undefined);
  }
}

/** The kernel spec's display name, when the spec manager knows it. */
export function displayNameOf(
  specs: KernelSpec.IManager,
  name: string
): string | null {
  return specs.specs?.kernelspecs[name]?.display_name ?? null;
}
