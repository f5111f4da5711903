import { YNotebook } from '@jupyter/ydoc';
import type { NotebookPanel } from '@jupyterlab/notebook';
import { nullTranslator } from '@jupyterlab/translation';
import { NotebookCells } from '../cells';
import type { CellFollower } from '../following';
import {
  MAX_NOTE_CHARS,
  MAX_STEP_NOTES,
  MAX_USER_NOTES,
  noteText,
  readStepNotes,
  stepNotesIn
} from '../notes';
import {
  cellNoteIn,
  setCellNote,
  setStepNote,
  sharedCell,
  stepNoteOf,
  userNotesToSend,
  withStepNote
} from '../noteEdits';

function notebookOf(cells: unknown[]): YNotebook {
  const shared = YNotebook.create();
  shared.insertCells(0, cells as never);
  return shared;
}

function summaryOf(shared: YNotebook) {
  const panel = {
    isDisposed: false,
    model: { sharedModel: shared }
  } as unknown as NotebookPanel;
  return new NotebookCells({
    panel,
    trans: nullTranslator.load('notebook_bcc'),
    follower: {} as CellFollower,
    changed: () => undefined
  }).summary();
}

const NOW = new Date('2025-05-02T09:14:03.120Z');

describe('notes: text and bounds', () => {
  it('trims a note and cuts it at its bound; an empty text is no note', () => {
    expect(noteText('  use the median  ')).toBe('use the median');
    expect(noteText('x'.repeat(MAX_NOTE_CHARS + 50))).toHaveLength(
      MAX_NOTE_CHARS
    );
    expect(noteText(' \n ')).toBe('');
  });

  it('keeps one note per step, replaces it, and removes it with an empty text', () => {
    let notes = withStepNote([], 's1', 'p1', 'use the median', NOW);
    notes = withStepNote(notes, 's1', 'p2', 'ignore 2019', NOW);
    notes = withStepNote(notes, 's1', 'p1', 'use the trimmed mean', NOW);
    expect(notes.map(n => [n.step_id, n.text])).toEqual([
      ['p2', 'ignore 2019'],
      ['p1', 'use the trimmed mean']
    ]);
    expect(stepNoteOf(notes, 's1', 'p1')?.text).toBe('use the trimmed mean');
    expect(stepNoteOf(notes, 's2', 'p1')).toBeNull();
    expect(withStepNote(notes, 's1', 'p1', '', NOW)).toHaveLength(1);
    let many = notes;
    for (let i = 0; i < MAX_STEP_NOTES + 5; i++) {
      many = withStepNote(many, 's9', `q${i}`, `note ${i}`, NOW);
    }
    expect(many).toHaveLength(MAX_STEP_NOTES);
    expect(many[many.length - 1].text).toBe(`note ${MAX_STEP_NOTES + 4}`);
  });

  it('reads step notes liberally: no text or no step is no note', () => {
    expect(
      readStepNotes({
        step_notes: [
          { text: 'a', step_id: 'p1' },
          { text: '', step_id: 'p2' },
          { text: 'no step' },
          'junk',
          { text: 'b', step_id: 'p3', stage_id: 7 }
        ]
      })
    ).toEqual([
      { text: 'a', created_at: '', stage_id: null, step_id: 'p1' },
      { text: 'b', created_at: '', stage_id: null, step_id: 'p3' }
    ]);
    expect(readStepNotes({ step_notes: 'x' })).toEqual([]);
    expect(readStepNotes(undefined)).toEqual([]);
  });

  it('sends the step notes then the cell notes; past the bound, the newest', () => {
    const step = withStepNote([], 's1', 'p1', 'median', NOW);
    const cells = Array.from({ length: MAX_USER_NOTES + 3 }, (_, i) => ({
      text: `cell ${i}`,
      created_at: new Date(NOW.getTime() + i * 1000).toISOString(),
      cell_id: `c${i}`,
      stage_id: null,
      step_id: null
    }));
    expect(userNotesToSend(step, cells.slice(0, 2))).toEqual([
      {
        text: 'median',
        created_at: NOW.toISOString(),
        stage_id: 's1',
        step_id: 'p1'
      },
      { text: 'cell 0', created_at: cells[0].created_at, cell_id: 'c0' },
      { text: 'cell 1', created_at: cells[1].created_at, cell_id: 'c1' }
    ]);
    const sent = userNotesToSend(step, cells);
    expect(sent).toHaveLength(MAX_USER_NOTES);
    // The oldest go first: the step note and the first cells' notes.
    expect(sent[0].text).toBe('cell 3');
    expect(sent[sent.length - 1].text).toBe(`cell ${MAX_USER_NOTES + 2}`);
  });
});

