/** The planner commands: Test connection and the LLM Planner Settings (`planner.ts`). */
import { Notification } from '@jupyterlab/apputils';
import { dismissDialog, waitForDialog } from '@jupyterlab/testing';
import { msg, say } from '../../../protocol/messages';
import { markingTrans } from '../../../ui/__tests__/markingTranslator';
import { CommandIDs } from '../../../tokens';
import { loadRuntime } from '../../lazy';
import { llmServer, loadRuntimeFirst, setup } from './fixture';

describe('the planner commands', () => {
  loadRuntimeFirst();

  it("opens the LLM Planner Settings on the server's settings", async () => {
    const server = llmServer();
    const { commands } = setup(undefined, { llm: server });
    expect(commands.label(CommandIDs.llmSettings)).toBe(
      'LLM Planner Settings…'
    );
    await loadRuntime();
    const done = commands.execute(CommandIDs.llmSettings);
    await waitForDialog();
    await new Promise(resolve => setTimeout(resolve, 50));
    expect(
      document.querySelector<HTMLInputElement>(
        '.jp-Dialog .jp-bcc-llm-base-url'
      )?.value
    ).toBe('http://localhost:8080/v1');
    await dismissDialog();
    expect(await done).toBeNull();
    expect(server.get).toHaveBeenCalledTimes(1);
  });

  it('has no LLM Planner Settings command without the server', () => {
    const { commands } = setup();
    expect(commands.hasCommand(CommandIDs.llmSettings)).toBe(false);
  });

  it('tests the planner connection and tells the result in a notification', async () => {
    const { commands, first, modelOf } = setup();
    const success = jest.spyOn(Notification, 'success');
    const error = jest.spyOn(Notification, 'error');
    expect(commands.label(CommandIDs.testConnection)).toBe(
      'Test Planner Connection'
    );
    expect(commands.isEnabled(CommandIDs.testConnection)).toBe(true);
    expect(await commands.execute(CommandIDs.testConnection)).toBe(true);
    expect(modelOf(first).planner!.checkConnection).toHaveBeenCalledTimes(1);
    expect(success).toHaveBeenCalledWith(
      'Test connection: The planner (http://planner.test) answers (HTTP 200).',
      { autoClose: 5000 }
    );

    modelOf(first).planner!.checkConnection.mockResolvedValueOnce({
      ok: false,
      message:
        'The planner cannot be reached. Start the planner, or set its URL in Settings > Notebook-BCC.'
    });
    expect(await commands.execute(CommandIDs.testConnection)).toBe(false);
    const full =
      'Test connection: The planner cannot be reached. Start the planner, or set its URL in Settings > Notebook-BCC.';
    expect(error).toHaveBeenCalledWith(
      full,
      expect.objectContaining({ autoClose: false })
    );
    // The notification shows 140 characters: Details shows all of it, Open Settings goes to the fix.
    const actions = error.mock.calls[0][1]!.actions!;
    expect(actions.map(action => action.label)).toEqual([
      'Details',
      'Open Settings'
    ]);
    actions[0].callback(new MouseEvent('click'));
    await waitForDialog();
    expect(document.querySelector('.jp-Dialog-body')?.textContent).toBe(
      full.replace('Test connection: ', '')
    );
    await dismissDialog();
    const opened = jest.fn();
    commands.addCommand('settingeditor:open', { execute: opened });
    actions[1].callback(new MouseEvent('click'));
    expect(opened).toHaveBeenCalledWith({ query: 'Notebook-BCC' });

    modelOf(first).planner = null;
    expect(commands.isEnabled(CommandIDs.testConnection)).toBe(false);
  });

  it('tells the connection check in the user language, the cause as the system said it', async () => {
    const { commands, first, modelOf } = setup(markingTrans);
    const error = jest.spyOn(Notification, 'error');
    modelOf(first).planner!.checkConnection.mockResolvedValueOnce({
      ok: false,
      ...say(
        'connectionUnreachable',
        msg('builtinLabel'),
        msg('requestFailed', 'GET builtin://demo-planner/', 'chunk failed')
      )
    });
    expect(await commands.execute(CommandIDs.testConnection)).toBe(false);
    expect(error).toHaveBeenCalledWith(
      '⟦Test connection: ⟦The planner (⟦Demo planner (built in)⟧) cannot be reached: ⟦GET builtin://demo-planner/ failed: chunk failed⟧. Start the planner, or set its URL in Settings > Notebook-BCC.⟧⟧',
      expect.objectContaining({ autoClose: false })
    );
  });
});
