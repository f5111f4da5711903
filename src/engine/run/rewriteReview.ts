/**
 * Interactive mode's review of the cells a behavior rewrites (`rewrite_cell`): each is shown as a diff
 * of the cell's code and the fix, which the user accepts, rejects or edits before accepting
 * (docs/protocol.md#decisions, item 17). Pure: what to show, what an edit changes, what the planner is
 * told.
 */
import { unwrapCodeFence } from '../../protocol';
import type { RewriteCellAction } from '../../protocol';
import type { AnyAction } from '../actions/registry';
import { rewritePlace } from '../actions/rewriteCell';
import type { RewriteStatus } from '../ports/driver';
import type { IRewriteReview } from '../types';
import type { CellMapReader } from '../state/cells';

/** What the review reads of the run's notebook. */
export interface IReviewNotebook {
  cells: Pick<CellMapReader, 'resolve' | 'created'>;
  source(cellId: string): string | null;
  status(cellId: string): RewriteStatus;
  /** The cell's place in the notebook, 1 for the first; null when it is not there. */
  position(cellId: string): number | null;
}

function isRewrite(action: AnyAction): action is RewriteCellAction {
  return action.action === 'rewrite_cell';
}

/** The rewrites among `actions`, each with the code it replaces and where the fix goes. */
export function rewritesToReview(
  actions: readonly AnyAction[],
  notebook: IReviewNotebook
): IRewriteReview[] {
  return actions.flatMap((action, index): IRewriteReview[] => {
    if (!isRewrite(action)) {
      return [];
    }
    const resolution = notebook.cells.resolve(action.codecell_id);
    const cellId = resolution.ok ? resolution.cellId : null;
    const place = rewritePlace(
      action.codecell_id,
      resolution,
      cellId !== null && notebook.cells.created(cellId),
      cellId === null ? 'missing' : notebook.status(cellId)
    );
    const before = cellId === null ? null : notebook.source(cellId);
    const shown = before === null ? null : cellId;
    return [
      {
        index,
        reference: action.codecell_id,
        cellId: shown,
        position: shown === null ? null : notebook.position(shown),
        before: before ?? '',
        after: unwrapCodeFence(action.content),
        inPlace: place.kind === 'rewrite'
      }
    ];
  });
}

/**
 * The user's edits of the fixes, applied to the actions (action index → the code accepted); returns
 * what the planner is told of them. An edit that changes nothing is no edit.
 */
export function applyEdits(
  actions: readonly AnyAction[],
  edits: Readonly<Record<number, string>>
): string[] {
  const told: string[] = [];
  for (const [key, code] of Object.entries(edits)) {
    const action = actions[Number(key)];
    if (!action || !isRewrite(action)) {
      continue;
    }
    if (unwrapCodeFence(action.content) === code) {
      continue;
    }
    action.content = code;
    told.push(
      `The user edited the fix of '${action.codecell_id}' before accepting it; the cell holds the user's version.`
    );
  }
  return told;
}

/** What the planner is told of the rewrites of a behavior the user rejected. */
export function rejectedNote(rewrites: readonly IRewriteReview[]): string {
  if (rewrites.length === 0) {
    return '';
  }
  const names = rewrites.map(r => `'${r.reference}'`).join(', ');
  return ` The user rejected the rewrite of ${names}: the cell keeps its code.`;
}
