import type { ICodeCellModel } from '@jupyterlab/cells';
import { runCell } from '@jupyterlab/notebook';
import type { ICellProvenance, IStopReason } from '../../engine/ports/driver';
import { CELL_METADATA_KEY, EXEC_ERROR_KEY } from '../metadata';
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
  stage_id: 's1',
  step_id: 'st1',
  behavior_id: 'b1',
  action_index: 0,
  action: 'add'
};

/** How the engine stops a run that leaves the kernel alone, or interrupts it. */
const LEAVE_KERNEL: IStopReason = { interruptKernel: false };
const INTERRUPT_KERNEL: IStopReason = { interruptKernel: true };

// A 1×1 transparent PNG.
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

describe('NotebookDriver execution', () => {
  let notebook: IOpenNotebook;
  let driver: NotebookDriver;

  beforeAll(async () => {
    // JupyterLab's own execution tests use no windowing: its deferred rendering races in jsdom.
    notebook = await openNotebook(services(), { windowingMode: 'none' });
    driver = new NotebookDriver({
      panel: notebook.panel,
      interruptGraceMs: 20000
    });
  }, 120000);

  afterAll(async () => {
    await notebook.dispose();
  }, 30000);

  const addCode = (source: string) =>
    driver.addCell({ kind: 'code', source, role: 'code', provenance });
  const run = async (source: string, timeoutMs = 0) =>
    driver.execCell({ cellId: await addCode(source), timeoutMs });
  const outputsOf = (id: string) =>
    (
      notebook.panel.content.widgets.find(cell => cell.model.id === id)!
        .model as ICodeCellModel
    ).outputs.toJSON();

  it('turns prints, displays and the expression value into one text', async () => {
    const result = await run(
      "print('hello')\ndisplay('shown')\nprint('again')\n6 * 7"
    );
    expect(result).toEqual({
      status: 'ok',
      output: "hello\n'shown'\nagain\n42"
    });
  }, 60000);

  it('notes images and strips ANSI codes', async () => {
    const result = await run(
      [
        'from IPython.display import display',
        `display({'image/png': '${PNG}', 'text/plain': '<Figure size 640x480>'}, raw=True)`,
        "print('\\x1b[31mred\\x1b[0m and \\x1b[1;32mgreen\\x1b[0m')"
      ].join('\n')
    );
    expect(result.status).toBe('ok');
    // An image reaches the planner as its kind and size, never its data.
    expect(result.output).toBe(
      '<Figure size 640x480>\n[image/png 1×1, 68 B]\nred and green'
    );
  }, 60000);

  it('reports an error with its name, value and traceback, without ANSI codes', async () => {
    const result = await run("print('before')\nundefined_name + 1");
    expect(result.status).toBe('error');
    expect(result.ename).toBe('NameError');
    expect(result.evalue).toBe("name 'undefined_name' is not defined");
    expect(result.output).toMatch(
      /^before\nNameError: name 'undefined_name' is not defined\n/
    );
    expect(result.output).toContain('undefined_name + 1');
    expect(result.output).toContain('Traceback');
    expect(result.output).not.toContain('\x1b');
  }, 60000);

  it('marks a cell whose exec failed in its metadata, and clears the mark once it runs', async () => {
    const metadataOf = (id: string) =>
      notebook.panel.content.widgets
        .find(cell => cell.model.id === id)!
        .model.getMetadata(CELL_METADATA_KEY) as Record<string, unknown>;
    const id = await addCode('1 / 0');
    const failed = await driver.execCell({ cellId: id, timeoutMs: 0 });
    expect(failed.status).toBe('error');
    expect(metadataOf(id)).toMatchObject({ [EXEC_ERROR_KEY]: true });
    const fine = await addCode('1');
    await driver.execCell({ cellId: fine, timeoutMs: 0 });
    expect(metadataOf(fine)).not.toHaveProperty(EXEC_ERROR_KEY);
    await driver.updateCell(id, '1 / 1');
    expect((await driver.execCell({ cellId: id, timeoutMs: 0 })).status).toBe(
      'ok'
    );
    expect(metadataOf(id)).not.toHaveProperty(EXEC_ERROR_KEY);
    expect(metadataOf(id)).toMatchObject({ role: 'code' });
  }, 60000);

  it('clears the old outputs before running again', async () => {
    const id = await addCode("print('once')");
    await driver.execCell({ cellId: id, timeoutMs: 0 });
    const again = await driver.execCell({ cellId: id, timeoutMs: 0 });
    expect(again).toEqual({ status: 'ok', output: 'once' });
    expect(outputsOf(id)).toHaveLength(1);
  }, 60000);

  it('reports a cell the user deleted as missing', async () => {
    const id = await addCode('1');
    const shared = notebook.panel.model!.sharedModel;
    shared.deleteCell(shared.cells.findIndex(cell => cell.getId() === id));
    const result = await driver.execCell({ cellId: id, timeoutMs: 0 });
    expect(result.status).toBe('missing');
    expect(result.message).toBe(`Cell ${id} no longer exists (deleted?)`);
  }, 60000);

  it('refuses to execute a markdown cell', async () => {
    const id = await driver.addCell({
      kind: 'markdown',
      source: 'text',
      role: 'content',
      provenance
    });
    const result = await driver.execCell({ cellId: id, timeoutMs: 0 });
    expect(result.status).toBe('error');
    expect(result.message).toContain('markdown');
  });

  it('keeps addressing a cell by id after the user inserts cells above it', async () => {
    const id = await addCode("value = 'by id'\nvalue");
    const shared = notebook.panel.model!.sharedModel;
    shared.insertCells(0, [
      { cell_type: 'code', source: "print('not me')" },
      { cell_type: 'markdown', source: 'user note' }
    ]);
    const result = await driver.execCell({ cellId: id, timeoutMs: 0 });
    expect(result).toEqual({ status: 'ok', output: "'by id'" });
    expect(outputsOf(id)).toHaveLength(1);
    expect(shared.cells[0].getSource()).toBe("print('not me')");
    expect(outputsOf(shared.cells[0].getId())).toHaveLength(0);
  }, 60000);

  it('waits while the kernel is busy with another cell', async () => {
    const slow = driver.execCell({
      cellId: await addCode("import time\ntime.sleep(2)\nprint('slow done')"),
      timeoutMs: 0
    });
    // The time limit counts from the start of the cell, not while it waits in the queue.
    const queued = await driver.execCell({
      cellId: await addCode("print('queued done')"),
      timeoutMs: 1000
    });
    expect(queued).toEqual({ status: 'ok', output: 'queued done' });
    expect(await slow).toEqual({ status: 'ok', output: 'slow done' });
  }, 60000);

  it('interrupts a cell that exceeds the time limit and keeps the kernel usable', async () => {
    const started = Date.now();
    const result = await run(
      "import time\nprint('sleeping', flush=True)\ntime.sleep(30)",
      1500
    );
    const elapsed = Date.now() - started;
    expect(result.status).toBe('timeout');
    expect(result.message).toContain('1.5 s');
    expect(result.output).toContain('sleeping');
    expect(result.output).toContain('KeyboardInterrupt');
    expect(elapsed).toBeLessThan(15000);
    expect(await run('1 + 1')).toEqual({ status: 'ok', output: '2' });
  }, 60000);

  it('interrupts and reports aborted when the run is stopped', async () => {
    const controller = new AbortController();
    const id = await addCode('import time\ntime.sleep(30)');
    setTimeout(() => controller.abort(), 1000);
    const result = await driver.execCell({
      cellId: id,
      timeoutMs: 0,
      signal: controller.signal
    });
    expect(result.status).toBe('aborted');
    expect(await run("'alive'")).toEqual({ status: 'ok', output: "'alive'" });

    const stopped = new AbortController();
    stopped.abort();
    const notRun = await driver.execCell({
      cellId: await addCode("print('never')"),
      timeoutMs: 0,
      signal: stopped.signal
    });
    expect(notRun.status).toBe('aborted');
  }, 60000);

  it('lets the running cell finish when the run is stopped without interrupting the kernel', async () => {
    const controller = new AbortController();
    const id = await addCode(
      "import time\ntime.sleep(1.5)\nprint('finished', flush=True)"
    );
    setTimeout(() => controller.abort(LEAVE_KERNEL), 300);
    const result = await driver.execCell({
      cellId: id,
      timeoutMs: 0,
      signal: controller.signal
    });
    expect(result).toEqual({ status: 'ok', output: 'finished' });

    const interrupted = new AbortController();
    const slow = await addCode('import time\ntime.sleep(30)');
    setTimeout(() => interrupted.abort(INTERRUPT_KERNEL), 500);
    const stopped = await driver.execCell({
      cellId: slow,
      timeoutMs: 0,
      signal: interrupted.signal
    });
    expect(stopped.status).toBe('aborted');
    expect(stopped.output).toContain('KeyboardInterrupt');
  }, 60000);

  it('reports a kernel restart during execution', async () => {
    await run('lost = 1');
    const id = await addCode('import time\ntime.sleep(30)');
    const pending = driver.execCell({ cellId: id, timeoutMs: 0 });
    await new Promise(resolve => setTimeout(resolve, 1500));
    await notebook.panel.sessionContext.restartKernel();
    const result = await pending;
    expect(result.status).toBe('kernel');
    expect(result.message).toContain('The kernel restarted during execution');

    const after = await run('lost');
    expect(after.status).toBe('error');
    expect(after.ename).toBe('NameError');
    expect(await run('2 + 3')).toEqual({ status: 'ok', output: '5' });
  }, 90000);

  it('reports a kernel that dies during execution', async () => {
    const result = await run(
      "import os\nprint('bye', flush=True)\nos._exit(1)"
    );
    expect(result.status).toBe('kernel');
    expect(result.message).toMatch(/kernel (restarted|died) during execution/);
    await notebook.panel.sessionContext.ready;
    // The server restarts the kernel on its own and JupyterLab reopens its connection meanwhile; the
    // reopened connection's iopub may still be bound to the old kernel (replies come, outputs never:
    // JupyterLab's own cells then stay at [*]), which the run's connection check finds and repairs.
    // So the next cell runs, within one reconnection.
    expect(await run('40 + 2', 10000)).toEqual({ status: 'ok', output: '42' });
  }, 120000);

  it('runs cells through the executor it was given', async () => {
    const executor = { runCell: jest.fn(runCell) };
    const custom = new NotebookDriver({ panel: notebook.panel, executor });
    const id = await addCode("print('via executor')");
    expect(await custom.execCell({ cellId: id, timeoutMs: 0 })).toEqual({
      status: 'ok',
      output: 'via executor'
    });
    expect(executor.runCell).toHaveBeenCalledTimes(1);
    const options = executor.runCell.mock.calls[0][0];
    expect(options.cell.model.id).toBe(id);
    expect(options.notebook).toBe(notebook.panel.model);
    expect(options.sessionContext).toBe(notebook.panel.sessionContext);
  }, 60000);

  it('starts the default kernel when the notebook has none', async () => {
    const bare = await openNotebook(services(), {
      kernel: false,
      windowingMode: 'none'
    });
    try {
      expect(bare.panel.sessionContext.session?.kernel ?? null).toBeNull();
      const bareDriver = new NotebookDriver({ panel: bare.panel });
      const id = await bareDriver.addCell({
        kind: 'code',
        source: 'import sys\nsys.version_info[0]',
        role: 'code',
        provenance
      });
      expect(await bareDriver.execCell({ cellId: id, timeoutMs: 0 })).toEqual({
        status: 'ok',
        output: '3'
      });
      expect(bare.panel.sessionContext.session?.kernel?.name).toBe('ipython');
    } finally {
      await bare.dispose();
    }
  }, 120000);
});
