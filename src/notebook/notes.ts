/**
 * The user's notes for the planner (docs/protocol.md#observation, `context.user_notes`): a note on a cell
 * lives in the cell's metadata (`notebook_bcc.user_note`), so it goes with the cell (copied, moved,
 * deleted); a note on a step of the run lives in the notebook's metadata (`notebook_bcc.step_notes`),
 * beside the run saved there. Both survive a reload. The notebook adapter reads them into every
 * request. This module holds their shape, their bounds and the reading of the step notes, which the
 * run's view model needs at startup; the cells' notes, what a request carries and the edits are in
 * `noteEdits.ts`, loaded with the notes' chunk and the runtime (docs/architecture.md#lazy-loading).
 */
import type { INotebookModel } from '@jupyterlab/notebook';
import type { PartialJSONValue } from '@lumino/coreutils';
import { asObject } from './json';
import { CELL_METADATA_KEY } from './metadata';

type ISharedNotebook = INotebookModel['sharedModel'];

/** Under `notebook_bcc` in a cell's metadata: the cell's note. */
export const CELL_NOTE_KEY = 'user_note';
/** Under `notebook_bcc` in the notebook's metadata: the notes on the run's steps. */
export const STEP_NOTES_KEY = 'step_notes';

/** How long a note may be, in characters; a longer one is cut (the dialog does not let one be typed). */
export const MAX_NOTE_CHARS = 1000;
/** How many notes one request carries: the newest, the others stay in the notebook. */
export const MAX_USER_NOTES = 20;
/** How many step notes the notebook keeps: one per step, the newest. */
export const MAX_STEP_NOTES = 50;

/** A note as the notebook keeps it. */
export interface INoteRecord {
  text: string;
  /** ISO 8601: when it was written or last edited. */
  created_at: string;
}

/** A note on a step of the run. */
export interface IStepNote extends INoteRecord {
  stage_id: string | null;
  step_id: string;
}

/** The note's text as kept: trimmed and bounded; empty means no note. */
export function noteText(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > MAX_NOTE_CHARS
    ? trimmed.slice(0, MAX_NOTE_CHARS).trimEnd()
    : trimmed;
}

/** A note read from metadata, liberally: null when it holds no text. */
export function readNote(raw: unknown): INoteRecord | null {
  const value = asObject(raw as PartialJSONValue);
  const text = typeof value.text === 'string' ? noteText(value.text) : '';
  if (!text) {
    return null;
  }
  return {
    text,
    created_at: typeof value.created_at === 'string' ? value.created_at : ''
  };
}

/** The step notes kept in the notebook's metadata (`notebook_bcc`), liberally. */
export function readStepNotes(own: unknown): IStepNote[] {
  const list = asObject(own as PartialJSONValue)[STEP_NOTES_KEY];
  if (!Array.isArray(list)) {
    return [];
  }
  const notes: IStepNote[] = [];
  for (const item of list) {
    const note = readNote(item);
    const value = asObject(item);
    if (note && typeof value.step_id === 'string' && value.step_id) {
      notes.push({
        ...note,
        stage_id: typeof value.stage_id === 'string' ? value.stage_id : null,
        step_id: value.step_id
      });
    }
  }
  return notes;
}

/** The notes on the run's steps in this notebook. */
export function stepNotesIn(shared: ISharedNotebook): IStepNote[] {
  return readStepNotes(shared.getMetadata(CELL_METADATA_KEY));
}
