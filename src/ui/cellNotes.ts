/**
 * The marker of a note for the planner on a cell: a small line above the cell's input with the note
 * and two buttons, Edit and Remove (the cell-note commands). It follows the cells' metadata, so a note
 * set by a command, an undo, a collaborator or a reload shows at once.
 */
import type { Cell, ICellModel } from '@jupyterlab/cells';
import type { NotebookPanel } from '@jupyterlab/notebook';
import type { TranslationBundle } from '@jupyterlab/translation';
import { editIcon } from '@jupyterlab/ui-components';
import type { CommandRegistry } from '@lumino/commands';
import type { IDisposable } from '@lumino/disposable';
import { PanelLayout, Widget } from '@lumino/widgets';
import { CELL_METADATA_KEY } from '../notebook/metadata';
import { cellNoteOf } from '../notebook/noteEdits';
import { CommandIDs } from '../tokens';
import { element } from './element';

const MARKER_CLASS = 'jp-bcc-cell-note';

/** The marker shown on one cell. */
class CellNoteMarker extends Widget {
  constructor(
    private readonly _args: { notebook: string; cellId: string },
    private readonly _commands: CommandRegistry,
    trans: TranslationBundle
  ) {
    super();
    this.addClass(MARKER_CLASS);
    this.node.setAttribute('role', 'note');
    this.node.setAttribute('aria-label', trans.__('Note for the planner'));
    // JupyterLab's own icon, in the theme's colours (an emoji needs a font the machine may lack).
    const icon = editIcon.element({
      tag: 'span',
      className: 'jp-bcc-cell-note-icon',
      elementPosition: 'center',
      height: '14px',
      width: '14px'
    });
    icon.setAttribute('aria-hidden', 'true');
    const label = element(
      'span',
      'jp-bcc-cell-note-label',
      trans.__('Note for the planner:')
    );
    this._text = element('span', 'jp-bcc-cell-note-text');
    const edit = this._button(trans.__('Edit'), CommandIDs.noteCell);
    const remove = this._button(trans.__('Remove'), CommandIDs.removeCellNote);
    edit.title = trans.__('Edit the note for the planner');
    remove.title = trans.__('Remove the note for the planner');
    this.node.append(icon, label, this._text, edit, remove);
  }

  set text(text: string) {
    this._text.textContent = text;
    this._text.title = text;
  }

  private _button(label: string, command: string): HTMLButtonElement {
    const button = element('button', 'jp-bcc-link-button', label);
    button.type = 'button';
    button.addEventListener('click', event => {
      event.stopPropagation();
      void this._commands.execute(command, this._args);
    });
    return button;
  }

  private _text: HTMLSpanElement;
}

/** The markers of one notebook's cell notes, for as long as the notebook is open. */
export class CellNoteMarkers implements IDisposable {
  constructor(
    private readonly _panel: NotebookPanel,
    private readonly _commands: CommandRegistry,
    private readonly _trans: TranslationBundle
  ) {
    void _panel.context.ready.then(() => {
      if (this._disposed) {
        return;
      }
      const cells = _panel.model?.cells;
      if (!cells) {
        return;
      }
      for (let i = 0; i < cells.length; i++) {
        this._watch(cells.get(i));
      }
      cells.changed.connect((_, change) => {
        for (const model of change.newValues) {
          this._watch(model);
        }
      }, this);
      this._schedule();
    });
    _panel.disposed.connect(() => this.dispose());
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    for (const marker of this._markers.values()) {
      marker.dispose();
    }
    this._markers.clear();
  }

  private _watch(model: ICellModel): void {
    if (this._watched.has(model)) {
      return;
    }
    this._watched.add(model);
    model.metadataChanged.connect((_, change) => {
      if (change.key === CELL_METADATA_KEY) {
        this._dirty.add(model);
        this._schedule();
      }
    }, this);
    this._dirty.add(model);
  }

  /** Once per frame: the notebook makes the widget of a new cell after the list changed. */
  private _schedule(): void {
    if (this._scheduled || this._disposed) {
      return;
    }
    this._scheduled = true;
    requestAnimationFrame(() => {
      this._scheduled = false;
      if (this._disposed || this._panel.isDisposed) {
        return;
      }
      const dirty = [...this._dirty];
      this._dirty.clear();
      const widgets = new Map<ICellModel, Cell>(
        this._panel.content.widgets.map(cell => [cell.model, cell])
      );
      for (const model of dirty) {
        const cell = widgets.get(model);
        if (cell) {
          void this._update(cell);
        }
      }
    });
  }

  private async _update(cell: Cell): Promise<void> {
    const model = cell.model;
    const note = cellNoteOf(model.id, model.getMetadata(CELL_METADATA_KEY));
    let marker = this._markers.get(model);
    if (!note) {
      marker?.dispose();
      this._markers.delete(model);
      return;
    }
    if (!cell.inputArea) {
      // A cell still a placeholder (windowed notebook) has no input yet: read it again once it has.
      await cell.ready;
      if (!this._disposed && !cell.isDisposed) {
        this._dirty.add(model);
        this._schedule();
      }
      return;
    }
    if (!marker || marker.isDisposed) {
      marker = new CellNoteMarker(
        { notebook: this._panel.id, cellId: model.id },
        this._commands,
        this._trans
      );
      const layout = cell.layout as PanelLayout;
      const input = cell.inputArea.parent;
      const index = input ? layout.widgets.indexOf(input) : -1;
      layout.insertWidget(index < 0 ? layout.widgets.length : index, marker);
      this._markers.set(model, marker);
      cell.disposed.connect(() => this._markers.delete(model));
    }
    marker.text = note.text;
  }

  private _disposed = false;
  private _scheduled = false;
  private readonly _watched = new WeakSet<ICellModel>();
  private readonly _dirty = new Set<ICellModel>();
  private readonly _markers = new Map<ICellModel, CellNoteMarker>();
}
