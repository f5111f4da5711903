/**
 * The reproducibility check against a real Jupyter server and real kernels: the run's kept cells run
 * in a fresh kernel of the notebook's kernel spec (never the notebook's own), which is shut down after.
 */
import { createHash } from 'crypto';
import type { ICodeCellModel } from '@jupyterlab/cells';
import { nullTranslator } from '@jupyterlab/translation';
import type { ICellProvenance } from '../../engine/ports/driver';
import { NotebookDriver } from '../notebookDriver';
import {
  checkReproducibility,
  fingerprintValues,
  type IReproduceOptions,
  notebookCells,
  ReproduceError,
  storedReproducibilityRecord,
  writeReproducibilityRecord
} from '../reproduce';
import { cellsToRun, readReproducibilityRecord } from '../reproducibility';
import {
  IOpenNotebook,
  openNotebook,
  quietConsole,
  useJupyterServer
} from './utils';

quietConsole();

const services = useJupyterServer();
const trans = nullTranslator.load('notebook_bcc');

const provenance = (step: string): ICellProvenance => ({
  stage_id: 's1',
  step_id: step,
  behavior_id: 'b1',
  action_index: 0,
  action: 'add'
});

const CSV = 'a,b\n1,2\n3,4\n5,6\n';
const NAMES = ['df', 'df_clean', 'total'];

