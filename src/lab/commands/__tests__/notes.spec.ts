/**
 * The notes for the planner (on a cell, on a step) and "Redo this step with the note": each command
 * keeps the note in the notebook, where the next request reads it (`notebook/notes.ts`).
 */
import { YNotebook } from '@jupyter/ydoc';
import type { NotebookPanel } from '@jupyterlab/notebook';
import {
  acceptDialog,
  dismissDialog,
  waitForDialog
} from '@jupyterlab/testing';
import { nullTranslator } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { Signal } from '@lumino/signaling';
import type { IWorkflowRunner } from '../../../engine/types';
import { stepNotesIn } from '../../../notebook/notes';
import { cellNoteIn, setCellNote } from '../../../notebook/noteEdits';
import {
  CommandIDs,
  type ICurrentRun,
  type IRunModel,
  type IRunModelRegistry
} from '../../../tokens';
import { loadRuntime } from '../../lazy';
import { addCommands } from '../addCommands';
import { keepNotesOfRemovedCells } from '../../keep';
import { addNoteCommands } from '../notes';

function setup() {
  const shared = YNotebook.create();
  shared.insertCells(0, [
    {
      cell_type: 'code',
      source: 'df.mean()',
      metadata: {
        notebook_bcc: { stage_id: 's1', step_id: 'p2', role: 'code' }
      }
    },
    { cell_type: 'markdown', source: 'mine' }
  ] as never);
  const [runCell, userCell] = shared.cells;
  const active = { model: { id: userCell.getId() } };
  const panel = {
    id: 'nb-1',
    context: { path: 'a.ipynb', localPath: 'a.ipynb' },
    model: { sharedModel: shared },
    content: {
      activeCell: active,
      widgets: shared.cells.map(cell => ({ model: { id: cell.getId() } }))
    }
  } as unknown as NotebookPanel;
  const runner = {
    isRunning: false,
    rewindPlan: jest.fn(async () => ({
      target: { kind: 'step', stageId: 's1', stepId: 'p2' },
      stageId: 's1',
      stepId: 'p2',
      remove: [{ cellId: runCell.getId() }]
    })),
    rewind: jest.fn(async () => {
      // The rewind removes the step's cells; the note of the one removed is on its step by then.
      notesAtRewind.push(...stepNotesIn(shared).map(n => n.text));
      shared.deleteCell(0);
      return { kind: 'redo_step' };
    })
  };
  const notesAtRewind: string[] = [];
  const model = {
    canRewind: true,
    lock: null,
    snapshot: {
      stages: [],
      rewind: { undo: null, redoSteps: ['s1/p2'], last: null }
    }
  };
  const commands = new CommandRegistry();
  commands.addCommand(CommandIDs.open, { execute: () => undefined });
  // The notes' chunk (`keep.ts`) adds its commands to the run commands' context.
  const context = addCommands(commands, {
    tracker: { currentWidget: panel, find: () => panel },
    runners: { get: () => runner as unknown as IWorkflowRunner },
    models: {
      model: () => model as unknown as IRunModel,
      currentChanged: new Signal<IRunModelRegistry, ICurrentRun | null>(
        {} as IRunModelRegistry
      )
    },
    contents: { save: jest.fn() },
    trans: nullTranslator.load('notebook_bcc')
  });
  addNoteCommands(context);
  context.beforeRewind = keepNotesOfRemovedCells;
  return { commands, shared, runCell, userCell, active, runner, notesAtRewind };
}

