/**
 * One workflow runner per open notebook (`IWorkflowRunnerRegistry`). A runner is bound to its notebook
 * panel for life: switching tabs never retargets a run. Every way a notebook goes (closed, its kernel
 * shut down, its widget disposed) saves the run first (`_endRun`), so it can be resumed when the notebook
 * is opened again. Each runner holds its notebook's run lock while its run is live (`runLock.ts`).
 */
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import type { Contents } from '@jupyterlab/services';
import { PromiseDelegate } from '@lumino/coreutils';
import { IMessageHandler, Message, MessageLoop } from '@lumino/messaging';
import { ISignal, Signal } from '@lumino/signaling';
import type { ActionRegistry } from '../engine/actions/registry';
import type { IRunSettings } from '../engine/settings';
import type { IWorkflowRunner } from '../engine/types';
import {
  saveClosingNotebook,
  saveFromPage,
  writeRunState
} from '../notebook/saving';
import type {
  IActionRegistry,
  IPlannerStatus,
  IRunHooks,
  IRunLock,
  IRunnerEntry,
  IWorkflowRunnerRegistry
} from '../tokens';

/** How long closing a notebook waits for its run to stop and save before it closes anyway. */
const DEFAULT_CLOSE_TIMEOUT_MS = 10000;

interface IEntry extends IRunnerEntry {
  closing: boolean;
  /** The run was saved for a close request: the close that follows goes through. */
  closeSaved: boolean;
}

/** How a notebook goes: a close request (tab, menu), its kernel shut down, or its widget disposed. */
type Ending = 'close' | 'kernel' | 'dispose';

function entryOf({
  panel,
  runner,
  hooks,
  planner,
  lock
}: IEntry): IRunnerEntry {
  return { panel, runner, hooks, planner, lock };
}

export class RunnerRegistry implements IWorkflowRunnerRegistry {
  constructor(options: RunnerRegistry.IOptions) {
    this._createRunner = options.createRunner;
    this._settings = options.settings;
    this._actions = options.actions;
    this._closeTimeoutMs = options.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS;
    this._contents = options.contents ?? null;
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
          closing: false,
          closeSaved: false
        };
        this._entries.set(panel, entry);
        this._watch(entry);
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

  /** Every path by which the notebook or its run goes ends in `_endRun`; the lock follows the run. */
  private _watch(entry: IEntry): void {
    const { panel, runner, lock } = entry;
    MessageLoop.installMessageHook(panel, this._closeHook);
    // The notebook widget is disposed before its panel, while the context and model are still there.
    panel.content.disposed.connect(() => void this._endRun(entry, 'dispose'));
    panel.disposed.connect(this._onDisposed, this);
    const session = panel.sessionContext;
    session.statusChanged.connect((_, status) => {
      if (status === 'dead') {
        void this._endRun(entry, 'kernel');
      }
    }, this);
    session.sessionChanged.connect((_, change) => {
      if (change.newValue === null) {
        void this._endRun(entry, 'kernel');
      }
    }, this);
    if (!lock) {
      return;
    }
    runner.stateChanged.connect((_, transition) => {
      // A run started without the commands (another extension): it needs the lock too.
      if (transition.event === 'START_WORKFLOW' && lock.state.kind !== 'mine') {
        void lock.acquire().then(held => {
          if (!held && runner.isRunning) {
            console.warn(
              'Notebook-BCC: this notebook runs in another window; the run here stops.'
            );
            void runner.stop();
          }
        });
      }
    }, this);
    // Run events renew the lock too: a hidden tab's timers may be throttled, its kernel messages are not.
    runner.progressChanged.connect(() => void lock.heartbeat(), this);
    runner.finished.connect(() => void lock.release(), this);
    lock.lost.connect(() => {
      console.warn(
        'Notebook-BCC: another window took over this run (its lock expired here); the run here stops, leaving the notebook to it.'
      );
      void runner.stop({ leaveNotebook: true });
    }, this);
  }

  /** A close request on a notebook whose run is active: stop (and save) the run first, then close. */
  private _closeHook = (handler: IMessageHandler, msg: Message): boolean => {
    if (msg.type !== 'close-request') {
      return true;
    }
    const entry = this._entries.get(handler as NotebookPanel);
    if (entry?.closeSaved) {
      entry.closeSaved = false;
      return true;
    }
    if (!entry || entry.closing || !entry.runner.isRunning) {
      return true;
    }
    void this._endRun(entry, 'close').then(() => {
      if (!entry.panel.isDisposed) {
        entry.closeSaved = true;
        entry.panel.close();
      }
    });
    return false;
  };

  /**
   * The one way a live run ends with its notebook: its state is saved in the notebook first. A close
   * request or a kernel shutdown can wait for the run to stop (and save); a disposal cannot, so the
   * state is taken at once and the notebook written through the contents API.
   */
  private async _endRun(entry: IEntry, how: Ending): Promise<void> {
    const { panel, runner } = entry;
    if (!runner.isRunning) {
      return;
    }
    if (how === 'dispose') {
      const state = runner.captureRunState();
      const model = panel.context.model;
      void runner.stop();
      if (state !== null && this._contents && !model.isDisposed) {
        await saveClosingNotebook(
          model,
          panel.context.path,
          state,
          this._contents
        ).catch(reason =>
          console.warn(
            'Notebook-BCC: the closing notebook was not saved.',
            reason
          )
        );
      }
      return;
    }
    if (entry.closing) {
      return;
    }
    entry.closing = true;
    let stopped = false;
    const timeout = new Promise<void>(resolve =>
      setTimeout(resolve, this._closeTimeoutMs)
    );
    try {
      await Promise.race([
        runner.stop().then(() => {
          stopped = true;
        }),
        timeout
      ]);
      const state = stopped ? null : runner.captureRunState();
      if (state !== null && !panel.isDisposed) {
        // The run did not stop in time (e.g. an exec the dead kernel never answers): save where it is.
        writeRunState(panel.context.model.sharedModel, state);
        await saveFromPage(panel);
      }
    } catch (reason) {
      console.warn('Notebook-BCC: the run did not stop cleanly.', reason);
    } finally {
      entry.closing = false;
    }
  }

  private _onDisposed(panel: NotebookPanel): void {
    const entry = this._entries.get(panel);
    if (!entry) {
      return;
    }
    this._entries.delete(panel);
    MessageLoop.removeMessageHook(panel, this._closeHook);
    this._runnerRemoved.emit(entryOf(entry));
    entry.runner.dispose();
    entry.lock?.dispose();
  }

  private _createRunner: RunnerRegistry.IOptions['createRunner'];
  private _settings: () => IRunSettings;
  private _actions: ActionRegistry;
  private _closeTimeoutMs: number;
  private _contents: Pick<Contents.IManager, 'save'> | null;
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
      /** The notebook's run lock, held while the run is live. */
      lock?: IRunLock;
    };
    /** The current run settings. */
    settings: () => IRunSettings;
    /** The action handlers the runners use. */
    actions: ActionRegistry;
    closeTimeoutMs?: number;
    /** Where a notebook disposed mid-run is saved (its context is gone by then). */
    contents?: Pick<Contents.IManager, 'save'>;
  }
}
