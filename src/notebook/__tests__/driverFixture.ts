/**
 * The notebook driver's fixture (one for the room): a real Jupyter server for the spec file, and for
 * each test a new notebook (no kernel) with a `NotebookDriver` over it; the cells are read back from the
 * notebook's model and widgets.
 */
import type { MarkdownCell } from '@jupyterlab/cells';
import type { NotebookPanel } from '@jupyterlab/notebook';
import type { ServiceManager } from '@jupyterlab/services';
import type { ICellProvenance } from '../../engine/ports/driver';
import { NotebookDriver } from '../notebookDriver';
import { CELL_METADATA_KEY } from '../metadata';
import { IOpenNotebook, openNotebook, useJupyterServer } from './utils';

/** The provenance the run stamps on the cells it adds. */
export const provenance: ICellProvenance = {
  stage_id: 'data_cleaning',
  step_id: 'missing_values',
  behavior_id: 'behavior_003',
  action_index: 2,
  action: 'add'
};

/** Longer than the follower's shortest time between two scrolls (250 ms), then one frame. */
export async function afterScroll(): Promise<void> {
  await new Promise(resolve => setTimeout(resolve, 300));
  await new Promise(resolve => requestAnimationFrame(() => resolve(null)));
}

export async function waitUntil(
  condition: () => boolean,
  ms = 10000
): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) {
      throw new Error('timed out');
    }
    await new Promise(resolve => setTimeout(resolve, 20));
  }
}

/** The save states (`started`, `completed`, ...) a notebook's context reports from now on. */
export function recordSaves(panel: NotebookPanel): string[] {
  const states: string[] = [];
  panel.context.saveState.connect((_, state) => {
    states.push(state);
  });
  return states;
}

export interface IDriverFixture {
  /** The test's notebook, and the driver over it. */
  readonly notebook: IOpenNotebook;
  readonly driver: NotebookDriver;
  services(): ServiceManager;
  /** A cell of the notebook's model, by id. */
  cellById(id: string): ReturnType<IDriverFixture['cells']>[number];
  cells(): NonNullable<NotebookPanel['model']>['sharedModel']['cells'];
  /** A cell's widget, by id. */
  widgetById(id: string): NotebookPanel['content']['widgets'][number];
  /** What the run stamped on a cell (`notebook_bcc` metadata). */
  bccMetadata(id: string): Record<string, unknown>;
}

/** Call at the top level of a spec: the server, and a notebook and driver for each test. */
export function useDriverNotebook(): IDriverFixture {
  const services = useJupyterServer();
  let notebook: IOpenNotebook | null = null;
  let driver: NotebookDriver | null = null;
  beforeEach(async () => {
    notebook = await openNotebook(services(), { kernel: false });
    driver = new NotebookDriver({ panel: notebook.panel });
  }, 60000);
  afterEach(async () => {
    await notebook?.dispose();
  });
  const fixture: IDriverFixture = {
    get notebook() {
      return notebook!;
    },
    get driver() {
      return driver!;
    },
    services,
    cells: () => fixture.notebook.panel.model!.sharedModel.cells,
    cellById: id => fixture.cells().find(cell => cell.getId() === id)!,
    widgetById: id =>
      fixture.notebook.panel.content.widgets.find(
        cell => cell.model.id === id
      )!,
    bccMetadata: id =>
      fixture.cellById(id).getMetadata(CELL_METADATA_KEY) as Record<
        string,
        unknown
      >
  };
  return fixture;
}

export type { MarkdownCell };
