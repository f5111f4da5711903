/**
 * The reference planner shows that it received the user's notes (`context.user_notes`): it quotes each
 * in a Markdown cell, once, and again when the step the note is on starts over.
 */
import type {
  GeneratingRequest,
  PlanningRequest,
  UserNote
} from '../../protocol';
import type { ActionInput } from '../referencePlanner';
import { ReferencePlanner } from '../referencePlanner';
import {
  generating as generatingRequest,
  type IObservationOptions,
  LOAD,
  planning as planningRequest
} from './fixture';

const MEDIAN: UserNote = {
  text: 'use the median, not the mean',
  stage_id: 'data_loading',
  step_id: 'load_data',
  created_at: '2025-05-02T09:14:03.120Z'
};
const ROWS: UserNote = {
  text: 'ignore the 2019 rows\nand the 2020 ones',
  cell_id: 'c7'
};

function planning(
  options: IObservationOptions,
  userNotes: UserNote[]
): PlanningRequest {
  return planningRequest({ ...options, userNotes });
}

function generating(
  options: IObservationOptions,
  userNotes: UserNote[]
): GeneratingRequest {
  return generatingRequest({ ...options, userNotes });
}

function quotes(actions: ActionInput[]): string[] {
  return actions.flatMap(a =>
    a.action === 'add' && a.content.includes('Your note for the planner')
      ? [a.content]
      : []
  );
}

describe('ReferencePlanner and the user’s notes', () => {
  it('quotes each note in a Markdown cell before the step’s code, once', () => {
    const planner = new ReferencePlanner();
    planner.plan(planning(LOAD, [MEDIAN, ROWS]), 'nb');
    const actions = planner.generate(generating(LOAD, [MEDIAN, ROWS]), 'nb');
    expect(actions[0]).toMatchObject({ action: 'add', shot_type: 'dialogue' });
    const [quote] = quotes(actions);
    expect(quote).toContain(
      '(on step `load_data`):\n\n> use the median, not the mean'
    );
    expect(quote).toContain(
      '(on cell `c7`):\n\n> ignore the 2019 rows\n> and the 2020 ones'
    );
    expect(quotes(actions)).toHaveLength(1);
    // The step's code still follows.
    expect(
      actions.some(a => a.action === 'add' && a.shot_type === 'action')
    ).toBe(true);
    // The next behavior of the same step does not quote them again.
    planner.plan(
      planning({ ...LOAD, iteration: 1, feedback: 'error' }, [MEDIAN, ROWS]),
      'nb'
    );
    const again = planner.generate(
      generating({ ...LOAD, iteration: 1 }, [MEDIAN, ROWS]),
      'nb'
    );
    expect(quotes(again)).toEqual([]);
  });

  it('quotes a new or edited note with the next answer', () => {
    const planner = new ReferencePlanner();
    planner.plan(planning(LOAD, [MEDIAN]), 'nb');
    planner.generate(generating(LOAD, [MEDIAN]), 'nb');
    const edited = {
      ...MEDIAN,
      text: 'use the trimmed mean',
      created_at: '2025-05-02T10:00:00Z'
    };
    planner.plan(
      planning({ ...LOAD, iteration: 1, feedback: 'error' }, [edited]),
      'nb'
    );
    const actions = planner.generate(
      generating({ ...LOAD, iteration: 1 }, [edited]),
      'nb'
    );
    expect(quotes(actions)).toHaveLength(1);
    expect(quotes(actions)[0]).toContain('> use the trimmed mean');
    expect(quotes(actions)[0]).not.toContain('median');
  });

  it('quotes a step’s note again when the step starts over (Redo this step with the note), not the others', () => {
    const planner = new ReferencePlanner();
    planner.plan(planning(LOAD, [MEDIAN, ROWS]), 'nb');
    planner.generate(generating(LOAD, [MEDIAN, ROWS]), 'nb');
    // A redo: the step starts again, with no feedback, at its first behavior.
    planner.plan(planning(LOAD, [MEDIAN, ROWS]), 'nb');
    const actions = planner.generate(generating(LOAD, [MEDIAN, ROWS]), 'nb');
    expect(quotes(actions)).toHaveLength(1);
    expect(quotes(actions)[0]).toContain('> use the median, not the mean');
    expect(quotes(actions)[0]).not.toContain('2019');
  });

  it('adds nothing without notes', () => {
    const planner = new ReferencePlanner();
    planner.plan(planning(LOAD, []), 'nb');
    expect(quotes(planner.generate(generating(LOAD, []), 'nb'))).toEqual([]);
  });
});
