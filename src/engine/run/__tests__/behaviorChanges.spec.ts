/** What a behavior changes in the run state, decided without a runner: (state, event) -> operations. */
import { PlannerError } from '../../../protocol';
import { op } from '../../state/transaction';
import {
  actionApplied,
  actionStarted,
  behaviorBegun,
  behaviorClosed,
  behaviorInterrupted,
  countersKept,
  generatingFailed
} from '../behaviorChanges';
import {
  type AnyAction,
  applied,
  begunState,
  code,
  exec,
  ONE_STEP,
  text
} from '../../__tests__/runnerSetup';

const NOW = new Date('2026-01-01T10:00:00Z');
const LATER = new Date('2026-01-01T10:00:05Z');
const BODY = { observation: { location: {} } } as never;

/** A run at p1 with one behavior open since NOW. */
function open(planned?: string) {
  const state = begunState('t', ONE_STEP);
  if (planned) {
    applied(state, op.progress('planBehaviorId', planned));
  }
  return applied(
    state,
    ...behaviorBegun(state, {
      now: NOW,
      maxHistoryItems: 10,
      planner: { n: 1 }
    })
  );
}

describe('behaviorBegun', () => {
  it('takes the checkpoint first, named after the behavior it starts, with the planner state', () => {
    const state = open('p1#b1');
    const [checkpoint] = state.rewind.checkpoints;
    expect(checkpoint).toMatchObject({
      kind: 'behavior',
      stepId: 'p1',
      behaviorId: 'p1#b1',
      planner: { n: 1 },
      at: NOW.toISOString()
    });
    // The checkpoint is where the run stood before the behavior.
    expect(checkpoint.progress.behaviors.current).toBeNull();
    expect(state.behavior).toMatchObject({ id: 'p1#b1', actionIndex: 0 });
    expect(state.fsm.state).toBe('BEHAVIOR_RUNNING');
    expect(state.timings).toEqual([
      {
        behaviorId: 'p1#b1',
        iteration: 1,
        stageId: 's1',
        stepId: 'p1',
        startedAt: NOW.toISOString(),
        endedAt: null,
        durationMs: null
      }
    ]);
  });

  it('goes on from a completed behavior, and keeps at most maxHistoryItems timings', () => {
    const state = open();
    applied(state, op.fsm('COMPLETE_BEHAVIOR'));
    applied(state, ...behaviorClosed(state, LATER));
    const next = behaviorBegun(state, { now: LATER, maxHistoryItems: 1 });
    expect(next).toContainEqual(op.fsm('NEXT_BEHAVIOR'));
    applied(state, ...next);
    expect(state.timings.map(t => t.behaviorId)).toEqual(['behavior_002']);
  });
});

describe('the actions of a behavior', () => {
  it('moves the previous behavior’s effects to history at its first action only', () => {
    const state = open();
    applied(state, op.effects('add', 'of the one before'));
    const first = actionStarted(state);
    expect(first).toEqual([
      op.set({ behavior: { ...state.behavior!, rotated: true } }),
      op.effects('rotate'),
      op.fsm('START_ACTION')
    ]);
    applied(state, ...first, ...actionApplied(text('x'), { ok: true }));
    expect(actionStarted(state)).toEqual([op.fsm('NEXT_ACTION')]);
    expect(state.effects.history).toEqual(['of the one before']);
  });

  it.each<[string, AnyAction, boolean]>([
    ['an exec', exec(), true],
    ['a custom action', { action: 'chart' }, true],
    ['a markdown cell', text('x'), false],
    ['a code cell not run', code('x = 1'), false]
  ])(
    'after %s, the kernel variables are collected again: %s',
    (_, action, dirty) => {
      const ops = actionApplied(action, { ok: true, summary: 'did it' });
      expect(ops[0]).toEqual(op.progress('recordAction', 'did it'));
      expect(ops).toContainEqual(op.fsm('COMPLETE_ACTION'));
      expect(ops.some(o => o.model === 'run')).toBe(dirty);
    }
  );

  it('keeps the counters of the behavior under way, and only of it', () => {
    const state = open();
    const counters = {
      executed: 2,
      succeeded: 1,
      sectionsAdded: 0,
      lastResult: 'error',
      actionIndex: 2
    };
    applied(state, ...countersKept(state, { id: 'behavior_001', counters }));
    expect(state.behavior).toMatchObject(counters);
    expect(countersKept(state, { id: 'other', counters })).toEqual([]);
  });
});

describe('the end of a behavior', () => {
  it('closes with its feedback waiting for /planning; any failed action makes it an error', () => {
    const state = open();
    applied(
      state,
      op.set({
        behavior: {
          ...state.behavior!,
          executed: 3,
          succeeded: 2,
          lastResult: 'success'
        }
      })
    );
    applied(state, ...behaviorClosed(state, LATER));
    expect(state.pendingFeedback).toEqual({
      behavior_id: 'behavior_001',
      actions_executed: 3,
      actions_succeeded: 2,
      sections_added: 0,
      last_action_result: 'error'
    });
    expect(state.behavior).toBeNull();
    expect(state.behaviorsRun).toBe(1);
    expect(state.phase).toBe('plan');
    expect(state.timings[0]).toMatchObject({
      endedAt: LATER.toISOString(),
      durationMs: 5000
    });
    expect(state.progress.completed('behaviors')).toHaveLength(1);
  });

  it('records a behavior cut short with why, and no step end pending', () => {
    const state = open();
    applied(state, op.set({ endStepRequested: true }));
    applied(state, ...behaviorInterrupted(state, 'stopped', LATER));
    expect(state.pendingFeedback?.last_action_result).toBe('stopped');
    expect(state.endStepRequested).toBe(false);
    expect(state.progress.completed('behaviors')[0].goal).toContain(
      '(stopped)'
    );
  });

  it('keeps a failed /generating request for retry when no action was applied', () => {
    const state = open();
    const { ops, error } = generatingFailed(state, {
      failure: new PlannerError({
        kind: 'http',
        url: 'http://planner.test/generating',
        message: 'down',
        missingVariables: ['x']
      }),
      body: BODY,
      now: LATER
    });
    expect(ops).toEqual([
      op.set({ retry: { endpoint: 'generating', body: BODY } })
    ]);
    expect(error).toMatchObject({
      endpoint: 'generating',
      retryable: true,
      missingVariables: ['x']
    });
  });

  it('ends the behavior with what it did when actions were applied: a retry asks /planning', () => {
    const state = open();
    applied(state, op.fsm('START_ACTION'), op.fsm('COMPLETE_ACTION'));
    applied(
      state,
      op.set({ behavior: { ...state.behavior!, actionIndex: 2 } })
    );
    const { ops } = generatingFailed(state, {
      failure: new Error('cut'),
      body: BODY,
      now: LATER
    });
    applied(state, ...ops);
    expect(state.retry).toBeNull();
    expect(state.behavior).toBeNull();
    expect(state.phase).toBe('plan');
    expect(state.fsm.state).toBe('BEHAVIOR_COMPLETED');
    expect(state.pendingFeedback?.last_action_result).toBe('error');
    expect(state.effects.current).toEqual([
      '⚠️ /generating failed: cut after 2 action(s) were applied; they are kept and the behavior ends here.'
    ]);
  });
});
