/**
 * The only way the engine touches a notebook. The JupyterLab implementation lives in `src/notebook/`;
 * tests use an in-memory fake. Cells are always addressed by their notebook cell id, never by index.
 */
import type {
  INotebookSummary,
  OutputCheck,
  OutputContract
} from '../../protocol';
import type { INotebookMessage } from './messages';

/** Where a cell came from: written into the cell's metadata under `notebook_bcc`. */
export interface ICellProvenance {
  stage_id: string | null;
  step_id: string | null;
  behavior_id: string | null;
  /** Index of the action within its behavior, from 0. */
  action_index: number;
  /** The action type that made the cell (`add`, `new_chapter`, `is_thinking`, ...). */
  action: string;
  store_id?: string;
}

/** What a cell is for, so the driver can mark it (e.g. a thinking cell) and render it. */
export type CellRole =
  'content' | 'code' | 'chapter' | 'section' | 'step' | 'title' | 'thinking';

export interface IAddCellRequest {
  kind: 'markdown' | 'code';
  source: string;
  role: CellRole;
  provenance: ICellProvenance;
  /** Extra metadata merged under `notebook_bcc` (e.g. `{ thinking: true, finished_thinking: false }`). */
  metadata?: Record<string, unknown>;
  /** Inserted right below this cell while it exists; at the end otherwise. */
  after?: string;
}

/**
 * Whether the run may rewrite a cell in place (`rewrite_cell`): `ok` for a code cell whose source is
 * still what the run last wrote into it; `edited` when it is not (the user edited it: never rewritten).
 */
export type RewriteStatus = 'ok' | 'edited' | 'not_code' | 'missing';

export interface IRewriteRequest {
  cellId: string;
  source: string;
  /** The run's clock: when the code it replaces became an attempt. */
  at: Date;
  /**
   * Why the code it replaces failed when it raised nothing: the reasons of the step's checks in the
   * kernel that failed after it ran (`attemptFailure`); null when none did.
   */
  checkFailure?: string | null;
}

export type RewriteResult =
  | {
      status: 'rewritten';
      /** The source it replaced. */
      previous: string;
      /** The attempts the cell now keeps. */
      attempts: number;
    }
  | { status: Exclude<RewriteStatus, 'ok'> };

export interface IExecRequest {
  cellId: string;
  /** 0 = no limit. When exceeded the driver interrupts the kernel and reports `timeout`. */
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface IExecResult {
  /** `missing`: no cell with that id (e.g. the user deleted it). `kernel`: no usable kernel. */
  status: 'ok' | 'error' | 'timeout' | 'aborted' | 'missing' | 'kernel';
  /** All text outputs joined in order (stream, execute_result, display_data text, error + traceback), ANSI removed. Raw: the engine summarizes and truncates. */
  output: string;
  /** For `error`: the exception name and value. */
  ename?: string;
  evalue?: string;
  /** A human sentence for status other than ok/error, e.g. "Cell abc was deleted". */
  message?: string;
  /** `message` as a message id and parameters, for the UI (`message` stays English: it reaches the planner). */
  text?: INotebookMessage;
}

export type { INotebookCell, INotebookSummary } from '../../protocol';

/** How much of the notebook `notebookSummary()` describes (docs/protocol.md#limits). */
export const NOTEBOOK_SUMMARY_LIMITS = {
  /** The last cells listed in `cells`. */
  cells: 5,
  /** Characters of each listed cell's source. */
  contentChars: 1000,
  /** Characters of an output text: `last_output`, and the outputs of each listed cell. */
  outputChars: 500
} as const;

/** `text` cut to `max` characters, with `…` when cut: the notebook summary's texts. */
export function clipText(text: string, max: number): string {
  return text.length > max ? text.slice(0, max) + '…' : text;
}

/** The kernel's user variables, as `collectVariables` reports them. */
export interface IKernelVariables {
  /** name -> short summary (scalars, small containers, `DataFrame(240×4)`): what the planner may receive. */
  values: Record<string, unknown>;
  /** name -> type and shape only (`str(len=12)`, `dict(len=3)`, `DataFrame(240×4)`): what is saved. */
  types: Record<string, string>;
}

/** name -> strategy (`shape_only`, `describe_only`, `head_only`, `last_N_only` with N a number). */
export type SummarizeRequest = Record<string, string>;

/** A cell as a rewind sees it (docs/architecture.md#rewind). */
export interface ICellRecord {
  id: string;
  kind: 'markdown' | 'code' | 'raw';
  source: string;
  /** The run's provenance under `notebook_bcc`, or null for a cell the run did not make. */
  provenance: Pick<
    ICellProvenance,
    'stage_id' | 'step_id' | 'behavior_id'
  > | null;
  /** `notebook_bcc.source_hash`: `sourceHash` of the source the run last wrote, or null. */
  sourceHash: string | null;
}

// Looked up once: read from the global at each character, it made the hash 4 times slower in Node and
// over 100 times in jest's vm context (a 512 KiB cell took 0.35 s there).
const imul = Math.imul;

/** A short, stable hash of a cell's source: the driver stamps what it writes for the run, so a rewind
 * sees later edits (`ICellRecord.sourceHash`). */
export function sourceHash(source: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < source.length; i++) {
    const c = source.charCodeAt(i);
    h1 = imul(h1 ^ c, 2654435761);
    h2 = imul(h2 ^ c, 1597334677);
  }
  h1 = imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= imul(h1 ^ (h1 >>> 13), 3266489909);
  return (
    (h2 >>> 0).toString(16).padStart(8, '0') +
    (h1 >>> 0).toString(16).padStart(8, '0')
  );
}

