import type { NotebookPanel } from '@jupyterlab/notebook';
import { Signal } from '@lumino/signaling';
import { ActionRegistry } from '../../engine/actions/registry';
import type { IRewindRecord } from '../../engine/state/rewind';
import { DEFAULT_SETTINGS } from '../../engine/settings';
import { RunTrace } from '../../engine/trace';
import { LazyRun } from '../lazy';
import {
  ITraceStorage,
  restoreTrace,
  TraceClock,
  TraceKeeper,
  TraceStore
} from '../traceStore';

/** Lets the promise chains of the store run (they wait on no timer). */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) {
    await Promise.resolve();
  }
}

/** The storage's logic without a browser: IndexedDB is what the galata test runs on. */
class MemoryStorage implements ITraceStorage {
  readonly values = new Map<string, string>();
  writes = 0;
  async get(key: string): Promise<string | undefined> {
    return this.values.get(key);
  }
  async set(key: string, value: string): Promise<void> {
    this.writes++;
    this.values.set(key, value);
  }
  async delete(key: string): Promise<void> {
    this.values.delete(key);
  }
  /** The notebooks' keys, without the index. */
  keys(): string[] {
    return [...this.values.keys()].filter(k => !k.startsWith('#')).sort();
  }
}

const REWIND: IRewindRecord = {
  kind: 'undo_behavior',
  at: '2026-01-01T00:00:00.000Z',
  stageId: 'explore',
  stepId: 'plots',
  behaviorId: 'b2',
  steps: ['plots'],
  removed: 2,
  kept: 0,
  restored: 0,
  kernelRestarted: false,
  rerun: 0,
  rerunError: null,
  effect: 'undone'
} as IRewindRecord;

/** A trace of two exchanges, a dialect and a rewind, its clock advancing 5 ms a record. */
function recordedTrace(): RunTrace {
  let now = 1000;
  const trace = new RunTrace({ now: () => (now += 5) });
  const body = {
    observation: { context: { variables: { df: 'DataFrame (3, 2)' } } }
  };
  trace.onRequest('http://p/planning', body);
  trace.onResponse('http://p/planning', 200, { next: 'go' }, false);
  trace.onEnd('http://p/planning');
  trace.dialect('dslc');
  trace.onRequest('http://p/generating', { task: 'x' });
  trace.onResponse('http://p/generating', 200, undefined, true);
  trace.onLine('http://p/generating', '{"type":"add"}');
  trace.onLine('http://p/generating', '{"type":"exec"}');
  trace.rewind(REWIND);
  trace.end(2, '/generating', 'aborted');
  return trace;
}

describe('restoreTrace', () => {
  it('gives a trace that exports the same lines', () => {
    const jsonl = recordedTrace().toJSONL();
    const clock = new TraceClock();
    const restored = new RunTrace({ now: clock.now });
    restoreTrace(restored, clock, jsonl);
    expect(restored.toJSONL()).toBe(jsonl);
    expect(restored.plannerDialect).toBe('dslc');
    expect(restored.records).toHaveLength(8);
  });

  it('lets a resumed run go on after it: the next request numbered and timed after the last', () => {
    const jsonl = recordedTrace().toJSONL();
    const clock = new TraceClock();
    const restored = new RunTrace({ now: clock.now });
    restoreTrace(restored, clock, jsonl);
    const lastT = restored.records[restored.records.length - 1].t;
    expect(restored.request('/planning', {})).toBe(3);
    const next = restored.records[restored.records.length - 1];
    expect(next.t).toBeGreaterThanOrEqual(lastT);
  });

  it('keeps the types the run set aside and does not ask for them while restoring', () => {
    const clock = new TraceClock();
    const restored = new RunTrace({ now: clock.now });
    const types = jest.fn(() => ({ df: 'int' }));
    restored.variableTypes = types;
    const jsonl = recordedTrace().toJSONL();
    restoreTrace(restored, clock, jsonl);
    expect(types).not.toHaveBeenCalled();
    expect(restored.variableTypes).toBe(types);
    expect(restored.toJSONL()).toBe(jsonl);
  });

  it('replaces what the trace held', () => {
    const clock = new TraceClock();
    const restored = new RunTrace({ now: clock.now });
    restored.request('/old', {});
    restoreTrace(restored, clock, recordedTrace().toJSONL());
    expect(restored.records.map(r => r.endpoint)).not.toContain('/old');
  });
});

