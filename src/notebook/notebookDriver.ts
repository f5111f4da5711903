/**
 * The engine's notebook driver for one JupyterLab notebook panel: a thin facade over cell editing,
 * following, saving, cell execution and kernel access. Everything is pinned to that panel:
 * switching tabs does not matter.
 */
import {
  INotebookCellExecutor,
  NotebookPanel,
  runCell
} from '@jupyterlab/notebook';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import type {
  IAddCellRequest,
  ICellProvenance,
  ICellRecord,
  IExecRequest,
  IExecResult,
  IKernelVariables,
  INotebookDriver,
  INotebookSummary,
  IRewindEdit,
  IRewriteRequest,
  RewriteResult,
  RewriteStatus,
  SummarizeRequest
} from '../engine/ports/driver';
import type { OutputCheck, OutputContract } from '../protocol';
import { TRANSLATION_DOMAIN } from '../translation';
import { rewriteStatusOf } from './attempts';
import { NotebookCells } from './cells';
import type { ConnectionCheck } from './connectionCheck';
import { CellExecution } from './execution';
import { CellFollower } from './following';
import { asObject } from './json';
import { NotebookKernel } from './kernel';
import { CELL_METADATA_KEY, PLANNER_MAY_RUN_KEY } from './metadata';
import { NotebookSaver, readRunState, writeRunState } from './saving';

export class NotebookDriver implements INotebookDriver {
  constructor(options: NotebookDriver.IOptions) {
    const panel = options.panel;
    const translator = options.translator ?? nullTranslator;
    const trans = translator.load(TRANSLATION_DOMAIN);
    this._panel = panel;
    this._saver = new NotebookSaver(panel, options.saveDelayMs ?? 1000);
    const changed = () => this._saver.scheduleSave();
    this._follower = new CellFollower(
      panel,
      options.followNewCells ?? false,
      cellId => this._cells.indexOf(cellId)
    );
    this._cells = new NotebookCells({
      panel,
      trans,
      follower: this._follower,
      changed
    });
    this._kernel = new NotebookKernel(
      panel,
      trans,
      options.inspectTimeoutMs ?? 30000,
      options.kernelConnection
    );
    this._execution = new CellExecution({
      panel,
      executor: options.executor ?? { runCell },
      cells: this._cells,
      kernel: this._kernel,
      translator,
      interruptGraceMs: options.interruptGraceMs ?? 10000,
      changed
    });
  }

  /** The notebook this driver works on. */
  get panel(): NotebookPanel {
    return this._panel;
  }

  /** Whether a new cell is scrolled into view (without being activated). */
  get followNewCells(): boolean {
    return this._follower.enabled;
  }
  set followNewCells(value: boolean) {
    this._follower.enabled = value;
  }

  addCell(request: IAddCellRequest): Promise<string> {
    return this._cells.add(request);
  }

  updateCell(
    cellId: string,
    source: string | null,
    metadata?: Record<string, unknown>
  ): Promise<boolean> {
    return this._cells.update(cellId, source, metadata);
  }

  rewriteStatus(cellId: string): RewriteStatus {
    return rewriteStatusOf(this._cells.sharedCell(cellId));
  }

  async rewriteCell(request: IRewriteRequest): Promise<RewriteResult> {
    const status = this.rewriteStatus(request.cellId);
    const done =
      status === 'ok'
        ? this._cells.rewrite(
            request.cellId,
            request.source,
            request.at,
            request.checkFailure ?? null
          )
        : null;
    return done
      ? { status: 'rewritten', ...done }
      : { status: status === 'ok' ? 'missing' : status };
  }

  setTitle(
    title: string,
    provenance: ICellProvenance,
    titleCellId: string | null
  ): Promise<string> {
    return this._cells.setTitle(title, provenance, titleCellId);
  }

  plannerMayRun(cellId: string): boolean | null {
    const cell = this._cells.sharedCell(cellId);
    if (!cell) {
      return null;
    }
    return (
      asObject(cell.getMetadata(CELL_METADATA_KEY))[PLANNER_MAY_RUN_KEY] ===
      true
    );
  }

  cellSource(cellId: string): string | null {
    return this._cells.sharedCell(cellId)?.getSource() ?? null;
  }

  execCell(request: IExecRequest): Promise<IExecResult> {
    return this._execution.run(request);
  }

  collectVariables(redacted?: readonly string[]): Promise<IKernelVariables> {
    return this._kernel.collectVariables(redacted);
  }

  summarizeVariables(
    request: SummarizeRequest,
    redacted?: readonly string[]
  ): Promise<Record<string, unknown>> {
    return this._kernel.summarizeVariables(request, redacted);
  }

  checkOutputs(
    contracts: readonly OutputContract[],
    redacted?: readonly string[]
  ): Promise<Record<string, OutputCheck>> {
    return this._kernel.checkOutputs(contracts, redacted);
  }

  notebookSummary(): INotebookSummary {
    return this._cells.summary();
  }

  notebookTitle(): string | null {
    return this._cells.title();
  }

  /**
   * A checkpoint (after a behavior or a step) is saved at most once per save interval
   * (`NotebookSaver.saveCheckpoint`); everything else (pause, stop, errors, the end) at once.
   */
  async saveRunState(
    state: unknown,
    options: { checkpoint?: boolean } = {}
  ): Promise<void> {
    writeRunState(this._cells.model().sharedModel, state);
    if (options.checkpoint) {
      await this._saver.saveCheckpoint();
    } else {
      await this._saver.save();
    }
  }

  holdSaves(held: boolean): void {
    this._saver.held = held;
  }

  async loadRunState(): Promise<unknown | null> {
    return readRunState(this._cells.model().sharedModel);
  }

  interruptKernel(): Promise<void> {
    return this._kernel.interrupt();
  }

  listCells(): ICellRecord[] {
    return this._cells.list();
  }

  rewindCells(
    edit: IRewindEdit
  ): Promise<{ removed: string[]; restored: string[] }> {
    return this._cells.rewind(edit);
  }

  restartKernel(): Promise<void> {
    return this._kernel.restart();
  }

  private _panel: NotebookPanel;
  private _saver: NotebookSaver;
  private _follower: CellFollower;
  private _cells: NotebookCells;
  private _kernel: NotebookKernel;
  private _execution: CellExecution;
}

export namespace NotebookDriver {
  export interface IOptions {
    /** The notebook to drive; the driver never looks at any other (e.g. the current one). */
    panel: NotebookPanel;
    /**
     * The application's cell executor (the `INotebookCellExecutor` token, e.g. the server-side one
     * of jupyter-collaboration). Default: JupyterLab's `runCell`.
     */
    executor?: INotebookCellExecutor;
    /** Scroll each new cell into view (it is never activated). Default false. */
    followNewCells?: boolean;
    /** How long a cell may take to stop after an interrupt or a kernel restart, in ms. Default 10 s. */
    interruptGraceMs?: number;
    /** How long a silent variable inspection may wait for the kernel's reply, in ms. Default 30 s. */
    inspectTimeoutMs?: number;
    /**
     * How long a (re)connected kernel may take to answer before its connection is reopened, in ms, and
     * how many times it is. Default 10 s, 3 times.
     */
    kernelConnection?: Partial<ConnectionCheck.IOptions>;
    /**
     * How long after the run changes the notebook it is saved, in ms; negative turns this off (the
     * notebook is then saved only with the run state, after each behavior). Default 1 s.
     */
    saveDelayMs?: number;
    translator?: ITranslator;
  }
}
