import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import {
  catalogues,
  check,
  compilePo,
  extract,
  parsePo
} from '../../../scripts/translations';
import { PROTOCOL_MESSAGES } from '../../protocol/messages';
import { MESSAGES } from '../messages';

describe('the translation catalogues', () => {
  it('translate every string of the code and nothing else (jlpm translations:check)', () => {
    expect(catalogues().map(c => c.language)).toContain('zh_CN');
    expect(check()).toEqual([]);
  });

  it("take the protocol's and the engine's message templates and the trans calls of every room", () => {
    const keys = extract().entries.map(e => e.key);
    expect(keys).toEqual(expect.arrayContaining(Object.values(MESSAGES)));
    expect(keys).toEqual(
      expect.arrayContaining(Object.values(PROTOCOL_MESSAGES))
    );
    expect(keys).toEqual(
      expect.arrayContaining([
        'Run Workflow', // lab/commands.ts
        'The notebook was closed.', // notebook/
        'Paused: %1', // ui/present.ts
        'Planner URL', // schema/plugin.json
        '%1 cell from the planner waits until you resume' // a plural
      ])
    );
  });

  describe('on a catalogue out of step', () => {
    let dir: string;
    const fixture = (po: string) => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bcc-i18n-'));
      const src = path.join(dir, 'src');
      fs.mkdirSync(path.join(src, 'engine'), { recursive: true });
      fs.mkdirSync(path.join(src, 'protocol'), { recursive: true });
      fs.writeFileSync(
        path.join(src, 'view.ts'),
        [
          "trans.__('Hello %1', name);",
          "this._trans._n('%1 file', '%1 files', n);",
          "props.trans._p('menu', 'Open');"
        ].join('\n')
      );
      fs.writeFileSync(
        path.join(src, 'engine', 'messages.ts'),
        [
          "export const ENGINE_MESSAGES = { gone: 'The cell is gone' } as const;",
          'export const MESSAGES = { ...PROTOCOL_MESSAGES, ...ENGINE_MESSAGES };'
        ].join('\n')
      );
      fs.writeFileSync(
        path.join(src, 'protocol', 'messages.ts'),
        "export const PROTOCOL_MESSAGES = { refused: 'The planner refused: %1' } as const;"
      );
      const poFile = path.join(dir, 'fr.po');
      fs.writeFileSync(poFile, po);
      const json = path.join(dir, 'fr.json');
      return {
        srcDir: src,
        localeFiles: [{ language: 'fr', po: poFile, json }]
      };
    };
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    const complete = [
      'msgid ""',
      'msgstr "Plural-Forms: nplurals=2; plural=(n > 1);\\n"',
      '',
      'msgid "Hello %1"',
      'msgstr "Bonjour %1"',
      '',
      'msgid "%1 file"',
      'msgid_plural "%1 files"',
      'msgstr[0] "%1 fichier"',
      'msgstr[1] "%1 fichiers"',
      '',
      'msgctxt "menu"',
      'msgid "Open"',
      'msgstr "Ouvrir"',
      '',
      'msgid "The cell is gone"',
      'msgstr "La cellule a disparu"',
      '',
      'msgid "The planner refused: %1"',
      'msgstr "Le planificateur a refusé : %1"',
      ''
    ].join('\n');

    it('passes once every string is translated and the .json compiled', () => {
      const options = fixture(complete);
      const po = parsePo(complete, 'fr.po');
      fs.writeFileSync(options.localeFiles[0].json, compilePo(po, 'fr'));
      expect(check(options)).toEqual([]);
      expect(JSON.parse(compilePo(po, 'fr'))).toMatchObject({
        '': { domain: 'notebook_bcc', language: 'fr' },
        'Hello %1': ['Bonjour %1'],
        '%1 file': ['%1 fichier', '%1 fichiers'],
        'menu\u0004Open': ['Ouvrir']
      });
    });

    it('fails on a missing, an untranslated, a stale entry and a stale .json', () => {
      const po = complete
        .replace(
          'msgid "Hello %1"\nmsgstr "Bonjour %1"',
          'msgid "Bye"\nmsgstr "Au revoir"'
        )
        .replace('msgstr "La cellule a disparu"', 'msgstr ""');
      const errors = check(fixture(po));
      expect(errors).toEqual([
        expect.stringMatching(/untranslated "The cell is gone"/),
        expect.stringMatching(/missing "Hello %1" \(from .*view\.ts\)/),
        expect.stringMatching(/stale "Bye"/),
        expect.stringMatching(/fr\.json: not compiled from its \.po/)
      ]);
    });

    it('take the titles and descriptions of the schemas the page translates, and only those', () => {
      const options = fixture(complete);
      const schemas = path.join(dir, 'schema');
      fs.mkdirSync(schemas);
      fs.writeFileSync(
        path.join(schemas, 'plugin.json'),
        JSON.stringify({
          'jupyter.lab.transform': true,
          title: 'Runner',
          description: 'How runs behave.',
          properties: {
            retries: { title: 'Retries', description: 'How often.' },
            quiet: { type: 'boolean' }
          }
        })
      );
      fs.writeFileSync(
        path.join(schemas, 'commands.json'),
        JSON.stringify({ title: 'Commands', properties: {} })
      );
      const keys = extract(options.srcDir).entries.map(e => e.key);
      expect(keys).toEqual(
        expect.arrayContaining([
          'Runner',
          'How runs behave.',
          'Retries',
          'How often.'
        ])
      );
      expect(keys).not.toContain('Commands');
      expect(check(options)).toContainEqual(
        expect.stringMatching(
          /missing "How often\." \(from .*schema\/plugin\.json\)/
        )
      );
    });

    it("fails on a protocol message's template missing from the catalogue", () => {
      const errors = check(
        fixture(
          complete.replace(
            'msgid "The planner refused: %1"\nmsgstr "Le planificateur a refusé : %1"\n',
            ''
          )
        )
      );
      expect(errors).toContainEqual(
        expect.stringMatching(
          /missing "The planner refused: %1" \(from .*protocol\/messages\.ts\)/
        )
      );
    });

    it('fails on a translation that drops a placeholder', () => {
      const errors = check(
        fixture(complete.replace('msgstr "Bonjour %1"', 'msgstr "Bonjour"'))
      );
      expect(errors).toContainEqual(
        expect.stringMatching(/"Hello %1" does not use the placeholders %1/)
      );
    });
  });
});
