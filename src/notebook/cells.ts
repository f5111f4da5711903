/**
 * Cell editing: cells are changed through the notebook's shared model (so they sync under real-time
 * collaboration) and always found again by id; the user's active cell stays active.
 */
import { Cell, MarkdownCell } from '@jupyterlab/cells';
import type { ICodeCellModel } from '@jupyterlab/cells';
import { NotebookActions } from '@jupyterlab/notebook';
import type { INotebookModel, NotebookPanel } from '@jupyterlab/notebook';
import type { TranslationBundle } from '@jupyterlab/translation';
import type { PartialJSONObject } from '@lumino/coreutils';
import type {
  CellRole,
  IAddCellRequest,
  ICellProvenance,
  ICellRecord,
  INotebookSummary,
  IRewindEdit
} from '../engine/ports/driver';
import {
  clipText,
  NOTEBOOK_SUMMARY_LIMITS,
  sourceHash
} from '../engine/ports/driver';
import type { CellFollower } from './following';
import { asObject, toJSON } from './json';
import {
  forgetRestoredAttempt,
  notebookAttempts,
  rewriteCode
} from './attempts';
import { inertMarkdown } from './inertMarkdown';
import {
  ATTEMPTS_KEY,
  CELL_METADATA_KEY,
  EXEC_ERROR_KEY,
  SOURCE_HASH_KEY
} from './metadata';
import { CELL_NOTE_KEY, stepNotesIn } from './notes';
import { cellNoteIn, type ICellNote, userNotesToSend } from './noteEdits';
import { outputsToText } from './outputText';
import { asOneUndoStep } from './undo';

export type SharedCell = INotebookModel['sharedModel']['cells'][number];

export class NotebookCells {
  constructor(options: NotebookCells.IOptions) {
    this._panel = options.panel;
    this._trans = options.trans;
    this._follower = options.follower;
    this._changed = options.changed;
  }

  /** The notebook's model; throws once the notebook is closed. */
  model(): INotebookModel {
    const model = this._panel.isDisposed ? null : this._panel.model;
    if (!model) {
      throw new Error(this._trans.__('The notebook was closed.'));
    }
    return model;
  }

  /**
   * The cell's index in the notebook, or -1. Each action looks cells up by id, so the index of every
   * cell seen is remembered and checked on use; the cells are scanned again only when it is stale (the
   * notebook changed before it) or the cell is unknown: a lookup does not grow with the notebook.
   */
  indexOf(cellId: string): number {
    const model = this._panel.isDisposed ? null : this._panel.model;
    if (!model) {
      return -1;
    }
    const cells = model.sharedModel.cells;
    const hint = this._indices.get(cellId);
    if (hint !== undefined && cells[hint]?.getId() === cellId) {
      return hint;
    }
    this._indices.clear();
    cells.forEach((cell, index) => this._indices.set(cell.getId(), index));
    return this._indices.get(cellId) ?? -1;
  }

  sharedCell(cellId: string): SharedCell | null {
    const index = this.indexOf(cellId);
    return index < 0 ? null : this.model().sharedModel.cells[index];
  }

  widget(cellId: string): Cell | null {
    const index = this.indexOf(cellId);
    if (index < 0) {
      return null;
    }
    // The notebook makes a widget for each cell of its model as it changes, in the same order.
    const widgets = this._panel.content.widgets;
    const widget = widgets[index];
    return widget?.model.id === cellId
      ? widget
      : (widgets.find(cell => cell.model.id === cellId) ?? null);
  }

  async add(request: IAddCellRequest): Promise<string> {
    const model = this.model();
    // What a planner writes must not load or act when rendered (docs/security.md#what-a-planner-writes).
    const source =
      request.kind === 'markdown'
        ? inertMarkdown(request.source)
        : request.source;
    const metadata = cellMetadata(request.provenance, request.role, {
      ...request.metadata,
      ...(request.role === 'thinking' ? { thinking: true } : {}),
      [SOURCE_HASH_KEY]: sourceHash(source)
    });
    const restore = this._keepActiveCell();
    const below = request.after ? this.indexOf(request.after) : -1;
    const index = below < 0 ? model.sharedModel.cells.length : below + 1;
    const cell = this._insert(index, {
      cell_type: request.kind,
      source,
      metadata: { [CELL_METADATA_KEY]: metadata }
    });
    if (below < 0) {
      this._indices.set(cell.getId(), model.sharedModel.cells.length - 1);
    } else {
      // The cells below it moved down: their remembered places are stale.
      this._indices.clear();
    }
    restore();
    this._render(cell.getId());
    this._follower.follow(cell.getId());
    this._changed();
    return cell.getId();
  }