describe('notes for the planner', () => {
  beforeAll(async () => {
    await loadRuntime();
  }, 120000);

  it('keeps a note on the active cell, or the one named, and removes it', async () => {
    const { commands, runCell, userCell } = setup();
    expect(commands.label(CommandIDs.noteCell)).toBe('Note for the Planner…');
    expect(commands.isEnabled(CommandIDs.removeCellNote)).toBe(false);
    await commands.execute(CommandIDs.noteCell, {
      text: 'ignore the 2019 rows'
    });
    expect(cellNoteIn(userCell)?.text).toBe('ignore the 2019 rows');
    expect(commands.label(CommandIDs.noteCell)).toBe(
      'Edit Note for the Planner…'
    );
    await commands.execute(CommandIDs.noteCell, {
      cellId: runCell.getId(),
      text: 'use the median'
    });
    expect(cellNoteIn(runCell)).toMatchObject({
      text: 'use the median',
      step_id: 'p2'
    });
    expect(commands.isEnabled(CommandIDs.removeCellNote)).toBe(true);
    await commands.execute(CommandIDs.removeCellNote);
    expect(cellNoteIn(userCell)).toBeNull();
    expect(cellNoteIn(runCell)?.text).toBe('use the median');
  });

  it('asks for the note in a dialog, with the note as it is, and keeps what is typed', async () => {
    const { commands, userCell } = setup();
    setCellNote(userCell, 'use the mean');
    const done = commands.execute(CommandIDs.noteCell);
    await waitForDialog();
    const input =
      document.querySelector<HTMLTextAreaElement>('.jp-bcc-note-input')!;
    expect(input.value).toBe('use the mean');
    expect(document.activeElement).toBe(input);
    input.value = 'use the median, not the mean';
    await acceptDialog();
    await done;
    expect(cellNoteIn(userCell)?.text).toBe('use the median, not the mean');
    // Cancelled: the note stays as it was.
    const again = commands.execute(CommandIDs.noteCell);
    await waitForDialog();
    document.querySelector<HTMLTextAreaElement>('.jp-bcc-note-input')!.value =
      'x';
    await dismissDialog();
    await again;
    expect(cellNoteIn(userCell)?.text).toBe('use the median, not the mean');
  });

  it('keeps a note on a step, one per step, and removes it', async () => {
    const { commands, shared } = setup();
    const step = { stageId: 's1', stepId: 'p1' };
    expect(commands.isEnabled(CommandIDs.removeStepNote, step)).toBe(false);
    await commands.execute(CommandIDs.noteStep, {
      ...step,
      text: 'use the median'
    });
    await commands.execute(CommandIDs.noteStep, {
      ...step,
      text: 'use the mode'
    });
    expect(stepNotesIn(shared).map(n => [n.step_id, n.text])).toEqual([
      ['p1', 'use the mode']
    ]);
    expect(commands.label(CommandIDs.noteStep, step)).toBe(
      'Edit Note for the Planner…'
    );
    await commands.execute(CommandIDs.removeStepNote, step);
    expect(stepNotesIn(shared)).toEqual([]);
  });

  it('redoes a step with the note: the note first, then the rewind, whose request reads it', async () => {
    const { commands, runner, notesAtRewind } = setup();
    const step = { stageId: 's1', stepId: 'p2' };
    expect(commands.isEnabled(CommandIDs.redoStepWithNote, step)).toBe(true);
    expect(
      commands.isEnabled(CommandIDs.redoStepWithNote, {
        stageId: 's1',
        stepId: 'p1'
      })
    ).toBe(false);
    expect(commands.label(CommandIDs.redoStepWithNote, step)).toBe(
      'Redo This Step with a Note…'
    );
    await commands.execute(CommandIDs.redoStepWithNote, {
      ...step,
      text: 'use the median',
      confirm: false
    });
    expect(runner.rewind).toHaveBeenCalledWith(
      { kind: 'step', stageId: 's1', stepId: 'p2' },
      { restartKernel: false }
    );
    expect(notesAtRewind).toEqual(['use the median']);
    // With a note already, it redoes without asking again.
    expect(commands.label(CommandIDs.redoStepWithNote, step)).toBe(
      'Redo This Step with the Note…'
    );
  });

  it('keeps the note of a cell a rewind removes as a note of its step', async () => {
    const { commands, runCell, notesAtRewind, shared } = setup();
    setCellNote(runCell, 'ignore the 2019 rows');
    await commands.execute(CommandIDs.redoFromStep, {
      stageId: 's1',
      stepId: 'p2',
      confirm: false
    });
    expect(notesAtRewind).toEqual(['ignore the 2019 rows']);
    expect(stepNotesIn(shared)).toMatchObject([
      { stage_id: 's1', step_id: 'p2', text: 'ignore the 2019 rows' }
    ]);
  });

  it('asks for a note before redoing a step that has none; cancelled, nothing is redone', async () => {
    const { commands, runner } = setup();
    const done = commands.execute(CommandIDs.redoStepWithNote, {
      stageId: 's1',
      stepId: 'p2',
      confirm: false
    });
    await waitForDialog();
    await dismissDialog();
    await done;
    expect(runner.rewind).not.toHaveBeenCalled();
  });
});
