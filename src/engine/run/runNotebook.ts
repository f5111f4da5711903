/**
 * The run's notebook: the notebook port, and what the run's writes change of the cell map
 * (`store_id`, `lastAddedCellId`, the thinking and title cells) and the rewind journal. Every cell the
 * run writes goes through here, so the cell map and the journal see every write, as transactions
 * (docs/architecture.md#rewind).
 */
import { closedThinkingSource, liveThinkingTitle } from '../actions/thinking';
import type {
  ICellProvenance,
  INotebookDriver,
  RewriteResult
} from '../ports/driver';
import type { INewCell, IRunControl } from '../actions/registry';
import type { CellMapReader } from '../state/cells';
import type { RewindReader } from '../state/rewind';
import {
  type IRunTransaction,
  op,
  type RunOp,
  transaction
} from '../state/transaction';
import type { ICellAdded } from '../types';

/**
 * Before the run overwrites a cell it made before the latest checkpoint, the journal keeps the source
 * it had (`source()`, read only when it is needed); nothing for a cell made since.
 */
export function sourceKept(
  state: { cells: CellMapReader; rewind: RewindReader },
  cellId: string,
  source: () => string | null
): RunOp[] {
  const latest = state.rewind.latest;
  if (!latest || state.cells.createdSince(latest.cells).includes(cellId)) {
    return [];
  }
  const earlier = source();
  return earlier === null ? [] : [op.journal('rewriting', cellId, earlier)];
}

export class RunNotebook {
  constructor(options: RunNotebook.IOptions) {
    this.driver = options.driver;
    this.cells = options.cells;
    this._journal = options.journal;
    this._now = options.now;
    this._checkFailure = options.checkFailure;
    this._cellAdded = options.cellAdded;
    this._dispatch = options.dispatch;
  }

  /** The notebook port itself: reads, execution, the kernel, saves. */
  readonly driver: INotebookDriver;
  /** Which cell a name means; the run's own cells. */
  readonly cells: CellMapReader;

  /** What an action's handler writes to the notebook (`IActionContext.run`), as `provenance`. */
  writerFor(
    provenance: ICellProvenance
  ): Pick<
    IRunControl,
    | 'addCell'
    | 'updateCell'
    | 'rewriteCell'
    | 'setTitle'
    | 'openThinking'
    | 'closeThinking'
  > {
    return {
      addCell: cell => this.addCell(cell, provenance),
      updateCell: (cellId, source, metadata) =>
        this.updateCell(cellId, source, metadata),
      rewriteCell: (cellId, source) => this.rewriteCell(cellId, source),
      setTitle: title => this.setTitle(title, provenance),
      openThinking: thinking => this.openThinking(thinking, provenance),
      closeThinking: () => this.closeThinking()
    };
  }

  /** Adds a cell with `provenance` and records it for `store_id` and `lastAddedCellId`. */
  async addCell(cell: INewCell, provenance: ICellProvenance): Promise<string> {
    const cellProvenance = cell.storeId
      ? { ...provenance, store_id: cell.storeId }
      : provenance;
    const cellId = await this.driver.addCell({
      kind: cell.kind,
      source: cell.source,
      role: cell.role,
      provenance: cellProvenance,
      metadata: cell.metadata,
      ...(cell.after ? { after: cell.after } : {})
    });
    this._change('notebook.cellAdded', [
      op.cells('cellAdded', cellId, cell.kind, cell.storeId, cell.role)
    ]);
    this._cellAdded({
      cellId,
      kind: cell.kind,
      role: cell.role,
      provenance: cellProvenance
    });
    return cellId;
  }

  /** Rewrites a cell; its earlier source goes into the rewind journal first. */
  updateCell(
    cellId: string,
    source: string | null,
    metadata?: Record<string, unknown>
  ): Promise<boolean> {
    if (source !== null) {
      this._change('notebook.rewriting', this._sourceKept(cellId));
    }
    return this.driver.updateCell(cellId, source, metadata);
  }

  /** `rewrite_cell`: the source it replaced goes into the rewind journal, as for `updateCell`. */
  async rewriteCell(cellId: string, source: string): Promise<RewriteResult> {
    const result = await this.driver.rewriteCell({
      cellId,
      source,
      at: this._now(),
      checkFailure: this._checkFailure()
    });
    if (result.status === 'rewritten') {
      const { previous } = result;
      this._change(
        'notebook.rewritten',
        sourceKept(
          { cells: this.cells, rewind: this._journal },
          cellId,
          () => previous
        )
      );
    }
    return result;
  }

