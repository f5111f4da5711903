import { Signal } from '@lumino/signaling';
import type { IEffectsState } from '../../engine/state/effects';
import type { IFsmTransition } from '../../engine/state/fsm';
import { ActionRegistry } from '../../engine/actions/registry';
import { DEFAULT_SETTINGS } from '../../engine/settings';
import { RunTrace } from '../../engine/trace';
import type {
  IRunError,
  IRunFinished,
  IRunSnapshot,
  IRunWarning,
  IWorkflowRunner
} from '../../engine/types';
import { checkSavedRunState } from '../../engine/saved/savedRun';
import { snapshotFromSaved } from '../../engine/snapshot';
import type { IRunLock, RunLockState } from '../../tokens';
import {
  code,
  exec,
  plan,
  setup as setupRun,
  TEMPLATE as ENGINE_TEMPLATE,
  when,
  withTemplate
} from '../../engine/__tests__/runnerSetup';
import { FakeNotebookDriver } from '../../engine/testing';
import { ISavedRunSource, RunModel } from '../model';
import type { SavedRunReader } from '../saved';
import {
  progressInMissingStep,
  runningSnapshot,
  savedRun,
  snapshot
} from './snapshots';

/** The signals and state of a runner, driven by the test. */
class FakeRunner {
  stateChanged = new Signal<IWorkflowRunner, IFsmTransition>(this as never);
  progressChanged = new Signal<IWorkflowRunner, IRunSnapshot>(this as never);
  effectsChanged = new Signal<IWorkflowRunner, IEffectsState>(this as never);
  warning = new Signal<IWorkflowRunner, IRunWarning>(this as never);
  errorOccurred = new Signal<IWorkflowRunner, IRunError>(this as never);
  cellAdded = new Signal<IWorkflowRunner, never>(this as never);
  actionApplied = new Signal<IWorkflowRunner, never>(this as never);
  finished = new Signal<IWorkflowRunner, IRunFinished>(this as never);
  snapshot: IRunSnapshot = snapshot();
  isRunning = false;
  registry = new ActionRegistry();
  trace = new RunTrace();
  effects: IEffectsState = { current: [], history: [] };

  asRunner(): IWorkflowRunner {
    return this as unknown as IWorkflowRunner;
  }

  /** The runner reports a new snapshot. */
  progress(next: IRunSnapshot): void {
    this.snapshot = next;
    this.isRunning = next.running;
    this.progressChanged.emit(next);
  }
}

/** Reads a saved run at once, as `lab/lazy.ts`'s reader does once the runtime is loaded. */
const readSaved: SavedRunReader = (raw, maxExecutionSteps) => {
  if (raw === undefined || raw === null) {
    return null;
  }
  const check = checkSavedRunState(raw);
  return check.ok
    ? {
        state: check.state,
        snapshot: snapshotFromSaved(check.state, maxExecutionSteps),
        problems: null
      }
    : { state: null, snapshot: null, problems: check.problems };
};

/** A notebook's run lock whose holder the test sets. */
class FakeLock implements IRunLock {
  owner = 'window-b';
  state: RunLockState = { kind: 'free', stale: false };
  stateChanged: Signal<IRunLock, RunLockState> = new Signal(this);
  lost: Signal<IRunLock, void> = new Signal(this);
  isDisposed = false;

  set(state: RunLockState): void {
    this.state = state;
    this.stateChanged.emit(state);
  }

  async acquire(): Promise<boolean> {
    this.set({ kind: 'mine' });
    return true;
  }
  async heartbeat(): Promise<boolean> {
    return true;
  }
  async release(): Promise<void> {
    this.set({ kind: 'free', stale: false });
  }
  async refresh(): Promise<void> {}
  dispose(): void {
    this.isDisposed = true;
  }
}

class FakeSaved implements ISavedRunSource {
  value: unknown = undefined;
  changed = new Signal<unknown, void>(this);
  read(): unknown {
    return this.value;
  }
}

