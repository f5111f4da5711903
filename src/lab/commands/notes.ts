/**
 * The user's notes for the planner (docs/using.md#notes-for-the-planner): on a cell (its context menu,
 * its toolbar, the palette) and on a step of the run (the panel's step menu), and "Redo this step with
 * the note". A note is kept in the notebook (`notebook/notes.ts`) and read into the planner's next
 * request; none of these commands talks to the runner, but the redo, which rewinds.
 */
import { editIcon, redoIcon, closeIcon } from '@jupyterlab/ui-components';
import type { NotebookPanel } from '@jupyterlab/notebook';
import { stepKey } from '../../engine/rewindView';
import { stepNotesIn } from '../../notebook/notes';
import {
  cellNoteIn,
  setCellNote,
  setStepNote,
  sharedCell,
  stepNoteOf
} from '../../notebook/noteEdits';
import { CommandIDs } from '../../tokens';
import { showNoteDialog } from '../../ui/noteDialog';
import { stepNameOf } from '../../ui/present';
import type { CommandArgs, CommandContext } from './context';
import { rewind } from './rewind';

type SharedCell = NonNullable<ReturnType<typeof sharedCell>>;

/** The cell a cell-note command acts on: `cellId`, else the notebook's active cell. */
function cellOf(
  panel: NotebookPanel | null,
  args: CommandArgs
): SharedCell | null {
  const shared = panel?.model?.sharedModel;
  if (!panel || !shared) {
    return null;
  }
  const id =
    typeof args.cellId === 'string'
      ? args.cellId
      : panel.content.activeCell?.model.id;
  return id ? sharedCell(shared, id) : null;
}

function stepOf(
  args: CommandArgs
): { stageId: string | null; stepId: string } | null {
  return typeof args.stepId === 'string' && args.stepId
    ? {
        stageId: typeof args.stageId === 'string' ? args.stageId : null,
        stepId: args.stepId
      }
    : null;
}

/** The note's new text: `text` in the args, else what the user types (null: cancelled). */
async function noteFrom(
  args: CommandArgs,
  dialog: () => Promise<string | null>
): Promise<string | null> {
  return typeof args.text === 'string' ? args.text : dialog();
}

function addCellNoteCommands(context: CommandContext): void {
  const { commands, trans } = context;
  commands.addCommand(CommandIDs.noteCell, {
    label: args => {
      const cell = cellOf(context.panelOf(args), args);
      return cell && cellNoteIn(cell)
        ? trans.__('Edit Note for the Planner…')
        : trans.__('Note for the Planner…');
    },
    caption: trans.__(
      'Write a note on this cell for the planner: it reads it with its next request'
    ),
    icon: editIcon,
    isEnabled: args => cellOf(context.panelOf(args), args) !== null,
    isVisible: args => context.hasNotebook(args),
    execute: async args => {
      const panel = context.panelOf(args);
      const cell = cellOf(panel, args);
      if (!panel || !cell) {
        return;
      }
      const text = await noteFrom(args, () =>
        showNoteDialog({
          title: trans.__('Note for the Planner'),
          about: trans.__(
            'Your note on cell %1 of %2',
            panel.content.widgets.findIndex(w => w.model.id === cell.getId()) +
              1,
            panel.context.localPath
          ),
          text: cellNoteIn(cell)?.text ?? '',
          trans
        })
      );
      if (text !== null && !cell.isDisposed) {
        setCellNote(cell, text);
      }
    }
  });

  commands.addCommand(CommandIDs.removeCellNote, {
    label: trans.__('Remove Note for the Planner'),
    caption: trans.__('Remove the note on this cell'),
    icon: closeIcon,
    isEnabled: args => {
      const cell = cellOf(context.panelOf(args), args);
      return cell !== null && cellNoteIn(cell) !== null;
    },
    isVisible: args => context.hasNotebook(args),
    execute: args => {
      const cell = cellOf(context.panelOf(args), args);
      if (cell) {
        setCellNote(cell, '');
      }
    }
  });
}

