/**
 * A step the planner gave up (it ended the step and said its target was not reached) shows as given
 * up, not as completed (nor as skipped, which is a step the run never reached), in the live snapshot
 * and in a reloaded notebook's.
 */
import { snapshotFromSaved } from '../snapshot';
import type { IRunSnapshot } from '../types';
import {
  plan,
  saved,
  setup,
  TEMPLATE,
  text,
  withTemplate
} from './runnerSetup';

function statuses(snapshot: IRunSnapshot): Record<string, string> {
  return Object.fromEntries(
    snapshot.stages.flatMap(stage =>
      stage.steps.map(step => [step.id, step.status])
    )
  );
}

const GAVE_UP = plan(false, {
  transition: { continue_behaviors: false, target_achieved: false }
});

describe('WorkflowRunner: a step given up', () => {
  it('is given up when the planner ends it (end_phase) and says its target was not reached', async () => {
    const s = setup({
      planning: [
        withTemplate(false, TEMPLATE),
        GAVE_UP,
        plan(true),
        plan(true)
      ],
      generating: [
        [text('Skipping "Load": no data file.'), { action: 'end_phase' }]
      ]
    });
    const finished = await s.runner.start({ task: 't' });
    expect(finished.reason).toBe('completed');
    expect(statuses(s.runner.snapshot)).toEqual({
      p1: 'given_up',
      p2: 'completed',
      q1: 'completed'
    });
    // A reloaded notebook shows the same.
    const reloaded = snapshotFromSaved(saved(s.driver), 10);
    expect(statuses(reloaded)).toEqual(statuses(s.runner.snapshot));
  });

  it('is given up when the planner ends it with continue_behaviors false and no target reached', async () => {
    const s = setup({
      planning: [
        withTemplate(false, TEMPLATE),
        GAVE_UP,
        plan(true),
        plan(true)
      ],
      generating: [[text('tried')]]
    });
    await s.runner.start({ task: 't' });
    expect(statuses(s.runner.snapshot).p1).toBe('given_up');
  });

  it('is completed when its target was reached', async () => {
    const s = setup({
      planning: [
        withTemplate(false, TEMPLATE),
        plan(true),
        plan(true),
        plan(true)
      ],
      generating: [[text('done'), { action: 'end_phase' }]]
    });
    await s.runner.start({ task: 't' });
    expect(statuses(s.runner.snapshot)).toEqual({
      p1: 'completed',
      p2: 'completed',
      q1: 'completed'
    });
  });
});