  async update(
    cellId: string,
    source: string | null,
    metadata?: Record<string, unknown>
  ): Promise<boolean> {
    const cell = this.sharedCell(cellId);
    if (!cell) {
      return false;
    }
    const written =
      source !== null && cell.cell_type === 'markdown'
        ? inertMarkdown(source)
        : source;
    this.model().sharedModel.transact(() => {
      if (written !== null) {
        cell.setSource(written);
      }
      if (metadata || written !== null) {
        cell.setMetadata(CELL_METADATA_KEY, {
          ...asObject(cell.getMetadata(CELL_METADATA_KEY)),
          ...asObject(toJSON(metadata ?? {})),
          ...(written !== null
            ? { [SOURCE_HASH_KEY]: sourceHash(written) }
            : {})
        });
      }
    });
    this._render(cellId);
    this._changed();
    return true;
  }

  /** `rewrite_cell`: the planner's fix (`attempts.ts`); null when the cell may not be rewritten. */
  rewrite(
    cellId: string,
    source: string,
    at: Date,
    checkFailure: string | null = null
  ): { previous: string; attempts: number } | null {
    const cell = this.sharedCell(cellId);
    const done = cell
      ? rewriteCode(this.model().sharedModel, cell, source, at, checkFailure)
      : null;
    if (done) {
      this._follower.follow(cellId);
      this._changed();
    }
    return done;
  }

  /** Writes, or clears, the mark of a cell whose last `exec` failed (`notebook_bcc.exec_error`). */
  markExecError(cellId: string, failed: boolean): void {
    const cell = this.sharedCell(cellId);
    if (!cell) {
      return;
    }
    const { [EXEC_ERROR_KEY]: marked, ...rest } = asObject(
      cell.getMetadata(CELL_METADATA_KEY)
    );
    if ((marked === true) === failed) {
      return;
    }
    cell.setMetadata(
      CELL_METADATA_KEY,
      toJSON(failed ? { ...rest, [EXEC_ERROR_KEY]: true } : rest)
    );
  }

  async setTitle(
    title: string,
    provenance: ICellProvenance,
    titleCellId: string | null
  ): Promise<string> {
    const shared = this.model().sharedModel;
    const source = inertMarkdown(`# ${title}`);
    shared.transact(() => setTitleMetadata(shared, title));
    const existing = titleCellId ? this.sharedCell(titleCellId) : null;
    if (existing) {
      shared.transact(() => {
        existing.setSource(source);
        stampSource(existing, source);
      });
      this._render(existing.getId());
      return existing.getId();
    }
    const restore = this._keepActiveCell();
    const cell = this._insert(0, {
      cell_type: 'markdown',
      source,
      metadata: {
        [CELL_METADATA_KEY]: cellMetadata(provenance, 'title', {
          [SOURCE_HASH_KEY]: sourceHash(source)
        })
      }
    });
    restore();
    this._render(cell.getId());
    this._changed();
    return cell.getId();
  }

  /** Every cell in notebook order, with the run's provenance and source stamp. */
  list(): ICellRecord[] {
    return this.model().sharedModel.cells.map(cell => {
      const meta = asObject(cell.getMetadata(CELL_METADATA_KEY));
      const text = (key: string) =>
        typeof meta[key] === 'string' ? (meta[key] as string) : null;
      const fromRun = 'behavior_id' in meta || 'step_id' in meta;
      return {
        id: cell.getId(),
        kind: cellKind(cell.cell_type),
        source: cell.getSource(),
        provenance: fromRun
          ? {
              stage_id: text('stage_id'),
              step_id: text('step_id'),
              behavior_id: text('behavior_id')
            }
          : null,
        sourceHash: text(SOURCE_HASH_KEY)
      };
    });
  }

