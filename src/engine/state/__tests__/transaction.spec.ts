/** `RunState.apply`, the one writer of the run state, and the draft its builders read ahead with. */
import type { WorkflowTemplate } from '../../../protocol';
import { FsmTransitionError } from '../fsm';
import { RunState } from '../runState';
import { op, ProgressDraft, transaction } from '../transaction';

const TEMPLATE: WorkflowTemplate = {
  name: 'T',
  stages: [
    {
      id: 's1',
      name: 'S1',
      steps: [
        { id: 'p1', name: 'P1' },
        { id: 'p2', name: 'P2' }
      ]
    }
  ]
};

function state(): RunState {
  return new RunState({
    now: () => new Date('2026-01-01T00:00:00Z'),
    maxHistoryItems: () => 10
  });
}

describe('RunState.apply', () => {
  it('applies the operations of a transaction in order, each by its model', () => {
    const run = state();
    const applied = run.apply(
      transaction('test', [
        op.set({ task: 'predict' }),
        op.fsm('START_WORKFLOW'),
        op.progress('setTemplate', TEMPLATE),
        op.progress('startStage', 's1'),
        op.fsm('START_STEP'),
        op.progress('startStep', 'p1'),
        op.effects('add', 'loaded'),
        op.cells('cellAdded', 'c1', 'code', 'load'),
        op.set({ phase: 'generate' })
      ])
    );
    expect(run.task).toBe('predict');
    expect(run.fsm.state).toBe('STEP_RUNNING');
    expect(run.progress.currentStepId).toBe('p1');
    expect(run.effects.current).toEqual(['loaded']);
    expect(run.cells.resolve('load')).toMatchObject({ cellId: 'c1' });
    expect(run.phase).toBe('generate');
    expect(applied.transitions.map(t => `${t.event} -> ${t.to}`)).toEqual([
      'START_WORKFLOW -> STAGE_RUNNING',
      'START_STEP -> STEP_RUNNING'
    ]);
    expect(applied.effectsChanged).toBe(true);
  });

  it('rejects a transaction whose state-machine event would be refused, before changing anything', () => {
    const run = state();
    expect(() =>
      run.apply(
        transaction('test', [
          op.set({ task: 'predict' }),
          op.effects('add', 'never'),
          op.fsm('START_WORKFLOW'),
          op.fsm('COMPLETE_STEP')
        ])
      )
    ).toThrow(FsmTransitionError);
    expect(run.task).toBeNull();
    expect(run.effects.current).toEqual([]);
    expect(run.fsm.state).toBe('IDLE');
  });

  it('skips an event marked ifAllowed that the machine does not allow where it comes', () => {
    const run = state();
    const applied = run.apply(
      transaction('test', [
        op.fsm('CANCEL', { ifAllowed: true }),
        op.fsm('START_WORKFLOW'),
        op.fsm('CANCEL', { ifAllowed: true })
      ])
    );
    expect(applied.transitions.map(t => t.event)).toEqual([
      'START_WORKFLOW',
      'CANCEL'
    ]);
    expect(applied.effectsChanged).toBe(false);
  });

  it('checks events after a reset or a restore from where they leave the machine', () => {
    const run = state();
    run.apply(transaction('test', [op.fsm('START_WORKFLOW')]));
    const saved = run.toJSON();
    run.apply(transaction('test', [op.reset(), op.fsm('START_WORKFLOW')]));
    expect(run.fsm.state).toBe('STAGE_RUNNING');
    expect(() =>
      run.apply(
        transaction('test', [op.restore(saved), op.fsm('START_WORKFLOW')])
      )
    ).toThrow(FsmTransitionError);
    run.apply(transaction('test', [op.restore(saved), op.fsm('START_STEP')]));
    expect(run.fsm.state).toBe('STEP_RUNNING');
  });

  it('empties the state on reset and takes a saved run whole on restore', () => {
    const run = state();
    run.apply(
      transaction('test', [
        op.set({ task: 't', behaviorsRun: 3, planningFailures: 2 }),
        op.effects('add', 'e')
      ])
    );
    const saved = run.toJSON();
    run.apply(transaction('test', [op.reset()]));
    expect(run.task).toBeNull();
    expect(run.behaviorsRun).toBe(0);
    expect(run.effects.current).toEqual([]);
    run.apply(transaction('test', [op.restore(saved)]));
    expect(run.task).toBe('t');
    expect(run.effects.current).toEqual(['e']);
    // What describes this session's loop is not in a saved run.
    expect(run.behaviorsRun).toBe(0);
  });

  it('reads a saved run on its own, for a view', () => {
    const run = state();
    run.apply(transaction('test', [op.set({ task: 't' })]));
    expect(RunState.fromSaved(run.toJSON()).task).toBe('t');
  });
});

describe('ProgressDraft', () => {
  it('lets a decision read what the operations before it did, without changing the run', () => {
    const run = state();
    run.apply(
      transaction('test', [
        op.progress('setTemplate', TEMPLATE),
        op.progress('startStage', 's1'),
        op.progress('startStep', 'p1')
      ])
    );
    const draft = new ProgressDraft(run.progress);
    draft.apply(op.progress('completeStep', []));
    draft.push(op.fsm('NEXT_STEP'));
    draft.apply(
      op.progress('startStep', draft.progress.nextStep()?.id ?? null)
    );
    expect(draft.progress.currentStepId).toBe('p2');
    expect(run.progress.currentStepId).toBe('p1');
    expect(draft.ops.map(o => (o.model === 'fsm' ? o.event : o.op))).toEqual([
      'completeStep',
      'NEXT_STEP',
      'startStep'
    ]);
  });
});
