/**
 * Save coordination: the run's changes are saved shortly after they happen, at most once per save
 * interval; every save of the notebook, the run's and the user's, waits for the one before it; the run
 * state lives in the notebook's metadata. Under real-time collaboration the server saves the shared
 * document and the driver never does.
 */
import type { DocumentRegistry } from '@jupyterlab/docregistry';
import type { INotebookModel, NotebookPanel } from '@jupyterlab/notebook';
import type { Contents } from '@jupyterlab/services';
import { JSONExt, PartialJSONValue } from '@lumino/coreutils';
import { settleWithin, toJSON } from './json';
import { RUN_STATE_METADATA_KEY } from './metadata';

/** How long a save of the notebook waits for the one before it to end, in ms. */
const OTHER_SAVE_WAIT_MS = 20000;

/**
 * The least time between two saves during a run, in ms: each save serialises the whole notebook on the
 * page's main thread, so a run in a notebook with figures would otherwise spend its time saving.
 */
export const DEFAULT_SAVE_INTERVAL_MS = 5000;

export class NotebookSaver {
  /**
   * `saveDelayMs`: how long after a change the notebook is saved; negative turns this off.
   * `saveIntervalMs`: the least time from one save to the next that `scheduleSave` starts.
   */
  constructor(
    private _panel: NotebookPanel,
    private _saveDelayMs: number,
    private _saveIntervalMs = DEFAULT_SAVE_INTERVAL_MS
  ) {
    queueSaves(_panel.context);
    _panel.disposed.connect(() => {
      clearTimeout(this._saveTimer);
      this._saveTimer = undefined;
    });
  }

  /**
   * Saves the notebook shortly after the run changed it, so that a page reload or a crash in the
   * middle of a behavior keeps its cells (the run state itself is saved after each behavior).
   */
  scheduleSave(): void {
    if (
      this.held ||
      this._saveDelayMs < 0 ||
      this._saveTimer !== undefined ||
      isCollaborative(this._panel)
    ) {
      return;
    }
    const wait = Math.max(
      this._saveDelayMs,
      this._lastSaveAt + this._saveIntervalMs - Date.now()
    );
    this._saveTimer = setTimeout(() => {
      this._saveTimer = undefined;
      // Nothing changed since the last save (e.g. the user saved): nothing to write.
      if (!this._panel.isDisposed && this._panel.model?.dirty) {
        this.save().catch(reason => {
          console.warn('Notebook-BCC: saving the notebook failed.', reason);
        });
      }
    }, wait);
  }

  /**
   * A checkpoint of the run (the end of a behavior or a step): saved now when the last save is older
   * than the save interval, else with the next save, when the interval is up. Saved only later, the
   * first checkpoint could wait behind a cell that floods the page (a 10 MB output) and leave nothing of
   * the run on disk; saved each time, 100 behaviors wrote a 20 MB notebook 100 times.
   */
  async saveCheckpoint(): Promise<void> {
    if (Date.now() - this._lastSaveAt >= this._saveIntervalMs) {
      await this.save();
    } else {
      this.scheduleSave();
    }
  }

  /**
   * Another window runs the notebook now: the driver saves nothing (a scheduled save is dropped), so
   * this page's older copy cannot overwrite that window's work.
   */
  get held(): boolean {
    return this._held;
  }
  set held(held: boolean) {
    this._held = held;
    if (held) {
      clearTimeout(this._saveTimer);
      this._saveTimer = undefined;
    }
  }

  /** Saves the notebook, after any save of it under way (see `queueSaves`). */
  async save(): Promise<void> {
    clearTimeout(this._saveTimer);
    this._saveTimer = undefined;
    if (this._held || isCollaborative(this._panel) || this._panel.isDisposed) {
      return;
    }
    this._lastSaveAt = Date.now();
    await this._panel.context.save();
  }

  private _saveTimer: ReturnType<typeof setTimeout> | undefined;
  private _lastSaveAt = -Infinity;
  private _held = false;
}

type SavingContext = Pick<DocumentRegistry.IContext<INotebookModel>, 'save'>;

/** The contexts whose saves are queued already. */
const queued = new WeakSet<SavingContext>();

/**
 * JupyterLab's document context runs two saves at once, and the later one then finds the earlier one's
 * write on disk and asks the user about a conflict ("File Changed"): a run saves every few seconds, so
 * the user's Ctrl+S or JupyterLab's autosave would meet it sooner or later. The context's saves go one
 * after the other instead, whoever starts them; a save waits at most `OTHER_SAVE_WAIT_MS` for the one
 * before (one held by a dialog never ends on its own).
 */
export function queueSaves(context: SavingContext): void {
  if (queued.has(context)) {
    return;
  }
  queued.add(context);
  const save = context.save.bind(context);
  let last: Promise<void> = Promise.resolve();
  context.save = () => {
    const next = settleWithin(last, OTHER_SAVE_WAIT_MS).then(save);
    last = next.catch(() => undefined);
    return next;
  };
}

/** Saves the notebook now, unless its server saves it (collaboration, see `isCollaborative`). */
export async function saveFromPage(panel: NotebookPanel): Promise<void> {
  if (!isCollaborative(panel)) {
    await panel.context.save();
  }
}

/** A jupyter-collaboration document: its server saves it; a save from the page meets a false "File Changed" conflict. */
export function isCollaborative(panel: NotebookPanel): boolean {
  return !panel.isDisposed && panel.model?.collaborative === true;
}

type SharedNotebook = INotebookModel['sharedModel'];

/** Writes the run state into the notebook's metadata (not saved yet). */
export function writeRunState(shared: SharedNotebook, state: unknown): void {
  shared.transact(() => {
    // The saved run refers to cells by id, and only nbformat 4.5+ files keep cell ids.
    if (shared.nbformat === 4 && shared.nbformat_minor < 5) {
      // The shared notebook (YNotebook) has a setter that its interface does not declare.
      (shared as { nbformat_minor: number }).nbformat_minor = 5;
    }
    shared.setMetadata(
      RUN_STATE_METADATA_KEY,
      toJSON(state) as PartialJSONValue
    );
  });
}

/** A copy of the run state saved in the notebook's metadata, or null. */
export function readRunState(shared: SharedNotebook): unknown | null {
  const state = shared.getMetadata(RUN_STATE_METADATA_KEY);
  return state === undefined ? null : JSONExt.deepCopy(state);
}

/** Removes the run state from the notebook's metadata (not saved yet); the cells stay. */
export function discardRunState(shared: SharedNotebook): void {
  shared.deleteMetadata(RUN_STATE_METADATA_KEY);
}

/**
 * Saves a notebook whose widget is being disposed, with the live run's state written into it: its
 * context goes with the widget, so the content is taken now and written through the contents API.
 */
export function saveClosingNotebook(
  model: INotebookModel,
  path: string,
  state: unknown,
  contents: Pick<Contents.IManager, 'save'>
): Promise<unknown> {
  writeRunState(model.sharedModel, state);
  const content = model.toJSON() as unknown as PartialJSONValue;
  return contents.save(path, { type: 'notebook', format: 'json', content });
}
