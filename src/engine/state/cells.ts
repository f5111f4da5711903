/**
 * Which notebook cell an action means (docs/protocol.md#actions): a `store_id` names a cell for a later
 * `exec`; `codecell_id` may be a `store_id`, a real cell id, or `lastAddedCellId`.
 */
import { LAST_ADDED_CELL_ID } from '../../protocol';
import type { CellRole } from '../ports/driver';

/** The thinking cell `finish_thinking` will close, and what its closed form needs. */
export interface IOpenThinking {
  cellId: string;
  /** ISO 8601; null when unknown (a run saved by an older version). */
  startedAt: string | null;
  agentName: string | null;
  /** The text below the live title line ("🤔 … is thinking…"). */
  body: string;
  /** The live title line; absent in a run saved by an older version (the default title then). */
  title?: string;
}

export interface ICellMapState {
  storeIds: Record<string, string>;
  lastAddedCellId: string | null;
  openThinkingCellId: string | null;
  /** Absent in runs saved by older versions. */
  openThinking?: IOpenThinking | null;
  lastTextCellId?: string | null;
  /** Every cell the run created (absent in older saves). */
  created?: string[];
  /** The run's title cell, rewritten by `update_title`. */
  titleCellId?: string | null;
}

/** What a rewind checkpoint keeps of the map: its names, and how many cells the run had created. */
export interface ICellMapMark {
  storeIds: Record<string, string>;
  lastAddedCellId: string | null;
  lastTextCellId: string | null;
  titleCellId: string | null;
  createdCount: number;
}

export type CellResolution =
  | {
      ok: true;
      cellId: string;
      via: 'store_id' | 'lastAddedCellId' | 'cell_id';
    }
  | { ok: false; reason: string };

/** The methods that change the cell map: only the run state's transactions call them. */
export type CellsWrite =
  | 'cellAdded'
  | 'setOpenThinking'
  | 'setTitleCell'
  | 'restore'
  | 'rollback'
  | 'clear';

/** The cell map as the parts of the loop and the action handlers see it: read only. */
export type CellMapReader = Omit<CellMap, CellsWrite>;

export class CellMap {
  /** The most recently added code cell. */
  get lastAddedCellId(): string | null {
    return this._lastAddedCellId;
  }

  /** The most recently added text cell (markdown made by `add`): what `update_last_text` replaces. */
  get lastTextCellId(): string | null {
    return this._lastTextCellId;
  }

  /** The thinking cell `finish_thinking` will close. */
  get openThinkingCellId(): string | null {
    return this._openThinking?.cellId ?? null;
  }

  get openThinking(): IOpenThinking | null {
    return this._openThinking ? { ...this._openThinking } : null;
  }

  setOpenThinking(thinking: IOpenThinking | null): void {
    this._openThinking = thinking ? { ...thinking } : null;
  }

  /** The run's title cell, the only one `update_title` rewrites. */
  get titleCellId(): string | null {
    return this._titleCellId;
  }

  setTitleCell(cellId: string | null): void {
    this._titleCellId = cellId;
    if (cellId) {
      this._created.add(cellId);
    }
  }

  /** The run created the cell (the planner may run it). */
  created(cellId: string): boolean {
    return this._created.has(cellId);
  }

  cellAdded(
    cellId: string,
    kind: 'code' | 'markdown',
    storeId?: string,
    role?: CellRole
  ): void {
    this._created.add(cellId);
    if (storeId) {
      this._storeIds.set(storeId, cellId);
    }
    if (kind === 'code') {
      this._lastAddedCellId = cellId;
    } else if (role === 'content') {
      this._lastTextCellId = cellId;
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
      openThinkingCellId: this.openThinkingCellId,
      openThinking: this.openThinking,
      lastTextCellId: this._lastTextCellId,
      created: [...this._created],
      titleCellId: this._titleCellId
    };
  }

  restore(state: ICellMapState): void {
    this._storeIds = new Map(Object.entries(state.storeIds));
    this._lastAddedCellId = state.lastAddedCellId;
    this._lastTextCellId = state.lastTextCellId ?? null;
    const legacy = state.openThinkingCellId
      ? {
          cellId: state.openThinkingCellId,
          startedAt: null,
          agentName: null,
          body: ''
        }
      : null;
    this.setOpenThinking(state.openThinking ?? legacy);
    this._titleCellId = state.titleCellId ?? null;
    // An older save did not list them: the cells it named are the run's.
    const named = [
      ...Object.values(state.storeIds),
      state.lastAddedCellId,
      state.openThinkingCellId,
      this._titleCellId
    ].filter((id): id is string => typeof id === 'string');
    this._created = new Set([...(state.created ?? []), ...named]);
  }

  mark(): ICellMapMark {
    return {
      storeIds: Object.fromEntries(this._storeIds),
      lastAddedCellId: this._lastAddedCellId,
      lastTextCellId: this._lastTextCellId,
      titleCellId: this._titleCellId,
      createdCount: this._created.size
    };
  }

  /** The cells the run created after `mark`, oldest first. */
  createdSince(mark: ICellMapMark): string[] {
    return [...this._created].slice(mark.createdCount);
  }

  /** Back to `mark`. Later cells the user edited and kept are the user's from now on. */
  rollback(mark: ICellMapMark): void {
    this._created = new Set([...this._created].slice(0, mark.createdCount));
    this._storeIds = new Map(Object.entries(mark.storeIds));
    this._lastAddedCellId = mark.lastAddedCellId;
    this._lastTextCellId = mark.lastTextCellId;
    this._titleCellId = mark.titleCellId;
    this._openThinking = null;
  }

  clear(): void {
    this._storeIds.clear();
    this._lastAddedCellId = null;
    this._lastTextCellId = null;
    this._openThinking = null;
    this._titleCellId = null;
    this._created.clear();
  }

  private _storeIds = new Map<string, string>();
  private _lastAddedCellId: string | null = null;
  private _lastTextCellId: string | null = null;
  private _openThinking: IOpenThinking | null = null;
  private _titleCellId: string | null = null;
  private _created = new Set<string>();
}
