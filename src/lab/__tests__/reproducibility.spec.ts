/**
 * The reproducibility checks as a service: what a run delivered, the values kept when it ends, the
 * check at the end of every run (the setting) or on demand, its states in the run model, the record in
 * the notebook's metadata. The check itself runs against real kernels in
 * src/notebook/__tests__/reproduce.kernel.spec.ts; here the runtime's part is a stand-in.
 */
import { YNotebook } from '@jupyter/ydoc';
import type { NotebookPanel } from '@jupyterlab/notebook';
import type { KernelSpec, Session } from '@jupyterlab/services';
import { nullTranslator } from '@jupyterlab/translation';
import { Signal } from '@lumino/signaling';
import { DEFAULT_SETTINGS } from '../../engine/settings';
import type { IRunSnapshot } from '../../engine/types';
import type { IReproducibilityRecord } from '../../notebook/reproducibility';
import type {
  IRunModel,
  IRunModelEntry,
  IRunnerEntry,
  ReproducibilityState
} from '../../tokens';
import {
  ReproducibilityChecks,
  runDataFiles,
  runValueNames
} from '../reproducibility';

const runtime = {
  fingerprintValues: jest.fn(async (_kernel: unknown, names: string[]) =>
    Object.fromEntries(
      names.map(name => [name, { type: 'int', summary: 1, digest: null }])
    )
  ),
  checkReproducibility: jest.fn(),
  cellsToRun: jest.fn(() => [
    { id: 'c1', index: 1, source: 'x = 1', failedInRun: false }
  ]),
  notebookCells: jest.fn(() => []),
  displayNameOf: jest.fn(() => 'Python 3'),
  writeReproducibilityRecord: jest.fn(
    (shared: YNotebook, record: IReproducibilityRecord) =>
      shared.setMetadata('notebook_bcc', { reproducibility: record as never })
  ),
  ReproduceError: class extends Error {}
};

jest.mock('../lazy', () => ({ loadRuntime: async () => runtime }));

const RECORD = {
  checked_at: '2025-05-02T09:14:03.120Z',
  reproduced: true,
  compared: 2,
  matched: 2,
  values: []
} as unknown as IReproducibilityRecord;

function snapshot(): IRunSnapshot {
  return {
    running: false,
    outcome: { deliverables: [{ name: 'answer' }] },
    progress: {
      template: {
        stages: [
          {
            id: 's1',
            name: 's1',
            steps: [{ id: 'p1', name: 'p1', expected_outputs: ['totals'] }]
          }
        ]
      },
      steps: {
        completed: [{ step_id: 'p1', outputs_produced: { variables: ['df'] } }]
      },
      stages: { completed: [] }
    }
  } as unknown as IRunSnapshot;
}

