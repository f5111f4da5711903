/**
 * The run commands. Each acts on the notebook given as `notebook` (a panel id, e.g. from a toolbar
 * button) or else on the active notebook; enabled and visible states follow that notebook's run model.
 * They are grouped by what they act on, one file per group, sharing a `CommandContext`.
 */
import type { CommandRegistry } from '@lumino/commands';
import { CommandIDs } from '../../tokens';
import { CommandContext, ICommandsOptions } from './context';
import { addControlCommands } from './control';
import { addPlannerCommands } from './planner';
import { addRewindCommands } from './rewind';
import { addSavedRunCommands } from './savedRun';
import { addStartCommands } from './start';

/** The run commands, in palette order; `CommandIDs.open` belongs to the sidebar. */
export const RUN_COMMANDS: readonly string[] = [
  CommandIDs.run,
  CommandIDs.pause,
  CommandIDs.resume,
  CommandIDs.togglePause,
  CommandIDs.step,
  CommandIDs.stop,
  CommandIDs.retry,
  CommandIDs.setVariables,
  CommandIDs.exportTrace,
  CommandIDs.testConnection,
  CommandIDs.takeOver,
  CommandIDs.discardSavedRun,
  CommandIDs.undoBehavior,
  CommandIDs.redoFromStep
];

/**
 * The run commands the notes' and the reproducibility check's chunk adds (`lab/keep.ts`), in palette
 * order after `RUN_COMMANDS`; they do not exist until it has loaded (nor does the rewritten cells'
 * Attempts command, `CommandIDs.showAttempts`, which the chunk adds too: in cell menus, not the palette).
 */
export const KEEP_RUN_COMMANDS: readonly string[] = [
  CommandIDs.redoStepWithNote,
  CommandIDs.checkReproducibility,
  CommandIDs.stopReproducibilityCheck
];

/**
 * Adds the run commands to `commands`; they are re-evaluated whenever the current run changes. The
 * notes' and the reproducibility check's commands join them from their chunk (`lab/keep.ts`), through
 * the context returned.
 */
export function addCommands(
  commands: CommandRegistry,
  options: ICommandsOptions
): CommandContext {
  const context = new CommandContext(commands, options);
  addStartCommands(context);
  addControlCommands(context);
  addSavedRunCommands(context);
  addPlannerCommands(context);
  addRewindCommands(context);

  // A run changes its model several times per action: the toolbar, menus and palette read the
  // commands again once per frame, not at each change.
  let notifying = false;
  options.models.currentChanged.connect(() => {
    if (notifying) {
      return;
    }
    notifying = true;
    requestAnimationFrame(() => {
      notifying = false;
      for (const id of RUN_COMMANDS) {
        commands.notifyCommandChanged(id);
      }
      for (const id of [CommandIDs.showAttempts, ...KEEP_RUN_COMMANDS]) {
        if (commands.hasCommand(id)) {
          commands.notifyCommandChanged(id);
        }
      }
    });
  });
  return context;
}