/** Asks for (or takes from the args) the step's note and keeps it; false when cancelled or empty. */
async function editStepNote(
  context: CommandContext,
  args: CommandArgs
): Promise<boolean> {
  const { trans } = context;
  const panel = context.panelOf(args);
  const step = stepOf(args);
  const shared = panel?.model?.sharedModel;
  if (!panel || !step || !shared) {
    return false;
  }
  const model = context.targetOf(args)?.model;
  const name = model ? stepNameOf(model.snapshot, step.stepId) : step.stepId;
  const own = stepNoteOf(stepNotesIn(shared), step.stageId, step.stepId);
  const text = await noteFrom(args, () =>
    showNoteDialog({
      title: trans.__('Note for the Planner'),
      about: trans.__('Your note on the step “%1”', name),
      text: own?.text ?? '',
      trans
    })
  );
  if (text === null) {
    return own !== null;
  }
  setStepNote(shared, step.stageId, step.stepId, text);
  return text.trim() !== '';
}

function hasStepNote(context: CommandContext, args: CommandArgs): boolean {
  const shared = context.panelOf(args)?.model?.sharedModel;
  const step = stepOf(args);
  return (
    !!shared &&
    !!step &&
    stepNoteOf(stepNotesIn(shared), step.stageId, step.stepId) !== null
  );
}

function addStepNoteCommands(context: CommandContext): void {
  const { commands, trans } = context;
  commands.addCommand(CommandIDs.noteStep, {
    label: args =>
      hasStepNote(context, args)
        ? trans.__('Edit Note for the Planner…')
        : trans.__('Note for the Planner…'),
    caption: trans.__(
      'Write a note on this step for the planner: it reads it with its next request'
    ),
    icon: editIcon,
    isEnabled: args => context.hasNotebook(args) && stepOf(args) !== null,
    isVisible: args => context.hasNotebook(args) && stepOf(args) !== null,
    execute: async args => {
      await editStepNote(context, args);
    }
  });

  commands.addCommand(CommandIDs.removeStepNote, {
    label: trans.__('Remove Note for the Planner'),
    caption: trans.__('Remove the note on this step'),
    icon: closeIcon,
    isEnabled: args => hasStepNote(context, args),
    isVisible: args => context.hasNotebook(args) && stepOf(args) !== null,
    execute: args => {
      const shared = context.panelOf(args)?.model?.sharedModel;
      const step = stepOf(args);
      if (shared && step) {
        setStepNote(shared, step.stageId, step.stepId, '');
      }
    }
  });

  commands.addCommand(CommandIDs.redoStepWithNote, {
    label: args =>
      hasStepNote(context, args)
        ? trans.__('Redo This Step with the Note…')
        : trans.__('Redo This Step with a Note…'),
    caption: trans.__(
      'Remove the cells of this step and the later ones, and run it again with your note'
    ),
    icon: redoIcon,
    isEnabled: args => {
      const model = context.targetOf(args)?.model;
      const step = stepOf(args);
      return (
        !!model?.canRewind &&
        !!step &&
        !!model.snapshot.rewind?.redoSteps.includes(
          stepKey(step.stageId, step.stepId)
        )
      );
    },
    isVisible: args => context.hasNotebook(args) && stepOf(args) !== null,
    execute: async args => {
      const step = stepOf(args);
      if (!step) {
        return;
      }
      const ask = typeof args.text === 'string' || !hasStepNote(context, args);
      if (ask && !(await editStepNote(context, args))) {
        return;
      }
      // The note stays in the notebook: the redone step's first request carries it.
      return rewind(
        context,
        args,
        { kind: 'step', stageId: step.stageId, stepId: step.stepId },
        trans.__('Redo with the Note')
      );
    }
  });
}

export function addNoteCommands(context: CommandContext): void {
  addCellNoteCommands(context);
  addStepNoteCommands(context);
}
