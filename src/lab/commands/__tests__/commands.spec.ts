import { Notification } from '@jupyterlab/apputils';
import { NotebookModel, NotebookPanel } from '@jupyterlab/notebook';
import type { Contents } from '@jupyterlab/services';
import { nullTranslator } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import {
  acceptDialog,
  dismissDialog,
  waitForDialog
} from '@jupyterlab/testing';
import { Signal } from '@lumino/signaling';
import type { IRunSettings } from '../../../engine/settings';
import type { IRunSnapshot, IWorkflowRunner } from '../../../engine/types';
import type { IConnectionCheck } from '../../../protocol';
import { msg, say } from '../../../protocol/messages';
import { refusal } from '../../../engine/messages';
import { markingTrans } from '../../../ui/__tests__/markingTranslator';
import {
  CommandIDs,
  ICommandAvailability,
  ICurrentRun,
  ILlmChoice,
  IRunModel,
  IRunModelRegistry,
  RunLockState
} from '../../../tokens';
import { RUN_STATE_METADATA_KEY } from '../../../notebook/metadata';
import { addCommands, RUN_COMMANDS } from '../addCommands';
import type { ICommandsOptions } from '../context';
import { loadRuntime } from '../../lazy';
import type { ILlmSettings } from '../../../ui/llmSettingsDialog';

const NONE: ICommandAvailability = {
  run: false,
  pause: false,
  resume: false,
  step: false,
  stop: false,
  retry: false
};

/** The LLM planner's settings on a server, recorded. */
function llmServer() {
  const stored: ILlmSettings = {
    source: 'user',
    readonly: false,
    base_url: 'http://localhost:8080/v1',
    model: 'gemma',
    models: ['gemma'],
    api_key_set: false
  };
  return {
    choice: jest.fn(async (): Promise<ILlmChoice | null> => null),
    get: jest.fn(async () => stored),
    save: jest.fn(async () => stored),
    remove: jest.fn(async () => undefined),
    test: jest.fn(async () => ({ ok: true, message: 'answers' }))
  };
}

/** A notebook panel as the commands see it: an id and a path. */
function panel(id: string, path: string): NotebookPanel {
  return { id, context: { path, localPath: path } } as unknown as NotebookPanel;
}

/** The runner methods the commands call, recorded. */
function fakeRunner() {
  return {
    isRunning: false,
    snapshot: { state: 'IDLE' } as { state: string; rewinding?: boolean },
    trace: { length: 0, toJSONL: () => '{"kind":"request"}\n' },
    start: jest.fn(() => Promise.resolve({ reason: 'completed' })),
    resumeFromSaved: jest.fn(() => Promise.resolve(null)),
    pause: jest.fn(),
    resume: jest.fn(),
    step: jest.fn(),
    stop: jest.fn(() => Promise.resolve()),
    retry: jest.fn(() => Promise.resolve({ reason: 'completed' })),
    forgetRun: jest.fn()
  };
}

/** The part of a run model the commands read. */
function fakeModel(availability: Partial<ICommandAvailability> = {}) {
  return {
    availability: { ...NONE, ...availability },
    canResumeSaved: false,
    canRewind: false,
    canTakeOver: false,
    canDiscardSaved: false,
    lockState: { kind: 'free', stale: false } as RunLockState,
    startProblem: null as IRunModel['startProblem'],
    setStartProblem: jest.fn(),
    plannerLocation: null as IRunModel['plannerLocation'],
    planner: {
      checkConnection: jest.fn(async (): Promise<IConnectionCheck> => ({
        ok: true,
        status: 200,
        message: 'The planner (http://planner.test) answers (HTTP 200).'
      }))
    } as { checkConnection: jest.Mock<Promise<IConnectionCheck>> } | null
  };
}

