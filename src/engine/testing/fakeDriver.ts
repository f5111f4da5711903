/**
 * An in-memory notebook for tests of the engine and of the reference planner: cells in a list, a
 * "kernel" that understands just enough Python to create variables, print and raise.
 */
import type {
  CellRole,
  ICellRecord,
  IRewindEdit,
  IAddCellRequest,
  ICellProvenance,
  IExecRequest,
  IExecResult,
  IKernelVariables,
  INotebookDriver,
  INotebookSummary,
  IRewriteRequest,
  RewriteResult,
  RewriteStatus,
  SummarizeRequest
} from '../ports/driver';
import {
  afterSourceRestored,
  attemptFailure,
  type IAttemptFailure,
  newAttempt,
  observedAttempts,
  readAttempts,
  rewriteStatus,
  withAttempt
} from '../ports/attempts';
import {
  clipText,
  KernelNotRestarted,
  NOTEBOOK_SUMMARY_LIMITS,
  sourceHash
} from '../ports/driver';
import type { OutputCheck, OutputContract, UserNote } from '../../protocol';
import { describeVariables, redactionTest } from '../variables';
import { fakeCheck } from './fakeChecks';

export interface IFakeCell {
  id: string;
  kind: 'markdown' | 'code';
  source: string;
  role: CellRole;
  provenance: ICellProvenance;
  /** What the driver would keep under `notebook_bcc`. */
  metadata: Record<string, unknown>;
  /** Text of the last execution's outputs. */
  output: string;
  executionCount: number | null;
  /** Typed by the user (`addUserCell`): no provenance. */
  userCell?: boolean;
  /** How its last execution failed, or null (the attempt its code becomes when rewritten). */
  failure?: IAttemptFailure | null;
}

/** Replaces the fake kernel for one execution; `undefined` falls back to the fake kernel. */
export type FakeExecHandler = (
  cell: IFakeCell,
  driver: FakeNotebookDriver,
  request: IExecRequest
) => IExecResult | undefined | Promise<IExecResult | undefined>;

function clone<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)\s*=(?!=)\s*(\S.*)$/;
const PRINT = /^print\((.*)\)\s*$/;
const RAISE = /^raise\s+([A-Za-z_][A-Za-z0-9_.]*)(?:\s*\((.*)\))?\s*$/;
const DELETE = /^del\s+([A-Za-z_][A-Za-z0-9_]*)\s*$/;

