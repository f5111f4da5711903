/** `BehaviorRun` on its own: a stream, a fake sink and a fake notebook, no runner. */
import type { Action, GeneratingEvent, UnknownAction } from '../../../protocol';
import { registerBuiltinActions } from '../../actions/builtins';
import { type IMessage, reported } from '../../messages';
import { ActionRegistry, type AnyAction } from '../../actions/registry';
import { DEFAULT_SETTINGS, type IRunSettings } from '../../settings';
import { FakeNotebookDriver } from '../../testing';
import type { IBehaviorApproval, IPauseReason } from '../../types';
import {
  BehaviorRun,
  type IBehaviorCounters,
  type IBehaviorSink
} from '../behavior';
import { RunControl, RunStopped } from '../runControl';
import { runNotebook } from '../../__tests__/runnerSetup';
import type { RunNotebook } from '../runNotebook';

function event(action: Action | UnknownAction, line?: string): GeneratingEvent {
  return {
    kind: 'action',
    action,
    index: 0,
    line: line ?? JSON.stringify(action)
  };
}

function add(content: string, store_id?: string): Action {
  return {
    action: 'add',
    shot_type: 'action',
    content,
    ...(store_id ? { store_id } : {})
  };
}

/** Yields each chunk's events together, and waits for a macrotask between chunks, as a network read does. */
async function* chunks(
  ...groups: GeneratingEvent[][]
): AsyncGenerator<GeneratingEvent> {
  for (const [i, group] of groups.entries()) {
    if (i > 0) {
      // A timer, then the check phase after it: the turn counter below (a setImmediate queued in the
      // check phase before) has always moved on by then, however late the timer fires.
      await new Promise(resolve => setTimeout(resolve, 0));
      await new Promise(resolve => setImmediate(resolve));
    }
    for (const item of group) {
      yield item;
    }
  }
}

async function* failing(
  events: GeneratingEvent[],
  error: Error
): AsyncGenerator<GeneratingEvent> {
  for (const item of events) {
    yield item;
  }
  throw error;
}

/** Counts turns of the event loop: a value read twice differs when a macrotask ran in between. */
function eventLoopTurns(): { readonly turn: number; stop(): void } {
  let turn = 0;
  let running = true;
  const spin = () => {
    if (running) {
      turn++;
      setImmediate(spin);
    }
  };
  setImmediate(spin);
  return {
    get turn() {
      return turn;
    },
    stop: () => {
      running = false;
    }
  };
}

class FakeSink implements IBehaviorSink {
  constructor(private readonly _control: RunControl) {}

  warnings: string[] = [];
  effects: string[] = [];
  applied: { action: string; index: number; ok: boolean }[] = [];
  started = 0;
  endSteps: (string | undefined)[] = [];
  pauses: IPauseReason[] = [];
  /** Cells in the notebook at each pause point that found a pause requested. */
  pausedAt: number[] = [];
  /** Called at each pause point; resumes at once by default. */
  onPausePoint: () => Promise<void> = async () => {
    this._control.cancelPause();
  };
  onApplied: (index: number) => void = () => undefined;

  warn(message: string | IMessage): void {
    this.warnings.push(reported(message).message);
  }
  effect(text: string): void {
    this.effects.push(text);
  }
  archiveEffects(): void {
    this.effects = [];
  }
  actionStarted(): void {
    this.started++;
  }
  async actionApplied(
    action: AnyAction,
    index: number,
    result: { ok: boolean }
  ): Promise<void> {
    this.applied.push({ action: action.action, index, ok: result.ok });
    this.onApplied(index);
  }
  queueChanged(): void {
    // Nothing shows the queue here.
  }
  pausePoint(): Promise<void> {
    return this.onPausePoint();
  }
  pause(reason: IPauseReason): void {
    this.pauses.push(reason);
    this._control.requestPause(reason);
  }
  endStep(stepId?: string): void {
    this.endSteps.push(stepId);
  }
  async updateWorkflow(): Promise<boolean> {
    return true;
  }
  async replaceStageSteps(): Promise<boolean> {
    return true;
  }
}

interface IHarness {
  driver: FakeNotebookDriver;
  notebook: RunNotebook;
  control: RunControl;
  sink: FakeSink;
  behavior(
    stream: AsyncIterable<GeneratingEvent>,
    options?: {
      settings?: Partial<IRunSettings>;
      approve?: (
        request: IBehaviorApproval
      ) => Promise<'run' | 'skip' | 'stop'>;
      counters?: Partial<IBehaviorCounters>;
    }
  ): BehaviorRun;
}

function harness(): IHarness {
  const driver = new FakeNotebookDriver();
  const control = new RunControl();
  control.launch();
  const { notebook } = runNotebook(driver);
  const registry = new ActionRegistry();
  registerBuiltinActions(registry);
  const sink = new FakeSink(control);
  return {
    driver,
    notebook,
    control,
    sink,
    behavior: (stream, options = {}) =>
      new BehaviorRun({
        id: 'behavior_007',
        location: () => ({ stageId: 's1', stepId: 'p1' }),
        counters: {
          executed: 0,
          succeeded: 0,
          sectionsAdded: 0,
          lastResult: 'success',
          actionIndex: 0,
          ...options.counters
        },
        stream,
        registry,
        notebook,
        control,
        settings: () => ({ ...DEFAULT_SETTINGS, ...options.settings }),
        hooks: options.approve
          ? { approveBehavior: request => options.approve!(request) }
          : {},
        now: () => new Date('2025-05-02T09:00:00Z'),
        sink
      })
  };
}

