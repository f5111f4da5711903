/** The runner keeps what a behavior counted when it saves mid-behavior, and nothing it did not count. */
import { ActionStream } from '../../testing';
import { effectsOf, plan, setup } from '../../__tests__/runnerSetup';

describe('WorkflowRunner as the writer of a behavior under way', () => {
  it('keeps the behavior’s effects together across a pause saved mid-behavior', async () => {
    const stream = new ActionStream();
    const s = setup({
      planning: [plan(false), plan(true)],
      generating: [stream]
    });
    s.runner.actionApplied.connect((_, event) => {
      if (event.index === 0) {
        s.runner.pause();
      }
    });
    const run = s.runner.start({ task: 't' });
    stream.push({ action: 'next_event', event_type: 'first' });
    await s.paused();
    stream.push({ action: 'next_event', event_type: 'second' });
    stream.end();
    s.runner.resume();
    expect((await run).reason).toBe('completed');
    expect(effectsOf(s.client.planningRequests[1])).toEqual([
      'next_event: first',
      'next_event: second'
    ]);
  });
});