/** What the engine aborts an `IExecRequest.signal` with when the run stops (its `RunStopped`). */
export interface IStopReason {
  /** False for a stop that leaves the kernel alone: the running cell finishes, nothing more runs. */
  readonly interruptKernel: boolean;
}

/** Whether an aborted `IExecRequest.signal` should interrupt the cell it runs (`IStopReason`). */
export function abortInterruptsKernel(signal: AbortSignal): boolean {
  const reason: unknown = signal.reason;
  return !(
    typeof reason === 'object' &&
    reason !== null &&
    'interruptKernel' in reason &&
    reason.interruptKernel === false
  );
}

/**
 * What `restartKernel` rejects with when it did not restart the kernel (none, dead, shutting down,
 * waiting for input): the kernel and its variables are as they were.
 */
export class KernelNotRestarted extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KernelNotRestarted';
  }
}

/** One edit of a rewind: cells removed by id, earlier sources put back. */
export interface IRewindEdit {
  remove: string[];
  restore: { cellId: string; source: string }[];
  /** The notebook title to put back (`setTitle`'s metadata), null for none; absent: left as it is. */
  title?: string | null;
}

export interface INotebookDriver {
  /** Append a cell at the end of the notebook; returns its cell id. Never moves focus. */
  addCell(request: IAddCellRequest): Promise<string>;
  /** Replace a cell's source and merge metadata under `notebook_bcc` (used by finish_thinking). Resolves false if the cell is gone. */
  updateCell(
    cellId: string,
    source: string | null,
    metadata?: Record<string, unknown>
  ): Promise<boolean>;
  /** Whether `rewriteCell` would rewrite the cell in place, and why not. */
  rewriteStatus(cellId: string): RewriteStatus;
  /**
   * `rewrite_cell`, when `rewriteStatus` is `ok`: the cell's code becomes its newest attempt (with its
   * error, `engine/ports/attempts.ts`), the new source is written (and stamped), the outputs cleared,
   * as one step of the notebook's undo history. Otherwise nothing is written and the status says why.
   */
  rewriteCell(request: IRewriteRequest): Promise<RewriteResult>;
  /**
   * Set the notebook title (metadata and a leading `# title` cell). Only `titleCellId` (the run's own
   * title cell) is rewritten; when it is null or gone a new title cell is inserted. Returns its id.
   */
  setTitle(
    title: string,
    provenance: ICellProvenance,
    titleCellId: string | null
  ): Promise<string>;
  /**
   * The user marked the cell for the planner (cell metadata `notebook_bcc.planner_may_run: true`);
   * null when there is no such cell.
   */
  plannerMayRun(cellId: string): boolean | null;
  /** The source of a cell, or null when there is no such cell (shown before an `exec` by id). */
  cellSource(cellId: string): string | null;
  /** Clear outputs and run a code cell in the notebook's own kernel; resolves when it finished. */
  execCell(request: IExecRequest): Promise<IExecResult>;
  /**
   * Silently collect user variables as short summaries and types (no history, no output, no execution
   * count). `redacted`: name patterns (`redactVariablePatterns`) whose values, and keys' values inside
   * a summarised container, come back as `<redacted>`.
   */
  collectVariables(redacted?: readonly string[]): Promise<IKernelVariables>;
  /** Compute the given summarize strategies in the kernel, only for the names asked (`redacted`: as above). */
  summarizeVariables(
    request: SummarizeRequest,
    redacted?: readonly string[]
  ): Promise<Record<string, unknown>>;
  /**
   * Checks each contract in the kernel, silently and within a time budget (docs/protocol.md#output-contracts):
   * the checks are fixed code of the extension, the contracts only data. `redacted`: as above; a hidden
   * name's value is never shown (`value: null`). Resolves with a result for each contract's name.
   */
  checkOutputs(
    contracts: readonly OutputContract[],
    redacted?: readonly string[]
  ): Promise<Record<string, OutputCheck>>;
  notebookSummary(): INotebookSummary;
  /** The notebook's title (what `setTitle` sets in its metadata), or null: without scanning the cells. */
  notebookTitle(): string | null;
  /**
   * Persist the run (progress, FSM, variables snapshot, effects history) in the notebook metadata and
   * save. A `checkpoint` (after a behavior or a step) may be saved with the next save instead of now.
   */
  saveRunState(
    state: unknown,
    options?: { checkpoint?: boolean }
  ): Promise<void>;
  /**
   * While held, nothing is written to the notebook by saving it (`saveRunState` keeps the state in the
   * notebook's metadata only, and no save is scheduled): another window runs it now.
   */
  holdSaves(held: boolean): void;
  /** The run state saved by `saveRunState`, or null. */
  loadRunState(): Promise<unknown | null>;
  /** Interrupt the kernel (used by Stop when asked). */
  interruptKernel(): Promise<void>;
  /**
   * Every cell, in notebook order. Whatever source the driver writes for the run (`addCell`,
   * `updateCell`, `setTitle`, `rewindCells`) is stamped with `sourceHash(source)` under
   * `notebook_bcc.source_hash`, so a rewind can tell the user's edits.
   */
  listCells(): ICellRecord[];
  /**
   * Removes the cells by id and puts the sources back, as one edit (one step of the notebook's undo
   * history where it keeps one). Resolves with the ids actually removed and restored.
   */
  rewindCells(
    edit: IRewindEdit
  ): Promise<{ removed: string[]; restored: string[] }>;
  /**
   * Restarts the kernel (its variables are gone); resolves once it is ready. Rejects with
   * `KernelNotRestarted` when it could not even restart it, with another error when the restarted
   * kernel does not answer.
   */
  restartKernel(): Promise<void>;
}
