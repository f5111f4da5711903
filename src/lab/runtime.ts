/**
 * Everything a run needs beyond what JupyterLab loads at startup: the engine, the protocol and its
 * schemas, the dialects, the notebook driver, the planner transports and the dialogs. Only `lazy.ts`
 * imports this module, with `import()`, so it becomes a chunk of its own (docs/architecture.md#lazy-loading).
 */
import type {
  INotebookCellExecutor,
  NotebookPanel
} from '@jupyterlab/notebook';
import type { ServerConnection } from '@jupyterlab/services';
import type { ITranslator } from '@jupyterlab/translation';
import type { ActionRegistry } from '../engine/actions/registry';
import { WorkflowRunner } from '../engine/run/runner';
import type { IRunSettings } from '../engine/settings';
import type { RunTrace } from '../engine/trace';
import type { IRunnerHooks } from '../engine/types';
import { NotebookDriver } from '../notebook/notebookDriver';
import { serverPlannerChanged } from './llmSettings';
import { PlannerConnection } from './plannerConnection';
import {
  createPlannerTransport,
  fetchRelayConfig,
  isDemoConfig
} from './relayTransport';

export { isSavedRunState } from '../engine/saved/savedRun';
export { checkSavedRunState } from '../engine/saved/savedRun';
export { snapshotFromSaved } from '../engine/snapshot';
export { showLlmSettingsDialog } from '../ui/llmSettingsDialog';
export { usesBuiltinPlanner } from './plannerChoice';
export { showApprovalDialog } from '../ui/approvalDialog';
export {
  showStopDialog,
  showVariablesDialog,
  showWorkflowUpdateDialog
} from '../ui/dialogs';
export { showRunDialog } from '../ui/runDialog';
export { BUILTIN_HANDLERS } from '../engine/actions/builtins';
export { showRewindDialog } from '../ui/rewindDialog';
export { showPlannerProblemDialog } from '../ui/problemDialog';
export {
  checkReproducibility,
  displayNameOf,
  fingerprintValues,
  notebookCells,
  ReproduceError,
  writeReproducibilityRecord
} from '../notebook/reproduce';
export { cellsToRun } from '../notebook/reproducibility';

export interface IRunPartsOptions {
  panel: NotebookPanel;
  settings: () => IRunSettings;
  /** The plugin's settings as JupyterLab holds them: the planner connection reads the dialects' there. */
  pluginSettings?: () => Readonly<Record<string, unknown>>;
  serverSettings: ServerConnection.ISettings;
  registry: ActionRegistry;
  trace: RunTrace;
  hooks: IRunnerHooks;
  executor?: INotebookCellExecutor;
  translator?: ITranslator;
}

/** One notebook's runner: a driver pinned to its panel and a planner built from the settings. */
export function createRunParts(options: IRunPartsOptions): {
  runner: WorkflowRunner;
  planner: PlannerConnection;
  driver: NotebookDriver;
} {
  const { panel, settings, serverSettings, trace } = options;
  const driver = new NotebookDriver({
    panel,
    executor: options.executor,
    followNewCells: settings().followNewCells,
    translator: options.translator
  });
  const planner = new PlannerConnection({
    settings,
    pluginSettings: options.pluginSettings,
    notebookId: () => panel.context.path,
    observer: trace,
    transport: current => createPlannerTransport(current, { serverSettings }),
    where: async current => {
      if (current.transport !== 'server') {
        return current.baseUrl ? null : { builtin: true };
      }
      const config = await fetchRelayConfig(serverSettings);
      if (!config) {
        return null;
      }
      if (isDemoConfig(config)) {
        return { builtin: true };
      }
      return {
        url: config.planner_url,
        source: config.source,
        ...(config.llm ? { llm: config.llm } : {})
      };
    }
  });
  // Saved or removed LLM settings change what the relay serves: the next request asks it again.
  const reconfigure = () => planner.reconfigure();
  serverPlannerChanged.connect(reconfigure);
  panel.disposed.connect(() => serverPlannerChanged.disconnect(reconfigure));
  const runner = new WorkflowRunner({
    driver,
    client: planner,
    settings,
    registry: options.registry,
    trace,
    hooks: options.hooks
  });
  return { runner, planner, driver };
}