function literal(expression: string): string {
  const text = expression.trim();
  const quoted = /^(['"])(.*)\1$/s.exec(text);
  return quoted ? quoted[2] : text;
}

export class FakeNotebookDriver implements INotebookDriver {
  cells: IFakeCell[] = [];
  title: string | null = null;
  /** The kernel namespace as `collectVariables` reports it: name -> short summary. */
  variables: Record<string, unknown> = {};
  savedState: unknown | null = null;
  /** The user's notes the notebook holds, as its summary reports them (`user_notes`). */
  userNotes: UserNote[] = [];
  saveCount = 0;
  /** Saves the run asked to be written at once (pause, stop, end, error), not checkpoints. */
  immediateSaveCount = 0;
  /** Cell ids in execution order. */
  executed: string[] = [];
  interruptCount = 0;
  /** Set to false to make every execution report `kernel` (dead kernel). */
  kernelAlive = true;
  /** Consulted before the fake kernel on every execution. */
  onExec: FakeExecHandler | null = null;
  /** Names asked of `summarizeVariables`, per call. */
  summarizeRequests: SummarizeRequest[] = [];
  /** How many times `collectVariables` asked the kernel. */
  collectCount = 0;
  /** The redaction patterns the last `collectVariables` was given (the real kernel applies them). */
  redactedPatterns: readonly string[] | null = null;
  /** Every `rewindCells` edit, in order. */
  rewindEdits: IRewindEdit[] = [];
  restartCount = 0;
  /** When set, `restartKernel` restarts, then fails with this message (a kernel that does not answer after it). */
  restartFailure: string | null = null;
  /** When set, `restartKernel` refuses with this message and restarts nothing (a dead kernel, say). */
  restartRefusal: string | null = null;
  /** Awaited by `restartKernel` before it restarts: a restart that takes its time. */
  onRestart: (() => Promise<void>) | null = null;
  /** The contracts of each `checkOutputs` call, in order. */
  checkRequests: OutputContract[][] = [];
  /** When set, `checkOutputs` fails with this message (a kernel that does not answer). */
  checkFailure: string | null = null;

  async addCell(request: IAddCellRequest): Promise<string> {
    const id = `cell-${++this._nextId}`;
    const below = request.after
      ? this.cells.findIndex(c => c.id === request.after)
      : -1;
    this.cells.splice(below < 0 ? this.cells.length : below + 1, 0, {
      id,
      kind: request.kind,
      source: request.source,
      role: request.role,
      provenance: { ...request.provenance },
      metadata: { ...(clone(request.metadata) ?? {}) },
      output: '',
      executionCount: null
    });
    this._stamp(id, request.source);
    return id;
  }

  async updateCell(
    cellId: string,
    source: string | null,
    metadata?: Record<string, unknown>
  ): Promise<boolean> {
    const cell = this.cell(cellId);
    if (!cell) {
      return false;
    }
    Object.assign(cell.metadata, clone(metadata) ?? {});
    if (source !== null) {
      cell.source = source;
      this._stamp(cellId, source);
    }
    return true;
  }

  rewriteStatus(cellId: string): RewriteStatus {
    const cell = this.cell(cellId);
    return rewriteStatus(
      cell
        ? {
            kind: cell.kind,
            source: cell.source,
            stamped: this._hashes.get(cellId) ?? null
          }
        : null
    );
  }

  async rewriteCell(request: IRewriteRequest): Promise<RewriteResult> {
    const status = this.rewriteStatus(request.cellId);
    const cell = this.cell(request.cellId);
    if (status !== 'ok' || !cell) {
      return { status: status === 'ok' ? 'missing' : status };
    }
    const previous = cell.source;
    const attempts = withAttempt(
      readAttempts(cell.metadata.attempts),
      newAttempt(
        previous,
        attemptFailure(cell.failure ?? null, request.checkFailure),
        request.at,
        'planner'
      )
    );
    cell.metadata.attempts = attempts;
    cell.source = request.source;
    cell.output = '';
    cell.failure = null;
    this._stamp(cell.id, request.source);
    return { status: 'rewritten', previous, attempts: attempts.length };
  }

  /** The user edits a cell of the run: its source no longer has the run's stamp. */
  editCell(cellId: string, source: string): void {
    const cell = this.cell(cellId);
    if (cell) {
      cell.source = source;
    }
  }

  async setTitle(
    title: string,
    provenance: ICellProvenance,
    titleCellId: string | null
  ): Promise<string> {
    this.title = title;
    const own = titleCellId ? this.cell(titleCellId) : undefined;
    if (own) {
      own.source = `# ${title}`;
      this._stamp(own.id, own.source);
      return own.id;
    }
    const id = `cell-${++this._nextId}`;
    this.cells.unshift({
      id,
      kind: 'markdown',
      source: `# ${title}`,
      role: 'title',
      provenance: { ...provenance },
      metadata: {},
      output: '',
      executionCount: null
    });
    this._stamp(id, `# ${title}`);
    return id;
  }

  plannerMayRun(cellId: string): boolean | null {
    const cell = this.cell(cellId);
    return cell ? cell.metadata.planner_may_run === true : null;
  }

  cellSource(cellId: string): string | null {
    return this.cell(cellId)?.source ?? null;
  }

  async execCell(request: IExecRequest): Promise<IExecResult> {
    const cell = this.cell(request.cellId);
    if (!cell || cell.kind !== 'code') {
      return {
        status: 'missing',
        output: '',
        message: `Cell ${request.cellId} does not exist or is not a code cell`
      };
    }
    if (!this.kernelAlive) {
      return { status: 'kernel', output: '', message: 'The kernel is dead' };
    }
    if (request.signal?.aborted) {
      return { status: 'aborted', output: '', message: 'Stopped' };
    }
    cell.output = '';
    this.executed.push(cell.id);
    const custom = this.onExec
      ? await this.onExec(cell, this, request)
      : undefined;
    const result = custom ?? this.runSource(cell.source);
    cell.output = result.output;
    cell.failure =
      result.status === 'error'
        ? {
            ename: result.ename,
            evalue: result.evalue,
            traceback: result.output
          }
        : null;
    cell.executionCount = this.executed.length;
    return result;
  }

  /** The fake kernel: `name = value`, `print(...)`, `del name`, `raise Name("message")`. */
  runSource(source: string): IExecResult {
    const printed: string[] = [];
    for (const raw of source.split('\n')) {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) {
        continue;
      }
      const raised = RAISE.exec(line);
      if (raised) {
        const ename = raised[1];
        const evalue = literal(raised[2] ?? '');
        printed.push(
          `Traceback (most recent call last):\n  Cell In[1], line 1\n${ename}: ${evalue}`
        );
        return {
          status: 'error',
          output: printed.join('\n'),
          ename,
          evalue
        };
      }
      const printCall = PRINT.exec(line);
      if (printCall) {
        printed.push(literal(printCall[1]));
        continue;
      }
      const deletion = DELETE.exec(line);
      if (deletion) {
        delete this.variables[deletion[1]];
        continue;
      }
      const assignment = ASSIGNMENT.exec(line);
      if (assignment) {
        this.variables[assignment[1]] = literal(assignment[2]);
      }
    }
    return { status: 'ok', output: printed.join('\n') };
  }

  async collectVariables(
    redacted: readonly string[] = []
  ): Promise<IKernelVariables> {
    this.collectCount++;
    this.redactedPatterns = [...redacted];
    const values = clone(this.variables);
    return { values, types: describeVariables(values) };
  }

  async summarizeVariables(
    request: SummarizeRequest
  ): Promise<Record<string, unknown>> {
    this.summarizeRequests.push({ ...request });
    const result: Record<string, unknown> = {};
    for (const [name, strategy] of Object.entries(request)) {
      if (name in this.variables) {
        result[name] = `${strategy}(${name})`;
      }
    }
    return result;
  }

  async checkOutputs(
    contracts: readonly OutputContract[],
    redacted: readonly string[] = []
  ): Promise<Record<string, OutputCheck>> {
    this.checkRequests.push(contracts.map(contract => ({ ...contract })));
    if (this.checkFailure !== null) {
      throw new Error(this.checkFailure);
    }
    const hidden = redactionTest({
      redactVariables: redacted.length > 0,
      redactVariablePatterns: [...redacted]
    });
    return Object.fromEntries(
      contracts.map(contract => [
        contract.name,
        fakeCheck(contract, this.variables, hidden)
      ])
    );
  }

  notebookSummary(): INotebookSummary {
    const last = this.cells[this.cells.length - 1];
    const lastRun = [...this.cells].reverse().find(c => c.output !== '');
    const counts = this.cells.flatMap(c => c.executionCount ?? []);
    const { cells, contentChars, outputChars } = NOTEBOOK_SUMMARY_LIMITS;
    return {
      title: this.title,
      cell_count: this.cells.length,
      last_cell_type: last?.kind ?? null,
      last_output: lastRun?.output ?? null,
      execution_count: counts.length > 0 ? Math.max(...counts) : null,
      cells: this.cells.slice(-cells).map(cell => ({
        id: cell.id,
        type: cell.kind,
        content: clipText(cell.source, contentChars),
        outputs: cell.output ? [clipText(cell.output, outputChars)] : [],
        metadata: cell.userCell ? {} : this._summaryMetadata(cell)
      })),
      ...this._attempts(),
      ...(this.userNotes.length ? { user_notes: clone(this.userNotes) } : {})
    };
  }

  /** The cells with attempts, as the real driver's summary has them (only when there are some). */
  private _attempts(): Pick<INotebookSummary, 'attempts'> {
    const attempts = this.cells.flatMap(cell => {
      const history = readAttempts(cell.metadata.attempts);
      return history.length > 0
        ? [
            observedAttempts({
              id: cell.id,
              storeId: cell.provenance.store_id ?? null,
              stepId: cell.provenance.step_id,
              source: cell.source,
              history
            })
          ]
        : [];
    });
    return attempts.length > 0 ? { attempts } : {};
  }

  private _summaryMetadata(cell: IFakeCell): Record<string, unknown> {
    const metadata: Record<string, unknown> = {
      ...cell.provenance,
      role: cell.role,
      ...cell.metadata
    };
    delete metadata.attempts;
    return metadata;
  }

  notebookTitle(): string | null {
    return this.title;
  }

  /** `holdSaves`: another window runs the notebook. */
  savesHeld = false;

  async saveRunState(
    state: unknown,
    options: { checkpoint?: boolean } = {}
  ): Promise<void> {
    this.savedState = clone(state);
    this.saveCount++;
    if (!options.checkpoint) {
      this.immediateSaveCount++;
    }
  }

  holdSaves(held: boolean): void {
    this.savesHeld = held;
  }

  async loadRunState(): Promise<unknown | null> {
    return clone(this.savedState);
  }

  async interruptKernel(): Promise<void> {
    this.interruptCount++;
  }

  listCells(): ICellRecord[] {
    return this.cells.map(cell => ({
      id: cell.id,
      kind: cell.kind,
      source: cell.source,
      provenance: cell.userCell
        ? null
        : {
            stage_id: cell.provenance.stage_id,
            step_id: cell.provenance.step_id,
            behavior_id: cell.provenance.behavior_id
          },
      sourceHash: this._hashes.get(cell.id) ?? null
    }));
  }

  async rewindCells(
    edit: IRewindEdit
  ): Promise<{ removed: string[]; restored: string[] }> {
    const remove = new Set(edit.remove);
    const removed = this.cells.filter(c => remove.has(c.id)).map(c => c.id);
    this.cells = this.cells.filter(c => !remove.has(c.id));
    const restored: string[] = [];
    for (const { cellId, source } of edit.restore) {
      const cell = this.cell(cellId);
      if (cell) {
        cell.source = source;
        this._stamp(cellId, source);
        if (cell.metadata.attempts !== undefined) {
          const history = readAttempts(cell.metadata.attempts);
          const kept = afterSourceRestored(history, source);
          cell.metadata.attempts = kept;
          // The fix is undone: the cell shows its attempt's error again, as the notebook does.
          if (kept.length < history.length) {
            const { error, traceback } = history[history.length - 1];
            cell.output = traceback ?? error ?? '';
            cell.failure = error
              ? { ename: null, evalue: error, traceback: traceback ?? '' }
              : null;
          }
        }
        restored.push(cellId);
      }
    }
    if (edit.title !== undefined) {
      this.title = edit.title;
    }
    this.rewindEdits.push({
      ...edit,
      remove: [...edit.remove],
      restore: edit.restore.map(r => ({ ...r }))
    });
    return { removed, restored };
  }

  async restartKernel(): Promise<void> {
    await this.onRestart?.();
    if (this.restartRefusal !== null) {
      throw new KernelNotRestarted(this.restartRefusal);
    }
    this.variables = {};
    this.restartCount++;
    if (this.restartFailure !== null) {
      throw new Error(this.restartFailure);
    }
  }

  /** A cell the user typed (no provenance, no hash), inserted at `index` (the end when absent). */
  addUserCell(
    source: string,
    kind: 'code' | 'markdown' = 'code',
    index?: number
  ): string {
    const id = `user-${++this._nextId}`;
    const cell: IFakeCell = {
      id,
      kind,
      source,
      role: kind === 'code' ? 'code' : 'content',
      provenance: {
        stage_id: null,
        step_id: null,
        behavior_id: null,
        action_index: 0,
        action: 'user'
      },
      metadata: {},
      output: '',
      executionCount: null,
      userCell: true
    };
    this.cells.splice(index ?? this.cells.length, 0, cell);
    return id;
  }

  cell(cellId: string): IFakeCell | undefined {
    return this.cells.find(c => c.id === cellId);
  }

  codeCells(): IFakeCell[] {
    return this.cells.filter(c => c.kind === 'code');
  }

  /** What the real driver keeps as `notebook_bcc.source_hash`; apart, so `metadata` is what actions set. */
  private _stamp(cellId: string, source: string): void {
    this._hashes.set(cellId, sourceHash(source));
  }

  private _hashes = new Map<string, string>();
  private _nextId = 0;
}
