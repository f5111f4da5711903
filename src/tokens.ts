/** Ids shared by the plugins, the schema and the tests, and the tokens other extensions may use. */
import type { NotebookPanel } from '@jupyterlab/notebook';
import { Token } from '@lumino/coreutils';
import type { ISignal } from '@lumino/signaling';
import type { ActionRegistry } from './engine/registry';
import type { IRunSettings } from './engine/settings';
import type { IWorkflowRunner } from './engine/types';
import type { RunModel } from './ui/model';

export const PLUGIN_PREFIX = 'jupyterlab-notebook-bcc';

export namespace PluginIDs {
  /** The runners: this plugin owns the settings (`schema/plugin.json`). */
  export const plugin = `${PLUGIN_PREFIX}:plugin`;
  export const actions = `${PLUGIN_PREFIX}:actions`;
  export const models = `${PLUGIN_PREFIX}:models`;
  export const sidebar = `${PLUGIN_PREFIX}:sidebar`;
  export const commands = `${PLUGIN_PREFIX}:commands`;
  export const statusbar = `${PLUGIN_PREFIX}:statusbar`;
  export const notifications = `${PLUGIN_PREFIX}:notifications`;
}

export namespace CommandIDs {
  export const open = 'notebook-bcc:open';
  export const run = 'notebook-bcc:run';
  export const pause = 'notebook-bcc:pause';
  export const resume = 'notebook-bcc:resume';
  /** Pause when running, resume when paused: one shortcut for both. */
  export const togglePause = 'notebook-bcc:toggle-pause';
  export const step = 'notebook-bcc:step';
  export const stop = 'notebook-bcc:stop';
  export const retry = 'notebook-bcc:retry';
  export const exportTrace = 'notebook-bcc:export-trace';
}

/** The translation domain of every user-visible string. */
export const TRANSLATION_DOMAIN = 'notebook_bcc';

/** A notebook and the run loop bound to it. */
export interface IRunnerEntry {
  readonly panel: NotebookPanel;
  readonly runner: IWorkflowRunner;
}

/**
 * One workflow runner per open notebook. A runner is created when its notebook is ready and disposed
 * when the notebook closes (its run is stopped and saved first).
 */
export interface IWorkflowRunnerRegistry {
  /** A notebook got its runner. */
  readonly runnerAdded: ISignal<IWorkflowRunnerRegistry, IRunnerEntry>;
  /** A notebook closed; its runner is being disposed. */
  readonly runnerRemoved: ISignal<IWorkflowRunnerRegistry, IRunnerEntry>;
  /** The runner of a notebook, or null while the notebook is loading (or not a notebook). */
  get(panel: NotebookPanel): IWorkflowRunner | null;
  /** Resolves with the notebook's runner once it exists (at once when it does). */
  whenReady(panel: NotebookPanel): Promise<IWorkflowRunner>;
  /** Every notebook with a runner. */
  entries(): IRunnerEntry[];
  /** The settings every run reads (the user's settings, updated as they change). */
  readonly settings: IRunSettings;
}

export const IWorkflowRunnerRegistry = new Token<IWorkflowRunnerRegistry>(
  'jupyterlab-notebook-bcc:IWorkflowRunnerRegistry',
  'The workflow runner of each open notebook.'
);

/**
 * The action handlers every runner uses: the built-in types plus those other extensions register at
 * run time (`register`, `addPreHook`, `addPostHook`; dispose the result to undo). One registry is shared
 * by all runners, present and future, so a registration applies to every notebook's run.
 */
export type IWorkflowActionRegistry = ActionRegistry;

export const IWorkflowActionRegistry = new Token<IWorkflowActionRegistry>(
  'jupyterlab-notebook-bcc:IWorkflowActionRegistry',
  'Registers custom action types (and hooks) for every workflow run.'
);

/** The view models of the notebooks' runs: what the sidebar, status bar and commands show. */
export interface IRunModelRegistry {
  /** The run model of a notebook, or null while its runner does not exist yet. */
  model(panel: NotebookPanel): RunModel | null;
  /** A notebook got its runner and model. */
  readonly modelAdded: ISignal<IRunModelRegistry, IRunModelEntry>;
}

export interface IRunModelEntry {
  readonly panel: NotebookPanel;
  readonly model: RunModel;
}

export const IRunModelRegistry = new Token<IRunModelRegistry>(
  'jupyterlab-notebook-bcc:IRunModelRegistry',
  'The view model of each notebook run, for views.'
);
