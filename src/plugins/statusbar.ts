import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IStatusBar } from '@jupyterlab/statusbar';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import {
  CommandIDs,
  IRunModelRegistry,
  PluginIDs,
  TRANSLATION_DOMAIN
} from '../tokens';
import { CurrentRun } from '../ui/model';
import { RunStatusItem } from '../ui/statusbar';

/** The active notebook's run state in the status bar; a click opens the workflow panel. */
export const statusbarPlugin: JupyterFrontEndPlugin<void> = {
  id: PluginIDs.statusbar,
  description: 'The workflow run state in the status bar.',
  autoStart: true,
  requires: [INotebookTracker, IRunModelRegistry],
  // Optional: Jupyter Notebook 7 has no status bar.
  optional: [IStatusBar, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    models: IRunModelRegistry,
    statusBar: IStatusBar | null,
    translator: ITranslator | null
  ) => {
    if (!statusBar) {
      return;
    }
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const item = new RunStatusItem(
      new CurrentRun(tracker, models),
      trans,
      () => {
        void app.commands.execute(CommandIDs.open);
      }
    );
    statusBar.registerStatusItem(PluginIDs.statusbar, {
      item,
      align: 'left',
      rank: 5,
      isActive: () => item.isActive,
      activeStateChanged: item.activeChanged
    });
  }
};