function setup(
  trans = nullTranslator.load('notebook_bcc'),
  {
    transport,
    ...extra
  }: Partial<ICommandsOptions> & {
    transport?: IRunSettings['transport'];
  } = {}
) {
  const first = panel('nb-1', 'work/first.ipynb');
  const second = panel('nb-2', 'second.ipynb');
  const runners = new Map([
    [first, fakeRunner()],
    [second, fakeRunner()]
  ]);
  const runModels = new Map([
    [first, fakeModel({ run: true })],
    [second, fakeModel({ run: true })]
  ]);
  const tracker = {
    currentWidget: first as NotebookPanel | null,
    find: (test: (p: NotebookPanel) => boolean) => [first, second].find(test)
  };
  const currentChanged = new Signal<IRunModelRegistry, ICurrentRun | null>(
    {} as IRunModelRegistry
  );
  const saved: { path: string; model: Partial<Contents.IModel> }[] = [];
  const commands = new CommandRegistry();
  const opened = jest.fn();
  commands.addCommand(CommandIDs.open, { execute: opened });
  addCommands(commands, {
    tracker,
    runners: {
      get: p => (runners.get(p) ?? null) as unknown as IWorkflowRunner | null,
      ...(transport ? { settings: { transport } as IRunSettings } : {})
    },
    models: {
      model: p => (runModels.get(p) ?? null) as unknown as IRunModel | null,
      currentChanged
    },
    contents: {
      save: async (path, model) => {
        saved.push({ path, model: model ?? {} });
        return {} as Contents.IModel;
      }
    },
    trans,
    ...extra
  });
  return {
    commands,
    tracker,
    first,
    second,
    runnerOf: (p: NotebookPanel) => runners.get(p)!,
    modelOf: (p: NotebookPanel) => runModels.get(p)!,
    currentChanged,
    saved,
    opened
  };
}

