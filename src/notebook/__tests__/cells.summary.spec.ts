import { YNotebook } from '@jupyter/ydoc';
import type { NotebookPanel } from '@jupyterlab/notebook';
import { nullTranslator } from '@jupyterlab/translation';
import type { CellFollower } from '../following';
import { NotebookCells } from '../cells';

/** NotebookCells over a bare shared notebook: the summary reads nothing but the model. */
function cellsOver(shared: YNotebook): NotebookCells {
  const panel = {
    isDisposed: false,
    model: { sharedModel: shared }
  } as unknown as NotebookPanel;
  return new NotebookCells({
    panel,
    trans: nullTranslator.load('notebook_bcc'),
    follower: {} as CellFollower,
    changed: () => undefined
  });
}

function notebookOf(cells: unknown[]): YNotebook {
  const shared = new YNotebook();
  shared.insertCells(0, cells as never);
  return shared;
}

describe('NotebookCells.summary', () => {
  it('reports the highest execution count, not the last cell’s', () => {
    const shared = notebookOf([
      { cell_type: 'code', source: 'a', execution_count: 9, outputs: [] },
      { cell_type: 'code', source: 'b', execution_count: 3, outputs: [] },
      { cell_type: 'markdown', source: 'c' }
    ]);
    expect(cellsOver(shared).summary().execution_count).toBe(9);
  });

  it('summarizes a notebook of 150,000 code cells', () => {
    // Plain cells: inserting 150,000 cells into a YNotebook takes minutes. The summary reads no more
    // of a cell than these offer.
    const cells = Array.from({ length: 150_000 }, (_, i) => ({
      cell_type: 'code',
      execution_count: i + 1,
      getId: () => `cell-${i}`,
      getSource: () => '',
      getOutputs: () => [],
      getMetadata: () => undefined
    }));
    const shared = { cells, getMetadata: () => undefined };
    const summary = cellsOver(shared as unknown as YNotebook).summary();
    expect(summary.cell_count).toBe(150_000);
    expect(summary.execution_count).toBe(150_000);
    expect(summary.cells.map(cell => cell.id)).toEqual([
      'cell-149995',
      'cell-149996',
      'cell-149997',
      'cell-149998',
      'cell-149999'
    ]);
  });
});
