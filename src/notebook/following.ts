/**
 * Following new cells: a new cell is scrolled into view (never activated) when the driver's
 * `followNewCells` setting is on, unless the user is typing in this notebook.
 */
import type { NotebookPanel } from '@jupyterlab/notebook';

/** The shortest time between two scrolls to new cells, in ms. */
const SCROLL_INTERVAL_MS = 100;

export class CellFollower {
  constructor(
    private _panel: NotebookPanel,
    /** Whether a new cell is scrolled into view. */
    public enabled: boolean,
    /** Where a cell is in the notebook (-1: gone). */
    private _indexOf: (cellId: string) => number
  ) {}

  /**
   * Scrolls the new cell into view with the notebook's list (`scrollToItem`): `Notebook.scrollToCell`
   * would also select and activate the cell, which moves the user's cursor into it. Scrolling forces
   * a layout, so a fast stream scrolls at most every `SCROLL_INTERVAL_MS`, to the newest cell.
   */
  follow(cellId: string): void {
    if (!this.enabled) {
      return;
    }
    const pending = this._scrollTarget !== null;
    this._scrollTarget = cellId;
    if (pending) {
      return;
    }
    const wait = Math.max(
      0,
      this._lastScroll + SCROLL_INTERVAL_MS - performance.now()
    );
    setTimeout(() => requestAnimationFrame(() => this._scrollToTarget()), wait);
  }

  private _scrollToTarget(): void {
    this._lastScroll = performance.now();
    const target = this._scrollTarget;
    this._scrollTarget = null;
    const notebook = this._panel.content;
    if (this._panel.isDisposed || !target || this._userIsEditing()) {
      return;
    }
    const index = this._indexOf(target);
    if (index >= 0) {
      notebook.scrollToItem(index, 'auto').catch(reason => {
        console.debug(
          'Notebook-BCC: could not scroll to the new cell.',
          reason
        );
      });
    }
  }

  /** Whether the user is editing a cell of this notebook right now (edit mode, focus inside). */
  private _userIsEditing(): boolean {
    const notebook = this._panel.content;
    return (
      notebook.mode === 'edit' && notebook.node.contains(document.activeElement)
    );
  }

  private _lastScroll = -Infinity;
  /** The newest cell to scroll to; not null while a scroll is pending. */
  private _scrollTarget: string | null = null;
}
