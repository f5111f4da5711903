import { Signal } from '@lumino/signaling';
import { ActionRegistry } from '../../engine/actions/registry';
import { WorkflowRunner } from '../../engine/run/runner';
import { DEFAULT_SETTINGS } from '../../engine/settings';
import {
  FakeNotebookDriver,
  FakePlannerService,
  IFakePlannerScript
} from '../../engine/testing';
import { RunTrace } from '../../engine/trace';
import type { IWorkflowRunner } from '../../engine/types';
import type { IPlannerStatus } from '../../tokens';
import {
  idleSnapshot,
  ILoader,
  LazyPlannerStatus,
  LazyWorkflowRunner,
  loadedRuntime,
  loadRuntime
} from '../lazy';

function realRunner(script: IFakePlannerScript = {}): WorkflowRunner {
  return new WorkflowRunner({
    driver: new FakeNotebookDriver(),
    client: new FakePlannerService(script),
    settings: () => DEFAULT_SETTINGS
  });
}

/** A loader that builds `real` on the first `load()` and counts the loads. */
function loaderOf<T>(real: T, attach: (real: T) => void) {
  const loader = {
    loads: 0,
    started: false,
    load: async () => {
      loader.loads++;
      if (!loader.started) {
        loader.started = true;
        // As a chunk arrives: after the caller went on.
        await Promise.resolve();
        attach(real);
      }
      return real;
    }
  };
  return loader satisfies ILoader<T>;
}

function lazyRunner(real: IWorkflowRunner) {
  let lazy: LazyWorkflowRunner | null = null;
  const loader = loaderOf(real, r => lazy?.attach(r));
  lazy = new LazyWorkflowRunner(loader, new ActionRegistry(), new RunTrace());
  return { lazy, loader };
}

describe('the runtime', () => {
  it('is not loaded until something asks for it', async () => {
    expect(loadedRuntime()).toBeNull();
    const runtime = await loadRuntime();
    expect(loadedRuntime()).toBe(runtime);
    expect(typeof runtime.createRunParts).toBe('function');
    expect(await loadRuntime()).toBe(runtime);
  });
});

describe('LazyWorkflowRunner', () => {
  it('shows what a runner that never ran shows', () => {
    const real = realRunner();
    expect(idleSnapshot()).toEqual(real.snapshot);
    const { lazy, loader } = lazyRunner(real);
    expect(lazy.snapshot).toEqual(real.snapshot);
    expect(lazy.isRunning).toBe(false);
    expect(lazy.effects).toEqual(real.effects);
    expect(loader.loads).toBe(0);
  });

  it('does not load the runtime to stop a run that never started', async () => {
    const { lazy, loader } = lazyRunner(realRunner());
    await lazy.stop();
    expect(loader.loads).toBe(0);
  });

  it('loads on start, and listeners connected before hear the real run', async () => {
    const real = realRunner({
      planning: [
        {
          targetAchieved: false,
          context_update: {
            workflow_update: {
              workflowTemplate: {
                name: 'W',
                stages: [
                  { id: 's', name: 'S', steps: [{ id: 'p', name: 'P' }] }
                ]
              }
            }
          }
        }
      ],
      generating: [
        [{ action: 'add', shot_type: 'dialogue', content: 'Hello.' }]
      ]
    });
    const { lazy, loader } = lazyRunner(real);
    const cells: string[] = [];
    const finished: string[] = [];
    lazy.cellAdded.connect((sender, cell) => {
      expect(sender).toBe(lazy);
      cells.push(cell.cellId);
    });
    lazy.finished.connect((_, f) => finished.push(f.reason));
    const result = await lazy.start({ task: 'Say hello' });
    expect(loader.loads).toBe(1);
    expect(result.reason).toBe('completed');
    expect(cells).toHaveLength(1);
    expect(finished).toEqual(['completed']);
    expect(lazy.snapshot).toEqual(real.snapshot);
    expect(lazy.snapshot.task).toBe('Say hello');
  });

  it('disposes the real runner, also when it arrives after', async () => {
    const real = realRunner();
    const dispose = jest.spyOn(real, 'dispose');
    const { lazy } = lazyRunner(real);
    lazy.dispose();
    lazy.attach(real);
    expect(dispose).toHaveBeenCalledTimes(1);
  });
});

describe('LazyPlannerStatus', () => {
  it('loads when the panel first asks where the planner is, then says it', async () => {
    const location = { via: 'http://planner.test' };
    const real: IPlannerStatus & { changed: Signal<IPlannerStatus, void> } = {
      changed: new Signal<IPlannerStatus, void>({} as IPlannerStatus),
      waitingSince: 5,
      location,
      checkConnection: jest.fn()
    };
    let lazy: LazyPlannerStatus | null = null;
    const loader = loaderOf(real, r => lazy?.attach(r));
    lazy = new LazyPlannerStatus(loader);
    let changes = 0;
    lazy.changed.connect(() => changes++);
    expect(lazy.waitingSince).toBeNull();
    expect(lazy.location).toBeNull();
    expect(lazy.location).toBeNull();
    await loader.load();
    await Promise.resolve();
    expect(loader.loads).toBe(2);
    expect(changes).toBe(1);
    expect(lazy.location).toBe(location);
    expect(lazy.waitingSince).toBe(5);
    real.changed.emit(undefined);
    expect(changes).toBe(2);
  });
});
