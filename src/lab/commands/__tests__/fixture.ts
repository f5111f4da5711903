/**
 * The commands' fixture (one for the room): two notebooks with a recorded runner and a run model each,
 * the commands added over them as the commands plugin does, and what they saved or opened. Each spec
 * of `lab/commands/` arranges its case from `setup()`.
 */
import type { NotebookPanel } from '@jupyterlab/notebook';
import type { Contents } from '@jupyterlab/services';
import { nullTranslator } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { Signal } from '@lumino/signaling';
import type { IRunSettings } from '../../../engine/settings';
import type { IWorkflowRunner } from '../../../engine/types';
import type { IConnectionCheck } from '../../../protocol';
import {
  CommandIDs,
  ICommandAvailability,
  ICurrentRun,
  ILlmChoice,
  IRunModel,
  IRunModelRegistry,
  RunLockState
} from '../../../tokens';
import { addCommands } from '../addCommands';
import type { ICommandsOptions } from '../context';
import { loadRuntime } from '../../lazy';
import type { ILlmSettings } from '../../../ui/llmSettingsDialog';

export const NONE: ICommandAvailability = {
  run: false,
  pause: false,
  resume: false,
  step: false,
  stop: false,
  retry: false
};

/** The LLM planner's settings on a server, recorded. */
export function llmServer() {
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
export function panel(id: string, path: string): NotebookPanel {
  return { id, context: { path, localPath: path } } as unknown as NotebookPanel;
}

/** The runner methods the commands call, recorded. */
export function fakeRunner() {
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
export function fakeModel(availability: Partial<ICommandAvailability> = {}) {
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

export function setup(
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

/**
 * The dialogs live in the runtime chunk; its first load compiles much of the package, which on a busy
 * machine takes longer than one test's 5 s. Load it once per spec, with its own time limit.
 */
export function loadRuntimeFirst(): void {
  beforeAll(async () => {
    await loadRuntime();
  }, 120000);
}
