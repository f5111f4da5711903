import type { ISettingRegistry } from '@jupyterlab/settingregistry';
import * as fs from 'fs';
import * as path from 'path';
import { PluginIDs } from '../../tokens';
import { markingTrans } from '../../ui/__tests__/markingTranslator';
import { translateSchema } from '../settings';

function schema(name: string): ISettingRegistry.ISchema {
  return JSON.parse(
    fs.readFileSync(
      path.resolve(__dirname, `../../../schema/${name}.json`),
      'utf8'
    )
  );
}

describe('translateSchema: the settings in the user language', () => {
  const plugin: ISettingRegistry.IPlugin = {
    id: PluginIDs.plugin,
    schema: schema('plugin'),
    raw: '{}',
    data: { composite: {}, user: {} },
    version: '0.1.0'
  };

  it("translates the schema's title and description and each setting's, and nothing else", () => {
    const before = JSON.stringify(plugin);
    const translated = translateSchema(plugin, markingTrans);
    expect(JSON.stringify(plugin)).toBe(before);
    expect(translated.id).toBe(PluginIDs.plugin);
    expect(translated.schema.title).toBe('⟦Notebook-BCC⟧');
    expect(translated.schema.properties!.firstByteTimeout).toEqual({
      ...plugin.schema.properties!.firstByteTimeout,
      title: '⟦Advanced: Wait for the planner to start answering (seconds)⟧',
      description: `⟦${plugin.schema.properties!.firstByteTimeout.description}⟧`
    });
    // Without the marks, the very same plugin: types, defaults and bounds untouched.
    expect(JSON.parse(JSON.stringify(translated).replace(/[⟦⟧]/g, ''))).toEqual(
      plugin
    );
  });

  it('leaves the toolbar button and the keyboard shortcuts to a schema that loads without a transform', () => {
    const settings = schema('plugin');
    expect(settings['jupyter.lab.transform']).toBe(true);
    expect(settings['jupyter.lab.toolbars']).toBeUndefined();
    expect(settings['jupyter.lab.shortcuts']).toBeUndefined();
    const commands = schema('commands');
    expect(commands['jupyter.lab.transform']).toBeUndefined();
    expect(commands['jupyter.lab.toolbars']).toEqual({
      Notebook: [{ name: 'bcc-run-workflow', rank: 35 }],
      // A rewritten cell's attempts and the note for the planner, in the active cell's toolbar.
      Cell: [
        {
          name: 'bcc-show-attempts',
          command: 'notebook-bcc:show-attempts',
          rank: 5
        },
        {
          name: 'bcc-cell-note',
          command: 'notebook-bcc:note-cell',
          icon: 'ui-components:edit',
          rank: 5
        }
      ]
    });
    expect(commands['jupyter.lab.shortcuts']).toContainEqual({
      command: 'notebook-bcc:run',
      keys: ['Ctrl Alt R'],
      selector: '.jp-Notebook.jp-mod-commandMode'
    });
  });

  it('binds its shortcuts where no one types: Ctrl Alt is AltGr on Windows, which types { # ś in many layouts', () => {
    const shortcuts = schema('commands')['jupyter.lab.shortcuts'] as Array<{
      command: string;
      selector: string;
    }>;
    document.body.innerHTML = `
      <div class="jp-NotebookPanel">
        <div class="jp-NotebookPanel-toolbar"><button id="toolbar"></button></div>
        <div class="jp-Notebook jp-mod-editMode"><div class="jp-Cell"><div class="cm-content" id="typing"></div></div></div>
      </div>
      <div class="jp-NotebookPanel">
        <div class="jp-Notebook jp-mod-commandMode"><div class="jp-Cell" id="command"></div></div>
      </div>
      <div class="jp-CodeConsole"><div class="cm-content" id="console"></div></div>
      <div class="jp-bcc-sidebar"><button id="sidebar"></button></div>`;
    const at = (id: string) =>
      new Set(
        shortcuts
          .filter(s => document.getElementById(id)!.closest(s.selector))
          .map(s => s.command)
      );
    // A note is on the active cell: its key works in the notebook's command mode only.
    const cellOnly = 'notebook-bcc:note-cell';
    const all = new Set(
      shortcuts.map(s => s.command).filter(command => command !== cellOnly)
    );
    expect(all.size).toBe(5);
    for (const typing of ['typing', 'console']) {
      expect(at(typing)).toEqual(new Set());
    }
    expect(at('command')).toEqual(new Set([...all, cellOnly]));
    for (const quiet of ['toolbar', 'sidebar']) {
      expect(at(quiet)).toEqual(all);
    }
    document.body.innerHTML = '';
  });
});
