/**
 * The user's notes for the planner (`notes.ts`), their edits and what a request carries: a cell's note
 * with the step that wrote the cell, the notes on a shared notebook set or removed, and the notes sent
 * in `context.user_notes`, bounded.
 */
import type { INotebookModel } from '@jupyterlab/notebook';
import type { PartialJSONObject, PartialJSONValue } from '@lumino/coreutils';
import type { UserNote } from '../protocol';
import { asObject, toJSON } from './json';
import { CELL_METADATA_KEY } from './metadata';
import {
  CELL_NOTE_KEY,
  type INoteRecord,
  type IStepNote,
  MAX_STEP_NOTES,
  MAX_USER_NOTES,
  noteText,
  readNote,
  readStepNotes,
  STEP_NOTES_KEY
} from './notes';

type ISharedNotebook = INotebookModel['sharedModel'];
type ISharedCell = ISharedNotebook['cells'][number];

function sameStep(
  note: IStepNote,
  stageId: string | null,
  stepId: string
): boolean {
  return (
    note.step_id === stepId &&
    (stageId === null || note.stage_id === null || note.stage_id === stageId)
  );
}

/** The note on a step, or null. */
export function stepNoteOf(
  notes: readonly IStepNote[],
  stageId: string | null,
  stepId: string
): IStepNote | null {
  return notes.find(note => sameStep(note, stageId, stepId)) ?? null;
}

/** The step notes with the note on that step set (an empty text removes it): one note per step. */
export function withStepNote(
  notes: readonly IStepNote[],
  stageId: string | null,
  stepId: string,
  text: string,
  now: Date
): IStepNote[] {
  const kept = notes.filter(note => !sameStep(note, stageId, stepId));
  const bounded = noteText(text);
  if (bounded) {
    kept.push({
      text: bounded,
      created_at: now.toISOString(),
      stage_id: stageId,
      step_id: stepId
    });
  }
  return kept.slice(-MAX_STEP_NOTES);
}

/** A note on one cell, with what the run knows of the cell. */
export interface ICellNote extends INoteRecord {
  cell_id: string;
  stage_id: string | null;
  step_id: string | null;
}

/** The note in a cell's `notebook_bcc` metadata, with the cell's step when the run wrote it. */
export function cellNoteOf(cellId: string, own: unknown): ICellNote | null {
  const value = asObject(own as PartialJSONValue);
  const note = readNote(value[CELL_NOTE_KEY]);
  if (!note) {
    return null;
  }
  return {
    ...note,
    cell_id: cellId,
    stage_id: typeof value.stage_id === 'string' ? value.stage_id : null,
    step_id: typeof value.step_id === 'string' ? value.step_id : null
  };
}

/**
 * What a request carries (`context.user_notes`): the step notes, then the cell notes in notebook order,
 * at most `MAX_USER_NOTES` (the newest when there are more), each as the wire's note.
 */
export function userNotesToSend(
  stepNotes: readonly IStepNote[],
  cellNotes: readonly ICellNote[]
): UserNote[] {
  const all: UserNote[] = [
    ...stepNotes.map(note => wireNote(note, null)),
    ...cellNotes.map(note => wireNote(note, note.cell_id))
  ];
  if (all.length <= MAX_USER_NOTES) {
    return all;
  }
  const newest = all
    .map((note, index) => ({ note, index }))
    .sort((a, b) =>
      (b.note.created_at ?? '').localeCompare(a.note.created_at ?? '')
    )
    .slice(0, MAX_USER_NOTES)
    .map(entry => entry.index);
  return all.filter((_, index) => newest.includes(index));
}

function wireNote(
  note: INoteRecord & { stage_id: string | null; step_id: string | null },
  cellId: string | null
): UserNote {
  const wire: UserNote = { text: note.text };
  if (note.created_at) {
    wire.created_at = note.created_at;
  }
  if (note.step_id) {
    wire.step_id = note.step_id;
  }
  if (note.stage_id) {
    wire.stage_id = note.stage_id;
  }
  if (cellId) {
    wire.cell_id = cellId;
  }
  return wire;
}

/** Sets (or with an empty text removes) the note on a step. */
export function setStepNote(
  shared: ISharedNotebook,
  stageId: string | null,
  stepId: string,
  text: string,
  now = new Date()
): void {
  const own = { ...asObject(shared.getMetadata(CELL_METADATA_KEY)) };
  const notes = withStepNote(readStepNotes(own), stageId, stepId, text, now);
  if (notes.length) {
    own[STEP_NOTES_KEY] = toJSON(notes);
  } else {
    delete own[STEP_NOTES_KEY];
  }
  shared.setMetadata(CELL_METADATA_KEY, own);
}

/** The cell with that id, or null. */
export function sharedCell(
  shared: ISharedNotebook,
  cellId: string
): ISharedCell | null {
  return shared.cells.find(cell => cell.getId() === cellId) ?? null;
}

/** The note on a cell, or null. */
export function cellNoteIn(cell: ISharedCell): ICellNote | null {
  return cellNoteOf(cell.getId(), cell.getMetadata(CELL_METADATA_KEY));
}

/** Sets (or with an empty text removes) the note on a cell; its other metadata stays. */
export function setCellNote(
  cell: ISharedCell,
  text: string,
  now = new Date()
): void {
  const own: PartialJSONObject = {
    ...asObject(cell.getMetadata(CELL_METADATA_KEY))
  };
  const bounded = noteText(text);
  if (bounded) {
    own[CELL_NOTE_KEY] = { text: bounded, created_at: now.toISOString() };
  } else {
    delete own[CELL_NOTE_KEY];
  }
  if (Object.keys(own).length) {
    cell.setMetadata(CELL_METADATA_KEY, own);
  } else {
    cell.deleteMetadata(CELL_METADATA_KEY);
  }
}
