import { Dialog } from '@jupyterlab/apputils';
import { MarkdownCell } from '@jupyterlab/cells';
import type { NotebookPanel } from '@jupyterlab/notebook';
import { type ICellProvenance, sourceHash } from '../../engine/ports/driver';
import { NotebookDriver } from '../notebookDriver';
import { CELL_METADATA_KEY, RUN_STATE_METADATA_KEY } from '../metadata';
import {
  IOpenNotebook,
  openNotebook,
  quietConsole,
  useJupyterServer
} from './utils';

quietConsole();

/** Long enough for the driver's throttled scroll to new cells to have happened. */
/** Longer than the follower's shortest time between two scrolls (250 ms), then one frame. */
async function afterScroll(): Promise<void> {
  await new Promise(resolve => setTimeout(resolve, 300));
  await new Promise(resolve => requestAnimationFrame(() => resolve(null)));
}

async function waitUntil(condition: () => boolean, ms = 10000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) {
      throw new Error('timed out');
    }
    await new Promise(resolve => setTimeout(resolve, 20));
  }
}

const services = useJupyterServer();

/** The save states (`started`, `completed`, ...) a notebook's context reports from now on. */
function recordSaves(panel: NotebookPanel): string[] {
  const states: string[] = [];
  panel.context.saveState.connect((_, state) => {
    states.push(state);
  });
  return states;
}

const provenance: ICellProvenance = {
  stage_id: 'data_cleaning',
  step_id: 'missing_values',
  behavior_id: 'behavior_003',
  action_index: 2,
  action: 'add'
};

