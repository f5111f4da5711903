/**
 * Which notebook cell an action means (spec README item 4): a `store_id` names a cell for a later
 * `exec`; `codecell_id` may be a `store_id`, a real cell id, or `lastAddedCellId`.
 */
import { LAST_ADDED_CELL_ID } from '../protocol';

export interface ICellMapState {
  storeIds: Record<string, string>;
  lastAddedCellId: string | null;
  openThinkingCellId: string | null;
}

export type CellResolution =
  | {
      ok: true;
      cellId: string;
      via: 'store_id' | 'lastAddedCellId' | 'cell_id';
    }
  | { ok: false; reason: string };

export class CellMap {
  /** The most recently added code cell. */
  get lastAddedCellId(): string | null {
    return this._lastAddedCellId;
  }

  /** The thinking cell `finish_thinking` will close. */
  get openThinkingCellId(): string | null {
    return this._openThinkingCellId;
  }

  set openThinkingCellId(cellId: string | null) {
    this._openThinkingCellId = cellId;
  }

  cellAdded(cellId: string, kind: 'code' | 'markdown', storeId?: string): void {
    if (storeId) {
      this._storeIds.set(storeId, cellId);
    }
    if (kind === 'code') {
      this._lastAddedCellId = cellId;
    }
  }

  /** A name already known is resolved to its cell; anything else is taken as a notebook cell id. */
  resolve(reference: string): CellResolution {
    if (reference === LAST_ADDED_CELL_ID) {
      return this._lastAddedCellId
        ? {
            ok: true,
            cellId: this._lastAddedCellId,
            via: 'lastAddedCellId'
          }
        : { ok: false, reason: 'no code cell has been added yet' };
    }
    const stored = this._storeIds.get(reference);
    if (stored) {
      return { ok: true, cellId: stored, via: 'store_id' };
    }
    return { ok: true, cellId: reference, via: 'cell_id' };
  }

  toJSON(): ICellMapState {
    return {
      storeIds: Object.fromEntries(this._storeIds),
      lastAddedCellId: this._lastAddedCellId,
      openThinkingCellId: this._openThinkingCellId
    };
  }

  restore(state: ICellMapState): void {
    this._storeIds = new Map(Object.entries(state.storeIds));
    this._lastAddedCellId = state.lastAddedCellId;
    this._openThinkingCellId = state.openThinkingCellId;
  }

  clear(): void {
    this._storeIds.clear();
    this._lastAddedCellId = null;
    this._openThinkingCellId = null;
  }

  private _storeIds = new Map<string, string>();
  private _lastAddedCellId: string | null = null;
  private _openThinkingCellId: string | null = null;
}
