/**
 * A malformed saved run (hand-edited, truncated, older) is never restored: it is reported with what is
 * wrong, and a Run starts afresh instead of throwing.
 */
import { checkSavedRunState } from '../saved/savedRun';
import { isSavedRunState } from '../saved/savedRun';
import { FakeNotebookDriver } from '../testing';
import { plan, saved, setup, withTemplate, code } from './runnerSetup';

async function validSave(): Promise<Record<string, unknown>> {
  const s = setup({
    planning: [withTemplate(false), plan(true)],
    generating: [[code('x = 1')]]
  });
  await s.runner.start({ task: 't' });
  return JSON.parse(JSON.stringify(saved(s.driver)));
}

describe('saved run validation', () => {
  it('accepts what the runner saves', async () => {
    const state = await validSave();
    expect(checkSavedRunState(state)).toEqual({ ok: true, state });
    // The planner's assessments, absent from older saves.
    expect(
      (state.progress as Record<string, unknown>).assessments
    ).toBeUndefined();
    (state.progress as Record<string, unknown>).assessments = {
      s1: { stage: { percent: 50 }, steps: { a: { reasoning: 'ok' } } }
    };
    expect(checkSavedRunState(state)).toEqual({ ok: true, state });
  });

  it.each<[string, (state: Record<string, unknown>) => unknown, RegExp]>([
    [
      'a hand-edited step id',
      state => {
        (state.progress as { steps: { current: unknown } }).steps.current = 7;
        return state;
      },
      /^progress\.steps\.current: /
    ],
    [
      'an unknown machine state',
      state => ({
        ...state,
        fsm: { state: 'FLYING', returnTo: null, history: [] }
      }),
      /^fsm\.state: /
    ],
    [
      'a truncated state',
      state => {
        delete state.effects;
        delete state.cells;
        return state;
      },
      /^effects: /
    ],
    [
      'a hand-edited assessment',
      state => {
        (state.progress as Record<string, unknown>).assessments = {
          s1: { stage: { percent: 'half' } }
        };
        return state;
      },
      /^progress\.assessments\.s1\.stage\.percent: /
    ],
    ['another version', state => ({ ...state, version: 2 }), /^version: /],
    ['not an object', () => 'garbage', /^the saved run: /]
  ])('reports %s', async (_, corrupt, problem) => {
    const check = checkSavedRunState(corrupt(await validSave()));
    expect(check.ok).toBe(false);
    expect(check.ok ? [] : check.problems).toContainEqual(
      expect.stringMatching(problem)
    );
    expect(isSavedRunState(corrupt(await validSave()))).toBe(false);
  });

  it('starts a new run over a malformed save instead of throwing', async () => {
    const driver = new FakeNotebookDriver();
    const broken = await validSave();
    (broken.progress as { stages: unknown }).stages = null;
    driver.savedState = broken;
    const s = setup(
      { planning: [withTemplate(false), plan(true)], generating: [[]] },
      { driver }
    );
    expect(await s.runner.resumeFromSaved()).toBeNull();
    expect((await s.runner.start({ task: 'again' })).reason).toBe('completed');
    expect(checkSavedRunState(driver.savedState).ok).toBe(true);
  });
});