describe('NotebookDriver cells', () => {
  let notebook: IOpenNotebook;
  let driver: NotebookDriver;

  beforeEach(async () => {
    notebook = await openNotebook(services(), { kernel: false });
    driver = new NotebookDriver({ panel: notebook.panel });
  }, 60000);

  afterEach(async () => {
    await notebook.dispose();
  });

  const cellById = (id: string) =>
    notebook.panel.model!.sharedModel.cells.find(cell => cell.getId() === id)!;
  const widgetById = (id: string) =>
    notebook.panel.content.widgets.find(cell => cell.model.id === id)!;
  const bccMetadata = (id: string) =>
    cellById(id).getMetadata(CELL_METADATA_KEY) as Record<string, unknown>;

  it('appends a code cell with its provenance under notebook_bcc', async () => {
    // A cell of the user's stays above (an untouched empty one goes: cells.starter.spec.ts).
    notebook.panel.model!.sharedModel.cells[0].setSource('mine = 0');
    const before = notebook.panel.model!.sharedModel.cells.length;
    const id = await driver.addCell({
      kind: 'code',
      source: 'x = 1',
      role: 'code',
      provenance: { ...provenance, store_id: 'load_data' },
      metadata: { shot_type: 'action' }
    });
    const cells = notebook.panel.model!.sharedModel.cells;
    expect(cells.length).toBe(before + 1);
    expect(cells[cells.length - 1].getId()).toBe(id);
    expect(cellById(id).cell_type).toBe('code');
    expect(cellById(id).getSource()).toBe('x = 1');
    expect(bccMetadata(id)).toEqual({
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
      const id = await driver.addCell({
        kind: 'markdown',
        source,
        role,
        provenance: { ...provenance, action: 'new_chapter' }
      });
      expect(cellById(id).cell_type).toBe('markdown');
      expect(cellById(id).getSource()).toBe(source);
      expect(bccMetadata(id)).toMatchObject({
        role,
        action: 'new_chapter',
        stage_id: 'data_cleaning'
      });
      const widget = widgetById(id);
      expect(widget).toBeInstanceOf(MarkdownCell);
      expect((widget as MarkdownCell).rendered).toBe(true);
    }
  );

  it('marks a thinking cell and renders it even when it starts empty', async () => {
    const id = await driver.addCell({
      kind: 'markdown',
      source: '',
      role: 'thinking',
      provenance: { ...provenance, action: 'is_thinking' },
      metadata: { finished_thinking: false }
    });
    expect(bccMetadata(id)).toMatchObject({
      role: 'thinking',
      thinking: true,
      finished_thinking: false
    });
    expect((widgetById(id) as MarkdownCell).rendered).toBe(true);

    expect(
      await driver.updateCell(id, '> thought it through', {
        finished_thinking: true
      })
    ).toBe(true);
    expect(cellById(id).getSource()).toBe('> thought it through');
    expect(bccMetadata(id)).toMatchObject({
      role: 'thinking',
      thinking: true,
      finished_thinking: true,
      behavior_id: 'behavior_003'
    });
    expect((widgetById(id) as MarkdownCell).rendered).toBe(true);
  });

  it('reports an update of a cell that is gone', async () => {
    expect(await driver.updateCell('no-such-cell', 'x', {})).toBe(false);
  });

  it('never moves the active cell or the focus', async () => {
    const nb = notebook.panel.content;
    const firstId = await driver.addCell({
      kind: 'code',
      source: 'a = 1',
      role: 'code',
      provenance
    });
    nb.activeCellIndex = 0;
    const activeId = nb.activeCell!.model.id;
    const focused = document.activeElement;
    for (const role of ['content', 'thinking', 'section'] as const) {
      await driver.addCell({ kind: 'markdown', source: 'x', role, provenance });
    }
    await driver.addCell({
      kind: 'code',
      source: 'b',
      role: 'code',
      provenance
    });
    await driver.updateCell(firstId, 'a = 2');
    expect(nb.activeCellIndex).toBe(0);
    expect(nb.activeCell!.model.id).toBe(activeId);
    expect(document.activeElement).toBe(focused);

    // The title goes above everything: the same cell stays active.
    await driver.setTitle('Title', provenance, null);
    expect(nb.activeCell!.model.id).toBe(activeId);
    expect(document.activeElement).toBe(focused);
  });

  it('scrolls to new cells only when following them, without selecting or activating them', async () => {
    const nb = notebook.panel.content;
    const scroll = jest.spyOn(nb, 'scrollToItem');
    await driver.addCell({
      kind: 'code',
      source: '1',
      role: 'code',
      provenance
    });
    expect(scroll).not.toHaveBeenCalled();

    driver.followNewCells = true;
    nb.mode = 'command';
    nb.activeCellIndex = 0;
    const activeId = nb.activeCell!.model.id;
    const ids: string[] = [];
    for (const kind of ['markdown', 'code'] as const) {
      ids.push(
        await driver.addCell({ kind, source: kind, role: 'code', provenance })
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
      expect(nb.isSelected(widgetById(id))).toBe(false);
      expect(widgetById(id).node.contains(document.activeElement)).toBe(false);
    }

    const following = new NotebookDriver({
      panel: notebook.panel,
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
    const nb = notebook.panel.content;
    driver.followNewCells = true;
    nb.activeCellIndex = 0;
    nb.mode = 'edit';
    nb.activeCell!.editor!.focus();
    expect(nb.node.contains(document.activeElement)).toBe(true);
    const scroll = jest.spyOn(nb, 'scrollToItem');
    await driver.addCell({
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
    await driver.addCell({
      kind: 'code',
      source: 'x',
      role: 'code',
      provenance
    });
    await driver.setTitle(
      'House Prices',
      { ...provenance, action: 'update_title' },
      null
    );
    const shared = notebook.panel.model!.sharedModel;
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
    expect((widgetById(first.getId()) as MarkdownCell).rendered).toBe(true);

    // The user puts two cells above the title; a new title updates it where it is.
    const titleId = first.getId();
    shared.insertCells(0, [
      { cell_type: 'markdown', source: 'user note' },
      { cell_type: 'code', source: 'user_code = 1' }
    ]);
    const count = shared.cells.length;
    await driver.setTitle('Ames Housing', provenance, titleId);
    expect(shared.cells.length).toBe(count);
    expect(cellById(titleId).getSource()).toBe('# Ames Housing');
    expect(shared.cells.findIndex(cell => cell.getId() === titleId)).toBe(2);
    expect(shared.getMetadata('title')).toBe('Ames Housing');
    expect(driver.notebookSummary().title).toBe('Ames Housing');
  });

  it("never rewrites a title cell that is not the run's, and tells which cells are marked for the planner", async () => {
    const shared = notebook.panel.model!.sharedModel;
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
    const id = await driver.setTitle('Run title', provenance, null);
    expect(id).not.toBe(userTitle);
    expect(cellById(userTitle).getSource()).toBe('# Mine');
    expect(cellById(id).getSource()).toBe('# Run title');
    expect(driver.plannerMayRun(marked)).toBe(true);
    expect(driver.plannerMayRun(userTitle)).toBe(false);
    expect(driver.plannerMayRun('no-such-cell')).toBeNull();
  });

  it('reads the code of a cell by its id, for the approval of an exec', () => {
    const shared = notebook.panel.model!.sharedModel;
    shared.insertCells(0, [{ cell_type: 'code', source: 'total = 40 + 2' }]);
    expect(driver.cellSource(shared.cells[0].getId())).toBe('total = 40 + 2');
    expect(driver.cellSource('no-such-cell')).toBeNull();
  });

  it('finds its cells by id after the user inserts, moves and deletes cells around them', async () => {
    const shared = notebook.panel.model!.sharedModel;
    const add = (source: string) =>
      driver.addCell({ kind: 'code', source, role: 'content', provenance });
    const first = await add('a = 1');
    const second = await add('b = 2');
    expect(driver.cellSource(second)).toBe('b = 2');
    // Cells of the user's shift the run's cells down, then one of them moves up.
    shared.insertCells(0, [
      { cell_type: 'markdown', source: 'mine' },
      { cell_type: 'code', source: 'mine = 0' }
    ]);
    expect(driver.cellSource(first)).toBe('a = 1');
    await afterScroll();
    shared.moveCell(3, 0);
    expect(driver.cellSource(second)).toBe('b = 2');
    expect(await driver.updateCell(first, 'a = 10')).toBe(true);
    expect(cellById(first).getSource()).toBe('a = 10');
    expect(widgetById(first).model.sharedModel.getSource()).toBe('a = 10');
    // A deleted cell is gone, and the others are still found where they now are. (JupyterLab renders
    // cells when idle, and fails on one deleted before it got there.)
    await afterScroll();
    shared.deleteCell(shared.cells.findIndex(c => c.getId() === first));
    expect(driver.cellSource(first)).toBeNull();
    expect(await driver.updateCell(first, 'x')).toBe(false);
    expect(driver.cellSource(second)).toBe('b = 2');
    expect(driver.plannerMayRun(second)).toBe(false);
  });

  it('summarizes the notebook', async () => {
    await driver.setTitle('Summary', provenance, null);
    await driver.addCell({
      kind: 'markdown',
      source: 'm',
      role: 'content',
      provenance
    });
    const summary = driver.notebookSummary();
    expect(summary).toEqual({
      title: 'Summary',
      cell_count: notebook.panel.model!.sharedModel.cells.length,
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

    const id = await driver.addCell({
      kind: 'code',
      source: 'x',
      role: 'code',
      provenance
    });
    cellById(id).transact(() => {
      const code = cellById(id) as unknown as {
        setOutputs(outputs: unknown[]): void;
        execution_count: number | null;
      };
      code.setOutputs([
        { output_type: 'stream', name: 'stdout', text: 'y'.repeat(800) }
      ]);
      code.execution_count = 7;
    });
    const after = driver.notebookSummary();
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
      await driver.addCell({
        kind: 'markdown',
        source: `note ${i}`,
        role: 'content',
        provenance
      });
    }
    await driver.addCell({
      kind: 'code',
      source: 'z'.repeat(1200),
      role: 'code',
      provenance
    });
    const { cells } = driver.notebookSummary();
    expect(cells.map(cell => cell.content)).toEqual([
      'note 2',
      'note 3',
      'note 4',
      'note 5',
      'z'.repeat(1000) + '…'
    ]);
  });

  it('saves the notebook soon after the run changes it, in one save for a burst of cells', async () => {
    const saving = new NotebookDriver({
      panel: notebook.panel,
      saveDelayMs: 100
    });
    const states = recordSaves(notebook.panel);
    for (const source of ['first = 1', 'second = 2', 'third = 3']) {
      await saving.addCell({ kind: 'code', source, role: 'code', provenance });
    }
    expect(notebook.panel.model!.dirty).toBe(true);
    await waitUntil(() => states.includes('completed'));
    expect(states).toEqual(['started', 'completed']);
    expect(notebook.panel.model!.dirty).toBe(false);
    const file = await services().contents.get(notebook.panel.context.path);
    const sources = (
      file.content as { cells: Array<{ source: string }> }
    ).cells.map(cell => cell.source);
    expect(sources).toEqual(
      expect.arrayContaining(['first = 1', 'second = 2', 'third = 3'])
    );
  });

  it('does not save on its own when told not to', async () => {
    const manual = new NotebookDriver({
      panel: notebook.panel,
      saveDelayMs: -1
    });
    const states = recordSaves(notebook.panel);
    await manual.addCell({
      kind: 'code',
      source: 'x',
      role: 'code',
      provenance
    });
    await new Promise(resolve => setTimeout(resolve, 300));
    expect(states).toEqual([]);
    expect(notebook.panel.model!.dirty).toBe(true);
  });

  it("waits for the user's save to end before saving the run state", async () => {
    const states = recordSaves(notebook.panel);
    await driver.addCell({
      kind: 'code',
      source: 'y',
      role: 'code',
      provenance
    });
    const user = notebook.panel.context.save();
    await waitUntil(() => states.includes('started'));
    await Promise.all([user, driver.saveRunState({ step: 'one' })]);
    // Overlapping saves would read started, started: the second one risks a false conflict.
    expect(states).toEqual(['started', 'completed', 'started', 'completed']);
  });

  it('saves a checkpoint at once at most once per save interval, and any other run state at once', async () => {
    const quick = new NotebookDriver({
      panel: notebook.panel,
      saveDelayMs: 50
    });
    const states = recordSaves(notebook.panel);
    await quick.saveRunState({ step: 'one' }, { checkpoint: true });
    expect(states).toEqual(['started', 'completed']);
    // Within the save interval, a second checkpoint waits; a stop or an end does not.
    await quick.saveRunState({ step: 'two' }, { checkpoint: true });
    await new Promise(resolve => setTimeout(resolve, 300));
    expect(states).toEqual(['started', 'completed']);
    await quick.saveRunState({ step: 'end' });
    expect(states).toEqual(['started', 'completed', 'started', 'completed']);
    const file = await services().contents.get(notebook.panel.context.path);
    const metadata = (file.content as { metadata: Record<string, unknown> })
      .metadata;
    expect(metadata[RUN_STATE_METADATA_KEY]).toEqual({ step: 'end' });
  });

  it('saves nothing while its saves are held (another window runs the notebook), then saves again', async () => {
    const quick = new NotebookDriver({
      panel: notebook.panel,
      saveDelayMs: 10
    });
    const states = recordSaves(notebook.panel);
    const add = (source: string) =>
      quick.addCell({ kind: 'code', source, role: 'code', provenance });
    await add('scheduled = 1');
    quick.holdSaves(true);
    await add('held = 2');
    await quick.saveRunState({ step: 'held' });
    await new Promise(resolve => setTimeout(resolve, 300));
    expect(states).toEqual([]);
    quick.holdSaves(false);
    await quick.saveRunState({ step: 'free' });
    expect(states).toEqual(['started', 'completed']);
  });

  it("makes the user's save (Ctrl+S, the autosave) wait for the run's save, so it never meets a false File Changed", async () => {
    const states = recordSaves(notebook.panel);
    const conflicts = jest.spyOn(console, 'warn');
    await driver.addCell({
      kind: 'code',
      source: 'z',
      role: 'code',
      provenance
    });
    // The user saves just as the run's save has written the file, before the page knows its new hash.
    let user: Promise<void> | null = null;
    const onWritten = () => {
      services().contents.fileChanged.disconnect(onWritten);
      user = notebook.panel.context.save();
    };
    services().contents.fileChanged.connect(onWritten);
    await driver.saveRunState({ step: 'two' });
    expect(user).not.toBeNull();
    // A false conflict leaves the user's save waiting on JupyterLab's "File Changed" dialog.
    const settled = await Promise.race([
      user!.then(() => 'saved'),
      new Promise(resolve => setTimeout(() => resolve('waiting'), 10000))
    ]);
    const dialog = document.querySelector('.jp-Dialog')?.textContent ?? null;
    Dialog.flush();
    expect(dialog).toBeNull();
    expect(settled).toBe('saved');
    expect(states).toEqual(['started', 'completed', 'started', 'completed']);
    expect(conflicts).not.toHaveBeenCalledWith(
      expect.stringContaining('Different hash found')
    );
  }, 30000);

  it('never saves a collaborative notebook, which its server saves, and still writes the run state', async () => {
    // jupyter-collaboration's drive: a shared model factory that says it is collaborative.
    const contents = services().contents;
    const factory = jest
      .spyOn(contents, 'getSharedModelFactory')
      .mockReturnValue({ collaborative: true, createNew: () => undefined });
    const shared = await openNotebook(services(), { kernel: false });
    factory.mockRestore();
    try {
      expect(shared.panel.model!.collaborative).toBe(true);
      const collaborative = new NotebookDriver({
        panel: shared.panel,
        saveDelayMs: 50
      });
      const states = recordSaves(shared.panel);
      await collaborative.addCell({
        kind: 'code',
        source: 'z = 1',
        role: 'code',
        provenance
      });
      await collaborative.saveRunState({ step: 'one' });
      await new Promise(resolve => setTimeout(resolve, 300));
      expect(states).toEqual([]);
      expect(await collaborative.loadRunState()).toEqual({ step: 'one' });
    } finally {
      await shared.dispose();
    }
  });

  it('lists the cells with their stamp, removes by id and restores sources in one undo step', async () => {
    const shared = notebook.panel.model!.sharedModel;
    const title = await driver.setTitle('First', provenance, null);
    await driver.setTitle('Second', provenance, title);
    const kept = await driver.addCell({
      kind: 'code',
      source: 'a = 1',
      role: 'code',
      provenance
    });
    shared.insertCell(shared.cells.length, {
      cell_type: 'code',
      source: 'mine = 2'
    });
    const gone = await driver.addCell({
      kind: 'markdown',
      source: 'later',
      role: 'content',
      provenance
    });
    const listed = driver.listCells();
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
    expect(driver.notebookSummary().title).toBe('Second');
    const done = await driver.rewindCells({
      remove: [gone, 'no-such-cell'],
      restore: [{ cellId: title, source: '# First' }],
      title: 'First'
    });
    expect(done).toEqual({ removed: [gone], restored: [title] });
    expect(driver.notebookSummary().title).toBe('First');
    expect(shared.getMetadata(CELL_METADATA_KEY)).toMatchObject({
      title: 'First'
    });
    expect(shared.cells.length).toBe(count - 1);
    expect(cellById(title).getSource()).toBe('# First');
    expect(driver.listCells().find(c => c.id === title)!.sourceHash).toBe(
      sourceHash('# First')
    );
    // The notebook's own undo brings the removed cell back in one step.
    shared.undo();
    expect(shared.cells.map(c => c.getId())).toContain(gone);

    // A rewind to before the first title takes the title away.
    await driver.rewindCells({ remove: [], restore: [], title: null });
    expect(driver.notebookSummary().title).toBeNull();
    expect(shared.getMetadata(CELL_METADATA_KEY)).not.toHaveProperty('title');
  });

  it('stays pinned to its own notebook', async () => {
    const other = await openNotebook(services(), { kernel: false });
    try {
      const before = other.panel.model!.sharedModel.cells.length;
      other.panel.activate();
      const id = await driver.addCell({
        kind: 'code',
        source: 'pinned',
        role: 'code',
        provenance
      });
      expect(cellById(id).getSource()).toBe('pinned');
      expect(other.panel.model!.sharedModel.cells.length).toBe(before);
    } finally {
      await other.dispose();
    }
  }, 60000);
});
