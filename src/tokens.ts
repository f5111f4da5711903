/** Ids shared by the plugins, the schema and the tests. */

export const PLUGIN_PREFIX = 'jupyterlab-notebook-bcc';

export namespace PluginIDs {
  export const plugin = `${PLUGIN_PREFIX}:plugin`;
}

export namespace CommandIDs {
  export const open = 'notebook-bcc:open';
}

/** The translation domain of every user-visible string. */
export const TRANSLATION_DOMAIN = 'notebook_bcc';
