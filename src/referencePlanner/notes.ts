/**
 * The user's notes (`observation.context.user_notes`, docs/protocol.md#observation) as the reference
 * planner takes them: its analysis is fixed, so it cannot follow a note, but it shows that it received
 * each one by quoting it in a Markdown cell, once when the note first arrives, and again when the step
 * the note is on starts over (a redo with the note).
 */
import type { Observation, UserNote } from '../protocol';
import type { INotebookSession, IStepMemory } from './session';
import type { ActionInput } from './stepAnswers';

/** The notes of the observation that hold text. */
export function userNotesOf(observation: Observation): UserNote[] {
  const notes = observation.context?.user_notes;
  return Array.isArray(notes)
    ? notes.filter(note => typeof note.text === 'string' && note.text.trim())
    : [];
}

function noteKey(note: UserNote): string {
  return JSON.stringify([
    note.text,
    note.created_at ?? '',
    note.step_id ?? '',
    note.cell_id ?? ''
  ]);
}

/**
 * The notes to quote now, remembered as quoted: the ones never quoted in this session, and those on the
 * current step that this run of the step has not quoted yet.
 */
export function notesToQuote(
  observation: Observation,
  session: INotebookSession,
  memory: IStepMemory,
  stepId: string
): UserNote[] {
  const quote: UserNote[] = [];
  for (const note of userNotesOf(observation)) {
    const key = noteKey(note);
    const onStep = note.step_id === stepId && !note.cell_id;
    if (
      !session.quotedNotes.has(key) ||
      (onStep && !memory.quotedNotes.includes(key))
    ) {
      quote.push(note);
      session.quotedNotes.add(key);
      if (onStep) {
        memory.quotedNotes.push(key);
      }
    }
  }
  return quote;
}

/** One Markdown cell that quotes the notes, saying where each was made. */
export function quoteNotesAction(notes: readonly UserNote[]): ActionInput {
  const quoted = notes.map(note => {
    const where = note.cell_id
      ? ` (on cell \`${note.cell_id}\`)`
      : note.step_id
        ? ` (on step \`${note.step_id}\`)`
        : '';
    const text = note.text
      .trim()
      .split('\n')
      .map(line => `> ${line}`)
      .join('\n');
    return `📝 **Your note for the planner**${where}:\n\n${text}`;
  });
  return {
    action: 'add',
    shot_type: 'dialogue',
    content: [
      ...quoted,
      '_The reference planner runs a fixed analysis: it shows your note here but does not change its code for it. The LLM planner follows it._'
    ].join('\n\n')
  };
}
