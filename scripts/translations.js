#!/usr/bin/env node
/**
 * The extension's translation catalogues, kept in step with the code.
 *
 *   node scripts/translations.js check     fails on a string missing from a catalogue (or untranslated),
 *                                          on a stale entry, and on a .json not compiled from its .po
 *   node scripts/translations.js update    adds new strings (untranslated) and drops stale ones in every .po
 *   node scripts/translations.js compile   writes each .po as the .json JupyterLab's server reads
 *   node scripts/translations.js init xx_YY   starts a catalogue for a new language
 *
 * Strings are every literal argument of `trans.__`, `trans._n`, `trans._p` (and `this._trans.…`) in src/,
 * every English template of the message catalogues (`TEMPLATES` below: the protocol's and the
 * engine's, which the UI translates by id), and the titles and descriptions of the settings schemas the
 * page translates (schema/*.json with `"jupyter.lab.transform": true`; `translateSchema` in
 * src/lab/settings.ts).
 * Catalogues live where jupyterlab_server looks for them (the `jupyterlab.locale` entry point):
 * jupyterlab_notebook_bcc/locale/<lang>/LC_MESSAGES/notebook_bcc.{po,json}.
 */
'use strict';
const fs = require('fs');
const path = require('path');
const ts = require('typescript');

const ROOT = path.resolve(__dirname, '..');
const DOMAIN = 'notebook_bcc';
const LOCALE_DIR = path.join(ROOT, 'jupyterlab_notebook_bcc', 'locale');
const CONTEXT_SEPARATOR = '\u0004';
/** The message catalogues: the file (by its end) and the constant holding its English templates. */
const TEMPLATES = {
  'protocol/messages.ts': 'PROTOCOL_MESSAGES',
  'engine/messages.ts': 'ENGINE_MESSAGES',
  'engine/ports/messages.ts': 'NOTEBOOK_MESSAGES'
};
/** Where `trans.__` translates a template of a catalogue or the settings schema, not a literal. */
const TRANSLATES_TEMPLATES = ['ui/present.ts', 'lab/settings.ts'];

function sourceFiles(dir) {
  const files = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== '__tests__' && entry.name !== 'testing') {
        files.push(...sourceFiles(full));
      }
    } else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
      files.push(full);
    }
  }
  return files.sort();
}

function literal(node) {
  return node &&
    (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node))
    ? node.text
    : null;
}

/** `trans`, `this._trans`, `props.trans`…: a translation bundle by this codebase's naming. */
function isBundle(node) {
  const name = ts.isIdentifier(node)
    ? node.text
    : ts.isPropertyAccessExpression(node)
      ? node.name.text
      : null;
  return name === 'trans' || name === '_trans';
}

/** The schema's own title and description, and each setting's: what `translateSchema` translates. */
function schemaStrings(schema) {
  const properties = Object.values(schema.properties ?? {});
  // An option's label (`oneOf: [{ const, title }]`) and an array item's title too.
  const nested = properties.flatMap(node => [
    ...(Array.isArray(node.oneOf) ? node.oneOf : []),
    ...(node.items && !Array.isArray(node.items) ? [node.items] : [])
  ]);
  const nodes = [schema, ...properties, ...nested];
  return nodes
    .flatMap(node => [node.title, node.description])
    .filter(text => typeof text === 'string' && text !== '');
}

