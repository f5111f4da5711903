/**
 * One run model per notebook with a runner (`IRunModelRegistry`), and the run of the active notebook,
 * followed through the notebook tracker so the sidebar, the status bar and the commands share it.
 */
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { ISignal, Signal } from '@lumino/signaling';
import type {
  ICurrentRun,
  IRunModel,
  IRunModelEntry,
  IRunModelRegistry,
  IRunnerEntry,
  IWorkflowRunnerRegistry
} from '../tokens';
import { NotebookRunStateSource, RunModel } from './model';
import type { SavedRunReader } from './saved';

export class RunModelRegistry implements IRunModelRegistry {
  constructor(options: RunModelRegistry.IOptions) {
    this._runners = options.runners;
    this._tracker = options.tracker;
    this._readSaved = options.readSaved;
    this._runners.runnerAdded.connect((_, entry) => this._add(entry), this);
    this._runners.runnerRemoved.connect(
      (_, entry) => this._remove(entry),
      this
    );
    for (const entry of this._runners.entries()) {
      this._add(entry);
    }
    this._tracker.currentChanged.connect(this._bindCurrent, this);
    this._bindCurrent();
  }

  get modelAdded(): ISignal<IRunModelRegistry, IRunModelEntry> {
    return this._modelAdded;
  }

  get current(): ICurrentRun | null {
    return this._current;
  }

  get currentChanged(): ISignal<IRunModelRegistry, ICurrentRun | null> {
    return this._currentChanged;
  }

  model(panel: NotebookPanel): IRunModel | null {
    return this._models.get(panel)?.model ?? null;
  }

  private _add({ panel, runner, hooks, planner, lock }: IRunnerEntry): void {
    if (this._models.has(panel)) {
      return;
    }
    const source = new NotebookRunStateSource(panel);
    const model = new RunModel({
      runner,
      saved: source,
      readSaved: this._readSaved,
      settings: () => this._runners.settings,
      hooks,
      planner,
      lock
    });
    this._models.set(panel, { model, source });
    this._modelAdded.emit({ panel, model });
    if (panel === this._tracker.currentWidget) {
      this._bindCurrent();
    }
  }

  private _remove({ panel }: IRunnerEntry): void {
    const entry = this._models.get(panel);
    if (entry) {
      this._models.delete(panel);
      entry.model.dispose();
      entry.source.dispose();
    }
  }

  /** Follows the active notebook and its run model; emits when either changes. */
  private _bindCurrent(): void {
    const panel = this._tracker.currentWidget;
    const model = panel ? this.model(panel) : null;
    const previous = this._current;
    if (
      panel === (previous?.panel ?? null) &&
      model === (previous?.model ?? null)
    ) {
      return;
    }
    previous?.model?.changed.disconnect(this._onCurrentChanged, this);
    previous?.panel.context.pathChanged.disconnect(
      this._onCurrentChanged,
      this
    );
    this._current = panel ? { panel, model } : null;
    model?.changed.connect(this._onCurrentChanged, this);
    panel?.context.pathChanged.connect(this._onCurrentChanged, this);
    this._currentChanged.emit(this._current);
  }

  private _onCurrentChanged(): void {
    this._currentChanged.emit(this._current);
  }

  private _runners: IWorkflowRunnerRegistry;
  private _tracker: INotebookTracker;
  private _readSaved: SavedRunReader;
  private _current: ICurrentRun | null = null;
  private _models = new Map<
    NotebookPanel,
    { model: RunModel; source: NotebookRunStateSource }
  >();
  private _modelAdded = new Signal<IRunModelRegistry, IRunModelEntry>(this);
  private _currentChanged = new Signal<IRunModelRegistry, ICurrentRun | null>(
    this
  );
}

export namespace RunModelRegistry {
  export interface IOptions {
    runners: IWorkflowRunnerRegistry;
    /** The application's notebook tracker: `current` follows its current widget. */
    tracker: INotebookTracker;
    /** Reads the run saved in a notebook's metadata (lab/lazy.ts's `readSavedRun`). */
    readSaved: SavedRunReader;
  }
}
