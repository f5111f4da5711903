/** The run's notebook: what its writes change of the cell map and the journal, as transactions. */
import { op, type IRunTransaction } from '../../state/transaction';
import { FakeNotebookDriver } from '../../testing';
import { RunNotebook, sourceKept } from '../runNotebook';
import { applied, newState } from '../../__tests__/runnerSetup';
import { checkpoint } from '../../rewind/rollback';
import { latestFailedChecks } from '../../state/contracts';

const PROVENANCE = {
  stage_id: 's1',
  step_id: 'p1',
  behavior_id: 'b1',
  action_index: 0,
  action: 'add'
};

function notebook() {
  const state = newState();
  const driver = new FakeNotebookDriver();
  const sent: IRunTransaction[] = [];
  const run = new RunNotebook({
    driver,
    cells: state.cells,
    journal: state.rewind,
    now: () => new Date('2026-01-01T10:00:00Z'),
    cellAdded: () => undefined,
    checkFailure: () => latestFailedChecks(state.contracts),
    dispatch: tx => {
      sent.push(tx);
      state.apply(tx);
      return Promise.resolve();
    }
  });
  return { state, driver, sent, run };
}

describe('sourceKept', () => {
  it('keeps the earlier source of a cell made before the latest checkpoint, read only then', () => {
    const state = newState();
    let reads = 0;
    const source = () => {
      reads++;
      return 'x = 0';
    };
    expect(sourceKept(state, 'c1', source)).toEqual([]);
    applied(state, op.cells('cellAdded', 'c1', 'code'));
    applied(state, checkpoint(state, 'step', { now: new Date(0) }));
    applied(state, op.cells('cellAdded', 'c2', 'code'));
    expect(sourceKept(state, 'c2', source)).toEqual([]);
    expect(reads).toBe(0);
    expect(sourceKept(state, 'c1', source)).toEqual([
      op.journal('rewriting', 'c1', 'x = 0')
    ]);
    expect(sourceKept(state, 'c1', () => null)).toEqual([]);
  });
});

describe('RunNotebook', () => {
  it('records each cell it adds in the cell map, through a transaction', async () => {
    const { state, sent, run } = notebook();
    const id = await run.addCell(
      { kind: 'code', source: 'x = 1', role: 'code', storeId: 'load' },
      PROVENANCE
    );
    expect(sent.map(tx => tx.origin)).toEqual(['notebook.cellAdded']);
    expect(state.cells.resolve('load')).toEqual({
      ok: true,
      cellId: id,
      via: 'store_id'
    });
    expect(state.cells.lastAddedCellId).toBe(id);
  });

  it('journals the notebook’s title and the title cell’s source before rewriting them', async () => {
    const { state, sent, run } = notebook();
    const first = await run.setTitle('First', PROVENANCE);
    applied(state, checkpoint(state, 'step', { now: new Date(0) }));
    await run.setTitle('Second', PROVENANCE);
    expect(sent.map(tx => tx.origin)).toEqual([
      'notebook.retitling',
      'notebook.titled',
      'notebook.retitling',
      'notebook.titled'
    ]);
    const [seq] = state.rewind.checkpoints.map(c => c.seq);
    expect(state.rewind.toJSON(state.effects.position)).toMatchObject({
      rewritten: [
        {
          cellId: first,
          source: '# First',
          afterSeq: seq
        }
      ],
      titles: [{ title: 'First', afterSeq: seq }]
    });
  });

  it('closes the open thinking cell once, forgetting it before it writes the closed form', async () => {
    const { state, driver, run } = notebook();
    const id = await run.openThinking(
      { title: '🤔 Thinking…', body: 'why', agentName: null },
      PROVENANCE
    );
    expect(state.cells.openThinkingCellId).toBe(id);
    await run.closeThinking();
    await run.closeThinking();
    expect(state.cells.openThinkingCellId).toBeNull();
    expect(driver.cellSource(id)).toBe(
      '<details><summary>💭 Thought for 0 s</summary>\n\nwhy\n\n</details>'
    );
  });
});
