/** Starting a run: its arguments, the Run dialog, the planner check before it, the run lock (`start.ts`). */
import { Notification } from '@jupyterlab/apputils';
import {
  acceptDialog,
  dismissDialog,
  waitForDialog
} from '@jupyterlab/testing';
import type { IConnectionCheck } from '../../../protocol';
import { msg, say } from '../../../protocol/messages';
import { CommandIDs, ILlmChoice } from '../../../tokens';
import { loadRuntime } from '../../lazy';
import { llmServer, loadRuntimeFirst, setup } from './fixture';

describe('Run', () => {
  loadRuntimeFirst();

  // The command's arguments, cleaned (trimmed, non-strings dropped), become the run's start options.
  it.each([
    {
      given: 'the task',
      args: {
        task: '  What drives prices?  ',
        dataFiles: ['housing.csv', 3],
        stepMode: true
      },
      started: {
        task: 'What drives prices?',
        dataFiles: ['housing.csv'],
        stepMode: true
      }
    },
    {
      given: 'the model',
      args: { task: 't', llmModel: ' qwen ' },
      started: {
        task: 't',
        dataFiles: [],
        stepMode: false,
        llmModel: 'qwen'
      }
    }
  ])(
    'starts a run with $given given as arguments and opens the panel',
    async ({ args, started }) => {
      const { commands, first, runnerOf, opened } = setup();
      await commands.execute(CommandIDs.run, args);
      expect(runnerOf(first).start).toHaveBeenCalledWith(started);
      expect(opened).toHaveBeenCalledTimes(1);
    }
  );

  it('starts a run with the LLM model picked in the Run dialog', async () => {
    const choice = jest.fn(async (): Promise<ILlmChoice> => ({
      model: 'gemma',
      models: ['gemma', 'qwen'],
      base_url: 'http://localhost:8080/v1',
      readonly: false
    }));
    const { commands, first, runnerOf } = setup(undefined, {
      llm: { ...llmServer(), choice }
    });
    // The dialogs are in the runtime chunk: its first load is slow on a busy machine.
    await loadRuntime();
    const run = commands.execute(CommandIDs.run);
    await waitForDialog();
    await new Promise(resolve => setTimeout(resolve, 0));
    const task = document.querySelector<HTMLTextAreaElement>(
      '.jp-Dialog .jp-bcc-task-input'
    )!;
    task.value = 'Which region sells most?';
    task.dispatchEvent(new Event('input'));
    const select = document.querySelector<HTMLSelectElement>(
      '.jp-Dialog select.jp-bcc-llm-model'
    )!;
    select.value = 'qwen';
    select.dispatchEvent(new Event('change'));
    await acceptDialog();
    await run;
    expect(runnerOf(first).start).toHaveBeenCalledWith({
      task: 'Which region sells most?',
      dataFiles: [],
      stepMode: false,
      llmModel: 'qwen'
    });
  });

  it("asks the LLM planner's first-run question after the Run dialog; closed, the run does not start", async () => {
    const answers = [false, true];
    const confirmLlmRun = jest.fn(async () => answers.shift()!);
    const { commands, first, runnerOf } = setup(undefined, { confirmLlmRun });
    await loadRuntime();
    for (const expected of [0, 1]) {
      const run = commands.execute(CommandIDs.run);
      await waitForDialog();
      await new Promise(resolve => setTimeout(resolve, 0));
      const task = document.querySelector<HTMLTextAreaElement>(
        '.jp-Dialog .jp-bcc-task-input'
      )!;
      task.value = 'Which region sells most?';
      task.dispatchEvent(new Event('input'));
      await acceptDialog();
      await run;
      expect(runnerOf(first).start).toHaveBeenCalledTimes(expected);
    }
    expect(confirmLlmRun).toHaveBeenCalledTimes(2);
  });

  it('offers no relay model to a run sent straight to a planner (the browser transport)', async () => {
    const choice = jest.fn(async () => null);
    const { commands } = setup(undefined, {
      llm: { ...llmServer(), choice },
      transport: 'browser'
    });
    await loadRuntime();
    const run = commands.execute(CommandIDs.run);
    await waitForDialog();
    expect(document.querySelector('.jp-Dialog .jp-bcc-llm-model')).toBeNull();
    await dismissDialog();
    await run;
    expect(choice).not.toHaveBeenCalled();
  });

  it('does not start a second run while one is active', async () => {
    const { commands, first, runnerOf } = setup();
    runnerOf(first).isRunning = true;
    await commands.execute(CommandIDs.run, { task: 'Again' });
    expect(runnerOf(first).start).not.toHaveBeenCalled();
  });

  it('says why a run did not start and offers what may fix it when the planner is unreachable', async () => {
    const useBuiltinPlanner = jest.fn(async () => undefined);
    const { commands, first, runnerOf, modelOf } = setup(undefined, {
      useBuiltinPlanner
    });
    const settingsOpened = jest.fn();
    commands.addCommand('settingeditor:open', { execute: settingsOpened });
    const relay = 'http://localhost:8888/notebook-bcc/relay';
    const unreachable: IConnectionCheck = {
      ok: false,
      ...say(
        'connectionUnreachable',
        msg('relayLabel', relay),
        msg(
          'relayUnreachable',
          `GET ${relay}/`,
          'Planner at http://127.0.0.1:28600 is unreachable: connection refused'
        )
      )
    };
    const model = modelOf(first);
    model.planner!.checkConnection.mockResolvedValue(unreachable);
    const run = commands.execute(CommandIDs.run, { task: 't', check: true });
    await waitForDialog();
    const dialog = document.querySelector('.jp-Dialog')!;
    expect(dialog.querySelector('.jp-bcc-problem-summary')!.textContent).toBe(
      'Notebook-BCC could not reach the planner at http://127.0.0.1:28600: connection refused.'
    );
    // The chain is folded under Details.
    const details = dialog.querySelector('details.jp-bcc-problem-details')!;
    expect(details.hasAttribute('open')).toBe(false);
    expect(details.textContent).toContain("the Jupyter server's relay");
    const labels = [...dialog.querySelectorAll('.jp-Dialog-button')].map(
      b => b.textContent
    );
    expect(labels).toEqual([
      'Close',
      'Open Settings',
      'Test connection',
      'Use the built-in demo',
      'Retry'
    ]);
    // The panel says it too, with the task to retry.
    expect(model.setStartProblem).toHaveBeenLastCalledWith({
      message: unreachable,
      options: { task: 't', dataFiles: [], stepMode: false }
    });
    const settings = [...dialog.querySelectorAll('.jp-Dialog-button')].find(
      b => b.textContent === 'Open Settings'
    ) as HTMLButtonElement;
    settings.click();
    await run;
    expect(settingsOpened).toHaveBeenCalledWith({ query: 'Notebook-BCC' });
    expect(runnerOf(first).start).not.toHaveBeenCalled();

    // Retry checks again and starts the same run once the planner answers.
    const retried = commands.execute(CommandIDs.run, {
      task: 't',
      check: true
    });
    await waitForDialog();
    model.planner!.checkConnection.mockResolvedValue({
      ok: true,
      status: 200,
      message: 'answers'
    });
    await acceptDialog();
    await retried;
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(model.setStartProblem).toHaveBeenLastCalledWith(null);
    expect(runnerOf(first).start).toHaveBeenCalledWith({
      task: 't',
      dataFiles: [],
      stepMode: false
    });
  });

  it('switches to the built-in demo and starts the run from the problem dialog', async () => {
    const useBuiltinPlanner = jest.fn(async () => undefined);
    const { commands, first, runnerOf, modelOf } = setup(undefined, {
      useBuiltinPlanner
    });
    const model = modelOf(first);
    model.planner!.checkConnection.mockResolvedValueOnce({
      ok: false,
      ...say(
        'connectionUnreachable',
        'http://localhost:28600',
        msg('requestFailed', 'GET http://localhost:28600/', 'Failed to fetch')
      )
    });
    const run = commands.execute(CommandIDs.run, { task: 't', check: true });
    await waitForDialog();
    const demo = [...document.querySelectorAll('.jp-Dialog-button')].find(
      b => b.textContent === 'Use the built-in demo'
    ) as HTMLButtonElement;
    demo.click();
    await run;
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(useBuiltinPlanner).toHaveBeenCalledTimes(1);
    expect(runnerOf(first).start).toHaveBeenCalledWith({
      task: 't',
      dataFiles: [],
      stepMode: false
    });
  });

  it('starts a run only with the run lock, and lets the lock go when the run ends', async () => {
    const { commands, first, modelOf, runnerOf } = setup();
    const warning = jest.spyOn(Notification, 'warning');
    const lock = { acquire: jest.fn(async () => false), release: jest.fn() };
    Object.assign(modelOf(first), { lock });
    await commands.execute(CommandIDs.run, { task: 'Describe the data' });
    await Promise.resolve();
    expect(runnerOf(first).start).not.toHaveBeenCalled();
    expect(warning).toHaveBeenCalledWith(
      'This notebook is running in another window; its run was not started here.',
      { autoClose: 5000 }
    );

    lock.acquire.mockResolvedValue(true);
    await commands.execute(CommandIDs.run, { task: 'Describe the data' });
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(runnerOf(first).start).toHaveBeenCalledTimes(1);
    expect(lock.release).toHaveBeenCalledTimes(1);
  });

  it('opens one Run dialog per notebook: a second Run while it (or its planner check) is open does nothing', async () => {
    const { commands, first, runnerOf } = setup();
    const one = commands.execute(CommandIDs.run);
    await waitForDialog();
    const two = commands.execute(CommandIDs.run);
    await new Promise(resolve => setTimeout(resolve, 50));
    expect(document.querySelectorAll('.jp-Dialog')).toHaveLength(1);
    await two;
    await dismissDialog();
    await one;
    expect(runnerOf(first).start).not.toHaveBeenCalled();
    // Once it is closed, Run opens it again.
    const again = commands.execute(CommandIDs.run);
    await waitForDialog();
    await dismissDialog();
    await again;
  });
});
