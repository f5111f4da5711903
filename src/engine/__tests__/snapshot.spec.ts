import { snapshotFromSaved } from '../snapshot';
import {
  code,
  exec,
  plan,
  saved,
  setup,
  TEMPLATE,
  withTemplate
} from './runnerSetup';

describe('composeSnapshot', () => {
  it('shows a saved run as the runner that saved it showed it', async () => {
    const s = setup({
      planning: [withTemplate(false, TEMPLATE), plan(true), plan(false)],
      generating: [[code('x = 1'), exec()], new Error('down')]
    });
    await s.runner.start({ task: 'explore' });
    await s.runner.stop();
    const live = s.runner.snapshot;
    expect(live.running).toBe(false);
    const fromSaved = snapshotFromSaved(
      saved(s.driver),
      live.maxExecutionSteps
    );
    // Only the loop's counters of this session are not saved.
    expect(fromSaved).toEqual({ ...live, behaviorsRun: 0 });
    expect(fromSaved.step.id).toBe('p2');
    expect(fromSaved.task).toBe('explore');
    expect(live.timings.map(t => [t.stepId, t.iteration])).toEqual([
      ['p1', 1],
      ['p2', 1]
    ]);
    expect(live.progress.steps.current).toBe('p2');
  });

  it('shows a saved run as not running, paused or failed', async () => {
    const s = setup({
      planning: [withTemplate(false)],
      generating: [new Error('down')]
    });
    await s.runner.start({ task: 't' });
    expect(s.runner.snapshot.error).not.toBeNull();
    const fromSaved = snapshotFromSaved(saved(s.driver), 0);
    expect(fromSaved).toMatchObject({
      state: 'ERROR',
      running: false,
      paused: false,
      pauseReason: null,
      pausing: false,
      error: null,
      bufferedActions: 0
    });
  });
});
