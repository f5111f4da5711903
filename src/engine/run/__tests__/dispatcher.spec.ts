/** The one place the run state changes: applied, recorded, told once, saved when asked. */
import { DEFAULT_SETTINGS } from '../../settings';
import { FakeNotebookDriver, FakePlannerService } from '../../testing';
import { op, transaction } from '../../state/transaction';
import { TransactionDispatcher } from '../dispatcher';
import { newState } from '../../__tests__/runnerSetup';

function dispatcher(client = new FakePlannerService()) {
  const state = newState();
  const driver = new FakeNotebookDriver();
  const told: string[] = [];
  const writer = new TransactionDispatcher({
    state,
    driver,
    client,
    settings: () => DEFAULT_SETTINGS,
    behavior: () => null,
    signals: {
      transition: t => told.push(`transition ${t.event}`),
      effects: e => told.push(`effects ${e.current.join(',')}`),
      progress: () => told.push(`progress (saved ${driver.saveCount})`),
      warning: m => told.push(`warning ${m.id}`)
    }
  });
  return { state, driver, told, writer };
}

describe('TransactionDispatcher', () => {
  it('tells each transition, the effects once and the snapshot once per transaction', async () => {
    const { told, writer } = dispatcher();
    await writer.dispatch(
      transaction(
        'test.begin',
        [
          op.fsm('START_WORKFLOW'),
          op.effects('add', 'a'),
          op.fsm('START_STEP'),
          op.effects('add', 'b')
        ],
        { show: true }
      )
    );
    expect(told).toEqual([
      'transition START_WORKFLOW',
      'transition START_STEP',
      'effects a,b',
      'progress (saved 0)'
    ]);
  });

  it('saves when the transaction asks, before it shows the new snapshot', async () => {
    const { driver, told, writer } = dispatcher();
    const done = writer.dispatch(
      transaction('test.close', [op.set({ phase: 'done' })], {
        save: 'checkpoint',
        show: true
      })
    );
    expect(told).toEqual([]);
    await done;
    expect(told).toEqual(['progress (saved 1)']);
    expect(driver.immediateSaveCount).toBe(0);
    expect(driver.savedState).toMatchObject({ phase: 'done' });
    await writer.dispatch(transaction('test.end', [], { save: 'now' }));
    expect(driver.immediateSaveCount).toBe(1);
  });

  it('records what it applied, with the part that asked and the transitions', async () => {
    const { writer } = dispatcher();
    await writer.dispatch(transaction('test.one', [op.fsm('START_WORKFLOW')]));
    await writer.dispatch(transaction('test.two', [op.set({ task: 't' })]));
    expect(
      writer.record.map(r => [r.seq, r.origin, r.transitions.length])
    ).toEqual([
      [1, 'test.one', 1],
      [2, 'test.two', 0]
    ]);
  });

  it('records and tells nothing of a transaction the state machine refuses', () => {
    const { state, told, writer } = dispatcher();
    expect(() =>
      writer.dispatch(
        transaction('test.bad', [op.set({ task: 't' }), op.fsm('START_STEP')])
      )
    ).toThrow('Event START_STEP is not allowed in state IDLE');
    expect(state.task).toBeNull();
    expect(writer.record).toEqual([]);
    expect(told).toEqual([]);
  });

  it('saves the planner service’s state with the run, through a transaction of its own', () => {
    const client = Object.assign(new FakePlannerService(), {
      saveState: () => ({ memory: 1 })
    });
    const { writer } = dispatcher(client);
    expect(writer.capture()).toMatchObject({ planner: { memory: 1 } });
    expect(writer.record.map(r => r.origin)).toEqual(['runner.capture']);
  });
});
