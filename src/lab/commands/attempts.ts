/**
 * The attempts of rewritten cells (docs/using.md#a-retry-fixes-its-own-cell): from a cell (its context
 * menu and toolbar: the active cell, or `cellId`) or from a step of the panel (`stepId`), shown in a
 * dialog from which one attempt can be put back into its cell.
 */
import { historyIcon } from '@jupyterlab/ui-components';
import type { NotebookPanel } from '@jupyterlab/notebook';
import {
  cellAttempts,
  type ICellAttemptsView,
  restoreCode,
  stepAttemptsOf,
  stepsWithAttempts
} from '../../notebook/attempts';
import { CommandIDs } from '../../tokens';
import type { CommandArgs, CommandContext } from './context';

/**
 * The cell a command acts on: `cellId`; from the context menu, the cell it was opened on (a right
 * click does not make a selected cell the active one); else the notebook's active cell.
 */
function cellIdOf(
  panel: NotebookPanel,
  args: CommandArgs,
  context: CommandContext
): string | null {
  if (typeof args.cellId === 'string') {
    return args.cellId;
  }
  const node =
    args.contextMenu === true
      ? (context.options.contextMenuCell?.() ?? null)
      : null;
  const clicked = node
    ? panel.content.widgets.find(cell => cell.node === node)
    : undefined;
  return (clicked ?? panel.content.activeCell)?.model.id ?? null;
}

/** What the command shows: the step's rewritten cells, or the one cell's. */
function attemptsOf(
  panel: NotebookPanel,
  args: CommandArgs,
  context: CommandContext
): ICellAttemptsView[] {
  const shared = panel.model?.sharedModel;
  if (!shared) {
    return [];
  }
  if (typeof args.stepId === 'string') {
    return stepAttemptsOf(shared, args.stepId);
  }
  const cellId = cellIdOf(panel, args, context);
  const one = cellId ? cellAttempts(shared, cellId) : null;
  return one ? [one] : [];
}

/** Whether there is anything to show, without reading every cell more than once per change. */
function hasAttempts(
  panel: NotebookPanel,
  args: CommandArgs,
  context: CommandContext
): boolean {
  const model = panel.model;
  if (!model) {
    return false;
  }
  if (typeof args.stepId === 'string') {
    return stepsWithAttempts(model).has(args.stepId);
  }
  const cellId = cellIdOf(panel, args, context);
  return cellId !== null && cellAttempts(model.sharedModel, cellId) !== null;
}

export function addAttemptsCommands(context: CommandContext): void {
  const { commands, trans } = context;
  commands.addCommand(CommandIDs.showAttempts, {
    label: args => {
      if (typeof args.stepId === 'string') {
        return trans.__('Attempts…');
      }
      const panel = context.panelOf(args);
      const count = panel
        ? (attemptsOf(panel, args, context)[0]?.attempts.length ?? 0)
        : 0;
      return count > 0
        ? trans.__('Attempts (%1)…', count)
        : trans.__('Attempts…');
    },
    caption: trans.__(
      'The earlier code of the cells a retry fixed, with their errors; restore one of them'
    ),
    icon: historyIcon,
    isVisible: args => {
      const panel = context.panelOf(args);
      return panel !== null && hasAttempts(panel, args, context);
    },
    execute: async args => {
      const panel = context.panelOf(args);
      const cells = panel ? attemptsOf(panel, args, context) : [];
      if (!panel || cells.length === 0) {
        return;
      }
      const { showAttemptsDialog } = await import('../../ui/attemptsDialog');
      const choice = await showAttemptsDialog(
        cells,
        trans,
        trans.__('Attempts in %1', panel.context.localPath)
      );
      const shared = panel.model?.sharedModel;
      const cell = shared?.cells.find(c => c.getId() === choice?.cellId);
      if (shared && cell && choice) {
        restoreCode(shared, cell, choice.index, new Date());
      }
    }
  });
}
