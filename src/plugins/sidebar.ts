import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import {
  CommandIDs,
  IRunModelRegistry,
  PluginIDs,
  TRANSLATION_DOMAIN
} from '../tokens';
import { bccIcon } from '../ui/icons';
import { CurrentRun } from '../ui/model';
import { WorkflowSidebar } from '../ui/sidebar';

/** The workflow sidebar in the right area, bound to the active notebook, and the command that opens it. */
export const sidebarPlugin: JupyterFrontEndPlugin<void> = {
  id: PluginIDs.sidebar,
  description: 'The Notebook-BCC workflow sidebar.',
  autoStart: true,
  requires: [INotebookTracker, IRunModelRegistry, IRenderMimeRegistry],
  optional: [ICommandPalette, ILayoutRestorer, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    models: IRunModelRegistry,
    rendermime: IRenderMimeRegistry,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null,
    translator: ITranslator | null
  ) => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const sidebar = new WorkflowSidebar({
      current: new CurrentRun(tracker, models),
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
      execute: () => app.shell.activateById(sidebar.id)
    });
    palette?.addItem({
      command: CommandIDs.open,
      category: trans.__('Notebook-BCC')
    });
  }
};