describe('TraceStore', () => {
  it('keeps one trace per key and gives it back', async () => {
    const storage = new MemoryStorage();
    const store = new TraceStore({ storage });
    expect(await store.save('a', 'line a\n')).toBe(true);
    expect(await store.save('b', 'line b\n')).toBe(true);
    expect(await store.load('a')).toBe('line a\n');
    expect(await store.load('b')).toBe('line b\n');
    expect(await store.load('c')).toBeUndefined();
  });

  it('refuses a trace over the cap and drops the one it would have replaced', async () => {
    const storage = new MemoryStorage();
    const store = new TraceStore({ storage, maxChars: 10 });
    await store.save('a', '12345\n');
    expect(await store.save('a', '12345678901\n')).toBe(false);
    expect(await store.load('a')).toBeUndefined();
    expect(storage.keys()).toEqual([]);
  });

  it('keeps every notebook together within the cap: the one saved longest ago goes first', async () => {
    let now = 0;
    const storage = new MemoryStorage();
    const store = new TraceStore({ storage, maxChars: 10, now: () => ++now });
    await store.save('a', '1234\n');
    await store.save('b', '1234\n');
    await store.save('a', '123\n'); // a is now the newest
    await store.save('c', '1234\n');
    expect(storage.keys()).toEqual(['a', 'c']);
    expect(await store.load('b')).toBeUndefined();
  });

  it('removes a notebook from the index too, so it no longer counts', async () => {
    let now = 0;
    const storage = new MemoryStorage();
    const store = new TraceStore({ storage, maxChars: 10, now: () => ++now });
    await store.save('x', '123\n');
    await store.save('a', '1234\n');
    await store.remove('a');
    await store.save('b', '1234\n');
    // Counted still, `a` would have pushed `x` out.
    expect(storage.keys()).toEqual(['b', 'x']);
  });

  it('runs one operation after another, and goes on after a failure', async () => {
    const storage = new MemoryStorage();
    const store = new TraceStore({ storage });
    const failing = jest
      .spyOn(storage, 'set')
      .mockRejectedValueOnce(new Error('quota'));
    const first = store.save('a', 'x\n');
    const second = store.save('b', 'y\n');
    await expect(first).rejects.toThrow('quota');
    expect(await second).toBe(true);
    failing.mockRestore();
    expect(await store.load('b')).toBe('y\n');
  });
});

function keeperOf(
  storage: MemoryStorage,
  options: { busy?: () => boolean; trace?: RunTrace; clock?: TraceClock } = {}
) {
  const clock = options.clock ?? new TraceClock();
  const trace = options.trace ?? new RunTrace({ now: clock.now });
  const keeper = new TraceKeeper({
    store: new TraceStore({ storage }),
    key: () => 'server/nb.ipynb',
    trace,
    clock,
    busy: options.busy ?? (() => false),
    delayMs: 1000
  });
  return { keeper, trace, clock };
}

describe('TraceKeeper', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  it('writes the trace once, a moment after a burst of changes', async () => {
    jest.useFakeTimers();
    const storage = new MemoryStorage();
    const { keeper, trace } = keeperOf(storage);
    trace.request('/planning', {});
    keeper.changed();
    keeper.changed();
    keeper.changed();
    expect(storage.keys()).toEqual([]);
    await jest.advanceTimersByTimeAsync(1000);
    expect(storage.values.get('server/nb.ipynb')).toBe(trace.toJSONL());
    // The trace and the index: one write each.
    expect(storage.writes).toBe(2);
  });

  it('writes at once when asked (a run finished), and an empty trace removes the copy', async () => {
    const storage = new MemoryStorage();
    const { keeper, trace } = keeperOf(storage);
    trace.request('/planning', {});
    await keeper.flush();
    expect(storage.keys()).toEqual(['server/nb.ipynb']);
    trace.clear();
    await keeper.flush();
    expect(storage.keys()).toEqual([]);
  });

  it('restores the stored trace after a reload', async () => {
    const storage = new MemoryStorage();
    const before = keeperOf(storage);
    before.trace.request('/planning', { a: 1 });
    before.trace.end(1, '/planning');
    await before.keeper.flush();
    const after = keeperOf(storage);
    expect(await after.keeper.restore()).toBe(true);
    expect(after.trace.toJSONL()).toBe(before.trace.toJSONL());
  });

  it('does not restore into a trace a run has begun to fill, nor while a run goes', async () => {
    const storage = new MemoryStorage();
    const before = keeperOf(storage);
    before.trace.request('/planning', {});
    await before.keeper.flush();

    const started = keeperOf(storage);
    started.trace.request('/generating', {});
    expect(await started.keeper.restore()).toBe(false);
    expect(started.trace.records.map(r => r.endpoint)).toEqual(['/generating']);

    const running = keeperOf(storage, { busy: () => true });
    expect(await running.keeper.restore()).toBe(false);
    expect(running.trace.length).toBe(0);
  });

  it('does not restore a copy the run was forgotten with while the store read it', async () => {
    const storage = new MemoryStorage();
    const before = keeperOf(storage);
    before.trace.request('/planning', {});
    await before.keeper.flush();

    const after = keeperOf(storage);
    const restoring = after.keeper.restore();
    const forgotten = after.keeper.forget();
    expect(await restoring).toBe(false);
    await forgotten;
    expect(after.trace.length).toBe(0);
    expect(storage.keys()).toEqual([]);
  });

  it('drops the stored copy when the run is forgotten, and a write waiting with it', async () => {
    jest.useFakeTimers();
    const storage = new MemoryStorage();
    const { keeper, trace } = keeperOf(storage);
    trace.request('/planning', {});
    await keeper.flush();
    keeper.changed();
    await keeper.forget();
    await jest.advanceTimersByTimeAsync(2000);
    expect(storage.keys()).toEqual([]);
  });

  it('does the waiting write when the notebook closes', async () => {
    jest.useFakeTimers();
    const storage = new MemoryStorage();
    const { keeper, trace } = keeperOf(storage);
    trace.request('/planning', {});
    keeper.changed();
    keeper.dispose();
    await settle();
    expect(storage.keys()).toEqual(['server/nb.ipynb']);
  });

  it('logs a failed write instead of rejecting', async () => {
    const storage = new MemoryStorage();
    jest.spyOn(storage, 'set').mockRejectedValue(new Error('quota'));
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => {});
    const { keeper, trace } = keeperOf(storage);
    trace.request('/planning', {});
    await expect(keeper.flush()).resolves.toBeUndefined();
    expect(warn).toHaveBeenCalledWith(
      'Notebook-BCC: the run trace was not kept.',
      expect.any(Error)
    );
    warn.mockRestore();
  });
});

