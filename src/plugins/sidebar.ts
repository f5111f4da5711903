import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { CommandIDs, PluginIDs, TRANSLATION_DOMAIN } from '../tokens';
import { bccIcon } from '../ui/icons';
import { WorkflowSidebar } from '../ui/sidebar';

/** Registers the workflow sidebar in the right area and the command that opens it. */
export const sidebarPlugin: JupyterFrontEndPlugin<void> = {
  id: PluginIDs.plugin,
  description: 'The Notebook-BCC workflow sidebar.',
  autoStart: true,
  requires: [ISettingRegistry],
  optional: [ICommandPalette, ILayoutRestorer, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    settingRegistry: ISettingRegistry,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null,
    translator: ITranslator | null
  ) => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const sidebar = new WorkflowSidebar(translator ?? undefined);
    app.shell.add(sidebar, 'right', { rank: 900 });
    restorer?.add(sidebar, sidebar.id);

    app.commands.addCommand(CommandIDs.open, {
      label: trans.__('Open Workflow Panel'),
      caption: trans.__('Show the Notebook-BCC workflow sidebar'),
      icon: bccIcon,
      execute: () => app.shell.activateById(sidebar.id)
    });
    palette?.addItem({
      command: CommandIDs.open,
      category: trans.__('Notebook-BCC')
    });

    void settingRegistry.load(PluginIDs.plugin).catch(reason => {
      console.error('Notebook-BCC: failed to load settings.', reason);
    });
  }
};
