/**
 * The lazy boundary (docs/architecture.md#lazy-loading): JupyterLab starts with the plugins, the
 * panel's shell and these stand-ins; `runtime.ts` (engine, schemas, dialects, notebook driver, dialogs,
 * built-in planner) is loaded the first time a run needs it: a run starts or resumes, the Run dialog
 * opens, the panel asks where the planner is, or a notebook holds a saved run. The trace store
 * (`traceStore.ts`, IndexedDB) is a chunk of its own, loaded when a notebook first opens.
 */
import type {
  INotebookCellExecutor,
  NotebookPanel
} from '@jupyterlab/notebook';
import type { ServerConnection } from '@jupyterlab/services';
import type { ITranslator } from '@jupyterlab/translation';
import { ISignal, Signal } from '@lumino/signaling';
import type { IConnectionCheck } from '../protocol';
import type { IEffectsState } from '../engine/state/effects';
import type { IFsmTransition } from '../engine/state/fsm';
import type { ActionRegistry } from '../engine/actions/registry';
import type { IRunSettings } from '../engine/settings';
import { RunTrace } from '../engine/trace';
import type {
  IActionApplied,
  ICellAdded,
  IRunError,
  IRetryOptions,
  IRunFinished,
  IRunSnapshot,
  IRunWarning,
  IStartOptions,
  IStopOptions,
  IWorkflowRunner
} from '../engine/types';
import type {
  IRewindOptions,
  IRewindPlan,
  IRewindRecord,
  RewindTarget
} from '../engine/state/rewind';
import type { IPlannerLocation, IPlannerStatus, IRunHooks } from '../tokens';
import type { ISavedRun } from '../ui/saved';
import { TraceClock } from './traceClock';
import type { TraceKeeper, TraceStore } from './traceStore';

export type Runtime = typeof import('./runtime');
type TraceStoreModule = typeof import('./traceStore');

let runtime: Promise<Runtime> | null = null;
let loaded: Runtime | null = null;

/** The runtime chunk, loaded once; a failed load is tried again on the next call. */
export function loadRuntime(): Promise<Runtime> {
  if (!runtime) {
    runtime = import('./runtime').then(
      module => (loaded = module),
      (reason: unknown) => {
        runtime = null;
        throw reason;
      }
    );
  }
  return runtime;
}

let traceStoreModule: Promise<TraceStoreModule> | null = null;

/** The trace store's chunk (IndexedDB), loaded when a notebook first opens; tried again after a failure. */
function loadTraceStore(): Promise<TraceStoreModule> {
  if (!traceStoreModule) {
    traceStoreModule = import('./traceStore');
    traceStoreModule.catch(() => {
      traceStoreModule = null;
    });
  }
  return traceStoreModule;
}

/** The runtime if it is loaded already, for code that must answer synchronously. */
export function loadedRuntime(): Runtime | null {
  return loaded;
}

/**
 * The saved run in `raw` (a notebook's metadata value), or what is wrong with it; null when there is
 * none. `undefined` while the runtime (its schema) loads: `onLoaded` is called once it has, to read
 * again. The run models' `SavedRunReader` (ui/saved.ts).
 */
export function readSavedRun(
  raw: unknown,
  maxExecutionSteps: number,
  onLoaded: () => void
): ISavedRun | null | undefined {
  if (raw === undefined || raw === null) {
    return null;
  }
  const runtime = loadedRuntime();
  if (!runtime) {
    loadRuntime().then(onLoaded, reason =>
      console.error('Notebook-BCC: the saved run could not be read.', reason)
    );
    return undefined;
  }
  const check = runtime.checkSavedRunState(raw);
  return check.ok
    ? {
        state: check.state,
        snapshot: runtime.snapshotFromSaved(check.state, maxExecutionSteps),
        problems: null
      }
    : { state: null, snapshot: null, problems: check.problems };
}

/** The dialogs, each loading the runtime when first opened. */
export async function showRunDialog(
  ...args: Parameters<Runtime['showRunDialog']>
): ReturnType<Runtime['showRunDialog']> {
  return (await loadRuntime()).showRunDialog(...args);
}

export async function showStopDialog(
  ...args: Parameters<Runtime['showStopDialog']>
): ReturnType<Runtime['showStopDialog']> {
  return (await loadRuntime()).showStopDialog(...args);
}

export async function showVariablesDialog(
  ...args: Parameters<Runtime['showVariablesDialog']>
): ReturnType<Runtime['showVariablesDialog']> {
  return (await loadRuntime()).showVariablesDialog(...args);
}

export async function showApprovalDialog(
  ...args: Parameters<Runtime['showApprovalDialog']>
): ReturnType<Runtime['showApprovalDialog']> {
  return (await loadRuntime()).showApprovalDialog(...args);
}

