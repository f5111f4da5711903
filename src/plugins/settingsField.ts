import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { IFormRendererRegistry } from '@jupyterlab/ui-components';
import { PLUGIN_PREFIX, PluginIDs } from '../tokens';
import { TRANSLATION_DOMAIN } from '../translation';
import { plannerUrlField } from '../ui/settingsTestField';

/** The planner URL in the Settings Editor, with a Test connection button under it. */
export const settingsFieldPlugin: JupyterFrontEndPlugin<void> = {
  id: `${PLUGIN_PREFIX}:settings-field`,
  description:
    'The Test connection button under the planner URL in the Settings Editor.',
  autoStart: true,
  // Optional: without the form registry the Settings Editor shows the plain field.
  optional: [IFormRendererRegistry, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    forms: IFormRendererRegistry | null,
    translator: ITranslator | null
  ) => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    forms?.addRenderer(`${PluginIDs.plugin}.baseUrl`, {
      fieldRenderer: plannerUrlField(app.commands, trans)
    });
  }
};