  /**
   * Removes and restores in one transaction: one step of the notebook's undo history (the notebook's
   * undo brings the cells back; the run stays rewound).
   */
  async rewind(
    edit: IRewindEdit
  ): Promise<{ removed: string[]; restored: string[] }> {
    const shared = this.model().sharedModel;
    const remove = new Set(edit.remove);
    const removed: string[] = [];
    const restored: string[] = [];
    const restore = this._keepActiveCell();
    asOneUndoStep(shared, () => {
      for (let index = shared.cells.length - 1; index >= 0; index--) {
        const id = shared.cells[index].getId();
        if (remove.has(id)) {
          shared.deleteCell(index);
          removed.unshift(id);
        }
      }
      for (const { cellId, source } of edit.restore) {
        const cell = this.sharedCell(cellId);
        if (cell) {
          cell.setSource(source);
          stampSource(cell, source);
          forgetRestoredAttempt(cell, source);
          restored.push(cellId);
        }
      }
      if (edit.title !== undefined) {
        setTitleMetadata(shared, edit.title);
      }
    });
    restore();
    for (const cellId of restored) {
      this._render(cellId);
    }
    this._changed();
    return { removed, restored };
  }

  /** The notebook's title in its metadata, or null. */
  title(): string | null {
    const title = this.model().sharedModel.getMetadata('title');
    return typeof title === 'string' ? title : null;
  }

  summary(): INotebookSummary {
    const shared = this.model().sharedModel;
    const cells = shared.cells;
    const last = cells.length ? cells[cells.length - 1] : null;
    // A loop, not Math.max(...counts): a spread of 100,000 arguments overflows the stack.
    let executionCount: number | null = null;
    const cellNotes: ICellNote[] = [];
    for (const cell of cells) {
      const count =
        cell.cell_type === 'code'
          ? (cell as SharedCodeCell).execution_count
          : null;
      if (typeof count === 'number' && count > (executionCount ?? -1)) {
        executionCount = count;
      }
      const note = cellNoteIn(cell);
      if (note) {
        cellNotes.push(note);
      }
    }
    const notes = userNotesToSend(stepNotesIn(shared), cellNotes);
    const { cells: recent, contentChars } = NOTEBOOK_SUMMARY_LIMITS;
    const attempts = notebookAttempts(shared);
    return {
      title: this.title(),
      cell_count: cells.length,
      last_cell_type: last?.cell_type ?? null,
      last_output: last ? outputText(last) : null,
      execution_count: executionCount,
      cells: cells.slice(-recent).map(cell => {
        const output = outputText(cell);
        const metadata = { ...asObject(cell.getMetadata(CELL_METADATA_KEY)) };
        delete metadata[SOURCE_HASH_KEY];
        // The attempts reach the planner bounded, in `attempts` below, not whole with each cell.
        delete metadata[ATTEMPTS_KEY];
        // The note reaches the planner in `user_notes`.
        delete metadata[CELL_NOTE_KEY];
        return {
          id: cell.getId(),
          type: cell.cell_type === 'code' ? 'code' : 'markdown',
          content: clipText(cell.getSource(), contentChars),
          outputs: output === null ? [] : [output],
          metadata
        };
      }),
      ...(attempts.length > 0 ? { attempts } : {}),
      ...(notes.length ? { user_notes: notes } : {})
    };
  }

  /**
   * Inserts a cell of the run. The run's first cell in a new notebook takes the place of its untouched
   * starter cell (`isUntouchedStarter`), unless the user's cursor is in it: both in one transaction,
   * so one step of the notebook's undo brings the starter back. The run's cell is not put in edit mode
   * in the starter's stead.
   */
  private _insert(index: number, data: CellData): SharedCell {
    const shared = this.model().sharedModel;
    if (shared.cells.length !== 1 || !isUntouchedStarter(shared.cells[0])) {
      return shared.insertCell(index, data);
    }
    const notebook = this._panel.content;
    const starter = this.widget(shared.cells[0].getId());
    const focus = document.activeElement;
    if (starter?.editorWidget?.node.contains(focus)) {
      return shared.insertCell(index, data);
    }
    const focused = starter?.node.contains(focus) ?? false;
    if (notebook.mode === 'edit' && notebook.activeCell === starter) {
      leaveEditMode(notebook);
    }
    const inserted: SharedCell[] = [];
    shared.transact(() => {
      inserted.push(shared.insertCell(index, data));
      // `shared.cells` follows the change only once the transaction ends: the starter was at 0.
      shared.deleteCell(index === 0 ? 1 : 0);
    });
    if (focused && starter) {
      // The focus was on the starter, now gone: once the notebook has laid out its cells, the active
      // cell takes it, as in command mode, unless the user has put it somewhere meanwhile.
      requestAnimationFrame(() => {
        const now = document.activeElement;
        if (!now || now === document.body || starter.node.contains(now)) {
          void NotebookActions.focusActiveCell(notebook, {
            waitUntilReady: true,
            preventScroll: true
          });
        }
      });
    }
    return inserted[0];
  }

