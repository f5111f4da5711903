/**
 * The reproducibility check's commands (docs/using.md#does-the-run-reproduce): start it (the panel's
 * button, the palette), stop it, and show the cell where a run first differs.
 */
import { NotebookActions } from '@jupyterlab/notebook';
import { refreshIcon, stopIcon } from '@jupyterlab/ui-components';
import { CommandIDs } from '../../tokens';
import type { ReproducibilityChecks } from '../reproducibility';
import type { CommandContext } from './context';

export function addReproduceCommands(
  context: CommandContext,
  checks: Pick<
    ReproducibilityChecks,
    'canCheck' | 'isChecking' | 'check' | 'stop'
  >
): void {
  const { commands, trans } = context;
  commands.addCommand(CommandIDs.checkReproducibility, {
    label: trans.__('Check That the Run Reproduces'),
    caption: trans.__(
      "Run the run's cells top to bottom in a fresh kernel and compare the values it delivered; the notebook's kernel and cells are not touched"
    ),
    icon: refreshIcon,
    isEnabled: args => {
      const panel = context.panelOf(args);
      return !!panel && checks.canCheck(panel);
    },
    isVisible: args => context.hasNotebook(args),
    execute: async args => {
      const panel = context.panelOf(args);
      if (panel && checks.canCheck(panel)) {
        context.openPanel();
        await checks.check(panel);
      }
    }
  });

  commands.addCommand(CommandIDs.stopReproducibilityCheck, {
    label: trans.__('Stop the Reproducibility Check'),
    caption: trans.__('Stop the check; its fresh kernel is shut down'),
    icon: stopIcon,
    isEnabled: args => {
      const panel = context.panelOf(args);
      return !!panel && checks.isChecking(panel);
    },
    isVisible: args => context.hasNotebook(args),
    execute: args => {
      const panel = context.panelOf(args);
      if (panel) {
        checks.stop(panel);
      }
    }
  });

  commands.addCommand(CommandIDs.showCell, {
    label: trans.__('Show the Cell'),
    caption: trans.__('Select the cell in its notebook'),
    execute: async args => {
      const panel = context.panelOf(args);
      const index =
        panel?.content.widgets.findIndex(w => w.model.id === args.cellId) ?? -1;
      if (!panel || index < 0) {
        return;
      }
      context.options.activate?.(panel.id);
      panel.content.activeCellIndex = index;
      panel.content.deselectAll();
      await panel.content.scrollToItem(index, 'center');
      void NotebookActions.focusActiveCell(panel.content, {
        waitUntilReady: true
      });
    }
  });
}
