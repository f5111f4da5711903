import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, IToolbarWidgetRegistry } from '@jupyterlab/apputils';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStateDB } from '@jupyterlab/statedb';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { CommandToolbarButton } from '@jupyterlab/ui-components';
import {
  addCommands,
  KEEP_RUN_COMMANDS,
  RUN_COMMANDS
} from '../lab/commands/addCommands';
import { loadRuntime } from '../lab/lazy';
import { stateDbMemory } from '../lab/runDialogMemory';
import { confirmLlmRun } from '../lab/approvalPolicy';
import { LlmSettingsService } from '../lab/llmSettings';
import { toRunSettings } from '../lab/settings';
import {
  CommandIDs,
  IRunModelRegistry,
  IWorkflowRunnerRegistry,
  PluginIDs
} from '../tokens';
import { TRANSLATION_DOMAIN } from '../translation';

/** The toolbar item name, also used in `schema/commands.json` (with the keyboard shortcuts). */
const TOOLBAR_ITEM = 'bcc-run-workflow';

/** The run commands, in the palette and the notebook toolbar. */
export const commandsPlugin: JupyterFrontEndPlugin<void> = {
  id: PluginIDs.commands,
  description:
    'The Notebook-BCC run commands, toolbar button and palette items.',
  autoStart: true,
  requires: [INotebookTracker, IWorkflowRunnerRegistry, IRunModelRegistry],
  optional: [
    ICommandPalette,
    IDocumentManager,
    IToolbarWidgetRegistry,
    ITranslator,
    ISettingRegistry,
    IStateDB
  ],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    runners: IWorkflowRunnerRegistry,
    models: IRunModelRegistry,
    palette: ICommandPalette | null,
    docManager: IDocumentManager | null,
    toolbarRegistry: IToolbarWidgetRegistry | null,
    translator: ITranslator | null,
    settings: ISettingRegistry | null,
    state: IStateDB | null
  ) => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const { commands } = app;
    const context = addCommands(commands, {
      tracker,
      runners,
      models,
      contents: app.serviceManager.contents,
      trans,
      docManager,
      translator: translator ?? undefined,
      llm: new LlmSettingsService(app.serviceManager.serverSettings),
      // The runners plugin owns the settings: an empty URL is the built-in demo planner.
      useBuiltinPlanner: settings
        ? () => settings.set(PluginIDs.plugin, 'baseUrl', '')
        : undefined,
      usesBuiltinPlanner: async () =>
        (await loadRuntime()).usesBuiltinPlanner(
          runners.settings,
          app.serviceManager.serverSettings
        ),
      runDialogMemory: state ? stateDbMemory(state) : null,
      contextMenuCell: () =>
        app.contextMenuHitTest(node => node.classList.contains('jp-Cell')) ??
        null,
      activate: id => app.shell.activateById(id),
      confirmLlmRun: settings
        ? () =>
            confirmLlmRun({
              serverSettings: app.serviceManager.serverSettings,
              settings: async () =>
                toRunSettings(
                  (await settings.load(PluginIDs.plugin)).composite
                ),
              remember: answer =>
                settings.set(PluginIDs.plugin, 'llmCodeApproval', answer),
              trans
            })
        : undefined
    });

    const category = trans.__('Notebook-BCC');
    for (const command of [
      ...RUN_COMMANDS,
      ...KEEP_RUN_COMMANDS,
      CommandIDs.llmSettings,
      CommandIDs.noteCell,
      CommandIDs.removeCellNote
    ]) {
      palette?.addItem({ command, category });
    }

    // A rewritten cell's attempts, from the cell right-clicked (its toolbar item is in
    // `schema/commands.json`).
    app.contextMenu.addItem({
      command: CommandIDs.showAttempts,
      selector: '.jp-Notebook .jp-Cell',
      args: { contextMenu: true },
      rank: 12
    });
    // The notes for the planner and the reproducibility check: a chunk loaded with the first notebook.
    let keeping = false;
    const keep = () => {
      if (keeping) {
        return;
      }
      keeping = true;
      // A chunk of its own (docs/architecture.md#lazy-loading).
      import('../lab/keep').then(
        module =>
          module.startKeep({
            context,
            tracker,
            runners,
            models,
            sessions: app.serviceManager.sessions,
            kernelspecs: app.serviceManager.kernelspecs,
            settings: () => runners.settings
          }),
        reason => {
          keeping = false;
          console.error(
            'Notebook-BCC: the notes and checks did not load.',
            reason
          );
        }
      );
    };
    tracker.widgetAdded.connect(keep);
    if (tracker.size) {
      keep();
    }

    toolbarRegistry?.addFactory<NotebookPanel>(
      'Notebook',
      TOOLBAR_ITEM,
      panel =>
        new CommandToolbarButton({
          commands,
          id: CommandIDs.run,
          args: { notebook: panel.id, toolbar: true },
          label: trans.__('Run Workflow')
        })
    );
  }
};
