/**
 * Following new cells: a new cell is scrolled into view (never activated) when the driver's
 * `followNewCells` setting is on, unless the user is typing in this notebook or has scrolled away to
 * read (until they scroll back to the run's newest cells, as in a log viewer).
 */
import type { NotebookPanel } from '@jupyterlab/notebook';

/** The shortest time between two scrolls to new cells, in ms: a burst of cells scrolls four times a second. */
const SCROLL_INTERVAL_MS = 250;
/** Closer than this to the end of the notebook counts as being at the end, in px. */
const AT_END_PX = 48;
/** A scroll this soon after the user's wheel, touch, key or pointer input is the user's, in ms. */
const USER_INPUT_MS = 500;

export class CellFollower {
  constructor(
    private _panel: NotebookPanel,
    /** Whether a new cell is scrolled into view. */
    public enabled: boolean,
    /** Where a cell is in the notebook (-1: gone). */
    private _indexOf: (cellId: string) => number
  ) {
    const outer = _panel.content.outerNode;
    outer.addEventListener('scroll', () => this._onScroll(outer), {
      passive: true
    });
    // Only the user's scrolling, which follows their input, tells where they read: a scroll without
    // input is ours, the list settling, or outputs growing.
    const userInput = (event: Event) => {
      this._userInputUntil = performance.now() + USER_INPUT_MS;
      if (event.type === 'pointerdown') {
        // Dragging the scrollbar lasts as long as the button is held; the page is listened to only
        // until it is released, so no closed notebook stays referenced.
        this._pointerHeld = true;
        window.addEventListener(
          'pointerup',
          () => (this._pointerHeld = false),
          {
            passive: true,
            once: true
          }
        );
      }
    };
    for (const type of ['wheel', 'touchmove', 'keydown', 'pointerdown']) {
      _panel.content.node.addEventListener(type, userInput, {
        passive: true,
        capture: true
      });
    }
  }

  /**
   * Scrolls the new cell into view with the notebook's list (`scrollToItem`): `Notebook.scrollToCell`
   * would also select and activate the cell, which moves the user's cursor into it. Scrolling forces
   * a layout, so a fast stream scrolls at most every `SCROLL_INTERVAL_MS`, to the newest cell.
   */
  follow(cellId: string): void {
    this._newest = cellId;
    if (!this.enabled || this._away) {
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
    if (
      this._panel.isDisposed ||
      !target ||
      this._away ||
      this._userIsEditing()
    ) {
      return;
    }
    const index = this._indexOf(target);
    if (index >= 0) {
      this._followed = target;
      notebook.scrollToItem(index, 'auto').catch(reason => {
        console.debug(
          'Notebook-BCC: could not scroll to the new cell.',
          reason
        );
      });
    }
  }

  /**
   * The user's scroll: they read elsewhere (away) unless the end of the notebook, or the end of the
   * run's newest cell or of the last one followed, is in view. The top of a tall cell is not its end:
   * whoever scrolls back to read it is not following.
   */
  private _onScroll(outer: HTMLElement): void {
    if (performance.now() >= this._userInputUntil && !this._pointerHeld) {
      return;
    }
    const atEnd =
      outer.scrollHeight - outer.clientHeight - outer.scrollTop < AT_END_PX;
    this._away = !(
      atEnd ||
      this._endInView(this._newest, outer) ||
      this._endInView(this._followed, outer)
    );
  }

  /** Whether the end of the cell is in view. */
  private _endInView(cellId: string | null, outer: HTMLElement): boolean {
    const index = cellId === null ? -1 : this._indexOf(cellId);
    const node = index >= 0 ? this._panel.content.widgets[index]?.node : null;
    if (!node?.isConnected) {
      return false;
    }
    const cell = node.getBoundingClientRect();
    const view = outer.getBoundingClientRect();
    return cell.bottom > view.top && cell.bottom <= view.bottom + AT_END_PX;
  }

  /** Whether the user is editing a cell of this notebook right now (edit mode, focus inside). */
  private _userIsEditing(): boolean {
    const notebook = this._panel.content;
    return (
      notebook.mode === 'edit' && notebook.node.contains(document.activeElement)
    );
  }

  private _lastScroll = -Infinity;
  private _userInputUntil = -Infinity;
  private _pointerHeld = false;
  /** The user scrolled away from the run's cells: no following until they come back. */
  private _away = false;
  /** The newest cell the run asked to follow, and the last one it scrolled to. */
  private _newest: string | null = null;
  private _followed: string | null = null;
  /** The newest cell to scroll to; not null while a scroll is pending. */
  private _scrollTarget: string | null = null;
}