describe('notes in a notebook', () => {
  it('keeps a cell’s note in its metadata beside the run’s provenance, and removes it alone', () => {
    const shared = notebookOf([
      {
        cell_type: 'code',
        source: 'df.mean()',
        metadata: {
          notebook_bcc: { step_id: 'p1', stage_id: 's1', role: 'code' }
        }
      },
      { cell_type: 'markdown', source: 'mine' }
    ]);
    const [runCell, userCell] = shared.cells;
    setCellNote(runCell, ' use the median ', NOW);
    setCellNote(userCell, 'ignore the 2019 rows', NOW);
    expect(cellNoteIn(runCell)).toEqual({
      text: 'use the median',
      created_at: NOW.toISOString(),
      cell_id: runCell.getId(),
      stage_id: 's1',
      step_id: 'p1'
    });
    expect(sharedCell(shared, userCell.getId())).toBe(userCell);
    setCellNote(runCell, '');
    expect(cellNoteIn(runCell)).toBeNull();
    expect(runCell.getMetadata('notebook_bcc')).toEqual({
      step_id: 'p1',
      stage_id: 's1',
      role: 'code'
    });
    setCellNote(userCell, '');
    expect(userCell.getMetadata('notebook_bcc')).toBeUndefined();
  });

  it('keeps the step notes in the notebook’s metadata, beside what the run wrote there', () => {
    const shared = notebookOf([]);
    shared.setMetadata('notebook_bcc', { title: 'Sales' });
    setStepNote(shared, 's1', 'p1', 'use the median', NOW);
    expect(stepNotesIn(shared)).toEqual([
      {
        text: 'use the median',
        created_at: NOW.toISOString(),
        stage_id: 's1',
        step_id: 'p1'
      }
    ]);
    setStepNote(shared, 's1', 'p1', '');
    expect(shared.getMetadata('notebook_bcc')).toEqual({ title: 'Sales' });
  });

  it('describes the notes in the notebook summary, once: in `user_notes`, not in the last cells’ metadata', () => {
    const shared = notebookOf([
      {
        cell_type: 'code',
        source: 'df.mean()',
        metadata: { notebook_bcc: { step_id: 'p1', stage_id: 's1' } }
      },
      { cell_type: 'code', source: 'x = 1' }
    ]);
    setCellNote(shared.cells[0], 'use the median', NOW);
    setStepNote(shared, 's1', 'p2', 'ignore the 2019 rows', NOW);
    const summary = summaryOf(shared);
    expect(summary.user_notes).toEqual([
      {
        text: 'ignore the 2019 rows',
        created_at: NOW.toISOString(),
        stage_id: 's1',
        step_id: 'p2'
      },
      {
        text: 'use the median',
        created_at: NOW.toISOString(),
        stage_id: 's1',
        step_id: 'p1',
        cell_id: shared.cells[0].getId()
      }
    ]);
    expect(summary.cells[0].metadata).toEqual({
      step_id: 'p1',
      stage_id: 's1'
    });
    expect(
      summaryOf(notebookOf([{ cell_type: 'code', source: '' }]))
    ).not.toHaveProperty('user_notes');
  });
});