export async function showWorkflowUpdateDialog(
  ...args: Parameters<Runtime['showWorkflowUpdateDialog']>
): ReturnType<Runtime['showWorkflowUpdateDialog']> {
  return (await loadRuntime()).showWorkflowUpdateDialog(...args);
}

export async function showRewindDialog(
  ...args: Parameters<Runtime['showRewindDialog']>
): ReturnType<Runtime['showRewindDialog']> {
  return (await loadRuntime()).showRewindDialog(...args);
}

export async function showPlannerProblemDialog(
  ...args: Parameters<Runtime['showPlannerProblemDialog']>
): ReturnType<Runtime['showPlannerProblemDialog']> {
  return (await loadRuntime()).showPlannerProblemDialog(...args);
}

function emptyOutputs() {
  return { expected: [], produced: [], in_progress: [] };
}

/** What a runner that never ran shows; a test holds it equal to a new `WorkflowRunner`'s snapshot. */
export function idleSnapshot(): IRunSnapshot {
  const location = { id: null, name: null, goal: null, focus: null };
  const level = () => ({
    current: null,
    completed: [],
    focus: null,
    outputs: emptyOutputs()
  });
  return {
    workflowName: null,
    stage: { ...location },
    step: { ...location },
    behavior: { id: null, iteration: 0 },
    stages: [],
    outputs: {
      stages: emptyOutputs(),
      steps: emptyOutputs(),
      behaviors: emptyOutputs()
    },
    state: 'IDLE',
    running: false,
    rewinding: false,
    paused: false,
    pauseReason: null,
    pausing: false,
    error: null,
    task: null,
    behaviorsRun: 0,
    maxExecutionSteps: 0,
    bufferedActions: 0,
    lastTransition: null,
    lastTransitionAt: null,
    timings: [],
    progress: {
      version: 1,
      template: null,
      stages: level(),
      steps: level(),
      behaviors: {
        ...level(),
        iteration: 0,
        goal: null,
        actionsTaken: [],
        nextExpected: []
      }
    },
    plannerDialect: null,
    rewind: { undo: null, redoSteps: [], last: null }
  };
}

/**
 * One notebook's runner and planner status as stand-ins: both answer as an idle run until the runtime
 * is loaded, then forward to the real `WorkflowRunner` and `PlannerConnection`.
 */
export class LazyRun {
  constructor(private _options: LazyRun.IOptions) {
    this.runner = new LazyWorkflowRunner(
      this._loaderOf(parts => parts.runner),
      _options.registry,
      this.trace,
      () => this._withKeeper(keeper => void keeper.forget())
    );
    this.planner = new LazyPlannerStatus(
      this._loaderOf(parts => parts.planner)
    );
    if (_options.traceStore !== null) {
      const runner = this.runner;
      runner.progressChanged.connect(() =>
        this._withKeeper(keeper => keeper.changed())
      );
      runner.finished.connect(() =>
        this._withKeeper(keeper => void keeper.flush())
      );
      _options.panel.disposed.connect(() =>
        this._withKeeper(keeper => keeper.dispose())
      );
      this._keeper = this._keepTrace().catch((reason: unknown) => {
        console.warn('Notebook-BCC: the run trace was not restored.', reason);
        return null;
      });
    }
  }

  private readonly _clock = new TraceClock();
  /** The last run's trace; kept in the browser across reloads (`traceStore.ts`, loaded with the notebook). */
  readonly trace = new RunTrace({ now: this._clock.now });
  readonly runner: LazyWorkflowRunner;
  readonly planner: LazyPlannerStatus;

  /** The real runner and planner exist, or are being built. */
  get started(): boolean {
    return this._loading !== null;
  }

  /** Loads the runtime and builds the real runner and planner, once. */
  load(): Promise<Runtime.IRunParts> {
    if (!this._loading) {
      this._loading = loadRuntime().then(({ createRunParts }) => {
        const { panel, settings, settingsChanged } = this._options;
        const parts = createRunParts({
          ...this._options,
          settings: () => settings().current,
          pluginSettings: () => settings().composite ?? {},
          trace: this.trace,
          hooks: this._options.hooks
        });
        const follow = () => {
          parts.driver.followNewCells = settings().current.followNewCells;
        };
        settingsChanged.connect(follow);
        panel.disposed.connect(() => settingsChanged.disconnect(follow));
        this.runner.attach(parts.runner);
        this.planner.attach(parts.planner);
        return parts;
      });
      this._loading.catch(() => {
        this._loading = null;
      });
    }
    return this._loading;
  }

