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
import { registerDeferredBuiltins } from '../engine/actions/deferredBuiltins';
import { ActionRegistry } from '../engine/actions/registry';
import { RunHooks } from '../lab/hooks';
import { LazyRun, loadRuntime, readSavedRun } from '../lab/lazy';
import { RunLock, ServerLockService } from '../lab/runLock';
import { RunnerRegistry } from '../lab/runners';
import { ApprovalPolicyService } from '../lab/approvalPolicy';
import { RunSettingsModel, translateSchema } from '../lab/settings';
import {
  IRunModelRegistry,
  IWorkflowActionRegistry,
  IWorkflowRunnerRegistry,
  PluginIDs
} from '../tokens';
import { TRANSLATION_DOMAIN } from '../translation';
import { RunModelRegistry } from '../ui/modelRegistry';

type RequiredSchema =
  typeof import('../lab/requiredApproval').requiredApprovalSchema;

/** How long the settings wait for the server's approval policy before they load without it. */
const POLICY_WAIT_MS = 3000;

/**
 * One workflow runner per notebook, each with a driver pinned to its panel, a planner client built
 * from the settings, and dialogs for interactive mode (loaded on first use). Owns the user settings
 * and the action handlers every runner shares.
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
    const policy = new ApprovalPolicyService({
      serverSettings: app.serviceManager.serverSettings
    });
    let required: boolean | null = null;
    // The schema an administrator's requirement shows: its code loads only where approval is required.
    let requiredSchema: RequiredSchema | null = null;
    const loadRequiredSchema = async (): Promise<void> => {
      if (policy.current?.requireApproval && !requiredSchema) {
        requiredSchema = (await import('../lab/requiredApproval'))
          .requiredApprovalSchema;
      }
    };
    policy.changed.connect((_, current) => {
      settings.setPolicy(current);
      if (required !== null && current.requireApproval !== required) {
        required = current.requireApproval;
        // The Settings Editor shows interactive mode as the administrator set it.
        void loadRequiredSchema()
          .then(() => settingRegistry.reload(PluginIDs.plugin))
          .catch(reason => {
            console.warn(
              'Notebook-BCC: the settings were not reloaded.',
              reason
            );
          });
      }
    });
    // The registry loads a schema marked for transform only once its transform is registered: here once
    // the approval policy is known (3 s at most), so the schema's defaults are the administrator's.
    Promise.race([
      policy.refresh(),
      new Promise(resolve => setTimeout(resolve, POLICY_WAIT_MS))
    ])
      .then(loadRequiredSchema)
      .then(() => {
        required = policy.current?.requireApproval ?? false;
        settingRegistry.transform(PluginIDs.plugin, {
          fetch: plugin => {
            const translated = translateSchema(plugin, trans);
            return policy.current?.requireApproval && requiredSchema
              ? requiredSchema(translated, trans)
              : translated;
          }
        });
        return Promise.all([
          app.restored,
          settingRegistry.load(PluginIDs.plugin)
        ]);
      })
      .then(([, setting]) => {
        settings.update(setting.composite);
        setting.changed.connect(() => settings.update(setting.composite));
      })
      .catch(reason => {
        console.error('Notebook-BCC: failed to load the settings.', reason);
      });
    const actions = new ActionRegistry();
    // Their code loads with the runtime, the first time a run applies an action.
    registerDeferredBuiltins(
      actions,
      async () => (await loadRuntime()).BUILTIN_HANDLERS
    );

    // The runner and planner are stand-ins until the first run loads the runtime (lab/lazy.ts).
    const createRunner = (panel: NotebookPanel) => {
      const hooks: RunHooks = new RunHooks({
        trans,
        label: () => panel.context.localPath,
        snapshot: () => run.runner.snapshot
      });
      const run: LazyRun = new LazyRun({
        panel,
        settings: () => settings,
        settingsChanged: settings.changed,
        serverSettings: app.serviceManager.serverSettings,
        registry: actions,
        hooks,
        executor: executor ?? undefined,
        translator: translator ?? undefined
      });
      const lock = new RunLock({
        key: () => panel.context.localPath,
        service: locks,
        status: () => {
          const { state, paused, stage, step, task } = run.runner.snapshot;
          return { state, paused, stage: stage.name, step: step.name, task };
        }
      });
      return { runner: run.runner, hooks, planner: run.planner, lock };
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
  ) => new RunModelRegistry({ runners, tracker, readSaved: readSavedRun })
};