/** `openBefore`: the notebook was open when the checks started (their chunk loads with the first one). */
function setup(
  settings = { ...DEFAULT_SETTINGS },
  openBefore: { record: IReproducibilityRecord } | null = null
) {
  const shared = YNotebook.create();
  shared.setMetadata('notebook_bcc_run', { dataFiles: ['sales.csv'] });
  if (openBefore) {
    shared.setMetadata('notebook_bcc', {
      reproducibility: openBefore.record as never
    });
  }
  const kernel = { name: 'python3' };
  const disposed = new Signal<unknown, void>({});
  const ready = Promise.resolve();
  const panel = {
    id: 'nb',
    isDisposed: false,
    disposed,
    model: { sharedModel: shared, dirty: false, collaborative: false },
    context: {
      path: 'work/a.ipynb',
      ready,
      save: jest.fn(async () => undefined)
    },
    sessionContext: { session: { kernel } }
  } as unknown as NotebookPanel;
  const runner = {
    isRunning: false,
    stateChanged: new Signal<unknown, { event: string }>({}),
    progressChanged: new Signal<unknown, IRunSnapshot>({}),
    finished: new Signal<unknown, { reason: string }>({})
  };
  const states: (ReproducibilityState | null)[] = [];
  const model = {
    source: 'live',
    runner,
    lockState: { kind: 'free', stale: false },
    snapshot: snapshot(),
    reproducibility: null as ReproducibilityState | null,
    setReproducibility(state: ReproducibilityState | null) {
      this.reproducibility = state;
      states.push(state);
    }
  };
  const runnerAdded = new Signal<unknown, IRunnerEntry>({});
  const modelAdded = new Signal<unknown, IRunModelEntry>({});
  const open = openBefore ? [{ panel, runner }] : [];
  const checks = new ReproducibilityChecks({
    runners: { runnerAdded, entries: () => open } as never,
    models: { model: () => model as unknown as IRunModel, modelAdded } as never,
    sessions: {} as Session.IManager,
    kernelspecs: { specs: null } as unknown as KernelSpec.IManager,
    settings: () => settings,
    trans: nullTranslator.load('notebook_bcc')
  });
  if (!openBefore) {
    runnerAdded.emit({ panel, runner } as unknown as IRunnerEntry);
  }
  /** A run's loop goes, then ends. */
  const runs = async (reason = 'completed') => {
    runner.progressChanged.emit({ running: true } as IRunSnapshot);
    runner.finished.emit({ reason });
    await new Promise(resolve => setTimeout(resolve, 0));
    await new Promise(resolve => setTimeout(resolve, 0));
  };
  return {
    checks,
    panel,
    shared,
    runner,
    model,
    states,
    modelAdded,
    runs,
    kernel
  };
}

beforeEach(() => {
  jest.clearAllMocks();
  runtime.checkReproducibility.mockImplementation(async () => RECORD);
});

describe('what a run delivered', () => {
  it('names its deliverables, then its steps’ expected and produced variables, once each', () => {
    expect(runValueNames(snapshot())).toEqual(['answer', 'totals', 'df']);
  });

  it('reads the data files of the run saved in the notebook', () => {
    const { panel } = setup();
    expect(runDataFiles(panel)).toEqual(['sales.csv']);
  });
});

