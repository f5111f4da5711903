/**
 * The settings' schema where an administrator requires approval (`c.NotebookBCC.require_approval`,
 * docs/using.md#approval): interactive mode shown on and read-only in the Settings Editor. Loaded only
 * where the server requires it (`plugins/runners.ts`), not at startup.
 */
import type { ISettingRegistry } from '@jupyterlab/settingregistry';
import type { TranslationBundle } from '@jupyterlab/translation';

/** The settings' schema when the administrator requires approval: interactive mode shown on and fixed. */
export function requiredApprovalSchema(
  plugin: ISettingRegistry.IPlugin,
  trans: TranslationBundle
): ISettingRegistry.IPlugin {
  const properties = { ...plugin.schema.properties };
  const required = trans.__(
    "Your administrator requires approval of every behavior's code (c.NotebookBCC.require_approval): it is on for every run, whatever is set here."
  );
  for (const key of ['interactive', 'llmCodeApproval']) {
    const property = properties[key];
    if (property) {
      properties[key] = {
        ...property,
        readOnly: true,
        description: `${required} ${property.description ?? ''}`.trim()
      };
    }
  }
  if (properties.interactive) {
    properties.interactive = {
      ...properties.interactive,
      default: true,
      title: trans.__('Interactive mode (required by your administrator)')
    };
  }
  return { ...plugin, schema: { ...plugin.schema, properties } };
}
