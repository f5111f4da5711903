/**
 * The menu of a step in the panel's progress tree: a note for the planner on the step, and the redo
 * with it. A Lumino menu of commands, so it is keyboard-operable and says which items apply.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import type { CommandRegistry } from '@lumino/commands';
import { Menu } from '@lumino/widgets';
import { CommandIDs } from '../tokens';

/** Opens the menu of a step under `anchor`; from the keyboard, its first item is active. */
export function openStepMenu(
  commands: CommandRegistry,
  trans: TranslationBundle,
  step: { stageId: string; stepId: string },
  anchor: HTMLElement,
  byKeyboard: boolean
): Menu {
  const menu = new Menu({ commands });
  menu.addClass('jp-bcc-step-menu-items');
  menu.title.label = trans.__('Step actions');
  const args = { stageId: step.stageId, stepId: step.stepId };
  menu.addItem({ command: CommandIDs.noteStep, args });
  menu.addItem({ command: CommandIDs.removeStepNote, args });
  menu.addItem({ type: 'separator' });
  menu.addItem({ command: CommandIDs.redoStepWithNote, args });
  menu.addItem({ command: CommandIDs.redoFromStep, args });
  menu.aboutToClose.connect(() => {
    // Back to the button that opened it; the menu goes once closed.
    requestAnimationFrame(() => {
      if (anchor.isConnected) {
        anchor.focus();
      }
      menu.dispose();
    });
  });
  const box = anchor.getBoundingClientRect();
  menu.open(box.left, box.bottom);
  if (byKeyboard) {
    menu.activeIndex = 0;
  }
  return menu;
}
