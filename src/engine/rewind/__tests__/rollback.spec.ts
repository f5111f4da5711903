/** Rewind's transactions and plan, on a run state of their own: no runner, no notebook but a fake. */
import { sourceHash } from '../../ports/driver';
import { op } from '../../state/transaction';
import { planRewind, rewindEffect } from '../plan';
import {
  backIntoStep,
  checkpoint,
  needsStepCheckpoint,
  plannerMemory,
  rewindRecord,
  rollback
} from '../rollback';
import { behaviorBegun } from '../../run/behaviorChanges';
import { applied, begunState, TEMPLATE } from '../../__tests__/runnerSetup';

const NOW = new Date('2026-01-01T10:00:00Z');

describe('checkpoints', () => {
  it('are needed at a step that has none, outside a behavior', () => {
    const state = begunState('t', TEMPLATE);
    expect(needsStepCheckpoint(state)).toBe(true);
    applied(state, checkpoint(state, 'step', { now: NOW }));
    expect(needsStepCheckpoint(state)).toBe(false);
    applied(state, op.progress('startStep', 'p2'));
    expect(needsStepCheckpoint(state)).toBe(true);
  });

  it('keep the positions of effects and cells, never their contents', () => {
    const state = begunState('t', TEMPLATE);
    applied(
      state,
      op.effects('add', 'loaded'),
      op.cells('cellAdded', 'c1', 'code', 'load'),
      op.set({ contextVariables: { problem_description: 't', rows: 3 } })
    );
    applied(state, checkpoint(state, 'step', { now: NOW, planner: { n: 2 } }));
    expect(state.rewind.latest).toMatchObject({
      seq: 1,
      kind: 'step',
      stepId: 'p1',
      behaviorId: null,
      template: 0,
      effects: { historyEnd: 0, end: 1 },
      cells: { createdCount: 1, storeIds: { load: 'c1' } },
      contextVariables: { rows: 3 },
      planner: { n: 2 }
    });
    expect(state.rewind.latest?.progress.template).toBeNull();
  });

  it('leave out the memory of a planner service that cannot give it', () => {
    expect(
      plannerMemory({
        saveState: () => {
          throw new Error('no');
        }
      })
    ).toBeUndefined();
    expect(plannerMemory({})).toBeUndefined();
    expect(plannerMemory({ saveState: () => 7 })).toBe(7);
  });
});

describe('rollback', () => {
  it('puts the run back to a checkpoint and forgets what came after, keeping what the user typed', () => {
    const state = begunState('t', TEMPLATE);
    applied(state, checkpoint(state, 'step', { now: NOW }));
    applied(
      state,
      ...behaviorBegun(state, { now: NOW, maxHistoryItems: 10 }),
      op.effects('add', 'made x'),
      op.cells('cellAdded', 'c1', 'code', 'x'),
      op.set({
        contextVariables: {
          ...state.contextVariables,
          x: 1,
          target_column: 'Price'
        },
        userVariables: ['target_column']
      })
    );
    const [back] = state.rewind.checkpoints;
    applied(state, ...rollback(state, back));
    expect(state.progress.currentBehaviorId).toBeNull();
    expect(state.effects.current).toEqual([]);
    expect(state.cells.resolve('x')).toEqual({
      ok: true,
      cellId: 'x',
      via: 'cell_id'
    });
    expect(state.contextVariables).toEqual({
      problem_description: 't',
      target_column: 'Price'
    });
    expect(state.timings).toEqual([]);
    expect(state.behavior).toBeNull();
    expect(state.phase).toBe('plan');
    expect(state.fsm.state).toBe('STEP_RUNNING');
    expect(state.rewind.checkpoints).toEqual([]);
  });

  it('goes back into the step the way a resumed run does', () => {
    expect(backIntoStep()).toEqual([
      op.fsm('RESET'),
      op.fsm('START_WORKFLOW'),
      op.fsm('START_STEP')
    ]);
  });
});

describe('planRewind', () => {
  it('removes the run’s cells made since, keeps those the user edited, restores sources rewritten', () => {
    const state = begunState('t', TEMPLATE);
    const cell = (id: string, source: string, stamped = source) => ({
      id,
      kind: 'code' as const,
      source,
      sourceHash: sourceHash(stamped),
      provenance: { stage_id: 's1', step_id: 'p1', behavior_id: 'b1' }
    });
    const cells = [cell('old', 'x = 1\nmore')];
    const driver = { listCells: () => cells };
    applied(state, op.cells('cellAdded', 'old', 'code'));
    applied(state, checkpoint(state, 'step', { now: NOW }));
    applied(state, op.journal('rewriting', 'old', 'x = 0'));
    cells.push(cell('new', 'y = 2'), cell('edited', 'z = 9', 'z = 3'));
    applied(
      state,
      op.cells('cellAdded', 'new', 'code'),
      op.cells('cellAdded', 'edited', 'code')
    );
    const plan = planRewind(state, driver, {
      kind: 'step',
      stageId: 's1',
      stepId: 'p1'
    });
    expect(plan).toMatchObject({
      seq: 1,
      steps: ['p1'],
      remove: [{ cellId: 'new', summary: 'y = 2' }],
      keep: [{ cellId: 'edited' }],
      restore: [{ cellId: 'old', summary: 'x = 0' }],
      untouched: 0
    });
    expect(rewindEffect(plan!, 1)).toBe(
      'The user rewound to step p1; cells from steps p1 were removed (1 cell(s)). 1 cell(s) the user edited were kept.'
    );
    expect(
      rewindRecord(plan!, { removed: 1, restored: 1 }, 'told', NOW)
    ).toMatchObject({
      kind: 'redo_from_step',
      removed: 1,
      kept: 1,
      restored: 1,
      effect: 'told',
      at: NOW.toISOString()
    });
    expect(planRewind(state, driver, { kind: 'behavior' })).toBeNull();
  });
});
