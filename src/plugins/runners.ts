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
import { ActionRegistry } from '../engine/registry';
import { registerBuiltinActions } from '../engine/actions';
import { WorkflowRunner } from '../engine/runner';
import { RunTrace } from '../engine/trace';
import { NotebookDriver } from '../notebook/driver';
import {
  IRunModelRegistry,
  IWorkflowActionRegistry,
  IWorkflowRunnerRegistry,
  PluginIDs,
  TRANSLATION_DOMAIN
} from '../tokens';
import { RunHooks } from '../ui/hooks';
import { RunModelRegistry } from '../ui/model';
import { createPlannerTransport } from '../lab/relayTransport';
import { SettingsPlannerService } from '../ui/planner';
import { RunnerRegistry } from '../ui/runners';
import { RunSettingsModel } from '../ui/settings';

/** The action handlers shared by every run: the built-in types, and those other extensions add. */
export const actionsPlugin: JupyterFrontEndPlugin<IWorkflowActionRegistry> = {
  id: PluginIDs.actions,
  description: 'The action types every workflow run can apply.',
  autoStart: true,
  provides: IWorkflowActionRegistry,
  activate: () => {
    const registry = new ActionRegistry();
    registerBuiltinActions(registry);
    return registry;
  }
};

/**
 * One workflow runner per notebook, each with a driver pinned to its panel, a planner client built
 * from the settings, and dialogs for interactive mode. Owns the user settings.
 */
export const runnersPlugin: JupyterFrontEndPlugin<IWorkflowRunnerRegistry> = {
  id: PluginIDs.plugin,
  description: 'The workflow runner of each notebook, and the settings.',
  autoStart: true,
  requires: [INotebookTracker, ISettingRegistry, IWorkflowActionRegistry],
  optional: [ITranslator, INotebookCellExecutor],
  provides: IWorkflowRunnerRegistry,
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    settingRegistry: ISettingRegistry,
    actions: IWorkflowActionRegistry,
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
      const runner: WorkflowRunner = new WorkflowRunner({
        driver,
        client: new SettingsPlannerService({
          settings: () => settings.current,
          notebookId: () => panel.context.path,
          observer: trace,
          transport: current =>
            createPlannerTransport(current, {
              serverSettings: app.serviceManager.serverSettings
            })
        }),
        settings: () => settings.current,
        registry: actions,
        trace,
        hooks
      });
      hooks.attach(runner);
      return runner;
    };

    return new RunnerRegistry({
      tracker,
      createRunner,
      settings: () => settings.current
    });
  }
};

/** The view model of each notebook's run, shared by the sidebar, status bar and commands. */
export const modelsPlugin: JupyterFrontEndPlugin<IRunModelRegistry> = {
  id: PluginIDs.models,
  description: 'The view models of the workflow runs.',
  autoStart: true,
  requires: [IWorkflowRunnerRegistry],
  provides: IRunModelRegistry,
  activate: (_: JupyterFrontEnd, runners: IWorkflowRunnerRegistry) =>
    new RunModelRegistry(runners)
};
