/**
 * The user's notes for the planner (docs/protocol.md#observation, our extension `context.user_notes`):
 * the notebook adapter reads them, and every request carries them, whatever the planner's filter says.
 */
import type { Observation, UserNote } from '../../protocol';
import { applyContextFilter } from '../contextFilter';
import { fitRequest } from '../observation';
import { code, exec, plan, setup, withTemplate } from './runnerSetup';

const NOTES: UserNote[] = [
  {
    text: 'use the median, not the mean',
    step_id: 'p1',
    stage_id: 's1',
    created_at: '2025-05-02T09:14:03.120Z'
  },
  { text: 'ignore the 2019 rows', cell_id: 'c7' }
];

describe('user notes in the requests', () => {
  it('sends the notebook’s notes with every /planning and /generating, a filter notwithstanding', async () => {
    const s = setup({
      planning: [
        withTemplate(false, undefined, {
          // A filter that names nothing: variables and effects are left out, the notes are not.
          context_filter: { variables_to_include: [] }
        }),
        plan(true)
      ],
      generating: [[code('x = 1'), exec()]]
    });
    s.driver.userNotes = NOTES;
    await s.runner.start({ task: 'Average price' });
    expect(s.client.planningRequests).toHaveLength(2);
    for (const request of [
      ...s.client.planningRequests,
      ...s.client.generatingRequests
    ]) {
      expect(request.observation.context?.user_notes).toEqual(NOTES);
    }
    expect(
      s.client.generatingRequests[0].observation.context?.variables
    ).toEqual({});
  });

  it('sends no `user_notes` when the notebook holds none', async () => {
    const s = setup({
      planning: [withTemplate(false), plan(true)],
      generating: [[code('x = 1'), exec()]]
    });
    await s.runner.start({ task: 'Average price' });
    expect(s.client.planningRequests[0].observation.context).not.toHaveProperty(
      'user_notes'
    );
    expect(
      s.client.generatingRequests[0].observation.context
    ).not.toHaveProperty('user_notes');
  });

  it('takes a note edited between two requests into the next one', async () => {
    const s = setup({
      planning: [withTemplate(false), plan(true)],
      generating: [[code('x = 1'), exec()]]
    });
    s.driver.onExec = (_cell, driver) => {
      driver.userNotes = [{ text: 'round to 2 decimals' }];
      return undefined;
    };
    await s.runner.start({ task: 'Average price' });
    expect(s.client.planningRequests[0].observation.context?.user_notes).toBe(
      undefined
    );
    expect(
      s.client.planningRequests[1].observation.context?.user_notes
    ).toEqual([{ text: 'round to 2 decimals' }]);
  });
});

describe('user notes and the request’s limits', () => {
  const observation = (): Observation => ({
    location: { current: { stage_id: 's1', step_id: 'p1' } },
    context: {
      variables: { big: 'x'.repeat(30000) },
      effects: { current: ['y'.repeat(20000)], history: [] },
      user_notes: NOTES
    }
  });

  it('keeps the notes when a filter applies', () => {
    const { observation: filtered } = applyContextFilter(observation(), {
      variables_to_include: ['big']
    });
    expect(filtered.context?.user_notes).toEqual(NOTES);
  });

  it('keeps the notes whole when a request is trimmed to fit', () => {
    const { request, report } = fitRequest(
      { observation: observation(), options: { stream: false } },
      5000
    );
    expect(report.fits).toBe(true);
    expect(request.observation.context?.user_notes).toEqual(NOTES);
  });
});
