/**
 * The attempts of a rewritten cell, from the cell and from the panel's step: shown when there are
 * some, and one of them restored, in a real notebook.
 */
import { waitForDialog } from '@jupyterlab/testing';
import { nullTranslator } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import type { ICellProvenance } from '../../../engine/ports/driver';
import { attemptsOf } from '../../../notebook/attempts';
import { NotebookDriver } from '../../../notebook/notebookDriver';
import {
  IOpenNotebook,
  openNotebook,
  quietConsole,
  useJupyterServer
} from '../../../notebook/__tests__/utils';
import { CommandIDs } from '../../../tokens';
import { addAttemptsCommands } from '../attempts';
import { CommandContext, type ICommandsOptions } from '../context';

quietConsole();

const services = useJupyterServer();
const AT = new Date('2026-05-06T07:08:09.000Z');
const provenance: ICellProvenance = {
  stage_id: 's1',
  step_id: 'totals',
  behavior_id: 'behavior_001',
  action_index: 0,
  action: 'add'
};

let notebook: IOpenNotebook;
let driver: NotebookDriver;
let commands: CommandRegistry;
/** The cell node the context menu was opened on, as JupyterLab's hit test finds it. */
let contextCell: HTMLElement | null;

beforeEach(async () => {
  notebook = await openNotebook(services(), { kernel: false });
  driver = new NotebookDriver({ panel: notebook.panel });
  commands = new CommandRegistry();
  const panel = notebook.panel;
  const options = {
    tracker: {
      currentWidget: panel,
      find: (test: (p: typeof panel) => boolean) =>
        test(panel) ? panel : undefined
    },
    trans: nullTranslator.load('notebook_bcc'),
    contextMenuCell: () => contextCell
  } as unknown as ICommandsOptions;
  contextCell = null;
  addAttemptsCommands(new CommandContext(commands, options));
}, 60000);

afterEach(async () => {
  await notebook.dispose();
});

/** A cell of the run, fixed twice; the other cell is plain. */
async function rewritten(): Promise<{ fixed: string; plain: string }> {
  const fixed = await driver.addCell({
    kind: 'code',
    source: 'x = 1/0',
    role: 'code',
    provenance
  });
  const plain = await driver.addCell({
    kind: 'code',
    source: 'y = 2',
    role: 'code',
    provenance: { ...provenance, step_id: 'other' }
  });
  await driver.rewriteCell({ cellId: fixed, source: 'x = 1/1', at: AT });
  await driver.rewriteCell({ cellId: fixed, source: 'x = 1', at: AT });
  return { fixed, plain };
}

describe('the attempts command', () => {
  it('is shown for a rewritten cell and a step with one, with the count, and not otherwise', async () => {
    const before = { stepId: 'totals' };
    expect(commands.isVisible(CommandIDs.showAttempts, before)).toBe(false);
    const { fixed, plain } = await rewritten();
    expect(commands.isVisible(CommandIDs.showAttempts, { cellId: fixed })).toBe(
      true
    );
    expect(commands.label(CommandIDs.showAttempts, { cellId: fixed })).toBe(
      'Attempts (2)…'
    );
    expect(commands.isVisible(CommandIDs.showAttempts, { cellId: plain })).toBe(
      false
    );
    // The panel's step: known once the notebook changed, without waiting.
    expect(commands.isVisible(CommandIDs.showAttempts, before)).toBe(true);
    expect(
      commands.isVisible(CommandIDs.showAttempts, { stepId: 'other' })
    ).toBe(false);
    expect(commands.label(CommandIDs.showAttempts, before)).toBe('Attempts…');
  });

  it('from the context menu, names the cell right-clicked, not the active one', async () => {
    const { fixed, plain } = await rewritten();
    const content = notebook.panel.content;
    const widgetOf = (id: string) =>
      content.widgets.find(cell => cell.model.id === id)!;
    // A right click on a selected cell leaves another one active.
    content.activeCellIndex = content.widgets.indexOf(widgetOf(plain));
    const fromMenu = { contextMenu: true };
    contextCell = widgetOf(fixed).node;
    expect(commands.isVisible(CommandIDs.showAttempts, fromMenu)).toBe(true);
    expect(commands.label(CommandIDs.showAttempts, fromMenu)).toBe(
      'Attempts (2)…'
    );
    // Not from the context menu: the active cell, which has none.
    expect(commands.isVisible(CommandIDs.showAttempts, {})).toBe(false);
    contextCell = widgetOf(plain).node;
    expect(commands.isVisible(CommandIDs.showAttempts, fromMenu)).toBe(false);
  });

  it('shows the attempts of the step’s cells and restores the one the user picks', async () => {
    const { fixed } = await rewritten();
    const done = commands.execute(CommandIDs.showAttempts, {
      stepId: 'totals'
    });
    await waitForDialog();
    const dialog = document.querySelector<HTMLElement>('.jp-Dialog')!;
    const items = [...dialog.querySelectorAll('.jp-bcc-attempt')];
    // Newest first: the code the second fix replaced, then the one that failed first.
    expect(items.map(item => item.querySelector('code')?.textContent)).toEqual([
      'x = 1/1',
      'x = 1/0'
    ]);
    expect(dialog.querySelector('.jp-bcc-attempts-cell pre')?.textContent).toBe(
      'x = 1'
    );
    items[1]
      .querySelector<HTMLButtonElement>('.jp-bcc-attempt-restore')!
      .click();
    await done;
    const cell = notebook.panel.model!.sharedModel.cells.find(
      c => c.getId() === fixed
    )!;
    expect(cell.getSource()).toBe('x = 1/0');
    expect(attemptsOf(cell).map(a => [a.code, a.by])).toEqual([
      ['x = 1/1', 'planner'],
      ['x = 1', 'user']
    ]);
  });
});