function setup(lock: IRunLock | null = null, reader = readSaved) {
  const runner = new FakeRunner();
  const saved = new FakeSaved();
  const model = new RunModel({
    runner: runner.asRunner(),
    saved,
    readSaved: reader,
    settings: () => DEFAULT_SETTINGS,
    lock
  });
  let changes = 0;
  model.changed.connect(() => changes++);
  return { runner, saved, model, changes: () => changes };
}

describe('RunModel before its saved-run reader is ready', () => {
  it('reads a saved run once the reader says it has loaded', () => {
    const reader: { ready: boolean; onLoaded?: () => void } = { ready: false };
    const { saved, model, changes } = setup(null, (raw, max, onLoaded) => {
      if (!reader.ready) {
        reader.onLoaded = onLoaded;
        return undefined;
      }
      return readSaved(raw, max, onLoaded);
    });
    saved.value = savedRun();
    saved.changed.emit();
    expect(model.source).toBe('none');
    reader.ready = true;
    reader.onLoaded?.();
    expect(model.source).toBe('saved');
    expect(model.snapshot.task).toBe('What drives prices?');
    expect(changes()).toBe(2);
  });
});

describe('RunModel', () => {
  it('knows nothing of a notebook without a run', () => {
    const { model } = setup();
    expect(model.source).toBe('none');
    expect(model.tree).toEqual([]);
    expect(model.availability.run).toBe(true);
    expect(model.availability.resume).toBe(false);
  });

  it('shows where a saved run stands and offers to resume it', () => {
    const { saved, model, changes } = setup();
    saved.value = savedRun();
    saved.changed.emit();
    expect(changes()).toBe(1);
    expect(model.source).toBe('saved');
    expect(model.snapshot.task).toBe('What drives prices?');
    expect(model.snapshot.step.name).toBe('Handle missing values');
    expect(model.snapshot.running).toBe(false);
    expect(model.availability).toMatchObject({ run: true, resume: true });
    expect(model.canResumeSaved).toBe(true);
    const stages = model.tree;
    expect(stages.map(s => s.status)).toEqual([
      'completed',
      'current',
      'remaining'
    ]);
    expect(stages[1].steps[1].focus).toBe(
      'Impute the *numeric* columns with the median.'
    );
    expect(model.effects).toEqual(['newest effect', 'older effect']);
  });

  it('ignores metadata that is not a saved run', () => {
    const { saved, model } = setup();
    saved.value = { something: 'else' };
    saved.changed.emit();
    expect(model.source).toBe('none');
  });

  it('follows the live run once the runner reports', () => {
    const { runner, saved, model, changes } = setup();
    saved.value = savedRun();
    saved.changed.emit();
    runner.progress(runningSnapshot());
    expect(model.source).toBe('live');
    expect(model.snapshot.running).toBe(true);
    expect(model.availability).toMatchObject({ pause: true, run: false });
    expect(changes()).toBe(2);
    // The runner's progress gives goals and focus.
    expect(model.tree[1].steps[1].goal).toBe('Fill the gaps.');
    expect(model.outputs).toEqual([
      { name: 'missing_summary', status: 'produced' },
      { name: 'df_clean', status: 'in_progress' }
    ]);
  });

  it('shows the live focus, not the one saved a behavior ago', () => {
    const { runner, saved, model } = setup();
    saved.value = savedRun();
    saved.changed.emit();
    const live = runningSnapshot();
    runner.progress({
      ...live,
      step: { ...live.step, focus: 'Now *check* the imputed columns.' }
    });
    expect(model.tree[1].steps[1].focus).toBe(
      'Now *check* the imputed columns.'
    );
    expect(model.tree[1].focus).toBe('Clean **carefully**.');
  });

  it("builds the live tree from the runner's snapshot, not from the older saved state", () => {
    const { runner, saved, model } = setup();
    saved.value = { ...savedRun(), progress: progressInMissingStep() };
    saved.changed.emit();
    runner.progress(runningSnapshot());
    const behaviors = model.tree[1].steps[1].behaviors;
    expect(behaviors.map(b => [b.iteration, b.status])).toEqual([
      [1, 'completed'],
      [2, 'completed'],
      [3, 'current']
    ]);
    expect(behaviors[2].goal).toBe('Try the mode for categories');
  });

  it('keeps warnings newest first, and how the run ended', () => {
    const { runner, model } = setup();
    runner.warning.emit({ message: 'first', source: 'planner' });
    runner.warning.emit({ message: 'second', source: 'action' });
    expect(model.warnings.map(w => w.message)).toEqual(['second', 'first']);
    runner.finished.emit({ reason: 'max_steps', message: 'limit' });
    expect(model.finished?.reason).toBe('max_steps');
    runner.stateChanged.emit({
      event: 'START_WORKFLOW',
      from: 'IDLE',
      to: 'STAGE_RUNNING',
      timestamp: '2024-01-01T00:00:00.000Z'
    });
    expect(model.finished).toBeNull();
  });

  it('shows the effects newest first', () => {
    const { runner, model } = setup();
    runner.progress(runningSnapshot());
    runner.effectsChanged.emit({
      current: ['c1', 'c2'],
      history: ['h1', 'h2']
    });
    expect(model.effects).toEqual(['c2', 'c1', 'h2', 'h1']);
  });

  it('stops listening once disposed', () => {
    const { runner, model, changes } = setup();
    model.dispose();
    runner.progress(runningSnapshot());
    expect(changes()).toBe(0);
  });

  it("shows the planner's waiting time while the run is live, and where the planner is", () => {
    const planner = {
      changed: new Signal<never, void>({} as never),
      waitingSince: null as number | null,
      location: { via: 'http://planner.test' },
      checkConnection: jest.fn()
    };
    const runner = new FakeRunner();
    const model = new RunModel({
      runner: runner.asRunner(),
      saved: new FakeSaved(),
      readSaved,
      settings: () => DEFAULT_SETTINGS,
      planner
    });
    let changes = 0;
    model.changed.connect(() => changes++);
    expect(model.plannerLocation).toEqual({ via: 'http://planner.test' });
    planner.waitingSince = 1000;
    planner.changed.emit();
    expect(changes).toBe(1);
    expect(model.waitingSince).toBeNull();
    runner.progress(runningSnapshot());
    expect(model.waitingSince).toBe(1000);
    planner.waitingSince = null;
    planner.changed.emit();
    expect(changes).toBe(3);
    expect(model.waitingSince).toBeNull();
  });

  it('says which field of a malformed saved run is wrong, and lets the user run afresh or discard it', () => {
    const { saved, model } = setup();
    const truncated = savedRun() as unknown as Record<string, unknown>;
    truncated.progress = { version: 1, stages: 'cut here' };
    saved.value = truncated;
    saved.changed.emit();
    expect(model.source).toBe('none');
    expect(model.savedRunProblems).not.toBeNull();
    expect(model.savedRunProblems!.join('\n')).toMatch(/^progress\./m);
    expect(model.availability.run).toBe(true);
    expect(model.canResumeSaved).toBe(false);
    expect(model.canDiscardSaved).toBe(true);

    saved.value = undefined;
    saved.changed.emit();
    expect(model.savedRunProblems).toBeNull();
    expect(model.canDiscardSaved).toBe(false);
  });

  it('offers to discard a readable saved run too, but not while a run is live', () => {
    const { saved, model, runner } = setup();
    saved.value = savedRun();
    saved.changed.emit();
    expect(model.savedRunProblems).toBeNull();
    expect(model.canDiscardSaved).toBe(true);
    runner.progress(runningSnapshot());
    expect(model.canDiscardSaved).toBe(false);
  });

  it("turns Run and Resume off while another window's run holds the lock, and offers Take over once it let go", async () => {
    const lock = new FakeLock();
    const { saved, model, changes } = setup(lock);
    saved.value = savedRun();
    saved.changed.emit();
    expect(model.canResumeSaved).toBe(true);
    expect(model.canRewind).toBe(true);

    lock.set({
      kind: 'other',
      status: { step: 'Clean' },
      samePage: false
    });
    expect(changes()).toBe(2);
    expect(model.lockState).toMatchObject({
      kind: 'other',
      status: { step: 'Clean' }
    });
    expect(Object.values(model.availability).some(Boolean)).toBe(false);
    expect(model.canResumeSaved).toBe(false);
    expect(model.canTakeOver).toBe(false);
    expect(model.canDiscardSaved).toBe(false);
    // Undo and Redo from here would remove cells of the other window's run.
    expect(model.canRewind).toBe(false);

    lock.set({ kind: 'free', stale: true });
    expect(model.canTakeOver).toBe(true);
    // This copy predates the other window's saves: only Take over (which reloads) may continue.
    expect(model.canResumeSaved).toBe(false);
    expect(model.availability.run).toBe(false);

    expect(model.canRewind).toBe(false);

    await lock.acquire();
    expect(model.canTakeOver).toBe(false);
    expect(model.canResumeSaved).toBe(true);
    expect(model.canRewind).toBe(true);
    lock.dispose();
  });
});