  /** `update_title`: the run's title cell, made or rewritten, and the notebook's title metadata. */
  async setTitle(title: string, provenance: ICellProvenance): Promise<string> {
    const titleCellId = this.cells.titleCellId;
    this._change('notebook.retitling', [
      ...(titleCellId !== null ? this._sourceKept(titleCellId) : []),
      op.journal('retitling', this.driver.notebookTitle())
    ]);
    const cellId = await this.driver.setTitle(title, provenance, titleCellId);
    this._change('notebook.titled', [op.cells('setTitleCell', cellId)]);
    return cellId;
  }

  /** A new live thinking cell (`is_thinking`); one at a time, so an earlier one is closed first. */
  async openThinking(
    thinking: { title: string; body: string; agentName: string | null },
    provenance: ICellProvenance
  ): Promise<string> {
    await this.closeThinking();
    const cellId = await this.addCell(
      {
        kind: 'markdown',
        source: thinking.body
          ? `${thinking.title}\n\n${thinking.body}`
          : thinking.title,
        role: 'thinking',
        metadata: {
          thinking: true,
          finished_thinking: false,
          ...(thinking.agentName ? { agent_name: thinking.agentName } : {})
        }
      },
      provenance
    );
    this._change('notebook.thinkingOpened', [
      op.cells('setOpenThinking', {
        ...thinking,
        cellId,
        startedAt: this._now().toISOString()
      })
    ]);
    return cellId;
  }

  /** Closes the open thinking cell, if any (`finish_thinking`, or the end of a behavior or run). */
  async closeThinking(): Promise<void> {
    const thinking = this.cells.openThinking;
    if (!thinking) {
      return;
    }
    this._change('notebook.thinkingClosed', [
      op.cells('setOpenThinking', null)
    ]);
    const started = thinking.startedAt ? Date.parse(thinking.startedAt) : NaN;
    const seconds = Number.isNaN(started)
      ? null
      : Math.max(0, Math.round((this._now().getTime() - started) / 1000));
    await this.updateCell(
      thinking.cellId,
      closedThinkingSource(thinking, seconds),
      {
        finished_thinking: true,
        ...(seconds === null ? {} : { thinking_seconds: seconds })
      }
    );
  }

  /**
   * The open thinking cell while the run is paused says paused (nothing thinks while a run is paused);
   * `paused: false` puts its live title back. The closed form is unchanged.
   */
  async markThinkingPaused(paused: boolean): Promise<void> {
    const thinking = this.cells.openThinking;
    if (!thinking) {
      return;
    }
    const live = thinking.title ?? liveThinkingTitle(thinking.agentName);
    const title = paused
      ? thinking.agentName
        ? `⏸ ${thinking.agentName} is paused: it goes on when you resume.`
        : '⏸ Paused: thinking goes on when you resume.'
      : live;
    await this.updateCell(
      thinking.cellId,
      thinking.body ? `${title}\n\n${thinking.body}` : title
    );
  }

  private _sourceKept(cellId: string): RunOp[] {
    return sourceKept(
      { cells: this.cells, rewind: this._journal },
      cellId,
      () => this.driver.cellSource(cellId)
    );
  }

  private _change(origin: string, ops: RunOp[]): void {
    if (ops.length > 0) {
      void this._dispatch(transaction(origin, ops));
    }
  }

  private readonly _journal: RewindReader;
  private readonly _dispatch: (transaction: IRunTransaction) => Promise<void>;
  private readonly _now: () => Date;
  private readonly _checkFailure: () => string | null;
  private readonly _cellAdded: (event: ICellAdded) => void;
}

export namespace RunNotebook {
  export interface IOptions {
    driver: INotebookDriver;
    cells: CellMapReader;
    /** The run's rewind log, where rewritten sources and titles are kept. */
    journal: RewindReader;
    /** How the cell map and the journal change: the runner applies the transaction. */
    dispatch: (transaction: IRunTransaction) => Promise<void>;
    now: () => Date;
    /** Told of every cell the run adds (the runner's `cellAdded` signal). */
    cellAdded: (event: ICellAdded) => void;
    /** Why the step's last code failed its checks in the kernel, if it did (`latestFailedChecks`). */
    checkFailure: () => string | null;
  }
}