describe('BehaviorRun', () => {
  it('applies the actions that arrive together in one task, and each chunk after its own read', async () => {
    const h = harness();
    const loop = eventLoopTurns();
    const turns: number[] = [];
    const addCell = h.driver.addCell.bind(h.driver);
    h.driver.addCell = request => {
      turns.push(loop.turn);
      return addCell(request);
    };
    const first = Array.from({ length: 8 }, (_, i) => event(add(`a = ${i}`)));
    const second = Array.from({ length: 3 }, (_, i) => event(add(`b = ${i}`)));
    try {
      await h.behavior(chunks(first, second)).run();
    } finally {
      loop.stop();
    }
    expect(h.driver.cells).toHaveLength(11);
    // The first chunk's 8 cells in one turn of the event loop, the second's 3 in one later turn.
    expect(new Set(turns.slice(0, 8)).size).toBe(1);
    expect(new Set(turns.slice(8)).size).toBe(1);
    expect(turns[8]).toBeGreaterThan(turns[0]);
  });

  it('stops at a pause requested mid-chunk once the current action is applied', async () => {
    const h = harness();
    const addCell = h.driver.addCell.bind(h.driver);
    h.driver.addCell = request => {
      if (h.driver.cells.length === 1) {
        // The user pauses while the second cell is being added.
        h.control.requestPause({ kind: 'user', message: 'paused' });
      }
      return addCell(request);
    };
    let resume: () => void = () => undefined;
    h.sink.onPausePoint = () => {
      h.sink.pausedAt.push(h.driver.cells.length);
      return new Promise(resolve => {
        resume = () => {
          h.control.cancelPause();
          resolve();
        };
      });
    };
    const run = h
      .behavior(chunks(['a', 'b', 'c', 'd'].map(c => event(add(c)))))
      .run();
    await new Promise(resolve => setTimeout(resolve, 10));
    expect(h.sink.pausedAt).toEqual([2]);
    expect(h.driver.cells.map(c => c.source)).toEqual(['a', 'b']);
    resume();
    await run;
    expect(h.driver.cells.map(c => c.source)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('counts what it applied and gives each cell its provenance', async () => {
    const h = harness();
    const behavior = h.behavior(
      chunks([
        event(add('x = 1', 'load')),
        event({ action: 'new_section', content: 'Load' }),
        event({
          action: 'exec',
          codecell_id: 'load',
          need_output: true,
          auto_debug: false,
          keep_debug_button_visible: false
        }),
        event({ action: 'exec', codecell_id: 'nowhere' } as Action)
      ]),
      { counters: { actionIndex: 2, executed: 2, succeeded: 2 } }
    );
    const outcome = await behavior.run();
    expect(outcome).toEqual({ failure: null, cut: null });
    expect(behavior.counters).toEqual({
      executed: 6,
      succeeded: 5,
      sectionsAdded: 1,
      lastResult: 'error',
      actionIndex: 6
    });
    expect(h.sink.started).toBe(4);
    expect(h.sink.applied.map(a => [a.action, a.index, a.ok])).toEqual([
      ['add', 2, true],
      ['new_section', 3, true],
      ['exec', 4, true],
      ['exec', 5, false]
    ]);
    expect(h.driver.cells[0].provenance).toMatchObject({
      stage_id: 's1',
      step_id: 'p1',
      behavior_id: 'behavior_007',
      action_index: 2,
      store_id: 'load'
    });
    expect(h.notebook.cells.resolve('load')).toMatchObject({
      cellId: h.driver.cells[0].id
    });
    expect(h.driver.executed).toEqual([h.driver.cells[0].id]);
  });

  it('reports a broken stream with what was applied before it, and warnings as effects', async () => {
    const h = harness();
    const outcome = await h
      .behavior(
        failing(
          [
            event(add('a')),
            { kind: 'warning', message: 'bad line' },
            { kind: 'notice', message: 'still thinking' }
          ],
          new Error('connection reset')
        )
      )
      .run();
    expect(outcome.failure).toEqual(new Error('connection reset'));
    expect(h.driver.cells).toHaveLength(1);
    expect(h.sink.warnings).toEqual(['bad line', 'still thinking']);
    expect(h.sink.effects).toEqual(['⚠️ WARN: bad line']);
  });

  it('hands end_phase to the sink, not to a run state', async () => {
    const h = harness();
    await h
      .behavior(
        chunks([event({ action: 'end_phase', step_id: 'p1' } as Action)])
      )
      .run();
    expect(h.sink.endSteps).toEqual(['p1']);
  });

  it('applies nothing of a behavior the user skips, and counts it skipped', async () => {
    const h = harness();
    const asked: IBehaviorApproval[] = [];
    const behavior = h.behavior(chunks([event(add('import os'))]), {
      settings: { interactive: true },
      approve: async request => {
        asked.push(request);
        return 'skip';
      }
    });
    await behavior.run();
    expect(asked.map(a => [a.behaviorId, a.codeCells])).toEqual([
      ['behavior_007', ['import os']]
    ]);
    expect(h.driver.cells).toEqual([]);
    expect(behavior.counters.lastResult).toBe('skipped');
    expect(h.sink.effects).toEqual([
      'Behavior behavior_007 was skipped by the user: its 1 actions were not applied.'
    ]);
  });

  it('ends with RunStopped when the run is stopped between actions', async () => {
    const h = harness();
    h.sink.onApplied = index => {
      if (index === 0) {
        h.control.stop();
      }
    };
    await expect(
      h.behavior(chunks([event(add('a')), event(add('b'))])).run()
    ).rejects.toBeInstanceOf(RunStopped);
    expect(h.driver.cells.map(c => c.source)).toEqual(['a']);
  });
});