describe('ReproducibilityChecks', () => {
  it('keeps the run’s values when it completes, and checks against them when asked', async () => {
    const { checks, panel, runs, kernel, shared, states } = setup();
    await runs();
    expect(runtime.fingerprintValues).toHaveBeenCalledWith(
      kernel,
      ['answer', 'totals', 'df'],
      expect.any(Array),
      expect.anything()
    );
    // The setting is off: no check yet.
    expect(runtime.checkReproducibility).not.toHaveBeenCalled();
    expect(checks.canCheck(panel)).toBe(true);
    await checks.check(panel);
    expect(runtime.checkReproducibility).toHaveBeenCalledTimes(1);
    const options = runtime.checkReproducibility.mock.calls[0][0];
    expect(options).toMatchObject({
      path: 'work/a.ipynb',
      kernel: { name: 'python3', display_name: 'Python 3' },
      names: ['answer', 'totals', 'df'],
      reference: { at: 'end_of_run' },
      dataFiles: ['sales.csv'],
      cellTimeoutMs: 600000
    });
    expect(Object.keys(options.reference.values)).toEqual([
      'answer',
      'totals',
      'df'
    ]);
    expect(states[0]).toMatchObject({ kind: 'checking', phase: 'starting' });
    expect(states[states.length - 1]).toEqual({ kind: 'done', record: RECORD });
    expect(shared.getMetadata('notebook_bcc')).toEqual({
      reproducibility: RECORD
    });
    // The notebook had nothing unsaved: it is saved with the record.
    expect(panel.context.save).toHaveBeenCalledTimes(1);
    expect(checks.isChecking(panel)).toBe(false);
    // With the user's own edits unsaved, the record waits for their save.
    (panel.model as unknown as { dirty: boolean }).dirty = true;
    await checks.check(panel);
    expect(runtime.writeReproducibilityRecord).toHaveBeenCalledTimes(2);
    expect(panel.context.save).toHaveBeenCalledTimes(1);
  });

  it('checks every completed run at its end when the setting asks, not a saved run read back', async () => {
    const { runner, runs } = setup({
      ...DEFAULT_SETTINGS,
      checkReproducibility: true,
      reproducibilityCellTimeout: 30
    });
    // A saved, completed run read back: its `finished` comes without a loop.
    runner.finished.emit({ reason: 'completed' });
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(runtime.checkReproducibility).not.toHaveBeenCalled();
    await runs('stopped');
    expect(runtime.checkReproducibility).not.toHaveBeenCalled();
    await runs();
    expect(runtime.checkReproducibility).toHaveBeenCalledTimes(1);
    expect(runtime.checkReproducibility.mock.calls[0][0].cellTimeoutMs).toBe(
      30000
    );
  });

  it('asked for as the run ends, waits for the run’s values to be read, then checks against them', async () => {
    const { checks, panel, runner } = setup();
    let read: () => void = () => undefined;
    runtime.fingerprintValues.mockImplementationOnce(
      async (_kernel: unknown, names: string[]) => {
        await new Promise<void>(resolve => (read = resolve));
        return Object.fromEntries(
          names.map(name => [name, { type: 'int', summary: 1, digest: null }])
        );
      }
    );
    runner.progressChanged.emit({ running: true } as IRunSnapshot);
    runner.finished.emit({ reason: 'completed' });
    // The user clicks at once, while the kernel still reports the values.
    const checking = checks.check(panel);
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(runtime.checkReproducibility).not.toHaveBeenCalled();
    read();
    await checking;
    expect(runtime.fingerprintValues).toHaveBeenCalledTimes(1);
    expect(runtime.checkReproducibility.mock.calls[0][0].reference.at).toBe(
      'end_of_run'
    );
  });

  it('compares with the kernel as it is when no values were kept (after a reload), and says so', async () => {
    const { checks, panel } = setup();
    await checks.check(panel);
    expect(runtime.checkReproducibility.mock.calls[0][0].reference.at).toBe(
      'kernel_now'
    );
  });

  it('tells a check that could not run, and one stopped, without a record', async () => {
    const { checks, panel, model, shared } = setup();
    runtime.checkReproducibility.mockImplementationOnce(async () => {
      throw Object.assign(
        new Error('A fresh python3 kernel could not be started: 500'),
        {
          kind: 'kernel'
        }
      );
    });
    await checks.check(panel);
    expect(model.reproducibility).toEqual({
      kind: 'failed',
      message: 'A fresh python3 kernel could not be started: 500',
      stopped: false
    });
    runtime.checkReproducibility.mockImplementationOnce(
      ({ signal }: { signal: AbortSignal }) =>
        new Promise((_, reject) =>
          signal.addEventListener('abort', () =>
            reject(
              Object.assign(new Error('The check was stopped.'), {
                kind: 'stopped'
              })
            )
          )
        )
    );
    const checking = checks.check(panel);
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(checks.isChecking(panel)).toBe(true);
    expect(checks.canCheck(panel)).toBe(false);
    checks.stop(panel);
    await checking;
    expect(model.reproducibility).toMatchObject({
      kind: 'failed',
      stopped: true
    });
    expect(shared.getMetadata('notebook_bcc')).toBeUndefined();
  });

  it('shows the check the notebook’s metadata keeps', async () => {
    const { shared, model, modelAdded, panel } = setup();
    shared.setMetadata('notebook_bcc', { reproducibility: RECORD as never });
    modelAdded.emit({ panel, model: model as unknown as IRunModel });
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(model.reproducibility).toEqual({ kind: 'done', record: RECORD });
  });

  it('adopts a notebook open before it started, and shows the check its metadata keeps', async () => {
    const { model, runs } = setup({ ...DEFAULT_SETTINGS }, { record: RECORD });
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(model.reproducibility).toEqual({ kind: 'done', record: RECORD });
    // Adopted: the run's values are kept when it completes.
    await runs();
    expect(runtime.fingerprintValues).toHaveBeenCalledTimes(1);
  });
});
