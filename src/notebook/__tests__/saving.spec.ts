import type { NotebookPanel } from '@jupyterlab/notebook';
import { Signal } from '@lumino/signaling';
import { NotebookSaver } from '../saving';

/** The parts of a panel the saver uses; a save takes `saveMs` and leaves the model clean. */
function fakePanel(saveMs = 100) {
  const state = {
    isDisposed: false,
    model: { dirty: false },
    disposed: new Signal<unknown, void>({}),
    context: {
      saveState: new Signal<unknown, 'started' | 'completed' | 'failed'>({}),
      save: jest.fn(async () => {
        saves.push(Date.now());
        await new Promise(resolve => setTimeout(resolve, saveMs));
        state.model.dirty = false;
      })
    }
  };
  const saves: number[] = [];
  return { panel: state as unknown as NotebookPanel, state, saves };
}

describe('NotebookSaver', () => {
  beforeEach(() => {
    jest.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('saves a stream of changes at most once per interval, none older than interval + delay', async () => {
    const { panel, state, saves } = fakePanel();
    const saver = new NotebookSaver(panel, 1000, 5000);
    const changes: number[] = [];
    for (let t = 0; t < 30000; t += 300) {
      state.model.dirty = true;
      changes.push(Date.now());
      saver.scheduleSave();
      await jest.advanceTimersByTimeAsync(300);
    }
    await jest.advanceTimersByTimeAsync(10000);
    expect(saves.length).toBeGreaterThanOrEqual(6);
    expect(saves.length).toBeLessThanOrEqual(7);
    for (let i = 1; i < saves.length; i++) {
      expect(saves[i] - saves[i - 1]).toBeGreaterThanOrEqual(5000);
    }
    // Each change is written by the first save that starts after it.
    for (const change of changes) {
      const writtenAt = saves.find(at => at >= change);
      expect(writtenAt).toBeDefined();
      expect(writtenAt! - change).toBeLessThanOrEqual(6000);
    }
  });

  it('skips a scheduled save when nothing is left to write', async () => {
    const { panel, state, saves } = fakePanel();
    const saver = new NotebookSaver(panel, 1000, 5000);
    state.model.dirty = true;
    saver.scheduleSave();
    // Saved by someone else in the meantime.
    state.model.dirty = false;
    await jest.advanceTimersByTimeAsync(2000);
    expect(saves).toEqual([]);
  });

  it('writes at once when asked to save, whatever the interval', async () => {
    const { panel, state, saves } = fakePanel();
    const saver = new NotebookSaver(panel, 1000, 5000);
    state.model.dirty = true;
    const first = saver.save();
    await jest.advanceTimersByTimeAsync(100);
    await first;
    state.model.dirty = true;
    const second = saver.save();
    await jest.advanceTimersByTimeAsync(100);
    await second;
    expect(saves).toEqual([0, 100]);
  });
});
