/** When the driver saves the notebook and its run state, and when it leaves the saving to others. */
import { Dialog } from '@jupyterlab/apputils';
import { NotebookDriver } from '../notebookDriver';
import { RUN_STATE_METADATA_KEY } from '../metadata';
import { openNotebook, quietConsole } from './utils';
import {
  provenance,
  recordSaves,
  useDriverNotebook,
  waitUntil
} from './driverFixture';

quietConsole();

const fx = useDriverNotebook();

describe('NotebookDriver saving', () => {
  it('saves the notebook soon after the run changes it, in one save for a burst of cells', async () => {
    const saving = new NotebookDriver({
      panel: fx.notebook.panel,
      saveDelayMs: 100
    });
    const states = recordSaves(fx.notebook.panel);
    for (const source of ['first = 1', 'second = 2', 'third = 3']) {
      await saving.addCell({ kind: 'code', source, role: 'code', provenance });
    }
    expect(fx.notebook.panel.model!.dirty).toBe(true);
    await waitUntil(() => states.includes('completed'));
    expect(states).toEqual(['started', 'completed']);
    expect(fx.notebook.panel.model!.dirty).toBe(false);
    const file = await fx
      .services()
      .contents.get(fx.notebook.panel.context.path);
    const sources = (
      file.content as { cells: Array<{ source: string }> }
    ).cells.map(cell => cell.source);
    expect(sources).toEqual(
      expect.arrayContaining(['first = 1', 'second = 2', 'third = 3'])
    );
  });

  it('does not save on its own when told not to', async () => {
    const manual = new NotebookDriver({
      panel: fx.notebook.panel,
      saveDelayMs: -1
    });
    const states = recordSaves(fx.notebook.panel);
    await manual.addCell({
      kind: 'code',
      source: 'x',
      role: 'code',
      provenance
    });
    await new Promise(resolve => setTimeout(resolve, 300));
    expect(states).toEqual([]);
    expect(fx.notebook.panel.model!.dirty).toBe(true);
  });

  it("waits for the user's save to end before saving the run state", async () => {
    const states = recordSaves(fx.notebook.panel);
    await fx.driver.addCell({
      kind: 'code',
      source: 'y',
      role: 'code',
      provenance
    });
    const user = fx.notebook.panel.context.save();
    await waitUntil(() => states.includes('started'));
    await Promise.all([user, fx.driver.saveRunState({ step: 'one' })]);
    // Overlapping saves would read started, started: the second one risks a false conflict.
    expect(states).toEqual(['started', 'completed', 'started', 'completed']);
  });

  it('saves a checkpoint at once at most once per save interval, and any other run state at once', async () => {
    const quick = new NotebookDriver({
      panel: fx.notebook.panel,
      saveDelayMs: 50
    });
    const states = recordSaves(fx.notebook.panel);
    await quick.saveRunState({ step: 'one' }, { checkpoint: true });
    expect(states).toEqual(['started', 'completed']);
    // Within the save interval, a second checkpoint waits; a stop or an end does not.
    await quick.saveRunState({ step: 'two' }, { checkpoint: true });
    await new Promise(resolve => setTimeout(resolve, 300));
    expect(states).toEqual(['started', 'completed']);
    await quick.saveRunState({ step: 'end' });
    expect(states).toEqual(['started', 'completed', 'started', 'completed']);
    const file = await fx
      .services()
      .contents.get(fx.notebook.panel.context.path);
    const metadata = (file.content as { metadata: Record<string, unknown> })
      .metadata;
    expect(metadata[RUN_STATE_METADATA_KEY]).toEqual({ step: 'end' });
  });

  it('saves nothing while its saves are held (another window runs the notebook), then saves again', async () => {
    const quick = new NotebookDriver({
      panel: fx.notebook.panel,
      saveDelayMs: 10
    });
    const states = recordSaves(fx.notebook.panel);
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
    const states = recordSaves(fx.notebook.panel);
    const conflicts = jest.spyOn(console, 'warn');
    await fx.driver.addCell({
      kind: 'code',
      source: 'z',
      role: 'code',
      provenance
    });
    // The user saves just as the run's save has written the file, before the page knows its new hash.
    let user: Promise<void> | null = null;
    const onWritten = () => {
      fx.services().contents.fileChanged.disconnect(onWritten);
      user = fx.notebook.panel.context.save();
    };
    fx.services().contents.fileChanged.connect(onWritten);
    await fx.driver.saveRunState({ step: 'two' });
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
    const contents = fx.services().contents;
    const factory = jest
      .spyOn(contents, 'getSharedModelFactory')
      .mockReturnValue({ collaborative: true, createNew: () => undefined });
    const shared = await openNotebook(fx.services(), { kernel: false });
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
});
