import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { Signal } from '@lumino/signaling';
import { ActionRegistry } from '../../engine/actions/registry';
import { DEFAULT_SETTINGS } from '../../engine/settings';
import type { IWorkflowRunner } from '../../engine/types';
import { RUN_STATE_METADATA_KEY } from '../../notebook/metadata';
import {
  openNotebook,
  quietConsole,
  useJupyterServer
} from '../../notebook/__tests__/utils';
import type { IRunHooks, IRunLock } from '../../tokens';
import { RunnerRegistry } from '../runners';

const manager = useJupyterServer();

quietConsole();

/** A live run whose stop is decided by the test. */
function liveRunner() {
  const state = { running: true };
  const runner = {
    get isRunning(): boolean {
      return state.running;
    },
    set isRunning(value: boolean) {
      state.running = value;
    },
    stateChanged: new Signal<unknown, { event: string }>({}),
    progressChanged: new Signal<unknown, unknown>({}),
    finished: new Signal<unknown, unknown>({}),
    captureRunState: jest.fn((): unknown =>
      state.running ? { format: 'captured', at: 'mid-behavior' } : null
    ),
    stop: jest.fn(async (): Promise<void> => {
      state.running = false;
    }),
    dispose: jest.fn()
  };
  return runner;
}

function fakeLock() {
  return {
    state: { kind: 'mine' },
    stateChanged: new Signal<unknown, unknown>({}),
    lost: new Signal<unknown, void>({}),
    acquire: jest.fn(async () => true),
    heartbeat: jest.fn(async () => true),
    release: jest.fn(async () => undefined),
    dispose: jest.fn(),
    isDisposed: false
  };
}

async function registryFor(panel: NotebookPanel, runner = liveRunner()) {
  const lock = fakeLock();
  const tracker = {
    widgetAdded: new Signal<INotebookTracker, NotebookPanel>(
      {} as INotebookTracker
    ),
    forEach: (fn: (panel: NotebookPanel) => void) => fn(panel)
  };
  const registry = new RunnerRegistry({
    tracker: tracker as unknown as INotebookTracker,
    createRunner: () => ({
      runner: runner as unknown as IWorkflowRunner,
      hooks: {} as IRunHooks,
      lock: lock as unknown as IRunLock
    }),
    settings: () => DEFAULT_SETTINGS,
    actions: new ActionRegistry(),
    contents: manager().contents,
    closeTimeoutMs: 2000
  });
  await registry.whenReady(panel);
  return { registry, runner, lock };
}

async function savedMetadata(path: string): Promise<Record<string, unknown>> {
  const file = await manager().contents.get(path, { content: true });
  return (file.content as { metadata: Record<string, unknown> }).metadata;
}

/**
 * The notebook's metadata once a run state is in the file, up to 20 s: the close path writes through the
 * contents API without waiting (slow on a loaded 2-core machine), and a read while the server writes the
 * file finds it empty or cut (then it is read again).
 */
async function writtenMetadata(path: string): Promise<Record<string, unknown>> {
  let metadata: Record<string, unknown> = {};
  for (let i = 0; i < 400 && !metadata[RUN_STATE_METADATA_KEY]; i++) {
    await new Promise(resolve => setTimeout(resolve, 50));
    metadata = await savedMetadata(path).catch(() => ({}));
  }
  return metadata;
}

