import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { IStatusBar } from '@jupyterlab/statusbar';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { CommandIDs, IRunModelRegistry, PluginIDs } from '../tokens';
import { TRANSLATION_DOMAIN } from '../translation';
import { RunStatusItem } from '../ui/statusbar';

/** The active notebook's run state in the status bar; a click opens the workflow panel. */
export const statusbarPlugin: JupyterFrontEndPlugin<void> = {
  id: PluginIDs.statusbar,
  description: 'The workflow run state in the status bar.',
  autoStart: true,
  requires: [IRunModelRegistry],
  // Optional: Jupyter Notebook 7 has no status bar.
  optional: [IStatusBar, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    models: IRunModelRegistry,
    statusBar: IStatusBar | null,
    translator: ITranslator | null
  ) => {
    if (!statusBar) {
      return;
    }
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const item = new RunStatusItem(models, trans, () => {
      void app.commands.execute(CommandIDs.open);
    });
    statusBar.registerStatusItem(PluginIDs.statusbar, {
      item,
      align: 'left',
      rank: 5,
      isActive: () => item.isActive,
      activeStateChanged: item.activeChanged
    });
  }
};