  /**
   * The keeper of the trace's copy in the store, once the store's chunk is loaded: it restores the
   * copy kept from before a reload, then follows the run. Calls made before it exists wait for it, in
   * order (a forget made meanwhile keeps the copy from being restored).
   */
  private async _keepTrace(): Promise<TraceKeeper | null> {
    const { panel, serverSettings, traceStore } = this._options;
    const module = await loadTraceStore();
    const store = traceStore ?? module.pageTraceStore();
    if (!store) {
      return null;
    }
    const keeper = new module.TraceKeeper({
      store,
      key: () => serverSettings.baseUrl + panel.context.path,
      trace: this.trace,
      clock: this._clock,
      busy: () => this.runner.isRunning
    });
    this._keeperNow = keeper;
    void keeper.restore().then(
      restored => restored && this.runner.traceRestored(),
      reason =>
        console.warn('Notebook-BCC: the run trace was not restored.', reason)
    );
    return keeper;
  }

  /** Calls `use` with the trace's keeper: now if it exists, else once it does (never without a store). */
  private _withKeeper(use: (keeper: TraceKeeper) => void): void {
    if (this._keeperNow) {
      use(this._keeperNow);
    } else {
      void this._keeper.then(keeper => keeper && use(keeper));
    }
  }

  private _loaderOf<T>(pick: (parts: Runtime.IRunParts) => T): ILoader<T> {
    const started = () => this.started;
    return {
      get started() {
        return started();
      },
      load: async () => pick(await this.load())
    };
  }

  private _loading: Promise<Runtime.IRunParts> | null = null;
  private _keeper: Promise<TraceKeeper | null> = Promise.resolve(null);
  private _keeperNow: TraceKeeper | null = null;
}

export namespace LazyRun {
  export interface IOptions {
    panel: NotebookPanel;
    /** The run settings, and the plugin's settings as JupyterLab holds them (for the dialects'). */
    settings: () => {
      readonly current: IRunSettings;
      readonly composite?: Readonly<Record<string, unknown>>;
    };
    settingsChanged: ISignal<unknown, unknown>;
    serverSettings: ServerConnection.ISettings;
    registry: ActionRegistry;
    hooks: IRunHooks;
    executor?: INotebookCellExecutor;
    translator?: ITranslator;
    /** Where the last run's trace is kept across reloads; the page's IndexedDB by default, null: nowhere. */
    traceStore?: TraceStore | null;
  }
}

export namespace Runtime {
  export type IRunParts = ReturnType<Runtime['createRunParts']>;
}

/** What a stand-in waits for: the real object, built when the runtime is loaded. */
export interface ILoader<T> {
  /** The load was asked for (it may not have finished). */
  readonly started: boolean;
  load(): Promise<T>;
}

/** Re-emits a real signal from the stand-in, so listeners connected before the load keep listening. */
function relay<T>(
  from: ISignal<unknown, T>,
  to: Signal<unknown, T>,
  owner: object
): void {
  from.connect((_, args) => to.emit(args), owner);
}

export class LazyWorkflowRunner implements IWorkflowRunner {
  constructor(
    private _loader: ILoader<IWorkflowRunner>,
    readonly registry: ActionRegistry,
    readonly trace: RunTrace,
    private _onForget: () => void = () => undefined
  ) {}

  get stateChanged(): ISignal<IWorkflowRunner, IFsmTransition> {
    return this._stateChanged;
  }
  get progressChanged(): ISignal<IWorkflowRunner, IRunSnapshot> {
    return this._progressChanged;
  }
  get effectsChanged(): ISignal<IWorkflowRunner, IEffectsState> {
    return this._effectsChanged;
  }
  get warning(): ISignal<IWorkflowRunner, IRunWarning> {
    return this._warning;
  }
  get errorOccurred(): ISignal<IWorkflowRunner, IRunError> {
    return this._errorOccurred;
  }
  get cellAdded(): ISignal<IWorkflowRunner, ICellAdded> {
    return this._cellAdded;
  }
  get actionApplied(): ISignal<IWorkflowRunner, IActionApplied> {
    return this._actionApplied;
  }
  get finished(): ISignal<IWorkflowRunner, IRunFinished> {
    return this._finished;
  }

  get snapshot(): IRunSnapshot {
    return this._real?.snapshot ?? idleSnapshot();
  }

  get isRunning(): boolean {
    return this._real?.isRunning ?? false;
  }

  get effects(): IEffectsState {
    return this._real?.effects ?? { current: [], history: [] };
  }