describe('addCommands', () => {
  // The dialogs live in the runtime chunk; its first load compiles much of the package, which on a busy
  // machine takes longer than one test's 5 s. Load it once, with its own time limit.
  beforeAll(async () => {
    await loadRuntime();
  }, 120000);

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

  it("reports the run's refusal in the user's language", async () => {
    const { commands, first, modelOf, runnerOf } = setup(markingTrans);
    const error = jest.spyOn(Notification, 'error');
    modelOf(first).availability = { ...NONE, retry: true };
    runnerOf(first).retry.mockRejectedValueOnce(refusal('noFailedRequest'));
    await commands.execute(CommandIDs.retry);
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(error).toHaveBeenCalledWith(
      '⟦⟦Retry⟧ failed: ⟦There is no failed request to retry.⟧⟧',
      expect.anything()
    );
    error.mockRestore();
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

  it('starts a run with the task given as arguments and opens the panel', async () => {
    const { commands, first, runnerOf, opened } = setup();
    await commands.execute(CommandIDs.run, {
      task: '  What drives prices?  ',
      dataFiles: ['housing.csv', 3],
      stepMode: true
    });
    expect(runnerOf(first).start).toHaveBeenCalledWith({
      task: 'What drives prices?',
      dataFiles: ['housing.csv'],
      stepMode: true
    });
    expect(opened).toHaveBeenCalledTimes(1);
  });

  it('starts a run with the model given as arguments', async () => {
    const { commands, first, runnerOf } = setup();
    await commands.execute(CommandIDs.run, { task: 't', llmModel: ' qwen ' });
    expect(runnerOf(first).start).toHaveBeenCalledWith({
      task: 't',
      dataFiles: [],
      stepMode: false,
      llmModel: 'qwen'
    });
  });

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

  it('does not start a second run while one is active', async () => {
    const { commands, first, runnerOf } = setup();
    runnerOf(first).isRunning = true;
    await commands.execute(CommandIDs.run, { task: 'Again' });
    expect(runnerOf(first).start).not.toHaveBeenCalled();
  });

  it('steps, and pauses or resumes with one toggle', async () => {
    const { commands, first, modelOf, runnerOf } = setup();
    const runner = runnerOf(first);
    await commands.execute(CommandIDs.step);
    expect(runner.step).toHaveBeenCalledTimes(1);

    modelOf(first).availability = { ...NONE, pause: true };
    await commands.execute(CommandIDs.togglePause);
    expect(runner.pause).toHaveBeenCalledTimes(1);

    modelOf(first).availability = { ...NONE, resume: true };
    runner.isRunning = true;
    await commands.execute(CommandIDs.togglePause);
    expect(runner.resume).toHaveBeenCalledTimes(1);
    expect(runner.pause).toHaveBeenCalledTimes(1);
  });

  it('resumes a stopped run from the notebook and opens the panel', async () => {
    const { commands, first, modelOf, runnerOf, opened } = setup();
    const runner = runnerOf(first);
    await commands.execute(CommandIDs.resume);
    expect(runner.resumeFromSaved).not.toHaveBeenCalled();
    modelOf(first).canResumeSaved = true;
    await commands.execute(CommandIDs.resume);
    expect(runner.resumeFromSaved).toHaveBeenCalledTimes(1);
    expect(runner.resume).not.toHaveBeenCalled();
    expect(opened).toHaveBeenCalledTimes(1);
  });

  it('holds the run while the Stop dialog asks, and lets it go on when cancelled', async () => {
    const { commands, first, runnerOf, modelOf } = setup();
    const runner = runnerOf(first);
    runner.isRunning = true;
    modelOf(first).availability = { ...NONE, pause: true, stop: true };
    const cancelled = commands.execute(CommandIDs.stop);
    await waitForDialog();
    // Paused as the dialog opened: no cell lands behind it.
    expect(runner.pause).toHaveBeenCalledTimes(1);
    expect(runner.resume).not.toHaveBeenCalled();
    await dismissDialog();
    await cancelled;
    expect(runner.resume).toHaveBeenCalledTimes(1);
    expect(runner.stop).not.toHaveBeenCalled();

    const stopped = commands.execute(CommandIDs.stop);
    await waitForDialog();
    await acceptDialog();
    await stopped;
    expect(runner.stop).toHaveBeenCalledTimes(1);
    expect(runner.resume).toHaveBeenCalledTimes(1);
  });

  it('does not resume a run the user had paused before Stop', async () => {
    const { commands, first, runnerOf, modelOf } = setup();
    const runner = runnerOf(first);
    runner.isRunning = true;
    modelOf(first).availability = { ...NONE, resume: true, stop: true };
    const cancelled = commands.execute(CommandIDs.stop);
    await waitForDialog();
    await dismissDialog();
    await cancelled;
    expect(runner.pause).not.toHaveBeenCalled();
    expect(runner.resume).not.toHaveBeenCalled();
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

  it('interrupts the kernel on stop only while an action runs', async () => {
    const { commands, first, runnerOf } = setup();
    const runner = runnerOf(first);
    await commands.execute(CommandIDs.stop, { interruptKernel: true });
    expect(runner.stop).toHaveBeenLastCalledWith({ interruptKernel: false });
    runner.snapshot = { state: 'ACTION_RUNNING' };
    await commands.execute(CommandIDs.stop, { interruptKernel: true });
    expect(runner.stop).toHaveBeenLastCalledWith({ interruptKernel: true });
    await commands.execute(CommandIDs.stop, { interruptKernel: false });
    expect(runner.stop).toHaveBeenLastCalledWith({ interruptKernel: false });
    // A rewind re-running the kept cells runs code outside any action.
    runner.snapshot = { state: 'STEP_RUNNING', rewinding: true };
    await commands.execute(CommandIDs.stop, { interruptKernel: true });
    expect(runner.stop).toHaveBeenLastCalledWith({ interruptKernel: true });
  });

  it('retries the failed request', async () => {
    const { commands, first, runnerOf } = setup();
    await commands.execute(CommandIDs.retry);
    expect(runnerOf(first).retry).toHaveBeenCalledTimes(1);
  });

  it('offers Set Variables only when the failed run names variables the planner lacks, and retries with them', async () => {
    const { commands, first, modelOf, runnerOf } = setup();
    const model = Object.assign(modelOf(first), {
      snapshot: {
        error: {
          endpoint: 'generating',
          message: 'variables missing: target_variable',
          retryable: true,
          missingVariables: ['target_variable']
        }
      } as Pick<IRunSnapshot, 'error'>
    });
    // Not while the run cannot retry.
    expect(commands.isVisible(CommandIDs.setVariables)).toBe(false);
    model.availability = { ...NONE, retry: true };
    expect(commands.isVisible(CommandIDs.setVariables)).toBe(true);
    expect(commands.isEnabled(CommandIDs.setVariables)).toBe(true);
    await commands.execute(CommandIDs.setVariables, {
      variables: { target_variable: 'revenue', empty: ' ', other: 3 }
    });
    expect(runnerOf(first).retry).toHaveBeenCalledWith({
      variables: { target_variable: 'revenue' }
    });
    // An error that names no variable: Retry only.
    model.snapshot = {
      error: { endpoint: 'generating', message: 'HTTP 500', retryable: true }
    };
    expect(commands.isVisible(CommandIDs.setVariables)).toBe(false);
  });

  it('exports a non-empty trace beside the notebook', async () => {
    const { commands, first, runnerOf, saved } = setup();
    expect(commands.isEnabled(CommandIDs.exportTrace)).toBe(false);
    runnerOf(first).trace.length = 1;
    expect(commands.isEnabled(CommandIDs.exportTrace)).toBe(true);
    await commands.execute(CommandIDs.exportTrace);
    expect(saved).toEqual([
      {
        path: 'work/first.bcc-trace.jsonl',
        model: {
          type: 'file',
          format: 'text',
          content: '{"kind":"request"}\n'
        }
      }
    ]);
  });

  it('re-evaluates every run command once per frame when the current run changes', async () => {
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
    expect(changed).toEqual([...RUN_COMMANDS]);
    currentChanged.emit(null);
    await frame();
    expect(changed).toEqual([...RUN_COMMANDS, ...RUN_COMMANDS]);
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

  it('discards the saved run: the metadata goes, the cells stay, the notebook is saved', async () => {
    const { commands, first, modelOf, runnerOf } = setup();
    const model = new NotebookModel();
    model.sharedModel.insertCell(0, { cell_type: 'code', source: 'x = 1' });
    model.sharedModel.setMetadata(RUN_STATE_METADATA_KEY, { format: 'old' });
    const save = jest.fn(async () => undefined);
    Object.assign(first, { model, context: { ...first.context, model, save } });
    expect(commands.isEnabled(CommandIDs.discardSavedRun)).toBe(false);
    // A saved run that cannot be read is discarded without asking: there is nothing to resume.
    Object.assign(modelOf(first), {
      canDiscardSaved: true,
      savedRunProblems: ['format: unknown']
    });
    expect(commands.isEnabled(CommandIDs.discardSavedRun)).toBe(true);
    expect(commands.label(CommandIDs.discardSavedRun)).toBe(
      'Discard the Saved Workflow Run'
    );

    await commands.execute(CommandIDs.discardSavedRun);
    expect(model.sharedModel.getMetadata(RUN_STATE_METADATA_KEY)).toBe(
      undefined
    );
    expect(model.sharedModel.cells.map(cell => cell.source)).toEqual(['x = 1']);
    expect(save).toHaveBeenCalledTimes(1);
    // The run this session still holds goes too.
    expect(runnerOf(first).forgetRun).toHaveBeenCalledTimes(1);
  });

  it('under real-time collaboration, discards the saved run and leaves the saving to the server', async () => {
    const { commands, first, modelOf } = setup();
    const model = new NotebookModel({ collaborationEnabled: true });
    model.sharedModel.setMetadata(RUN_STATE_METADATA_KEY, { format: 'old' });
    const save = jest.fn(async () => undefined);
    Object.assign(first, { model, context: { ...first.context, model, save } });
    Object.assign(modelOf(first), {
      canDiscardSaved: true,
      savedRunProblems: ['format: unknown']
    });
    await commands.execute(CommandIDs.discardSavedRun);
    expect(model.sharedModel.getMetadata(RUN_STATE_METADATA_KEY)).toBe(
      undefined
    );
    // A save from the page would meet the server's own saves ("File Changed").
    expect(save).not.toHaveBeenCalled();
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

  it('asks before discarding a saved run that could still be resumed', async () => {
    const { commands, first, modelOf } = setup();
    const model = new NotebookModel();
    model.sharedModel.setMetadata(RUN_STATE_METADATA_KEY, { format: 'x' });
    const save = jest.fn(async () => undefined);
    Object.assign(first, { context: { ...first.context, model, save } });
    Object.assign(modelOf(first), {
      canDiscardSaved: true,
      savedRunProblems: null
    });
    const kept = commands.execute(CommandIDs.discardSavedRun);
    await waitForDialog();
    expect(document.querySelector('.jp-Dialog')?.textContent).toContain(
      'can no longer be resumed'
    );
    await dismissDialog();
    await kept;
    expect(model.sharedModel.getMetadata(RUN_STATE_METADATA_KEY)).toEqual({
      format: 'x'
    });
    expect(save).not.toHaveBeenCalled();

    const gone = commands.execute(CommandIDs.discardSavedRun);
    await acceptDialog();
    await gone;
    expect(model.sharedModel.getMetadata(RUN_STATE_METADATA_KEY)).toBe(
      undefined
    );
    expect(save).toHaveBeenCalledTimes(1);
  });

  it('asks before a take-over reloads a notebook with unsaved changes from disk', async () => {
    const { commands, first, modelOf, runnerOf } = setup();
    const revert = jest.fn(async () => undefined);
    const lock = { acquire: jest.fn(async () => true), release: jest.fn() };
    Object.assign(first, {
      context: {
        ...first.context,
        model: { collaborative: false, dirty: true },
        revert
      }
    });
    Object.assign(modelOf(first), { lock, canTakeOver: true });
    const declined = commands.execute(CommandIDs.takeOver);
    await waitForDialog();
    expect(document.querySelector('.jp-Dialog')?.textContent).toContain(
      'unsaved changes'
    );
    await dismissDialog();
    await declined;
    expect(revert).not.toHaveBeenCalled();
    expect(runnerOf(first).resumeFromSaved).not.toHaveBeenCalled();
    expect(lock.acquire).not.toHaveBeenCalled();

    const taken = commands.execute(CommandIDs.takeOver);
    await acceptDialog();
    await taken;
    expect(revert).toHaveBeenCalledTimes(1);
    expect(runnerOf(first).resumeFromSaved).toHaveBeenCalledTimes(1);
  });

  it('takes over: reloads the notebook from disk, then resumes its run holding the lock', async () => {
    const { commands, first, modelOf, runnerOf } = setup();
    const order: string[] = [];
    const revert = jest.fn(async () => {
      order.push('revert');
    });
    runnerOf(first).resumeFromSaved.mockImplementation(async () => {
      order.push('resume');
      return null;
    });
    const lock = {
      acquire: jest.fn(async () => {
        order.push('acquire');
        return true;
      }),
      release: jest.fn()
    };
    Object.assign(first, {
      context: { ...first.context, model: { collaborative: false }, revert }
    });
    Object.assign(modelOf(first), { lock, canTakeOver: false });
    expect(commands.isEnabled(CommandIDs.takeOver)).toBe(false);
    await commands.execute(CommandIDs.takeOver);
    expect(order).toEqual([]);

    modelOf(first).canTakeOver = true;
    await commands.execute(CommandIDs.takeOver);
    expect(order).toEqual(['acquire', 'revert', 'resume']);
    // Nothing to resume: the lock is let go.
    expect(lock.release).toHaveBeenCalledTimes(1);
  });

  it('undoes the last behavior and redoes from a step through the runner, when the run offers it', async () => {
    const { commands, first, modelOf, runnerOf } = setup();
    const plan = { target: { kind: 'behavior' }, stepId: 'p2' };
    const record = { kind: 'undo_behavior' };
    const runner = Object.assign(runnerOf(first), {
      rewindPlan: jest.fn(() => Promise.resolve(plan)),
      rewind: jest.fn(() => Promise.resolve(record))
    });
    const model = Object.assign(modelOf(first), {
      snapshot: {
        running: true,
        paused: false,
        stages: [],
        rewind: { undo: null, redoSteps: [], last: null }
      } as Pick<IRunSnapshot, 'running' | 'paused' | 'stages' | 'rewind'>
    });
    expect(commands.isEnabled(CommandIDs.undoBehavior)).toBe(false);
    const redoArgs = { stageId: 's1', stepId: 'p2' };
    expect(commands.isVisible(CommandIDs.redoFromStep)).toBe(false);
    expect(commands.isVisible(CommandIDs.redoFromStep, redoArgs)).toBe(true);
    expect(commands.isEnabled(CommandIDs.redoFromStep, redoArgs)).toBe(false);

    // Paused, with what it can go back to; the model says when a rewind may start (RunModel.canRewind).
    model.snapshot = {
      ...model.snapshot,
      paused: true,
      rewind: {
        undo: { behaviorId: 'b1', stepId: 'p2' },
        redoSteps: ['s1/p2'],
        last: null
      }
    };
    expect(commands.isEnabled(CommandIDs.undoBehavior)).toBe(false);
    model.canRewind = true;
    expect(commands.isEnabled(CommandIDs.undoBehavior)).toBe(true);
    expect(commands.isEnabled(CommandIDs.redoFromStep, redoArgs)).toBe(true);
    expect(
      commands.isEnabled(CommandIDs.redoFromStep, {
        stageId: 's1',
        stepId: 'p1'
      })
    ).toBe(false);

    expect(
      await commands.execute(CommandIDs.undoBehavior, { confirm: false })
    ).toBe(record);
    expect(runner.rewindPlan).toHaveBeenCalledWith({ kind: 'behavior' });
    expect(runner.rewind).toHaveBeenCalledWith(
      { kind: 'behavior' },
      { restartKernel: false }
    );
    await commands.execute(CommandIDs.redoFromStep, {
      ...redoArgs,
      confirm: false,
      restartKernel: true
    });
    expect(runner.rewind).toHaveBeenLastCalledWith(
      { kind: 'step', stageId: 's1', stepId: 'p2' },
      { restartKernel: true }
    );

    // Nothing kept for that point: the user is told, nothing is rewound.
    const warning = jest.spyOn(Notification, 'warning');
    runner.rewindPlan.mockResolvedValueOnce(null as unknown as typeof plan);
    await commands.execute(CommandIDs.undoBehavior, { confirm: false });
    expect(runner.rewind).toHaveBeenCalledTimes(2);
    expect(warning).toHaveBeenCalledWith(
      'Undo Last Behavior: that point of the run is no longer kept.',
      { autoClose: 5000 }
    );
  });
});
