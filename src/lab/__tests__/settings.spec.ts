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
      title: '⟦Wait for the planner to start answering (seconds)⟧',
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
      Notebook: [{ name: 'bcc-run-workflow', rank: 35 }]
    });
    expect(commands['jupyter.lab.shortcuts']).toContainEqual({
      command: 'notebook-bcc:run',
      keys: ['Ctrl Alt R'],
      selector: 'body'
    });
  });
});