  /** Called once by `LazyRun` when the real runner exists. */
  attach(real: IWorkflowRunner): void {
    this._real = real;
    relay(real.stateChanged, this._stateChanged, this);
    relay(real.progressChanged, this._progressChanged, this);
    relay(real.effectsChanged, this._effectsChanged, this);
    relay(real.warning, this._warning, this);
    relay(real.errorOccurred, this._errorOccurred, this);
    relay(real.cellAdded, this._cellAdded, this);
    relay(real.actionApplied, this._actionApplied, this);
    relay(real.finished, this._finished, this);
    if (this._disposed) {
      real.dispose();
    }
  }

  /** The real runner, loading the runtime if it is not yet. */
  load(): Promise<IWorkflowRunner> {
    return this._loader.load();
  }

  async start(options: IStartOptions): Promise<IRunFinished> {
    return (await this._loader.load()).start(options);
  }

  async resumeFromSaved(): Promise<IRunFinished | null> {
    return (await this._loader.load()).resumeFromSaved();
  }

  async retry(options?: IRetryOptions): Promise<IRunFinished> {
    return (await this._loader.load()).retry(options);
  }

  /** Nothing to capture before the runtime is loaded: no run has started here. */
  captureRunState(): unknown | null {
    return this._real?.captureRunState() ?? null;
  }

  async rewindPlan(target: RewindTarget): Promise<IRewindPlan | null> {
    return (await this._loader.load()).rewindPlan(target);
  }

  async rewind(
    target: RewindTarget,
    options?: IRewindOptions
  ): Promise<IRewindRecord> {
    return (await this._loader.load()).rewind(target, options);
  }

  /** Forgets the run, its trace too (also the copy kept across reloads). */
  forgetRun(): void {
    this._real?.forgetRun();
    this.trace.clear();
    this._onForget();
    this._progressChanged.emit(this.snapshot);
  }

  /** A trace kept from before a reload is back: the views read it again (Export the run trace). */
  traceRestored(): void {
    this._progressChanged.emit(this.snapshot);
  }

  pause(): void {
    this._whenLoaded(real => real.pause());
  }

  resume(): void {
    this._whenLoaded(real => real.resume());
  }

  step(): void {
    this._whenLoaded(real => real.step());
  }

  async stop(options?: IStopOptions): Promise<void> {
    // Nothing runs before the runtime is loaded; a load under way may be for a run about to start.
    if (this._loader.started) {
      await (await this._loader.load()).stop(options);
    }
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._real?.dispose();
    Signal.clearData(this);
  }

  /** Synchronous once loaded, so a pause takes effect before the caller reads the snapshot. */
  private _whenLoaded(call: (real: IWorkflowRunner) => void): void {
    if (this._real) {
      call(this._real);
    } else {
      this._loader
        .load()
        .then(call, reason =>
          console.error(
            'Notebook-BCC: the runtime could not be loaded.',
            reason
          )
        );
    }
  }

  private _real: IWorkflowRunner | null = null;
  private _disposed = false;
  private _stateChanged = new Signal<IWorkflowRunner, IFsmTransition>(this);
  private _progressChanged = new Signal<IWorkflowRunner, IRunSnapshot>(this);
  private _effectsChanged = new Signal<IWorkflowRunner, IEffectsState>(this);
  private _warning = new Signal<IWorkflowRunner, IRunWarning>(this);
  private _errorOccurred = new Signal<IWorkflowRunner, IRunError>(this);
  private _cellAdded = new Signal<IWorkflowRunner, ICellAdded>(this);
  private _actionApplied = new Signal<IWorkflowRunner, IActionApplied>(this);
  private _finished = new Signal<IWorkflowRunner, IRunFinished>(this);
}

export class LazyPlannerStatus implements IPlannerStatus {
  constructor(private _loader: ILoader<IPlannerStatus>) {}

  get changed(): ISignal<IPlannerStatus, void> {
    return this._changed;
  }

  get waitingSince(): number | null {
    return this._real?.waitingSince ?? null;
  }

  /** Where the planner is; the first read (the panel shows it) loads the runtime to find out. */
  get location(): IPlannerLocation | null {
    if (this._real) {
      return this._real.location;
    }
    if (this._asked) {
      return null;
    }
    this._asked = true;
    this._loader.load().then(
      () => this._changed.emit(),
      reason => {
        this._asked = false;
        console.error('Notebook-BCC: the runtime could not be loaded.', reason);
      }
    );
    return null;
  }

  async checkConnection(): Promise<IConnectionCheck> {
    return (await this._loader.load()).checkConnection();
  }

  attach(real: IPlannerStatus): void {
    this._real = real;
    relay(real.changed, this._changed, this);
  }

  private _real: IPlannerStatus | null = null;
  private _asked = false;
  private _changed = new Signal<IPlannerStatus, void>(this);
}
