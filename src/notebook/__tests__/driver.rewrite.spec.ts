/**
 * A retry's fix rewrites its own cell (`rewrite_cell`) in a real notebook model: the code it replaces
 * stays with the cell as an attempt, a cell the user edited is never rewritten, the user may restore an
 * attempt, and the notebook's undo and a rewind bring the earlier code back.
 */
import type { ICodeCellModel } from '@jupyterlab/cells';
import { sourceHash } from '../../engine/ports/driver';
import { attemptsOf, restoreCode } from '../attempts';
import { quietConsole } from './utils';
import { provenance, useDriverNotebook } from './driverFixture';

quietConsole();

const fx = useDriverNotebook();

const FAILING = 'df.groupby("region").revenue.sum()';
const FIX = 'df.groupby("Region").revenue.sum()';
const AT = new Date('2026-03-04T05:06:07.000Z');

type SharedCode = ICodeCellModel['sharedModel'];

/** A cell of the run that ran and raised, as the kernel leaves it. */
async function failedCell(source = FAILING): Promise<string> {
  const id = await fx.driver.addCell({
    kind: 'code',
    source,
    role: 'code',
    provenance: { ...provenance, store_id: 'totals' }
  });
  const cell = fx.cellById(id) as SharedCode;
  cell.setOutputs([
    { output_type: 'stream', name: 'stdout', text: 'grouping…\n' },
    {
      output_type: 'error',
      ename: 'KeyError',
      evalue: "'region'",
      traceback: [
        '\u001b[0;31mKeyError\u001b[0m Traceback (most recent call last)',
        "\u001b[0;31mKeyError\u001b[0m: 'region'"
      ]
    }
  ]);
  cell.execution_count = 3;
  cell.setMetadata('notebook_bcc', {
    ...fx.bccMetadata(id),
    exec_error: true
  });
  return id;
}