describe('checkReproducibility', () => {
  let notebook: IOpenNotebook;
  let driver: NotebookDriver;
  let dir: string;

  beforeAll(async () => {
    const contents = services().contents;
    const folder = await contents.newUntitled({ type: 'directory' });
    dir = folder.path;
    await contents.save(`${dir}/sales.csv`, {
      type: 'file',
      format: 'text',
      content: CSV
    });
    await contents.save(`${dir}/analysis.ipynb`, {
      type: 'notebook',
      format: 'json',
      content: { cells: [], metadata: {}, nbformat: 4, nbformat_minor: 5 }
    });
    notebook = await openNotebook(services(), {
      path: `${dir}/analysis.ipynb`,
      windowingMode: 'none'
    });
    driver = new NotebookDriver({ panel: notebook.panel });
    for (const [step, source] of [
      ['load', "import pandas as pd\ndf = pd.read_csv('sales.csv')"],
      ['clean', 'df_clean = df[df.a > 1]'],
      ['sum', 'total = int(df_clean.b.sum())\nprint(total)']
    ]) {
      const cellId = await driver.addCell({
        kind: 'code',
        source,
        role: 'code',
        provenance: provenance(step)
      });
      expect((await driver.execCell({ cellId, timeoutMs: 0 })).status).toBe(
        'ok'
      );
    }
  }, 180000);

  afterAll(async () => {
    await notebook.dispose();
  }, 30000);

  const kernelOf = () => notebook.panel.sessionContext.session!.kernel!;

  async function options(
    overrides: Partial<IReproduceOptions> = {}
  ): Promise<IReproduceOptions> {
    const shared = notebook.panel.model!.sharedModel;
    const names = overrides.names ?? NAMES;
    return {
      path: notebook.context.path,
      kernel: { name: kernelOf().name, display_name: 'Python' },
      cells: cellsToRun(notebookCells(shared)),
      names,
      reference: {
        values: await fingerprintValues(kernelOf(), names, [], trans),
        at: 'end_of_run'
      },
      dataFiles: ['sales.csv'],
      redacted: [],
      cellTimeoutMs: 60000,
      sessions: services().sessions,
      signal: new AbortController().signal,
      trans,
      ...overrides
    };
  }

  /** The sessions of the server besides the notebook's own. */
  async function otherSessions(): Promise<string[]> {
    await services().sessions.refreshRunning();
    return [...services().sessions.running()]
      .map(model => model.path)
      .filter(path => path !== notebook.context.path);
  }

  const cellsJSON = () =>
    JSON.stringify(
      notebook.panel.model!.sharedModel.cells.map(cell => cell.toJSON())
    );

  it('reproduces a clean run, N of N, in a fresh kernel it shuts down, leaving the notebook and its kernel alone', async () => {
    const ownKernel = kernelOf().id;
    const before = cellsJSON();
    // A variable only the notebook's kernel has: the fresh kernel must not see it.
    await kernelOf().requestExecute({ code: 'only_here = 1', silent: true })
      .done;
    const progress: string[] = [];
    const record = await checkReproducibility(
      await options({
        names: [...NAMES, 'only_here'],
        onProgress: p =>
          progress.push(`${p.phase}${p.cell ? ` ${p.cell}/${p.cells}` : ''}`)
      })
    );
    expect(record).toMatchObject({
      reproduced: false,
      compared: 4,
      matched: 3,
      cells_run: 3,
      cells_total: 3,
      reference: 'end_of_run',
      first_difference: null
    });
    expect(record.values[0]).toMatchObject({
      name: 'only_here',
      status: 'missing'
    });
    const clean = await checkReproducibility(await options());
    expect(clean).toMatchObject({
      reproduced: true,
      compared: 3,
      matched: 3,
      first_difference: null
    });
    expect(clean.values.map(v => v.status)).toEqual(['same', 'same', 'same']);
    expect(progress).toEqual([
      'starting',
      'running 1/3',
      'running 2/3',
      'running 3/3',
      'comparing'
    ]);
    // What the metadata records: the kernel, Python, the packages imported, the data file's hash.
    expect(clean.python).toMatch(/^3\.\d+/);
    expect(Object.keys(clean.packages)).toContain('pandas');
    expect(clean.packages).not.toHaveProperty('matplotlib');
    expect(clean.data_files).toEqual([
      {
        path: 'sales.csv',
        size: CSV.length,
        sha256: createHash('sha256').update(CSV).digest('hex')
      }
    ]);
    expect(kernelOf().id).toBe(ownKernel);
    expect(cellsJSON()).toBe(before);
    expect(await otherSessions()).toEqual([]);
    // Written to the notebook's metadata, and read back.
    const shared = notebook.panel.model!.sharedModel;
    writeReproducibilityRecord(shared, clean);
    expect(
      readReproducibilityRecord(storedReproducibilityRecord(shared))
    ).toEqual(JSON.parse(JSON.stringify(clean)));
  }, 180000);

  it('finds a value computed differently after the cell that made it', async () => {
    // The run's kernel holds a total the kept cells do not compute.
    await kernelOf().requestExecute({ code: 'total = 999', silent: true }).done;
    try {
      const record = await checkReproducibility(await options());
      const cells = notebook.panel.model!.sharedModel.cells;
      expect(record).toMatchObject({
        reproduced: false,
        matched: 2,
        first_difference: {
          cell_id: cells[2].getId(),
          cell_index: 3,
          reason: 'left `total` different from the run'
        }
      });
      expect(record.values[0]).toMatchObject({
        name: 'total',
        status: 'different',
        reference: '999',
        fresh: '10'
      });
    } finally {
      await kernelOf().requestExecute({ code: 'total = 10', silent: true })
        .done;
    }
  }, 180000);

  it('diverges at the cell that used a variable whose cell was deleted, and names it', async () => {
    const reference = await fingerprintValues(kernelOf(), NAMES, [], trans);
    const shared = notebook.panel.model!.sharedModel;
    const deleted = shared.cells[1].toJSON();
    shared.deleteCell(1);
    try {
      const record = await checkReproducibility(
        await options({ reference: { values: reference, at: 'end_of_run' } })
      );
      expect(record).toMatchObject({
        reproduced: false,
        cells_run: 2,
        cells_total: 2,
        first_difference: {
          cell_id: shared.cells[1].getId(),
          cell_index: 2,
          source: 'total = int(df_clean.b.sum())',
          reason: "raised NameError: name 'df_clean' is not defined"
        }
      });
      expect(
        Object.fromEntries(record.values.map(v => [v.name, v.status]))
      ).toEqual({ df_clean: 'missing', total: 'missing', df: 'same' });
      expect(await otherSessions()).toEqual([]);
    } finally {
      shared.insertCell(1, deleted as never);
    }
  }, 180000);

  it('stops a cell past its time limit and says so', async () => {
    const shared = notebook.panel.model!.sharedModel;
    const cells = [
      ...cellsToRun(notebookCells(shared)),
      {
        id: 'slow',
        index: 9,
        source: 'import time\ntime.sleep(60)',
        failedInRun: false
      }
    ];
    const record = await checkReproducibility(
      await options({ cells, cellTimeoutMs: 1500 })
    );
    expect(record.first_difference).toMatchObject({
      cell_id: 'slow',
      reason: 'did not finish within 2 s'
    });
    expect(await otherSessions()).toEqual([]);
  }, 180000);

  it('can be stopped, and shuts its kernel down', async () => {
    const abort = new AbortController();
    const cells = [
      {
        id: 'slow',
        index: 1,
        source: 'import time\ntime.sleep(60)',
        failedInRun: false
      }
    ];
    const checking = checkReproducibility(
      await options({
        cells,
        signal: abort.signal,
        onProgress: p => {
          if (p.phase === 'running') {
            setTimeout(() => abort.abort(), 500);
          }
        }
      })
    );
    await expect(checking).rejects.toMatchObject({
      kind: 'stopped',
      message: 'The check was stopped.'
    });
    expect(await otherSessions()).toEqual([]);
  }, 180000);

  it('says when no fresh kernel can be started', async () => {
    const checking = checkReproducibility(
      await options({ kernel: { name: 'no-such-kernel', display_name: null } })
    );
    await expect(checking).rejects.toBeInstanceOf(ReproduceError);
    await expect(checking).rejects.toMatchObject({
      kind: 'kernel',
      message: expect.stringMatching(
        /^A fresh no-such-kernel kernel could not be started: /
      )
    });
    expect(await otherSessions()).toEqual([]);
  }, 180000);

  it('leaves the outputs of the notebook’s cells as the run made them', () => {
    const cell = notebook.panel.content.widgets[2].model as ICodeCellModel;
    expect(cell.outputs.toJSON()).toEqual([
      expect.objectContaining({ output_type: 'stream', text: '10\n' })
    ]);
  });
});
