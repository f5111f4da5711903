import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { CommandIDs, IRunModelRegistry, PluginIDs } from '../tokens';
import { TRANSLATION_DOMAIN } from '../translation';
import { bccIcon } from '../ui/icons';
import { WorkflowSidebar } from '../ui/sidebar';

/** The workflow sidebar in the right area, bound to the active notebook, and the command that opens it. */
export const sidebarPlugin: JupyterFrontEndPlugin<void> = {
  id: PluginIDs.sidebar,
  description: 'The Notebook-BCC workflow sidebar.',
  autoStart: true,
  requires: [IRunModelRegistry, IRenderMimeRegistry],
  optional: [ICommandPalette, ILayoutRestorer, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    models: IRunModelRegistry,
    rendermime: IRenderMimeRegistry,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null,
    translator: ITranslator | null
  ) => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const sidebar = new WorkflowSidebar({
      models,
      commands: app.commands,
      rendermime,
      translator: translator ?? undefined
    });
    app.shell.add(sidebar, 'right', { rank: 900 });
    restorer?.add(sidebar, sidebar.id);

    app.commands.addCommand(CommandIDs.open, {
      label: trans.__('Open Workflow Panel'),
      caption: trans.__('Show the Notebook-BCC workflow sidebar'),
      icon: bccIcon,
      // With a notebook (a run's notification), that notebook's run: its panel comes to the front first.
      execute: args => {
        const notebook = args.notebook;
        if (typeof notebook === 'string' && notebook) {
          app.shell.activateById(notebook);
        }
        app.shell.activateById(sidebar.id);
      }
    });
    palette?.addItem({
      command: CommandIDs.open,
      category: trans.__('Notebook-BCC')
    });
  }
};
