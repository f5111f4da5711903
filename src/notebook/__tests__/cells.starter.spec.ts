import type { YNotebook } from '@jupyter/ydoc';
import { MarkdownCell } from '@jupyterlab/cells';
import type { ICellProvenance } from '../../engine/ports/driver';
import { NotebookDriver } from '../notebookDriver';
import { CELL_METADATA_KEY } from '../metadata';
import {
  IOpenNotebook,
  openNotebook,
  quietConsole,
  useJupyterServer
} from './utils';

quietConsole();

const services = useJupyterServer();

const provenance: ICellProvenance = {
  stage_id: 'data_loading',
  step_id: 'load',
  behavior_id: 'behavior_001',
  action_index: 0,
  action: 'add'
};

type SharedNotebook = NonNullable<
  IOpenNotebook['panel']['model']
>['sharedModel'];
type SharedCodeCell = SharedNotebook['cells'][number] & {
  setOutputs(outputs: unknown[]): void;
  execution_count: number | null;
};

/** The empty cell a new notebook opens with, and what the run's first cell does to it. */
describe('NotebookCells: the starter cell of a new notebook', () => {
  let notebook: IOpenNotebook;
  let driver: NotebookDriver;
  let shared: SharedNotebook;
  let starterId: string;

  beforeEach(async () => {
    notebook = await openNotebook(services(), { kernel: false });
    driver = new NotebookDriver({ panel: notebook.panel, saveDelayMs: -1 });
    shared = notebook.panel.model!.sharedModel;
    expect(shared.cells.length).toBe(1);
    starterId = shared.cells[0].getId();
    // The starter's insertion is its own step of the notebook's undo, as it is seconds before a run.
    (shared as unknown as YNotebook).undoManager.stopCapturing();
  }, 60000);

  afterEach(async () => {
    await notebook.dispose();
  });

  const rendered = async () => {
    await new Promise(resolve => setTimeout(resolve, 300));
    await new Promise(resolve => requestAnimationFrame(() => resolve(null)));
  };
  const ids = () => shared.cells.map(cell => cell.getId());
  const addCode = (source: string) =>
    driver.addCell({ kind: 'code', source, role: 'code', provenance });

  it("gives its place to the run's first cell, and the notebook's undo brings it back in one step", async () => {
    const undoSteps = (shared as unknown as YNotebook).undoManager;
    const first = await addCode('import pandas as pd');
    expect(ids()).toEqual([first]);
    undoSteps.stopCapturing();
    const second = await addCode('df = pd.read_csv("housing.csv")');
    expect(ids()).toEqual([first, second]);
    undoSteps.stopCapturing();

    // JupyterLab renders new cells when idle, and fails on one removed before it got there.
    await rendered();
    shared.undo();
    expect(ids()).toEqual([first]);
    await rendered();
    shared.undo();
    expect(ids()).toEqual([starterId]);
    expect(shared.cells[0].getSource()).toBe('');
  });

  it('gives its place to a title: the title is the first cell, the next cell follows it', async () => {
    const title = await driver.setTitle('House Prices', provenance, null);
    const section = await driver.addCell({
      kind: 'markdown',
      source: '## Loading the data',
      role: 'section',
      provenance
    });
    expect(ids()).toEqual([title, section]);
    expect(shared.cells[0].getSource()).toBe('# House Prices');
    const widget = notebook.panel.content.widgets[0];
    expect(widget).toBeInstanceOf(MarkdownCell);
    expect((widget as MarkdownCell).rendered).toBe(true);
  });

  it.each([
    ['a source', () => shared.cells[0].setSource('x = ')],
    [
      'outputs',
      () =>
        (shared.cells[0] as SharedCodeCell).setOutputs([
          { output_type: 'stream', name: 'stdout', text: 'hi' }
        ])
    ],
    [
      'an execution count',
      () => {
        (shared.cells[0] as SharedCodeCell).execution_count = 1;
      }
    ],
    ['tags', () => shared.cells[0].setMetadata('tags', ['parameters'])],
    [
      'metadata of the run',
      () => shared.cells[0].setMetadata(CELL_METADATA_KEY, { role: 'code' })
    ]
  ])('stays when it has %s', async (_, change) => {
    change();
    const first = await addCode('1 + 1');
    expect(ids()).toEqual([starterId, first]);
  });

  it('stays when the notebook has another cell, even an empty one', async () => {
    shared.insertCell(1, { cell_type: 'code', metadata: { trusted: true } });
    const other = shared.cells[1].getId();
    const first = await addCode('1 + 1');
    expect(ids()).toEqual([starterId, other, first]);
  });

  it("stays while the user's cursor is in it: the user goes on typing there", async () => {
    const nb = notebook.panel.content;
    nb.activeCellIndex = 0;
    nb.mode = 'edit';
    nb.activeCell!.editor!.focus();
    const first = await addCode('1 + 1');
    expect(ids()).toEqual([starterId, first]);
    expect(nb.mode).toBe('edit');
    expect(nb.activeCell!.model.id).toBe(starterId);
    expect(
      nb.activeCell!.editorWidget!.node.contains(document.activeElement)
    ).toBe(true);
  });

  it('goes while selected in command mode: the focus stays in the notebook, on the title', async () => {
    const nb = notebook.panel.content;
    nb.activeCellIndex = 0;
    nb.mode = 'command';
    nb.activeCell!.node.focus();
    expect(nb.mode).toBe('command');
    expect(document.activeElement).toBe(nb.activeCell!.node);

    const title = await driver.setTitle('House Prices', provenance, null);
    expect(ids()).toEqual([title]);
    expect(nb.mode).toBe('command');
    expect(nb.activeCell!.model.id).toBe(title);
    expect((nb.activeCell as MarkdownCell).rendered).toBe(true);
    // Command mode's focus, once the notebook has laid the title out: the active cell, not its editor.
    await rendered();
    expect(document.activeElement).toBe(nb.activeCell!.node);
    expect(nb.mode).toBe('command');
  });

  it("does not take the focus from outside the notebook, nor edit the run's cell", async () => {
    const nb = notebook.panel.content;
    nb.activeCellIndex = 0;
    // Edit mode, as a new notebook opens, with the focus elsewhere (the Run dialog's field, say).
    nb.mode = 'edit';
    const field = document.createElement('input');
    document.body.appendChild(field);
    try {
      field.focus();
      expect(nb.mode).toBe('edit');
      const first = await driver.addCell({
        kind: 'markdown',
        source: 'Some **text**',
        role: 'content',
        provenance
      });
      expect(ids()).toEqual([first]);
      expect(document.activeElement).toBe(field);
      expect(nb.mode).toBe('command');
      expect((nb.widgets[0] as MarkdownCell).rendered).toBe(true);
    } finally {
      field.remove();
    }
  });
});
