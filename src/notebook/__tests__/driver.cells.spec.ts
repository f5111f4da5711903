/**
 * What the driver does to a notebook's cells: adds and marks them, keeps the user's place, titles the
 * notebook, finds, summarizes, lists and rewinds its cells.
 */
import { MarkdownCell } from '@jupyterlab/cells';
import { sourceHash } from '../../engine/ports/driver';
import { NotebookDriver } from '../notebookDriver';
import { CELL_METADATA_KEY } from '../metadata';
import { openNotebook, quietConsole } from './utils';
import { afterScroll, provenance, useDriverNotebook } from './driverFixture';

quietConsole();

const fx = useDriverNotebook();

describe('NotebookDriver cells', () => {
  it('appends a code cell with its provenance under notebook_bcc', async () => {
    // A cell of the user's stays above (an untouched empty one goes: cells.starter.spec.ts).
    fx.notebook.panel.model!.sharedModel.cells[0].setSource('mine = 0');
    const before = fx.notebook.panel.model!.sharedModel.cells.length;
    const id = await fx.driver.addCell({
      kind: 'code',
      source: 'x = 1',
      role: 'code',
      provenance: { ...provenance, store_id: 'load_data' },
      metadata: { shot_type: 'action' }
    });
    const cells = fx.notebook.panel.model!.sharedModel.cells;
    expect(cells.length).toBe(before + 1);
    expect(cells[cells.length - 1].getId()).toBe(id);
    expect(fx.cellById(id).cell_type).toBe('code');
    expect(fx.cellById(id).getSource()).toBe('x = 1');
    expect(fx.bccMetadata(id)).toEqual({
      ...provenance,
      store_id: 'load_data',
      role: 'code',
      shot_type: 'action',
      source_hash: sourceHash('x = 1')
    });
  });

  it.each(['content', 'chapter', 'section', 'step'] as const)(
    'adds a rendered markdown cell for the role %s',
    async role => {
      const source = role === 'content' ? 'Some **text**' : `## A ${role}`;
      const id = await fx.driver.addCell({
        kind: 'markdown',
        source,
        role,
        provenance: { ...provenance, action: 'new_chapter' }
      });
      expect(fx.cellById(id).cell_type).toBe('markdown');
      expect(fx.cellById(id).getSource()).toBe(source);
      expect(fx.bccMetadata(id)).toMatchObject({
        role,
        action: 'new_chapter',
        stage_id: 'data_cleaning'
      });
      const widget = fx.widgetById(id);
      expect(widget).toBeInstanceOf(MarkdownCell);
      expect((widget as MarkdownCell).rendered).toBe(true);
    }
  );

  it('marks a thinking cell and renders it even when it starts empty', async () => {
    const id = await fx.driver.addCell({
      kind: 'markdown',
      source: '',
      role: 'thinking',
      provenance: { ...provenance, action: 'is_thinking' },
      metadata: { finished_thinking: false }
    });
    expect(fx.bccMetadata(id)).toMatchObject({
      role: 'thinking',
      thinking: true,
      finished_thinking: false
    });
    expect((fx.widgetById(id) as MarkdownCell).rendered).toBe(true);

    expect(
      await fx.driver.updateCell(id, '> thought it through', {
        finished_thinking: true
      })
    ).toBe(true);
    expect(fx.cellById(id).getSource()).toBe('> thought it through');
    expect(fx.bccMetadata(id)).toMatchObject({
      role: 'thinking',
      thinking: true,
      finished_thinking: true,
      behavior_id: 'behavior_003'
    });
    expect((fx.widgetById(id) as MarkdownCell).rendered).toBe(true);
  });

  it('reports an update of a cell that is gone', async () => {
    expect(await fx.driver.updateCell('no-such-cell', 'x', {})).toBe(false);
  });

  it('never moves the active cell or the focus', async () => {
    const nb = fx.notebook.panel.content;
    const firstId = await fx.driver.addCell({
      kind: 'code',
      source: 'a = 1',
      role: 'code',
      provenance
    });
    nb.activeCellIndex = 0;
    const activeId = nb.activeCell!.model.id;
    const focused = document.activeElement;
    for (const role of ['content', 'thinking', 'section'] as const) {
      await fx.driver.addCell({
        kind: 'markdown',
        source: 'x',
        role,
        provenance
      });
    }
    await fx.driver.addCell({
      kind: 'code',
      source: 'b',
      role: 'code',
      provenance
    });
    await fx.driver.updateCell(firstId, 'a = 2');
    expect(nb.activeCellIndex).toBe(0);
    expect(nb.activeCell!.model.id).toBe(activeId);
    expect(document.activeElement).toBe(focused);

    // The title goes above everything: the same cell stays active.
    await fx.driver.setTitle('Title', provenance, null);
    expect(nb.activeCell!.model.id).toBe(activeId);
    expect(document.activeElement).toBe(focused);
  });

  it('scrolls to new cells only when following them, without selecting or activating them', async () => {
    const nb = fx.notebook.panel.content;
    const scroll = jest.spyOn(nb, 'scrollToItem');
    await fx.driver.addCell({
      kind: 'code',
      source: '1',
      role: 'code',
      provenance
    });
    expect(scroll).not.toHaveBeenCalled();

    fx.driver.followNewCells = true;
    nb.mode = 'command';
    nb.activeCellIndex = 0;
    const activeId = nb.activeCell!.model.id;
    const ids: string[] = [];
    for (const kind of ['markdown', 'code'] as const) {
      ids.push(
        await fx.driver.addCell({
          kind,
          source: kind,
          role: 'code',
          provenance
        })
      );
      await afterScroll();
      const index = nb.widgets.findIndex(cell => cell.model.id === ids.at(-1));
      expect(scroll).toHaveBeenLastCalledWith(index, 'auto');
    }
    await Promise.allSettled(scroll.mock.results.map(result => result.value));
    await new Promise(resolve => setTimeout(resolve, 50));
    expect(nb.activeCell!.model.id).toBe(activeId);
    expect(nb.mode).toBe('command');
    for (const id of ids) {
      expect(nb.isSelected(fx.widgetById(id))).toBe(false);
      expect(fx.widgetById(id).node.contains(document.activeElement)).toBe(
        false
      );
    }

    const following = new NotebookDriver({
      panel: fx.notebook.panel,
      followNewCells: true
    });
    // Cells that arrive close together: one scroll, to the newest.
    for (const source of ['2', '3', '4']) {
      ids.push(
        await following.addCell({
          kind: 'code',
          source,
          role: 'code',
          provenance
        })
      );
    }
    await afterScroll();
    expect(scroll).toHaveBeenCalledTimes(3);
    expect(scroll).toHaveBeenLastCalledWith(nb.widgets.length - 1, 'auto');
  });

  it('does not scroll away from a cell the user is typing in', async () => {
    const nb = fx.notebook.panel.content;
    fx.driver.followNewCells = true;
    nb.activeCellIndex = 0;
    // Its editor exists once the cell is ready (later on a loaded machine).
    await nb.activeCell!.ready;
    nb.mode = 'edit';
    nb.activeCell!.editor!.focus();
    expect(nb.node.contains(document.activeElement)).toBe(true);
    const scroll = jest.spyOn(nb, 'scrollToItem');
    await fx.driver.addCell({
      kind: 'code',
      source: 'x',
      role: 'code',
      provenance
    });
    await afterScroll();
    expect(scroll).not.toHaveBeenCalled();
    expect(nb.activeCellIndex).toBe(0);
    expect(nb.mode).toBe('edit');
  });

  it('sets the title in the metadata and one leading title cell, found by its role', async () => {
    await fx.driver.addCell({
      kind: 'code',
      source: 'x',
      role: 'code',
      provenance
    });
    await fx.driver.setTitle(
      'House Prices',
      { ...provenance, action: 'update_title' },
      null
    );
    const shared = fx.notebook.panel.model!.sharedModel;
    expect(shared.getMetadata('title')).toBe('House Prices');
    expect(shared.getMetadata(CELL_METADATA_KEY)).toMatchObject({
      title: 'House Prices'
    });
    const first = shared.cells[0];
    expect(first.cell_type).toBe('markdown');
    expect(first.getSource()).toBe('# House Prices');
    expect(first.getMetadata(CELL_METADATA_KEY)).toMatchObject({
      role: 'title',
      action: 'update_title'
    });
    expect((fx.widgetById(first.getId()) as MarkdownCell).rendered).toBe(true);

    // The user puts two cells above the title; a new title updates it where it is.
    const titleId = first.getId();
    shared.insertCells(0, [
      { cell_type: 'markdown', source: 'user note' },
      { cell_type: 'code', source: 'user_code = 1' }
    ]);
    const count = shared.cells.length;
    await fx.driver.setTitle('Ames Housing', provenance, titleId);
    expect(shared.cells.length).toBe(count);
    expect(fx.cellById(titleId).getSource()).toBe('# Ames Housing');
    expect(shared.cells.findIndex(cell => cell.getId() === titleId)).toBe(2);
    expect(shared.getMetadata('title')).toBe('Ames Housing');
    expect(fx.driver.notebookSummary().title).toBe('Ames Housing');
  });

  it("never rewrites a title cell that is not the run's, and tells which cells are marked for the planner", async () => {
    const shared = fx.notebook.panel.model!.sharedModel;
    shared.insertCells(0, [
      {
        cell_type: 'markdown',
        source: '# Mine',
        metadata: { [CELL_METADATA_KEY]: { role: 'title' } }
      },
      {
        cell_type: 'code',
        source: 'allowed = 1',
        metadata: { [CELL_METADATA_KEY]: { planner_may_run: true } }
      }
    ]);
    const userTitle = shared.cells[0].getId();
    const marked = shared.cells[1].getId();
    const id = await fx.driver.setTitle('Run title', provenance, null);
    expect(id).not.toBe(userTitle);
    expect(fx.cellById(userTitle).getSource()).toBe('# Mine');
    expect(fx.cellById(id).getSource()).toBe('# Run title');
    expect(fx.driver.plannerMayRun(marked)).toBe(true);
    expect(fx.driver.plannerMayRun(userTitle)).toBe(false);
    expect(fx.driver.plannerMayRun('no-such-cell')).toBeNull();
  });

  it('reads the code of a cell by its id, for the approval of an exec', () => {
    const shared = fx.notebook.panel.model!.sharedModel;
    shared.insertCells(0, [{ cell_type: 'code', source: 'total = 40 + 2' }]);
    expect(fx.driver.cellSource(shared.cells[0].getId())).toBe(
      'total = 40 + 2'
    );
    expect(fx.driver.cellSource('no-such-cell')).toBeNull();
  });

  it('finds its cells by id after the user inserts, moves and deletes cells around them', async () => {
    const shared = fx.notebook.panel.model!.sharedModel;
    const add = (source: string) =>
      fx.driver.addCell({ kind: 'code', source, role: 'content', provenance });
    const first = await add('a = 1');
    const second = await add('b = 2');
    expect(fx.driver.cellSource(second)).toBe('b = 2');
    // Cells of the user's shift the run's cells down, then one of them moves up.
    shared.insertCells(0, [
      { cell_type: 'markdown', source: 'mine' },
      { cell_type: 'code', source: 'mine = 0' }
    ]);
    expect(fx.driver.cellSource(first)).toBe('a = 1');
    await afterScroll();
    shared.moveCell(3, 0);
    expect(fx.driver.cellSource(second)).toBe('b = 2');
    expect(await fx.driver.updateCell(first, 'a = 10')).toBe(true);
    expect(fx.cellById(first).getSource()).toBe('a = 10');
    expect(fx.widgetById(first).model.sharedModel.getSource()).toBe('a = 10');
    // A deleted cell is gone, and the others are still found where they now are. (JupyterLab renders
    // cells when idle, and fails on one deleted before it got there.)
    await afterScroll();
    shared.deleteCell(shared.cells.findIndex(c => c.getId() === first));
    expect(fx.driver.cellSource(first)).toBeNull();
    expect(await fx.driver.updateCell(first, 'x')).toBe(false);
    expect(fx.driver.cellSource(second)).toBe('b = 2');
    expect(fx.driver.plannerMayRun(second)).toBe(false);
  });

  it('summarizes the notebook', async () => {
    await fx.driver.setTitle('Summary', provenance, null);
    await fx.driver.addCell({
      kind: 'markdown',
      source: 'm',
      role: 'content',
      provenance
    });
    const summary = fx.driver.notebookSummary();
    expect(summary).toEqual({
      title: 'Summary',
      cell_count: fx.notebook.panel.model!.sharedModel.cells.length,
      last_cell_type: 'markdown',
      last_output: null,
      execution_count: null,
      cells: expect.any(Array)
    });
    expect(summary.cells.at(-1)).toEqual({
      id: expect.any(String),
      type: 'markdown',
      content: 'm',
      outputs: [],
      metadata: { ...provenance, role: 'content' }
    });

    const id = await fx.driver.addCell({
      kind: 'code',
      source: 'x',
      role: 'code',
      provenance
    });
    fx.cellById(id).transact(() => {
      const code = fx.cellById(id) as unknown as {
        setOutputs(outputs: unknown[]): void;
        execution_count: number | null;
      };
      code.setOutputs([
        { output_type: 'stream', name: 'stdout', text: 'y'.repeat(800) }
      ]);
      code.execution_count = 7;
    });
    const after = fx.driver.notebookSummary();
    expect(after.last_cell_type).toBe('code');
    expect(after.last_output).toBe('y'.repeat(500) + '…');
    expect(after.execution_count).toBe(7);
    expect(after.cells.at(-1)).toMatchObject({
      id,
      type: 'code',
      content: 'x',
      outputs: ['y'.repeat(500) + '…']
    });
  });

  it('lists only the last five cells in the summary, each source cut to 1,000 characters', async () => {
    for (let i = 0; i < 6; i++) {
      await fx.driver.addCell({
        kind: 'markdown',
        source: `note ${i}`,
        role: 'content',
        provenance
      });
    }
    await fx.driver.addCell({
      kind: 'code',
      source: 'z'.repeat(1200),
      role: 'code',
      provenance
    });
    const { cells } = fx.driver.notebookSummary();
    expect(cells.map(cell => cell.content)).toEqual([
      'note 2',
      'note 3',
      'note 4',
      'note 5',
      'z'.repeat(1000) + '…'
    ]);
  });

  it('lists the cells with their stamp, removes by id and restores sources in one undo step', async () => {
    const shared = fx.notebook.panel.model!.sharedModel;
    const title = await fx.driver.setTitle('First', provenance, null);
    await fx.driver.setTitle('Second', provenance, title);
    const kept = await fx.driver.addCell({
      kind: 'code',
      source: 'a = 1',
      role: 'code',
      provenance
    });
    shared.insertCell(shared.cells.length, {
      cell_type: 'code',
      source: 'mine = 2'
    });
    const gone = await fx.driver.addCell({
      kind: 'markdown',
      source: 'later',
      role: 'content',
      provenance
    });
    const listed = fx.driver.listCells();
    const mine = listed.find(c => c.source === 'mine = 2')!;
    expect(mine.provenance).toBeNull();
    expect(mine.sourceHash).toBeNull();
    const titleCell = listed.find(c => c.id === title)!;
    expect(titleCell.sourceHash).toBe(sourceHash('# Second'));
    expect(listed.find(c => c.id === kept)).toMatchObject({
      kind: 'code',
      provenance: {
        stage_id: provenance.stage_id,
        step_id: provenance.step_id,
        behavior_id: provenance.behavior_id
      },
      sourceHash: sourceHash('a = 1')
    });

    const count = shared.cells.length;
    expect(fx.driver.notebookSummary().title).toBe('Second');
    const done = await fx.driver.rewindCells({
      remove: [gone, 'no-such-cell'],
      restore: [{ cellId: title, source: '# First' }],
      title: 'First'
    });
    expect(done).toEqual({ removed: [gone], restored: [title] });
    expect(fx.driver.notebookSummary().title).toBe('First');
    expect(shared.getMetadata(CELL_METADATA_KEY)).toMatchObject({
      title: 'First'
    });
    expect(shared.cells.length).toBe(count - 1);
    expect(fx.cellById(title).getSource()).toBe('# First');
    expect(fx.driver.listCells().find(c => c.id === title)!.sourceHash).toBe(
      sourceHash('# First')
    );
    // The notebook's own undo brings the removed cell back in one step.
    shared.undo();
    expect(shared.cells.map(c => c.getId())).toContain(gone);

    // A rewind to before the first title takes the title away.
    await fx.driver.rewindCells({ remove: [], restore: [], title: null });
    expect(fx.driver.notebookSummary().title).toBeNull();
    expect(shared.getMetadata(CELL_METADATA_KEY)).not.toHaveProperty('title');
  });

  it('stays pinned to its own notebook', async () => {
    const other = await openNotebook(fx.services(), { kernel: false });
    try {
      const before = other.panel.model!.sharedModel.cells.length;
      other.panel.activate();
      const id = await fx.driver.addCell({
        kind: 'code',
        source: 'pinned',
        role: 'code',
        provenance
      });
      expect(fx.cellById(id).getSource()).toBe('pinned');
      expect(other.panel.model!.sharedModel.cells.length).toBe(before);
    } finally {
      await other.dispose();
    }
  }, 60000);
});