/** A notebook panel as far as `LazyRun` reads one before a run: its path and its end. */
function fakePanel(path: string) {
  const owner = {};
  const disposed = new Signal<object, void>(owner);
  return {
    panel: { context: { path }, disposed } as unknown as NotebookPanel,
    close: () => disposed.emit()
  };
}

function lazyRunOf(storage: MemoryStorage, path = 'work/nb.ipynb') {
  const { panel, close } = fakePanel(path);
  const settingsChanged = new Signal<object, void>({});
  const run = new LazyRun({
    panel,
    settings: () => ({ current: DEFAULT_SETTINGS }),
    settingsChanged,
    serverSettings: {
      baseUrl: 'http://localhost:8888/'
    } as LazyRun.IOptions['serverSettings'],
    registry: new ActionRegistry(),
    hooks: {} as LazyRun.IOptions['hooks'],
    traceStore: new TraceStore({ storage })
  });
  return { run, close };
}

describe('LazyRun keeps its trace across a reload', () => {
  it('restores the last trace of its notebook and tells the views (without loading the runtime)', async () => {
    const storage = new MemoryStorage();
    const jsonl = recordedTrace().toJSONL();
    await new TraceStore({ storage }).save(
      'http://localhost:8888/work/nb.ipynb',
      jsonl
    );
    const { run, close } = lazyRunOf(storage);
    const changed = jest.fn();
    run.runner.progressChanged.connect(changed);
    await settle();
    expect(run.runner.trace.toJSONL()).toBe(jsonl);
    expect(changed).toHaveBeenCalledTimes(1);
    expect(run.started).toBe(false);
    close();
  });

  it('a run forgotten before the store has loaded is not restored, and its copy is dropped', async () => {
    const storage = new MemoryStorage();
    await new TraceStore({ storage }).save(
      'http://localhost:8888/work/nb.ipynb',
      recordedTrace().toJSONL()
    );
    const { run, close } = lazyRunOf(storage);
    run.runner.forgetRun();
    await settle();
    expect(run.runner.trace.length).toBe(0);
    expect(storage.keys()).toEqual([]);
    close();
  });

  it('leaves another notebook, or the same path on another server, alone', async () => {
    const storage = new MemoryStorage();
    await new TraceStore({ storage }).save(
      'http://other:8888/work/nb.ipynb',
      recordedTrace().toJSONL()
    );
    const { run, close } = lazyRunOf(storage);
    await settle();
    expect(run.runner.trace.length).toBe(0);
    close();
  });

  it('forgetting the run (Discard the Saved Workflow Run) empties the trace and drops the copy', async () => {
    const storage = new MemoryStorage();
    await new TraceStore({ storage }).save(
      'http://localhost:8888/work/nb.ipynb',
      recordedTrace().toJSONL()
    );
    const { run, close } = lazyRunOf(storage);
    await settle();
    const changed = jest.fn();
    run.runner.progressChanged.connect(changed);
    run.runner.forgetRun();
    await settle();
    expect(run.runner.trace.length).toBe(0);
    expect(changed).toHaveBeenCalled();
    expect(storage.keys()).toEqual([]);
    close();
    await settle();
    expect(storage.keys()).toEqual([]);
  });
});