describe('RunModel of a real runner', () => {
  const SCRIPT = {
    planning: [
      withTemplate(false, ENGINE_TEMPLATE),
      plan(true),
      plan(false),
      plan(true),
      plan(false),
      plan(true)
    ],
    generating: [
      [code('a = 1'), exec()],
      [code('b = 2'), exec()],
      [code('c = 3'), exec()]
    ]
  };

  /** A finished run of three steps in a notebook whose saved run state the model reads. */
  async function finishedRun() {
    const driver = new FakeNotebookDriver();
    const saved = new FakeSaved();
    const save = driver.saveRunState.bind(driver);
    driver.saveRunState = async (state, options) => {
      await save(state, options);
      saved.value = driver.savedState;
      saved.changed.emit();
    };
    const s = setupRun(SCRIPT, { driver });
    const model = new RunModel({
      runner: s.runner,
      saved,
      readSaved,
      settings: () => DEFAULT_SETTINGS
    });
    expect((await s.runner.start({ task: 't' })).reason).toBe('completed');
    return { ...s, saved, model };
  }

  it('turns Run, Resume, Undo, Redo and Discard off while a rewind restarts the kernel', async () => {
    const { runner, driver, model, client } = await finishedRun();
    expect(model.canRewind).toBe(true);
    expect(model.canDiscardSaved).toBe(true);
    client.planningScript.push(plan(true), plan(false), plan(true));
    client.generatingScript.push([code('c = 30'), exec()]);
    let open = () => {};
    const reached = new Promise<void>(resolve => {
      driver.onRestart = () => {
        resolve();
        return new Promise<void>(go => (open = go));
      };
    });
    const rewound = runner.rewind(
      { kind: 'step', stageId: 's1', stepId: 'p2' },
      { restartKernel: true }
    );
    await reached;
    expect(model.canRewind).toBe(false);
    expect(model.canResumeSaved).toBe(false);
    expect(model.canDiscardSaved).toBe(false);
    expect(model.availability).toMatchObject({
      run: false,
      resume: false,
      stop: true
    });
    open();
    await rewound;
    await when(runner.finished, () => true);
    expect(model.canRewind).toBe(true);
  });

  it('forgets a run that lives in memory when its saved copy is discarded', async () => {
    const { runner, driver, saved, model } = await finishedRun();
    expect(model.source).toBe('live');
    // What "Discard the Saved Workflow Run" does.
    runner.forgetRun();
    driver.savedState = null;
    saved.value = undefined;
    saved.changed.emit();
    expect(model.source).toBe('none');
    expect(model.canRewind).toBe(false);
    await expect(
      runner.rewind({ kind: 'step', stageId: 's1', stepId: 'p2' })
    ).rejects.toThrow('There is no run to rewind in this notebook.');
    expect(saved.value).toBeUndefined();
  });
});
