import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  INotebookCellExecutor,
  INotebookTracker,
  NotebookPanel
} from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { registerBuiltinActions } from '../engine/actions';
import { ActionRegistry } from '../engine/registry';
import { WorkflowRunner } from '../engine/runner';
import { RunTrace } from '../engine/trace';
import { RunHooks } from '../lab/hooks';
import { SettingsPlannerService } from '../lab/planner';
import { RunLock, ServerLockService } from '../lab/runLock';
import { RunnerRegistry } from '../lab/runners';
import { RunSettingsModel } from '../lab/settings';
import { NotebookDriver } from '../notebook/notebookDriver';
import {
  IRunModelRegistry,
  IWorkflowActionRegistry,
  IWorkflowRunnerRegistry,
  PluginIDs
} from '../tokens';
import {
  createPlannerTransport,
  isDemoConfig,
  fetchRelayConfig
} from '../lab/relayTransport';
import { TRANSLATION_DOMAIN } from '../translation';
import { RunModelRegistry } from '../ui/modelRegistry';

/**
 * One workflow runner per notebook, each with a driver pinned to its panel, a planner client built
 * from the settings, and dialogs for interactive mode. Owns the user settings and the action handlers
 * every runner shares.
 */
export const runnersPlugin: JupyterFrontEndPlugin<IWorkflowRunnerRegistry> = {
  id: PluginIDs.plugin,
  description: 'The workflow runner of each notebook, and the settings.',
  autoStart: true,
  requires: [INotebookTracker, ISettingRegistry],
  optional: [ITranslator, INotebookCellExecutor],
  provides: IWorkflowRunnerRegistry,
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    settingRegistry: ISettingRegistry,
    translator: ITranslator | null,
    executor: INotebookCellExecutor | null
  ) => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const settings = new RunSettingsModel();
    Promise.all([app.restored, settingRegistry.load(PluginIDs.plugin)])
      .then(([, setting]) => {
        settings.update(setting.composite);
        setting.changed.connect(() => settings.update(setting.composite));
      })
      .catch(reason => {
        console.error('Notebook-BCC: failed to load the settings.', reason);
      });
    const actions = new ActionRegistry();
    registerBuiltinActions(actions);

    const createRunner = (panel: NotebookPanel) => {
      const driver = new NotebookDriver({
        panel,
        executor: executor ?? undefined,
        followNewCells: settings.current.followNewCells,
        translator: translator ?? undefined
      });
      const followSetting = () => {
        driver.followNewCells = settings.current.followNewCells;
      };
      settings.changed.connect(followSetting);
      panel.disposed.connect(() => settings.changed.disconnect(followSetting));
      const trace = new RunTrace();
      const hooks = new RunHooks({
        trans,
        label: () => panel.context.localPath,
        snapshot: () => runner.snapshot
      });
      const serverSettings = app.serviceManager.serverSettings;
      const planner = new SettingsPlannerService({
        settings: () => settings.current,
        notebookId: () => panel.context.path,
        observer: trace,
        transport: current =>
          createPlannerTransport(current, { serverSettings }),
        where: async current => {
          if (current.transport !== 'server') {
            return current.baseUrl ? null : { builtin: true };
          }
          const config = await fetchRelayConfig(serverSettings);
          if (!config) {
            return null;
          }
          return isDemoConfig(config)
            ? { builtin: true }
            : { url: config.planner_url, source: config.source };
        }
      });
      const runner: WorkflowRunner = new WorkflowRunner({
        driver,
        client: planner,
        settings: () => settings.current,
        registry: actions,
        trace,
        hooks
      });
      const lock = new RunLock({
        key: () => panel.context.localPath,
        service: locks,
        status: () => {
          const { state, paused, stage, step, task } = runner.snapshot;
          return { state, paused, stage: stage.name, step: step.name, task };
        }
      });
      return { runner, hooks, planner, lock };
    };

    const locks = new ServerLockService(app.serviceManager.serverSettings);
    return new RunnerRegistry({
      tracker,
      createRunner,
      settings: () => settings.current,
      actions,
      contents: app.serviceManager.contents
    });
  }
};

/** The action handlers shared by every run: the built-in types, and those other extensions add. */
export const actionsPlugin: JupyterFrontEndPlugin<IWorkflowActionRegistry> = {
  id: PluginIDs.actions,
  description: 'The action types every workflow run can apply.',
  autoStart: true,
  requires: [IWorkflowRunnerRegistry],
  provides: IWorkflowActionRegistry,
  activate: (_: JupyterFrontEnd, runners: IWorkflowRunnerRegistry) =>
    runners.actions
};

/** The view model of each notebook's run, shared by the sidebar, status bar and commands. */
export const modelsPlugin: JupyterFrontEndPlugin<IRunModelRegistry> = {
  id: PluginIDs.models,
  description: 'The view models of the workflow runs.',
  autoStart: true,
  requires: [IWorkflowRunnerRegistry, INotebookTracker],
  provides: IRunModelRegistry,
  activate: (
    _: JupyterFrontEnd,
    runners: IWorkflowRunnerRegistry,
    tracker: INotebookTracker
  ) => new RunModelRegistry({ runners, tracker })
};
