/** What applying a planning answer changes in the run state, decided without a runner. */
import type { WorkflowTemplate } from '../../../protocol';
import { op } from '../../state/transaction';
import {
  contextApplied,
  stageStepsReplaced,
  templateAdopted
} from '../planApply';
import { planUpdate } from '../planUpdate';
import { runView } from '../planApply';
import {
  applied,
  begunState,
  newState,
  ONE_STEP,
  TEMPLATE
} from '../../__tests__/runnerSetup';

describe('templateAdopted', () => {
  it('places a run that had no template at the first step of the new one', () => {
    const state = begunState('t', null);
    expect(templateAdopted(state, TEMPLATE)).toEqual([
      op.progress('setTemplate', TEMPLATE),
      op.progress('adoptLocation', 's1', 'p1')
    ]);
  });

  it('keeps the place of a run that has one', () => {
    const state = begunState('t', TEMPLATE);
    expect(templateAdopted(state, TEMPLATE)).toEqual([
      op.progress('setTemplate', TEMPLATE)
    ]);
  });
});

describe('stageStepsReplaced', () => {
  const steps = [
    { id: 'x1', name: 'X1', status: 'completed' as const },
    { id: 'x2', name: 'X2' }
  ];

  it.each<[string, string | null, boolean, string[]]>([
    ['the current stage', null, true, ['s1', 'x1', 'x2']],
    ['a named stage', 's2', true, ['s2', 'x1', 'x2']],
    ['no such stage', 'nope', false, []]
  ])('replaces the steps of %s', (_, stageId, ok, [stage, ...ids]) => {
    const state = begunState('t', TEMPLATE);
    const { ops, applied: done } = stageStepsReplaced(state, stageId, steps);
    expect(done).toBe(ok);
    applied(state, ...ops);
    expect(state.fsm.state).toBe('STEP_RUNNING');
    if (ok) {
      expect(state.progress.findStage(stage)?.steps.map(s => s.id)).toEqual(
        ids
      );
    }
  });

  it('places a run with no step in the stage at its first open step', () => {
    const template: WorkflowTemplate = {
      name: 'T',
      stages: [{ id: 's1', name: 'S1', steps: [] }]
    };
    const state = begunState('t', template);
    expect(state.progress.currentStepId).toBeNull();
    applied(state, ...stageStepsReplaced(state, null, steps).ops);
    expect(state.progress.currentStepId).toBe('x2');
  });
});

describe('contextApplied', () => {
  it('sets variables, progress, effects, the next behavior and the context filter of an answer', () => {
    const state = begunState('t', ONE_STEP);
    applied(state, op.effects('add', 'mine'));
    const changes = planUpdate(runView(state), {
      targetAchieved: false,
      behavior: { id: 'p1#b1' },
      context_update: {
        variables: { rows: 1460 },
        effects_update: { current: ['the planner’s'] },
        progress_update: {
          level: 'steps',
          focus: 'look at prices',
          current_outputs: { expected: ['df'], produced: [], in_progress: [] }
        }
      }
    });
    applied(state, ...contextApplied(state, changes));
    expect(state.contextVariables).toMatchObject({
      problem_description: 't',
      rows: 1460
    });
    expect(state.effects.current).toEqual(['the planner’s']);
    expect(state.progress.focus('steps')).toBe('look at prices');
    expect(state.progress.outputs('steps').expected).toEqual(['df']);
    expect(state.progress.nextBehaviorId()).toBe('p1#b1');
    expect(state.filter).toBeNull();
  });

  it('changes nothing of a fresh state but what an empty answer says', () => {
    const state = newState();
    const changes = planUpdate(runView(state), { targetAchieved: false });
    expect(contextApplied(state, changes)).toEqual([
      op.progress('planBehaviorId', null),
      op.set({ legacy: {}, filter: null })
    ]);
  });
});
