/**
 * The notebook one keeps (issue 43), a chunk of its own (docs/architecture.md#lazy-loading): the notes
 * for the planner, the reproducibility check and the rewritten cells' attempts. The commands plugin
 * loads it when the first notebook opens; it then adds their commands, marks the notes on each notebook's cells and starts the checks,
 * which keep each run's values from its end. Until then their commands do not exist (menus and the
 * palette leave them out), and no notebook is open to act on.
 */
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import type { KernelSpec, Session } from '@jupyterlab/services';
import type { IRunSettings } from '../engine/settings';
import type { IRewindPlan } from '../engine/state/rewind';
import { noteText, stepNotesIn } from '../notebook/notes';
import {
  cellNoteIn,
  setStepNote,
  sharedCell,
  stepNoteOf
} from '../notebook/noteEdits';
import type { IRunModelRegistry, IWorkflowRunnerRegistry } from '../tokens';
import { CellNoteMarkers } from '../ui/cellNotes';
import type { CommandContext } from './commands/context';
import { addAttemptsCommands } from './commands/attempts';
import { addNoteCommands } from './commands/notes';
import { addReproduceCommands } from './commands/reproduce';
import { ReproducibilityChecks } from './reproducibility';

export interface IKeepOptions {
  /** The run commands' context (`addCommands`): the notes' and the check's commands join them. */
  context: CommandContext;
  tracker: INotebookTracker;
  runners: Pick<IWorkflowRunnerRegistry, 'runnerAdded' | 'entries'>;
  models: Pick<IRunModelRegistry, 'model' | 'modelAdded'>;
  sessions: Session.IManager;
  kernelspecs: KernelSpec.IManager;
  settings: () => IRunSettings;
}

/** Adds the commands, marks the notes of every notebook (open and to come), starts the checks. */
export function startKeep(options: IKeepOptions): ReproducibilityChecks {
  const { context, tracker } = options;
  const checks = new ReproducibilityChecks({
    runners: options.runners,
    models: options.models,
    sessions: options.sessions,
    kernelspecs: options.kernelspecs,
    settings: options.settings,
    trans: context.trans
  });
  addNoteCommands(context);
  addReproduceCommands(context, checks);
  addAttemptsCommands(context);
  context.beforeRewind = keepNotesOfRemovedCells;
  const markNotes = (panel: NotebookPanel) =>
    new CellNoteMarkers(panel, context.commands, context.trans);
  tracker.forEach(markNotes);
  tracker.widgetAdded.connect((_, panel) => markNotes(panel));
  return checks;
}

/** The notes on the cells a rewind removes, moved onto their steps (after the step's own note). */
export function keepNotesOfRemovedCells(
  panel: NotebookPanel,
  plan: IRewindPlan
): void {
  const shared = panel.model?.sharedModel;
  if (!shared) {
    return;
  }
  for (const { cellId } of plan.remove) {
    const cell = sharedCell(shared, cellId);
    const note = cell ? cellNoteIn(cell) : null;
    const stepId = note?.step_id ?? plan.stepId;
    if (!note || !stepId) {
      continue;
    }
    const stageId = note.stage_id ?? plan.stageId;
    const own = stepNoteOf(stepNotesIn(shared), stageId, stepId);
    const text = own ? `${own.text}\n${note.text}` : note.text;
    if (!own?.text.includes(note.text)) {
      setStepNote(shared, stageId, stepId, noteText(text));
    }
  }
}
