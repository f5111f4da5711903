/**
 * A pause is written to the notebook before anything shows it: while the save that records PAUSED is
 * under way the run is "pausing", and only once the file says PAUSED does the snapshot say paused. A
 * page that closes, or a user who reads the file, right after seeing "Paused" finds the pause saved.
 */
import { ActionStream, FakeNotebookDriver } from '../testing';
import type { IRunSnapshot } from '../types';
import { code, exec, plan, setup, text, withTemplate } from './runnerSetup';

/** A driver whose immediate saves (pause, stop, error, end) wait until the test lets them finish. */
class GatedSaveDriver extends FakeNotebookDriver {
  /** The saves started and not yet let through, oldest first. */
  waiting: Array<{ state: unknown; release: () => void }> = [];
  /** The saved state's FSM state each time a save started. */
  startedWith: string[] = [];
  gate = false;

  async saveRunState(
    state: unknown,
    options: { checkpoint?: boolean } = {}
  ): Promise<void> {
    const fsm = (state as { fsm?: { state?: string } }).fsm?.state ?? '';
    this.startedWith.push(fsm);
    if (this.gate && !options.checkpoint) {
      await new Promise<void>(release => this.waiting.push({ state, release }));
    }
    await super.saveRunState(state, options);
  }
}

async function untilSaveWaits(driver: GatedSaveDriver): Promise<void> {
  for (let i = 0; i < 100 && driver.waiting.length === 0; i++) {
    await new Promise(resolve => setTimeout(resolve, 0));
  }
  expect(driver.waiting.length).toBeGreaterThan(0);
}

function savedFsmState(driver: FakeNotebookDriver): string | undefined {
  return (driver.savedState as { fsm?: { state?: string } } | null)?.fsm?.state;
}

describe('a pause is saved before it is shown', () => {
  it('says paused only once the save that records PAUSED has finished', async () => {
    const driver = new GatedSaveDriver();
    const stream = new ActionStream();
    const s = setup(
      {
        planning: [withTemplate(false), plan(true)],
        generating: [stream]
      },
      { driver }
    );
    // Every snapshot a view saw that said "paused", with the file's state at that moment.
    const shownPaused: Array<{ saved: string | undefined }> = [];
    const look = (snapshot: IRunSnapshot) => {
      if (snapshot.paused) {
        shownPaused.push({ saved: savedFsmState(driver) });
      }
    };
    s.runner.progressChanged.connect((_, snapshot) => look(snapshot));
    s.runner.stateChanged.connect(() => look(s.runner.snapshot));
    s.runner.actionApplied.connect((_, applied) => {
      if (applied.index === 0) {
        driver.gate = true;
        s.runner.pause();
      }
    });
    const run = s.runner.start({ task: 't' });
    stream.push(code('a = 1'));
    await untilSaveWaits(driver);

    // The save that records the pause is under way: the file will say PAUSED, the panel says pausing.
    const pending = driver.waiting[0];
    expect((pending.state as { fsm: { state: string } }).fsm.state).toBe(
      'PAUSED'
    );
    expect(s.runner.snapshot.paused).toBe(false);
    expect(s.runner.snapshot.pausing).toBe(true);
    expect(shownPaused).toEqual([]);

    driver.gate = false;
    pending.release();
    const paused = await s.paused();
    expect(paused.state).toBe('PAUSED');
    expect(savedFsmState(driver)).toBe('PAUSED');
    expect(shownPaused.length).toBeGreaterThan(0);
    expect(shownPaused.every(seen => seen.saved === 'PAUSED')).toBe(true);

    stream.push(exec(), text('after'));
    stream.end();
    s.runner.resume();
    expect((await run).reason).toBe('completed');
    expect(s.driver.cells.map(c => c.source)).toEqual(['a = 1', 'after']);
  });

  it('goes on when Resume comes while the pause is being saved', async () => {
    const driver = new GatedSaveDriver();
    const stream = new ActionStream();
    const s = setup(
      {
        planning: [withTemplate(false), plan(true)],
        generating: [stream]
      },
      { driver }
    );
    s.runner.actionApplied.connect((_, applied) => {
      if (applied.index === 0) {
        driver.gate = true;
        s.runner.pause();
      }
    });
    const run = s.runner.start({ task: 't' });
    stream.push(code('a = 1'), exec(), text('after'));
    stream.end();
    await untilSaveWaits(driver);
    s.runner.resume();
    driver.gate = false;
    driver.waiting[0].release();
    expect((await run).reason).toBe('completed');
    expect(s.transitions).toContain('PAUSE -> PAUSED');
    expect(s.transitions).toContain('RESUME -> ACTION_COMPLETED');
    expect(s.driver.cells.map(c => c.source)).toEqual(['a = 1', 'after']);
    expect(savedFsmState(driver)).toBe('WORKFLOW_COMPLETED');
  });

  it('stops when Stop comes while the pause is being saved', async () => {
    const driver = new GatedSaveDriver();
    const stream = new ActionStream();
    const s = setup(
      {
        planning: [withTemplate(false), plan(true)],
        generating: [stream]
      },
      { driver }
    );
    s.runner.actionApplied.connect((_, applied) => {
      if (applied.index === 0) {
        driver.gate = true;
        s.runner.pause();
      }
    });
    const run = s.runner.start({ task: 't' });
    stream.push(code('a = 1'), exec(), text('after'));
    await untilSaveWaits(driver);
    const stopped = s.runner.stop({ interruptKernel: false });
    driver.gate = false;
    for (const save of driver.waiting) {
      save.release();
    }
    // Saves the stop starts are let through as they come.
    const releaser = setInterval(() => {
      for (const save of driver.waiting.splice(0)) {
        save.release();
      }
    }, 1);
    try {
      await stopped;
      expect((await run).reason).toBe('stopped');
    } finally {
      clearInterval(releaser);
    }
    expect(s.driver.cells.map(c => c.source)).toEqual(['a = 1']);
    expect(s.runner.snapshot.paused).toBe(false);
    expect(savedFsmState(driver)).not.toBe('PAUSED');
  });
});