describe('RunnerRegistry: a notebook closing mid-run', () => {
  it('saves the run where it stands when the widget is disposed (as "Close and Shut Down" does)', async () => {
    const notebook = await openNotebook(manager(), { kernel: false });
    const { panel, context } = notebook;
    const { runner, lock } = await registryFor(panel);
    context.model.sharedModel.insertCell(0, {
      cell_type: 'code',
      source: 'df.describe()'
    });

    panel.dispose();
    expect(runner.captureRunState).toHaveBeenCalledTimes(1);
    expect(runner.stop).toHaveBeenCalled();
    expect(runner.dispose).toHaveBeenCalled();
    expect(lock.dispose).toHaveBeenCalled();
    const metadata = await writtenMetadata(context.path);
    expect(metadata[RUN_STATE_METADATA_KEY]).toEqual({
      format: 'captured',
      at: 'mid-behavior'
    });
    const file = await manager().contents.get(context.path, { content: true });
    const cells = (file.content as { cells: { source: string }[] }).cells;
    // The cell the run added before the close is in the file (after it, the new notebook's empty cell).
    expect(cells[0].source).toBe('df.describe()');
    context.dispose();
  }, 60000);

  it('stops (and so saves) the run before a close request closes the notebook', async () => {
    const notebook = await openNotebook(manager(), { kernel: false });
    const { panel } = notebook;
    const { runner } = await registryFor(panel);
    const order: string[] = [];
    runner.stop.mockImplementation(async () => {
      order.push(`stop (disposed: ${panel.isDisposed})`);
      runner.isRunning = false;
    });
    panel.disposed.connect(() => order.push('disposed'));

    panel.close();
    for (let i = 0; i < 50 && !panel.isDisposed; i++) {
      await new Promise(resolve => setTimeout(resolve, 20));
    }
    expect(order).toEqual(['stop (disposed: false)', 'disposed']);
    // Stopped in time: nothing to capture.
    expect(runner.captureRunState).not.toHaveBeenCalled();
    await notebook.dispose();
  }, 30000);

  it('saves where the run stands when its stop does not end in time', async () => {
    const notebook = await openNotebook(manager(), { kernel: false });
    const { panel, context } = notebook;
    const { runner } = await registryFor(panel);
    // An exec the kernel never answers: the loop does not stop.
    runner.stop.mockImplementation(() => new Promise<void>(() => undefined));

    panel.close();
    for (let i = 0; i < 100 && !panel.isDisposed; i++) {
      await new Promise(resolve => setTimeout(resolve, 50));
    }
    expect(panel.isDisposed).toBe(true);
    expect(
      (await writtenMetadata(context.path))[RUN_STATE_METADATA_KEY]
    ).toEqual({ format: 'captured', at: 'mid-behavior' });
    context.dispose();
  }, 30000);

  it('under real-time collaboration, leaves the saving to the server when the stop does not end in time', async () => {
    const notebook = await openNotebook(manager(), { kernel: false });
    const { panel, context } = notebook;
    Object.defineProperty(panel.model, 'collaborative', { value: true });
    const save = jest.spyOn(context, 'save');
    const { runner } = await registryFor(panel);
    runner.stop.mockImplementation(() => new Promise<void>(() => undefined));

    panel.close();
    for (let i = 0; i < 100 && !panel.isDisposed; i++) {
      await new Promise(resolve => setTimeout(resolve, 50));
    }
    expect(panel.isDisposed).toBe(true);
    // A save from the page would meet the server's own saves ("File Changed").
    expect(save).not.toHaveBeenCalled();
    expect(runner.captureRunState).toHaveBeenCalled();
    context.dispose();
  }, 30000);

  it('stops and saves the run when the kernel is shut down', async () => {
    const notebook = await openNotebook(manager(), { kernel: true });
    const { panel } = notebook;
    const { runner } = await registryFor(panel);
    await panel.sessionContext.shutdown();
    for (let i = 0; i < 50 && runner.stop.mock.calls.length === 0; i++) {
      await new Promise(resolve => setTimeout(resolve, 20));
    }
    expect(runner.stop).toHaveBeenCalled();
    expect(panel.isDisposed).toBe(false);
    await notebook.dispose();
  }, 60000);

  it('renews the lock as the run reports, and releases it when the run finishes', async () => {
    const notebook = await openNotebook(manager(), { kernel: false });
    const { runner, lock } = await registryFor(notebook.panel);
    runner.progressChanged.emit({});
    expect(lock.heartbeat).toHaveBeenCalledTimes(1);
    runner.finished.emit({ reason: 'completed' });
    expect(lock.release).toHaveBeenCalledTimes(1);
    runner.isRunning = false;
    await notebook.dispose();
  }, 30000);

  it('stops a run whose lock another window took over, leaving the notebook to that window', async () => {
    const notebook = await openNotebook(manager(), { kernel: false });
    const { runner, lock } = await registryFor(notebook.panel);
    lock.lost.emit();
    expect(runner.stop).toHaveBeenCalledWith({ leaveNotebook: true });
    await notebook.dispose();
  }, 30000);
});