  /**
   * Remembers which cell is active; the returned function makes it active again if an insert moved
   * the notebook's active cell. It sets the index only when it changed, so focus stays put.
   */
  private _keepActiveCell(): () => void {
    const notebook = this._panel.content;
    const activeId = notebook.activeCell?.model.id ?? null;
    return () => {
      if (activeId === null || notebook.activeCell?.model.id === activeId) {
        return;
      }
      const index = this.indexOf(activeId);
      if (index >= 0) {
        notebook.activeCellIndex = index;
      }
    };
  }

  /** Shows a markdown cell rendered, unless the user is editing it right now. */
  private _render(cellId: string): void {
    const cell = this.widget(cellId);
    if (!(cell instanceof MarkdownCell)) {
      return;
    }
    const notebook = this._panel.content;
    if (notebook.mode === 'edit' && notebook.activeCell === cell) {
      return;
    }
    cell.rendered = true;
  }

  private _panel: NotebookPanel;
  private _trans: TranslationBundle;
  private _follower: CellFollower;
  private _changed: () => void;
  /** Where each cell was last seen: checked on use, rebuilt when stale. */
  private _indices = new Map<string, number>();
}

export namespace NotebookCells {
  export interface IOptions {
    panel: NotebookPanel;
    trans: TranslationBundle;
    /** Scrolls to new cells when following them. */
    follower: CellFollower;
    /** The run changed the notebook (it is saved shortly after). */
    changed: () => void;
  }
}

type SharedCodeCell = ICodeCellModel['sharedModel'];
type CellData = Parameters<INotebookModel['sharedModel']['insertCell']>[1];

/**
 * The empty cell JupyterLab puts in a new notebook, as it was made: no source, outputs, execution count
 * or attachments, and no metadata but its `trusted` flag.
 */
function isUntouchedStarter(cell: SharedCell): boolean {
  if (cell.getSource() !== '') {
    return false;
  }
  if (Object.keys(cell.getMetadata()).some(key => key !== 'trusted')) {
    return false;
  }
  if (cell.cell_type === 'code') {
    const code = cell as SharedCodeCell;
    return code.getOutputs().length === 0 && code.execution_count === null;
  }
  const attachments = (cell as { attachments?: unknown }).attachments;
  return (
    attachments === undefined ||
    attachments === null ||
    Object.keys(attachments).length === 0
  );
}

/** Command mode without the focus `Notebook.mode`'s setter moves into the notebook (`setMode` is protected). */
function leaveEditMode(notebook: NotebookPanel['content']): void {
  const setMode: unknown = (notebook as unknown as { setMode?: unknown })
    .setMode;
  if (typeof setMode === 'function') {
    setMode.call(notebook, 'command', { focus: false });
  }
}

/** A code cell's outputs as one text, cut for the notebook summary; null without outputs. */
function outputText(cell: SharedCell): string | null {
  if (cell.cell_type !== 'code') {
    return null;
  }
  const outputs = (cell as SharedCodeCell).getOutputs();
  if (!outputs.length) {
    return null;
  }
  return clipText(
    outputsToText(outputs).text,
    NOTEBOOK_SUMMARY_LIMITS.outputChars
  );
}

function cellKind(type: string): ICellRecord['kind'] {
  return type === 'code' || type === 'markdown' ? type : 'raw';
}

/** The title in the notebook's metadata (`title`, and `notebook_bcc.title`); null removes it. */
function setTitleMetadata(
  shared: INotebookModel['sharedModel'],
  title: string | null
): void {
  const own = { ...asObject(shared.getMetadata(CELL_METADATA_KEY)) };
  if (title === null) {
    shared.deleteMetadata('title');
    delete own.title;
  } else {
    shared.setMetadata('title', title);
    own.title = title;
  }
  shared.setMetadata(CELL_METADATA_KEY, own);
}

function stampSource(cell: SharedCell, source: string): void {
  cell.setMetadata(CELL_METADATA_KEY, {
    ...asObject(cell.getMetadata(CELL_METADATA_KEY)),
    [SOURCE_HASH_KEY]: sourceHash(source)
  });
}

function cellMetadata(
  provenance: ICellProvenance,
  role: CellRole,
  extra: Record<string, unknown>
): PartialJSONObject {
  return toJSON({ ...provenance, role, ...extra }) as PartialJSONObject;
}
