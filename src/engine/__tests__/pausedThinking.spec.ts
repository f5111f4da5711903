/**
 * While a run is paused its live thinking cell says so: the notebook must not read "Planner is
 * thinking…" when nothing is thinking. Resume puts the live title back; the run then closes it as usual.
 */
import { ActionStream } from '../testing';
import type { AnyAction } from '../actions/registry';
import { code, plan, setup, text, when, withTemplate } from './runnerSetup';

const THINKING = {
  action: 'is_thinking',
  text_array: ['Looking at the columns'],
  agent_name: 'Planner'
} as AnyAction;

describe('a paused run does not say it is thinking', () => {
  it('retitles the open thinking cell while paused, and back on resume', async () => {
    const stream = new ActionStream();
    const s = setup({
      planning: [withTemplate(false), plan(true)],
      generating: [stream]
    });
    const run = s.runner.start({ task: 't' });
    stream.push(code('a = 1'), THINKING);
    await when(s.runner.actionApplied, a => a.index === 1);
    const thinking = () =>
      s.driver.cells.find(c => c.source.includes('Looking at the columns'))!;
    expect(thinking().source).toMatch(/^🤔 Planner is thinking…/);

    s.runner.pause();
    stream.push(text('after'));
    await s.paused();
    expect(thinking().source).toMatch(/^⏸ Planner is paused/);
    expect(thinking().source).not.toContain('is thinking');
    expect(thinking().source).toContain('Looking at the columns');

    s.runner.resume();
    await when(s.runner.actionApplied, a => a.index === 2);
    stream.end();
    expect((await run).reason).toBe('completed');
    // Closed as any thinking cell is, with no trace of the pause.
    expect(thinking().source).toMatch(/Planner thought/);
    expect(thinking().source).not.toContain('paused');
  });
});
