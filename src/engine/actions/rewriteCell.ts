/**
 * `rewrite_cell` (our extension, docs/protocol.md#actions): a retry's fix replaces the code of the cell
 * that failed, so the notebook keeps one working cell per step; the code it replaced stays with the cell
 * as an attempt (`ports/attempts.ts`). A cell the user edited, or one the run did not write, is never
 * rewritten: the fix goes below it as a new cell, which takes over its name, so that the `exec` that
 * follows runs the fix.
 */
import { unwrapCodeFence } from '../../protocol/codeFence';
import type { LAST_ADDED_CELL_ID, RewriteCellAction } from '../../protocol';
import type { RewriteStatus } from '../ports/driver';
import { msg } from '../messages';
import type { CellResolution } from '../state/cells';
import type { ActionHandler, IActionContext } from './registry';

/** `LAST_ADDED_CELL_ID`, spelt out: the built-in actions load at startup, the protocol's schemas do not. */
const LAST_ADDED: typeof LAST_ADDED_CELL_ID = 'lastAddedCellId';

/** Where a fix goes. */
export type RewritePlace =
  | { kind: 'rewrite'; cellId: string }
  | {
      /** `below`: right below `cellId`; `end`: at the end of the notebook. */
      kind: 'below' | 'end';
      cellId: string | null;
      /** The name the new cell takes over (the reference), or null for `lastAddedCellId`. */
      name: string | null;
      why: 'edited' | 'not_run' | 'not_code' | 'missing';
    };

/**
 * Pure: the fix of `reference` goes into the cell it names when the run created that cell and its
 * source is still what the run wrote (`status`); else below that cell, or at the end without one.
 */
export function rewritePlace(
  reference: string,
  resolution: CellResolution,
  created: boolean,
  status: RewriteStatus
): RewritePlace {
  const name = reference === LAST_ADDED ? null : reference;
  if (!resolution.ok || status === 'missing') {
    return { kind: 'end', cellId: null, name, why: 'missing' };
  }
  const cellId = resolution.cellId;
  if (!created) {
    return { kind: 'below', cellId, name, why: 'not_run' };
  }
  if (status === 'ok') {
    return { kind: 'rewrite', cellId };
  }
  return {
    kind: 'below',
    cellId,
    name,
    why: status === 'edited' ? 'edited' : 'not_code'
  };
}

function firstLine(source: string): string {
  const line = source.split('\n').find(l => l.trim() !== '') ?? '';
  return line.length > 80 ? `${line.slice(0, 79)}…` : line.trim();
}

const WHY: Record<Exclude<RewritePlace, { kind: 'rewrite' }>['why'], string> = {
  edited:
    'the user edited that cell, and a cell the user edited is never rewritten',
  not_run: 'the run did not write that cell',
  not_code: 'that cell is not a code cell',
  missing: 'no such cell exists (was it deleted?)'
};

/** The fix as a new cell, where `place` says, and what the planner and the user are told. */
async function addFix(
  action: RewriteCellAction,
  source: string,
  place: Exclude<RewritePlace, { kind: 'rewrite' }>,
  context: IActionContext
): Promise<string> {
  const cellId = await context.run.addCell({
    kind: 'code',
    source,
    role: 'code',
    storeId: place.name ?? undefined,
    ...(place.kind === 'below' && place.cellId ? { after: place.cellId } : {}),
    metadata: {
      shot_type: 'action',
      ...(place.cellId ? { fix_of: place.cellId } : {})
    }
  });
  const where =
    place.kind === 'below' ? `below cell '${place.cellId}'` : 'at the end';
  context.effects.add(
    `⚠️ rewrite_cell of '${action.codecell_id}' not applied in place: ${WHY[place.why]}. The fix was added ${where} as cell '${cellId}'; exec '${action.codecell_id}' runs it.`
  );
  context.run.warn(
    place.why === 'edited'
      ? msg('rewriteBelowEdited', place.cellId ?? action.codecell_id)
      : msg('rewriteAsNewCell', action.codecell_id)
  );
  return cellId;
}

export const rewriteCellHandler: ActionHandler<RewriteCellAction> = async (
  action,
  context
) => {
  const source = unwrapCodeFence(action.content);
  const resolution = context.cells.resolve(action.codecell_id);
  const cellId = resolution.ok ? resolution.cellId : null;
  let place = rewritePlace(
    action.codecell_id,
    resolution,
    cellId !== null && context.cells.created(cellId),
    cellId === null ? 'missing' : context.driver.rewriteStatus(cellId)
  );
  if (place.kind === 'rewrite') {
    const result = await context.run.rewriteCell(place.cellId, source);
    if (result.status === 'rewritten') {
      return {
        ok: true,
        summary: `rewrite ${place.cellId} (attempt ${result.attempts + 1}): ${firstLine(source)}`
      };
    }
    // Changed between the check and the write (the user typed in it meanwhile).
    place = rewritePlace(action.codecell_id, resolution, true, result.status);
  }
  if (place.kind === 'rewrite') {
    return { ok: false, summary: `rewrite ${action.codecell_id}: not written` };
  }
  const added = await addFix(action, source, place, context);
  return {
    ok: true,
    summary: `rewrite ${action.codecell_id}: added as ${added}: ${firstLine(source)}`
  };
};
