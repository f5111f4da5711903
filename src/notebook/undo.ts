/** The notebook's own undo history, where the run's edits are each one step. */
import type { INotebookModel } from '@jupyterlab/notebook';

type SharedNotebook = INotebookModel['sharedModel'];

/** The shared notebook's Yjs undo manager (`YNotebook.undoManager`, not part of `ISharedNotebook`). */
function undoManagerOf(shared: object): { stopCapturing(): void } | null {
  const manager: unknown = (shared as { undoManager?: unknown }).undoManager;
  return typeof manager === 'object' &&
    manager !== null &&
    typeof (manager as { stopCapturing?: unknown }).stopCapturing === 'function'
    ? (manager as { stopCapturing(): void })
    : null;
}

/**
 * `edit` in one transaction, kept apart from the edits before and after it (which the undo manager
 * would otherwise merge in): one step of the notebook's undo history, when the notebook keeps one.
 */
export function asOneUndoStep(shared: SharedNotebook, edit: () => void): void {
  const undo = undoManagerOf(shared);
  undo?.stopCapturing();
  shared.transact(edit);
  undo?.stopCapturing();
}