/** Every translatable string of src/ and schema/: `{ key, msgid, plural?, context?, files }` by key. */
function extract(srcDir = path.join(ROOT, 'src')) {
  const found = new Map();
  const problems = [];
  const add = (entry, file) => {
    const key = entryKey(entry);
    const known = found.get(key);
    if (known) {
      known.files.add(file);
    } else {
      found.set(key, { ...entry, key, files: new Set([file]) });
    }
  };
  for (const file of sourceFiles(srcDir)) {
    const text = fs.readFileSync(file, 'utf8');
    const source = ts.createSourceFile(
      file,
      text,
      ts.ScriptTarget.Latest,
      true
    );
    const relative = path.relative(ROOT, file).split(path.sep).join('/');
    const visit = node => {
      if (
        ts.isCallExpression(node) &&
        ts.isPropertyAccessExpression(node.expression) &&
        isBundle(node.expression.expression)
      ) {
        const method = node.expression.name.text;
        const args = node.arguments.map(literal);
        const where = `${relative}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
        if (method === '__') {
          if (args[0] !== null) {
            add({ msgid: args[0] }, relative);
          } else if (!TRANSLATES_TEMPLATES.some(f => relative.endsWith(f))) {
            problems.push(`${where}: trans.__ needs a string literal`);
          }
        } else if (method === '_n') {
          if (args[0] === null || args[1] === null) {
            problems.push(`${where}: trans._n needs string literals`);
          } else {
            add({ msgid: args[0], plural: args[1] }, relative);
          }
        } else if (method === '_p') {
          if (args[0] === null || args[1] === null) {
            problems.push(`${where}: trans._p needs string literals`);
          } else {
            add({ context: args[0], msgid: args[1] }, relative);
          }
        }
      }
      const catalogue = Object.entries(TEMPLATES).find(([end]) =>
        relative.endsWith(end)
      )?.[1];
      if (
        catalogue &&
        ts.isVariableDeclaration(node) &&
        node.name.getText() === catalogue
      ) {
        let object = node.initializer;
        while (object && ts.isAsExpression(object)) {
          object = object.expression;
        }
        for (const property of object.properties) {
          const template = literal(property.initializer);
          if (template === null) {
            problems.push(
              `${relative}: ${catalogue}.${property.name.getText()} must be a string literal`
            );
          } else {
            add({ msgid: template }, relative);
          }
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  const schemaDir = path.join(path.dirname(srcDir), 'schema');
  const schemas = fs.existsSync(schemaDir)
    ? fs.readdirSync(schemaDir).filter(name => name.endsWith('.json'))
    : [];
  for (const name of schemas.sort()) {
    const file = path.join(schemaDir, name);
    const relative = path.relative(ROOT, file).split(path.sep).join('/');
    const schema = JSON.parse(fs.readFileSync(file, 'utf8'));
    // The page translates only the schemas it transforms; the others have no words to show.
    if (!schema['jupyter.lab.transform']) {
      continue;
    }
    for (const text of schemaStrings(schema)) {
      add({ msgid: text }, relative);
    }
  }
  return { entries: [...found.values()], problems };
}

/** `%1`, `%2`… as a sorted list: a translation must use each placeholder of its msgid. */
function placeholders(text) {
  return [...new Set(text.match(/%\d+/g) ?? [])].sort().join(' ');
}

function entryKey(entry) {
  return entry.context
    ? `${entry.context}${CONTEXT_SEPARATOR}${entry.msgid}`
    : entry.msgid;
}

// ---------------------------------------------------------------------------------------------
// .po files
// ---------------------------------------------------------------------------------------------

function unquote(line, where) {
  const match = /^"(.*)"\s*$/.exec(line);
  if (!match) {
    throw new Error(`${where}: expected a quoted string, got ${line}`);
  }
  return match[1].replace(/\\(.)/g, (_, c) =>
    c === 'n' ? '\n' : c === 't' ? '\t' : c
  );
}

function quote(text) {
  const escaped = text
    .replace(/\\/g, '\\\\')
    .replace(/"/g, '\\"')
    .replace(/\t/g, '\\t');
  const lines = escaped.split('\n');
  if (lines.length === 1) {
    return `"${escaped}"`;
  }
  const parts = lines.map(
    (l, i) => `"${l}${i < lines.length - 1 ? '\\n' : ''}"`
  );
  return ['""', ...parts.filter(p => p !== '""')].join('\n');
}

/** `{ header: {…}, entries: [{ key, msgid, plural?, context?, msgstr: string[] }] }` */
function parsePo(text, file) {
  const entries = [];
  let current = null;
  let field = null;
  const flush = () => {
    if (current && current.msgid !== undefined) {
      entries.push(current);
    }
    current = null;
    field = null;
  };
  text.split(/\r?\n/).forEach((raw, index) => {
    const where = `${file}:${index + 1}`;
    const line = raw.trim();
    if (line === '') {
      flush();
      return;
    }
    if (line.startsWith('#')) {
      if (current && current.msgid !== undefined) {
        flush();
      }
      return;
    }
    const match =
      /^(msgctxt|msgid_plural|msgid|msgstr(?:\[(\d+)\])?)\s+(".*")$/.exec(line);
    if (match) {
      const [, keyword, index_, value] = match;
      if (
        keyword === 'msgctxt' ||
        (keyword === 'msgid' && current && current.msgstr.length > 0)
      ) {
        flush();
      }
      current = current ?? { msgstr: [] };
      const text_ = unquote(value, where);
      if (keyword.startsWith('msgstr')) {
        const i = index_ === undefined ? 0 : Number(index_);
        current.msgstr[i] = text_;
        field = ['msgstr', i];
      } else {
        const name = {
          msgctxt: 'context',
          msgid: 'msgid',
          msgid_plural: 'plural'
        }[keyword];
        current[name] = text_;
        field = [name];
      }
      return;
    }
    if (line.startsWith('"') && current && field) {
      const more = unquote(line, where);
      if (field[0] === 'msgstr') {
        current.msgstr[field[1]] += more;
      } else {
        current[field[0]] += more;
      }
      return;
    }
    throw new Error(`${where}: cannot read ${raw}`);
  });
  flush();
  const headerEntry = entries.find(e => e.msgid === '' && !e.context);
  const header = {};
  for (const line of (headerEntry?.msgstr[0] ?? '').split('\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) {
      header[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
    }
  }
  return {
    header,
    entries: entries
      .filter(e => e !== headerEntry)
      .map(e => ({ ...e, key: entryKey(e) }))
  };
}

function formatPo(language, header, entries) {
  const headerText = [
    'Project-Id-Version: jupyterlab-notebook-bcc',
    `Language: ${language}`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=UTF-8',
    'Content-Transfer-Encoding: 8bit',
    `Plural-Forms: ${header['Plural-Forms'] ?? 'nplurals=2; plural=(n != 1);'}`,
    ''
  ].join('\n');
  const blocks = [
    `# The ${DOMAIN} catalogue (${language}). Edit msgstr only; \`jlpm translations:update\` adds and drops msgids.\nmsgid ""\nmsgstr ${quote(headerText)}`
  ];
  for (const entry of entries) {
    const lines = [];
    if (entry.files && entry.files.size > 0) {
      lines.push(`#: ${[...entry.files].join(' ')}`);
    }
    if (/%\d/.test(entry.msgid)) {
      lines.push('#, javascript-format');
    }
    if (entry.context) {
      lines.push(`msgctxt ${quote(entry.context)}`);
    }
    lines.push(`msgid ${quote(entry.msgid)}`);
    if (entry.plural !== undefined) {
      lines.push(`msgid_plural ${quote(entry.plural)}`);
      const nplurals = Number(
        /nplurals\s*=\s*(\d+)/.exec(header['Plural-Forms'] ?? '')?.[1] ?? 2
      );
      const count = Math.max(nplurals, entry.msgstr.length);
      for (let i = 0; i < count; i++) {
        lines.push(`msgstr[${i}] ${quote(entry.msgstr[i] ?? '')}`);
      }
    } else {
      lines.push(`msgstr ${quote(entry.msgstr[0] ?? '')}`);
    }
    blocks.push(lines.join('\n'));
  }
  return blocks.join('\n\n') + '\n';
}

/** The Jed-style JSON that jupyterlab_server sends to the page (the format of the language packs). */
function compilePo(po, language) {
  const pkg = JSON.parse(
    fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')
  );
  const data = {
    '': {
      domain: DOMAIN,
      language: language.replace('_', '-'),
      plural_forms: po.header['Plural-Forms'] ?? 'nplurals=2; plural=(n != 1);',
      version: pkg.version
    }
  };
  for (const entry of po.entries) {
    if (entry.msgstr.some(s => s)) {
      data[entry.key] = entry.msgstr;
    }
  }
  return JSON.stringify(data, null, 2) + '\n';
}

function catalogues() {
  if (!fs.existsSync(LOCALE_DIR)) {
    return [];
  }
  return fs
    .readdirSync(LOCALE_DIR, { withFileTypes: true })
    .filter(d => d.isDirectory())
    .map(d => {
      const dir = path.join(LOCALE_DIR, d.name, 'LC_MESSAGES');
      return {
        language: d.name,
        po: path.join(dir, `${DOMAIN}.po`),
        json: path.join(dir, `${DOMAIN}.json`)
      };
    })
    .filter(c => fs.existsSync(c.po));
}

function readPo(file) {
  return parsePo(fs.readFileSync(file, 'utf8'), path.relative(ROOT, file));
}

/** Problems that make `check` fail: one line each. */
function check({ srcDir, localeFiles } = {}) {
  const { entries, problems } = extract(srcDir);
  const errors = [...problems];
  for (const catalogue of localeFiles ?? catalogues()) {
    const name = path.relative(ROOT, catalogue.po);
    const po = readPo(catalogue.po);
    const byKey = new Map(po.entries.map(e => [e.key, e]));
    const wanted = new Set(entries.map(e => e.key));
    for (const entry of entries) {
      const translated = byKey.get(entry.key);
      if (!translated) {
        errors.push(
          `${name}: missing ${JSON.stringify(entry.key)} (from ${[...entry.files].join(', ')})`
        );
      } else if (!translated.msgstr.some(s => s)) {
        errors.push(`${name}: untranslated ${JSON.stringify(entry.key)}`);
      } else if (
        translated.msgstr.some(
          s => placeholders(s) !== placeholders(entry.msgid)
        )
      ) {
        errors.push(
          `${name}: the translation of ${JSON.stringify(entry.key)} does not use the placeholders ${placeholders(entry.msgid) || '(none)'}`
        );
      } else if ((entry.plural ?? null) !== (translated.plural ?? null)) {
        errors.push(
          `${name}: the plural of ${JSON.stringify(entry.key)} changed`
        );
      }
    }
    for (const entry of po.entries) {
      if (!wanted.has(entry.key)) {
        errors.push(
          `${name}: stale ${JSON.stringify(entry.key)} (no longer in src/)`
        );
      }
    }
    const compiled = compilePo(po, catalogue.language);
    const current = fs.existsSync(catalogue.json)
      ? fs.readFileSync(catalogue.json, 'utf8')
      : null;
    if (current !== compiled) {
      errors.push(
        `${path.relative(ROOT, catalogue.json)}: not compiled from its .po (run \`jlpm translations:compile\`)`
      );
    }
  }
  return errors;
}

function update(language) {
  const { entries } = extract();
  const targets = language
    ? [
        {
          language,
          po: path.join(LOCALE_DIR, language, 'LC_MESSAGES', `${DOMAIN}.po`)
        }
      ]
    : catalogues();
  for (const target of targets) {
    const po = fs.existsSync(target.po)
      ? readPo(target.po)
      : { header: {}, entries: [] };
    const byKey = new Map(po.entries.map(e => [e.key, e]));
    const merged = entries.map(entry => ({
      ...entry,
      msgstr: byKey.get(entry.key)?.msgstr ?? []
    }));
    fs.mkdirSync(path.dirname(target.po), { recursive: true });
    fs.writeFileSync(target.po, formatPo(target.language, po.header, merged));
    console.log(
      `${path.relative(ROOT, target.po)}: ${merged.length} strings, ${merged.filter(e => !e.msgstr.some(s => s)).length} to translate`
    );
  }
}

function compile() {
  for (const catalogue of catalogues()) {
    fs.writeFileSync(
      catalogue.json,
      compilePo(readPo(catalogue.po), catalogue.language)
    );
    console.log(path.relative(ROOT, catalogue.json));
  }
}

module.exports = { extract, parsePo, formatPo, compilePo, check, catalogues };

if (require.main === module) {
  const [command, language] = process.argv.slice(2);
  switch (command) {
    case 'check': {
      const errors = check();
      for (const error of errors) {
        console.error(error);
      }
      process.exit(errors.length > 0 ? 1 : 0);
      break;
    }
    case 'update':
      update();
      compile();
      break;
    case 'init':
      if (!language) {
        throw new Error('init needs a language, e.g. `init fr_FR`');
      }
      update(language);
      break;
    case 'compile':
      compile();
      break;
    default:
      console.error(
        'usage: node scripts/translations.js check|update|compile|init <lang>'
      );
      process.exit(2);
  }
}
