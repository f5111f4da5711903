/**
 * One workflow runner per open notebook (`IWorkflowRunnerRegistry`). A runner is bound to its notebook
 * panel for life: switching tabs never retargets a run. Closing a notebook first stops its run, so the
 * run is saved and can be resumed when the notebook is opened again.
 */
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { PromiseDelegate } from '@lumino/coreutils';
import { IMessageHandler, Message, MessageLoop } from '@lumino/messaging';
import { ISignal, Signal } from '@lumino/signaling';
import type { ActionRegistry } from '../engine/registry';
import type { IRunSettings } from '../engine/settings';
import type { IWorkflowRunner } from '../engine/types';
import type {
  IActionRegistry,
  IPlannerStatus,
  IRunHooks,
  IRunnerEntry,
  IWorkflowRunnerRegistry
} from '../tokens';

/** How long closing a notebook waits for its run to stop and save before it closes anyway. */
const DEFAULT_CLOSE_TIMEOUT_MS = 10000;

interface IEntry extends IRunnerEntry {
  closing: boolean;
}

function entryOf({ panel, runner, hooks, planner }: IEntry): IRunnerEntry {
  return { panel, runner, hooks, planner };
}

export class RunnerRegistry implements IWorkflowRunnerRegistry {
  constructor(options: RunnerRegistry.IOptions) {
    this._createRunner = options.createRunner;
    this._settings = options.settings;
    this._actions = options.actions;
    this._closeTimeoutMs = options.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS;
    options.tracker.widgetAdded.connect((_, panel) => this._adopt(panel), this);
    options.tracker.forEach(panel => this._adopt(panel));
  }

  get runnerAdded(): ISignal<IWorkflowRunnerRegistry, IRunnerEntry> {
    return this._runnerAdded;
  }

  get runnerRemoved(): ISignal<IWorkflowRunnerRegistry, IRunnerEntry> {
    return this._runnerRemoved;
  }

  get settings(): IRunSettings {
    return this._settings();
  }

  get actions(): IActionRegistry {
    return this._actions;
  }

  get(panel: NotebookPanel): IWorkflowRunner | null {
    return this._entries.get(panel)?.runner ?? null;
  }

  whenReady(panel: NotebookPanel): Promise<IWorkflowRunner> {
    const runner = this.get(panel);
    if (runner) {
      return Promise.resolve(runner);
    }
    let pending = this._pending.get(panel);
    if (!pending) {
      pending = new PromiseDelegate<IWorkflowRunner>();
      this._pending.set(panel, pending);
    }
    return pending.promise;
  }

  entries(): IRunnerEntry[] {
    return [...this._entries.values()].map(entryOf);
  }

  private _adopt(panel: NotebookPanel): void {
    if (this._entries.has(panel) || this._adopting.has(panel)) {
      return;
    }
    this._adopting.add(panel);
    panel.context.ready
      .then(() => {
        this._adopting.delete(panel);
        if (panel.isDisposed) {
          return;
        }
        const entry: IEntry = {
          panel,
          ...this._createRunner(panel),
          closing: false
        };
        this._entries.set(panel, entry);
        MessageLoop.installMessageHook(panel, this._closeHook);
        panel.disposed.connect(this._onDisposed, this);
        this._runnerAdded.emit(entryOf(entry));
        this._pending.get(panel)?.resolve(entry.runner);
        this._pending.delete(panel);
      })
      .catch(reason => {
        this._adopting.delete(panel);
        console.error(
          'Notebook-BCC: the notebook could not be loaded.',
          reason
        );
      });
  }

  /** A close request on a notebook whose run is active: stop (and save) the run first, then close. */
  private _closeHook = (handler: IMessageHandler, msg: Message): boolean => {
    if (msg.type !== 'close-request') {
      return true;
    }
    const entry = this._entries.get(handler as NotebookPanel);
    if (!entry || entry.closing || !entry.runner.isRunning) {
      return true;
    }
    entry.closing = true;
    const timeout = new Promise<void>(resolve =>
      setTimeout(resolve, this._closeTimeoutMs)
    );
    Promise.race([entry.runner.stop(), timeout])
      .catch(reason =>
        console.warn('Notebook-BCC: the run did not stop cleanly.', reason)
      )
      .then(() => {
        if (!entry.panel.isDisposed) {
          entry.panel.close();
        }
      })
      .finally(() => {
        entry.closing = false;
      });
    return false;
  };

  private _onDisposed(panel: NotebookPanel): void {
    const entry = this._entries.get(panel);
    if (!entry) {
      return;
    }
    this._entries.delete(panel);
    MessageLoop.removeMessageHook(panel, this._closeHook);
    this._runnerRemoved.emit(entryOf(entry));
    entry.runner.dispose();
  }

  private _createRunner: RunnerRegistry.IOptions['createRunner'];
  private _settings: () => IRunSettings;
  private _actions: ActionRegistry;
  private _closeTimeoutMs: number;
  private _entries = new Map<NotebookPanel, IEntry>();
  private _adopting = new Set<NotebookPanel>();
  private _pending = new Map<NotebookPanel, PromiseDelegate<IWorkflowRunner>>();
  private _runnerAdded = new Signal<IWorkflowRunnerRegistry, IRunnerEntry>(
    this
  );
  private _runnerRemoved = new Signal<IWorkflowRunnerRegistry, IRunnerEntry>(
    this
  );
}

export namespace RunnerRegistry {
  export interface IOptions {
    tracker: INotebookTracker;
    /** Makes the runner of a notebook and its hooks; called once, when the notebook's context is ready. */
    createRunner(panel: NotebookPanel): {
      runner: IWorkflowRunner;
      hooks: IRunHooks;
      /** The runner's planner, for the views. */
      planner?: IPlannerStatus;
    };
    /** The current run settings. */
    settings: () => IRunSettings;
    /** The action handlers the runners use. */
    actions: ActionRegistry;
    closeTimeoutMs?: number;
  }
}