describe('NotebookDriver rewrites a cell of the run', () => {
  it('replaces the source, clears the outputs and keeps the failed code with its error as an attempt', async () => {
    const id = await failedCell();
    expect(fx.driver.rewriteStatus(id)).toBe('ok');
    const result = await fx.driver.rewriteCell({
      cellId: id,
      source: FIX,
      at: AT
    });
    expect(result).toEqual({
      status: 'rewritten',
      previous: FAILING,
      attempts: 1
    });
    const cell = fx.cellById(id) as SharedCode;
    expect(cell.getSource()).toBe(FIX);
    expect(cell.getOutputs()).toEqual([]);
    expect(cell.execution_count).toBeNull();
    const meta = fx.bccMetadata(id);
    expect(meta).toMatchObject({
      store_id: 'totals',
      source_hash: sourceHash(FIX)
    });
    expect(meta).not.toHaveProperty('exec_error');
    expect(attemptsOf(cell)).toEqual([
      {
        code: FAILING,
        error: "KeyError: 'region'",
        traceback:
          "KeyError Traceback (most recent call last)\nKeyError: 'region'",
        at: '2026-03-04T05:06:07.000Z',
        by: 'planner'
      }
    ]);
    // Still the run's: the next fix rewrites it again, and the history grows. The fix raised nothing but
    // failed its check in the kernel: that is its failure.
    await fx.driver.rewriteCell({
      cellId: id,
      source: 'x = 1',
      at: AT,
      checkFailure: '`totals` is an int, not a dict'
    });
    expect(attemptsOf(cell).map(a => [a.code, a.error])).toEqual([
      [FAILING, "KeyError: 'region'"],
      [FIX, 'Check failed: `totals` is an int, not a dict']
    ]);
    await fx.driver.rewriteCell({ cellId: id, source: 'x = 2', at: AT });
    expect(attemptsOf(cell).map(a => a.error)[2]).toBeNull();
  });

  it("is one step of the notebook's undo: JupyterLab's Undo brings the failed code back", async () => {
    const shared = fx.notebook.panel.model!.sharedModel;
    const id = await failedCell();
    await fx.driver.rewriteCell({ cellId: id, source: FIX, at: AT });
    shared.undo();
    const cell = fx.cellById(id) as SharedCode;
    expect(cell.getSource()).toBe(FAILING);
    expect(attemptsOf(cell)).toEqual([]);
    expect(cell.getOutputs().map(o => o.output_type)).toEqual([
      'stream',
      'error'
    ]);
    // The stamp came back with it: the cell is the run's, not an edit of the user's.
    expect(fx.driver.rewriteStatus(id)).toBe('ok');
    shared.redo();
    expect(cell.getSource()).toBe(FIX);
  });

  it('never rewrites a cell the user edited; a new cell can go right below it', async () => {
    const id = await failedCell();
    const after = await fx.driver.addCell({
      kind: 'markdown',
      source: 'after',
      role: 'content',
      provenance
    });
    fx.cellById(id).setSource(`${FAILING}  # mine`);
    expect(fx.driver.rewriteStatus(id)).toBe('edited');
    expect(
      await fx.driver.rewriteCell({ cellId: id, source: FIX, at: AT })
    ).toEqual({ status: 'edited' });
    expect(fx.cellById(id).getSource()).toBe(`${FAILING}  # mine`);
    expect(fx.driver.rewriteStatus(after)).toBe('not_code');
    expect(fx.driver.rewriteStatus('no-such-cell')).toBe('missing');
    const below = await fx.driver.addCell({
      kind: 'code',
      source: FIX,
      role: 'code',
      provenance,
      after: id
    });
    expect(fx.cells().map(c => c.getId())).toEqual([id, below, after]);
  });

  it('restores an attempt the user picks: its code is back, the code it replaces becomes an attempt, and the cell is the user’s', async () => {
    const shared = fx.notebook.panel.model!.sharedModel;
    const id = await failedCell();
    await fx.driver.rewriteCell({ cellId: id, source: FIX, at: AT });
    const cell = fx.cellById(id);
    expect(restoreCode(shared, cell, 0, AT)).toBe(true);
    expect(cell.getSource()).toBe(FAILING);
    expect(attemptsOf(cell)).toEqual([
      expect.objectContaining({ code: FIX, error: null, by: 'user' })
    ]);
    expect(fx.driver.rewriteStatus(id)).toBe('edited');
    expect(restoreCode(shared, cell, 3, AT)).toBe(false);
    shared.undo();
    expect(cell.getSource()).toBe(FIX);
  });

  it('tells the planner of the rewritten cells in the summary, bounded, and keeps them out of the cells listed', async () => {
    const id = await failedCell(`${FAILING}\n${'# note\n'.repeat(1000)}`);
    await fx.driver.rewriteCell({ cellId: id, source: FIX, at: AT });
    const summary = fx.driver.notebookSummary();
    expect(summary.attempts).toEqual([
      {
        cell_id: id,
        store_id: 'totals',
        step_id: provenance.step_id,
        attempts: 2,
        code: FIX,
        failed: [
          {
            attempt: 1,
            code: expect.stringContaining('characters omitted'),
            error: "KeyError: 'region'"
          }
        ]
      }
    ]);
    expect(summary.attempts?.[0].failed[0].code.length).toBeLessThanOrEqual(
      600
    );
    const listed = summary.cells.find(c => c.id === id);
    expect(listed?.metadata).not.toHaveProperty('attempts');
    expect(listed?.metadata).not.toHaveProperty('source_hash');
  });

  it('forgets the attempt a rewind puts back into the cell', async () => {
    const id = await failedCell();
    await fx.driver.rewriteCell({ cellId: id, source: FIX, at: AT });
    await fx.driver.rewindCells({
      remove: [],
      restore: [{ cellId: id, source: FAILING }]
    });
    const cell = fx.cellById(id);
    expect(cell.getSource()).toBe(FAILING);
    expect(attemptsOf(cell)).toEqual([]);
    expect(fx.driver.rewriteStatus(id)).toBe('ok');
  });

  it('puts the failed code back with its error, not under the outputs of the fix; a new fix keeps that error', async () => {
    const id = await failedCell();
    await fx.driver.rewriteCell({ cellId: id, source: FIX, at: AT });
    const cell = fx.cellById(id) as SharedCode;
    // The fix ran and printed.
    cell.setOutputs([{ output_type: 'stream', name: 'stdout', text: '3\n' }]);
    cell.execution_count = 4;
    await fx.driver.rewindCells({
      remove: [],
      restore: [{ cellId: id, source: FAILING }]
    });
    expect(cell.execution_count).toBeNull();
    expect(cell.getOutputs()).toEqual([
      {
        output_type: 'error',
        ename: 'KeyError',
        evalue: "'region'",
        traceback: [
          'KeyError Traceback (most recent call last)',
          "KeyError: 'region'"
        ]
      }
    ]);
    // The planner fixes it again: the attempt has its error again.
    await fx.driver.rewriteCell({ cellId: id, source: FIX, at: AT });
    expect(attemptsOf(cell).map(a => [a.code, a.error])).toEqual([
      [FAILING, "KeyError: 'region'"]
    ]);
  });
});
