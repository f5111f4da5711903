import type { NotebookPanel } from '@jupyterlab/notebook';
import { Signal } from '@lumino/signaling';
import { DEFAULT_SETTINGS } from '../../engine/settings';
import type { IRunSnapshot, IWorkflowRunner } from '../../engine/types';
import type {
  ICurrentRun,
  IRunHooks,
  IRunnerEntry,
  IWorkflowRunnerRegistry
} from '../../tokens';
import { RunModelRegistry } from '../modelRegistry';
import { runningSnapshot, snapshot } from './snapshots';

/** A panel with what the registry reads: a path that can change, and empty metadata. */
function fakePanel(id: string) {
  const pathChanged = new Signal<unknown, string>({});
  const panel = {
    id,
    isDisposed: false,
    context: { pathChanged, localPath: `${id}.ipynb` },
    model: {
      metadataChanged: new Signal<unknown, { key: string }>({}),
      sharedModel: { getMetadata: () => undefined }
    }
  };
  return { panel: panel as unknown as NotebookPanel, pathChanged };
}

/** A runner that only reports progress. */
function fakeRunner() {
  const runner = {
    stateChanged: new Signal({}),
    progressChanged: new Signal<unknown, IRunSnapshot>({}),
    effectsChanged: new Signal({}),
    warning: new Signal({}),
    errorOccurred: new Signal({}),
    finished: new Signal({}),
    snapshot: snapshot(),
    isRunning: false,
    effects: { current: [], history: [] }
  };
  return runner;
}

function fakeHooks(): IRunHooks {
  return {
    pending: null,
    pendingChanged: new Signal<IRunHooks, void>({} as IRunHooks)
  };
}

function setup() {
  const runnerAdded = new Signal<IWorkflowRunnerRegistry, IRunnerEntry>(
    {} as IWorkflowRunnerRegistry
  );
  const runnerRemoved = new Signal<IWorkflowRunnerRegistry, IRunnerEntry>(
    {} as IWorkflowRunnerRegistry
  );
  const currentChanged = new Signal<unknown, NotebookPanel | null>({});
  const tracker = {
    currentWidget: null as NotebookPanel | null,
    currentChanged
  };
  const runners = {
    runnerAdded,
    runnerRemoved,
    entries: () => [],
    settings: DEFAULT_SETTINGS
  } as unknown as IWorkflowRunnerRegistry;
  const registry = new RunModelRegistry({
    runners,
    tracker: tracker as never,
    readSaved: () => null
  });
  const emitted: (ICurrentRun | null)[] = [];
  registry.currentChanged.connect((_, current) => emitted.push(current));
  const activate = (panel: NotebookPanel | null) => {
    tracker.currentWidget = panel;
    currentChanged.emit(panel);
  };
  const addRunner = (panel: NotebookPanel) => {
    const runner = fakeRunner();
    runnerAdded.emit({
      panel,
      runner: runner as unknown as IWorkflowRunner,
      hooks: fakeHooks()
    });
    return runner;
  };
  return { registry, emitted, activate, addRunner, runnerRemoved };
}

describe('RunModelRegistry', () => {
  it('has no current run while no notebook is active', () => {
    const { registry, emitted } = setup();
    expect(registry.current).toBeNull();
    expect(emitted).toEqual([]);
  });

  it('follows the active notebook, and its model once its runner exists', () => {
    const { registry, emitted, activate, addRunner } = setup();
    const { panel } = fakePanel('a');
    activate(panel);
    expect(registry.current).toEqual({ panel, model: null });
    addRunner(panel);
    expect(registry.current?.panel).toBe(panel);
    expect(registry.current?.model).toBe(registry.model(panel));
    expect(registry.current?.model).not.toBeNull();
    expect(emitted).toHaveLength(2);
    activate(null);
    expect(registry.current).toBeNull();
    expect(emitted).toHaveLength(3);
  });

  it("tells when the current run changes or its notebook is renamed, not another's", () => {
    const { emitted, activate, addRunner } = setup();
    const a = fakePanel('a');
    const b = fakePanel('b');
    const runnerA = addRunner(a.panel);
    const runnerB = addRunner(b.panel);
    activate(a.panel);
    expect(emitted).toHaveLength(1);
    runnerA.progressChanged.emit(runningSnapshot());
    expect(emitted).toHaveLength(2);
    a.pathChanged.emit('renamed.ipynb');
    expect(emitted).toHaveLength(3);
    runnerB.progressChanged.emit(runningSnapshot());
    b.pathChanged.emit('other.ipynb');
    expect(emitted).toHaveLength(3);
    activate(b.panel);
    runnerA.progressChanged.emit(runningSnapshot());
    expect(emitted).toHaveLength(4);
  });

  it('disposes the model of a closed notebook', () => {
    const { registry, addRunner, runnerRemoved } = setup();
    const { panel } = fakePanel('a');
    const runner = addRunner(panel);
    const model = registry.model(panel);
    runnerRemoved.emit({
      panel,
      runner: runner as unknown as IWorkflowRunner,
      hooks: fakeHooks()
    });
    expect(registry.model(panel)).toBeNull();
    expect(model?.isDisposed).toBe(true);
  });
});
