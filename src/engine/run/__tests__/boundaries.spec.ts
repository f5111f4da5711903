/** What the loop's boundaries change in the run state, decided without a runner. */
import { op } from '../../state/transaction';
import { behaviorBegun } from '../behaviorChanges';
import {
  addEffect,
  resumed,
  rotateEffects,
  variablesCollected
} from '../boundaries';
import { applied, begunState, ONE_STEP } from '../../__tests__/runnerSetup';

function running() {
  const state = begunState('t', ONE_STEP);
  return applied(
    state,
    ...behaviorBegun(state, { now: new Date(0), maxHistoryItems: 10 })
  );
}

describe('effects at a boundary', () => {
  it('adds an effect outside a behavior without moving anything to history', () => {
    const state = begunState('t', ONE_STEP);
    applied(state, op.effects('add', 'before'));
    expect(addEffect(state, 'more')).toEqual([op.effects('add', 'more')]);
    expect(rotateEffects(state)).toEqual([]);
  });

  it('moves the earlier effects to history at a behavior’s first effect, once', () => {
    const state = running();
    applied(state, op.effects('add', 'earlier'));
    applied(state, ...addEffect(state, 'first'));
    applied(state, ...addEffect(state, 'second'));
    expect(state.effects.toJSON()).toEqual({
      current: ['first', 'second'],
      history: ['earlier']
    });
    expect(state.behavior?.rotated).toBe(true);
  });
});

describe('variablesCollected', () => {
  it('keeps the values in memory and their types, and clears what asked for the collection', () => {
    const state = begunState('t', ONE_STEP);
    applied(
      state,
      op.set({ variablesDirty: true, codeRanSinceCollection: true })
    );
    const { ops, gone } = variablesCollected(state, {
      values: { df: 'DataFrame(3x2)', n: 3 },
      types: { df: 'DataFrame(3x2)' }
    });
    applied(state, ...ops);
    expect(gone).toEqual([]);
    expect(state.kernelVariables).toEqual({ df: 'DataFrame(3x2)', n: 3 });
    expect(state.kernelVariableTypes).toMatchObject({ df: 'DataFrame(3x2)' });
    expect(state.variablesDirty).toBe(false);
    expect(state.codeRanSinceCollection).toBe(false);
  });

  it('names the variables a pause lost, and shows what outputs tracking sees', () => {
    const state = begunState('t', ONE_STEP);
    applied(
      state,
      op.set({
        kernelVariableTypes: { df: 'DataFrame', model: 'LinearRegression' }
      }),
      op.progress('setExpected', 'steps', ['df']),
      op.fsm('PAUSE')
    );
    applied(state, ...resumed(state));
    expect(state.variablesBeforePause).toEqual(['df', 'model']);
    const { ops, show, gone } = variablesCollected(state, {
      values: { df: 'DataFrame' },
      types: {}
    });
    expect(gone).toEqual(['model']);
    expect(show).toBe(true);
    applied(state, ...ops);
    expect(state.progress.outputs('steps').in_progress).toEqual(['df']);
    expect(state.variablesBeforePause).toBeNull();
  });

  it('clears the flags when the kernel could not be asked, keeping what it had', () => {
    const state = begunState('t', ONE_STEP);
    applied(state, op.set({ kernelVariableTypes: { df: 'DataFrame' } }));
    const { ops, show } = variablesCollected(state, null);
    expect(show).toBe(false);
    expect(ops).toEqual([
      op.set({
        variablesDirty: false,
        codeRanSinceCollection: false,
        variablesBeforePause: null
      })
    ]);
  });
});
