/** Which commands a notebook's run offers, and on which notebook they act (`context.ts`). */
import { CommandIDs } from '../../../tokens';
import { KEEP_RUN_COMMANDS, RUN_COMMANDS } from '../addCommands';
import { NONE, setup } from './fixture';

describe('the run commands', () => {
  it('adds every run command', () => {
    const { commands } = setup();
    for (const id of RUN_COMMANDS) {
      expect(commands.hasCommand(id)).toBe(true);
    }
  });

  it('hides the commands and disables them when no notebook is active', () => {
    const { commands, tracker } = setup();
    tracker.currentWidget = null;
    for (const id of RUN_COMMANDS) {
      expect(commands.isVisible(id)).toBe(false);
      expect(commands.isEnabled(id)).toBe(false);
    }
  });

  it("enables what the current run's availability allows", () => {
    const { commands, first, modelOf } = setup();
    expect(commands.isEnabled(CommandIDs.run)).toBe(true);
    expect(commands.isEnabled(CommandIDs.pause)).toBe(false);
    expect(commands.isVisible(CommandIDs.pause)).toBe(true);
    modelOf(first).availability = { ...NONE, pause: true, stop: true };
    expect(commands.isEnabled(CommandIDs.run)).toBe(false);
    expect(commands.isEnabled(CommandIDs.pause)).toBe(true);
    expect(commands.isEnabled(CommandIDs.togglePause)).toBe(true);
    expect(commands.isEnabled(CommandIDs.stop)).toBe(true);
    expect(commands.isEnabled(CommandIDs.step)).toBe(false);
  });

  it('shows Retry only when the run can retry', () => {
    const { commands, first, modelOf } = setup();
    expect(commands.isVisible(CommandIDs.retry)).toBe(false);
    modelOf(first).availability = { ...NONE, retry: true };
    expect(commands.isVisible(CommandIDs.retry)).toBe(true);
    expect(commands.isEnabled(CommandIDs.retry)).toBe(true);
  });

  it('acts on the notebook named by `notebook`, not the active one', async () => {
    const { commands, first, second, modelOf, runnerOf } = setup();
    modelOf(second).availability = { ...NONE, pause: true };
    expect(commands.isEnabled(CommandIDs.pause)).toBe(false);
    expect(commands.isEnabled(CommandIDs.pause, { notebook: 'nb-2' })).toBe(
      true
    );
    await commands.execute(CommandIDs.pause, { notebook: 'nb-2' });
    expect(runnerOf(second).pause).toHaveBeenCalledTimes(1);
    expect(runnerOf(first).pause).not.toHaveBeenCalled();
    expect(commands.isVisible(CommandIDs.pause, { notebook: 'nb-9' })).toBe(
      false
    );
  });

  it('re-evaluates every run command, and the attempts of the active cell, once per frame when the current run changes', async () => {
    const { commands, currentChanged } = setup();
    const changed: string[] = [];
    commands.commandChanged.connect((_, args) => {
      if (args.id) {
        changed.push(args.id);
      }
    });
    const frame = () =>
      new Promise(resolve => requestAnimationFrame(() => resolve(null)));
    currentChanged.emit(null);
    currentChanged.emit(null);
    currentChanged.emit(null);
    expect(changed).toEqual([]);
    await frame();
    const once = [...RUN_COMMANDS];
    expect(changed).toEqual(once);
    currentChanged.emit(null);
    await frame();
    expect(changed).toEqual([...once, ...once]);
  });

  it('re-evaluates the notes’ and the check’s run commands once their chunk has added them, not before', async () => {
    const { commands, currentChanged } = setup();
    const changed: string[] = [];
    commands.commandChanged.connect((_, args) => {
      if (args.id && args.type === 'changed') {
        changed.push(args.id);
      }
    });
    const frame = () =>
      new Promise(resolve => requestAnimationFrame(() => resolve(null)));
    const kept = [CommandIDs.showAttempts, ...KEEP_RUN_COMMANDS];
    expect(kept.some(id => commands.hasCommand(id))).toBe(false);
    currentChanged.emit(null);
    await frame();
    expect(changed).toEqual([...RUN_COMMANDS]);
    for (const id of kept) {
      commands.addCommand(id, { execute: () => undefined });
    }
    changed.length = 0;
    currentChanged.emit(null);
    await frame();
    expect(changed).toEqual([
      ...RUN_COMMANDS,
      CommandIDs.showAttempts,
      ...KEEP_RUN_COMMANDS
    ]);
  });
});
