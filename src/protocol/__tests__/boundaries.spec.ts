/**
 * protocol/ and engine/ must run in plain Node: no JupyterLab, and of Lumino only the DOM-free
 * signaling and coreutils packages.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'fs';
import { join, relative } from 'path';

const SRC = join(__dirname, '..', '..');
const ROOTS = ['protocol', 'engine'].map(name => join(SRC, name));
const ALLOWED_LUMINO = ['@lumino/signaling', '@lumino/coreutils'];

function typescriptFiles(dir: string): string[] {
  if (!existsSync(dir)) {
    return [];
  }
  return readdirSync(dir).flatMap(name => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      return name === 'node_modules' ? [] : typescriptFiles(path);
    }
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

/** Module names used by import/export-from statements, dynamic imports and require calls. */
export function importedModules(source: string): string[] {
  const patterns = [
    /\b(?:import|export)\s[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g,
    /\bimport\s*['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
    /\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/g
  ];
  return patterns.flatMap(pattern =>
    Array.from(source.matchAll(pattern), match => match[1])
  );
}

export function isForbidden(module: string): boolean {
  if (module.startsWith('@jupyterlab/')) {
    return true;
  }
  if (module.startsWith('@lumino/')) {
    return !ALLOWED_LUMINO.some(
      allowed => module === allowed || module.startsWith(`${allowed}/`)
    );
  }
  return false;
}

describe('module boundaries', () => {
  it('finds the files it checks', () => {
    expect(typescriptFiles(join(SRC, 'protocol')).length).toBeGreaterThan(4);
  });

  it('recognises forbidden imports in every form', () => {
    const source = [
      "import { Notebook } from '@jupyterlab/notebook';",
      "import type {\n  Widget\n} from '@lumino/widgets';",
      "export * from '@jupyterlab/services';",
      "import '@jupyterlab/application/style';",
      "const m = await import('@lumino/dragdrop');",
      "const r = require('@jupyterlab/coreutils');",
      "import { Signal } from '@lumino/signaling';",
      "import { PromiseDelegate } from '@lumino/coreutils';"
    ].join('\n');
    expect(importedModules(source).filter(isForbidden)).toEqual([
      '@jupyterlab/notebook',
      '@lumino/widgets',
      '@jupyterlab/services',
      '@jupyterlab/application/style',
      '@lumino/dragdrop',
      '@jupyterlab/coreutils'
    ]);
  });

  it('protocol/ and engine/ import neither JupyterLab nor DOM-bound Lumino packages', () => {
    // This file names forbidden modules on purpose, as test data.
    const files = ROOTS.flatMap(typescriptFiles).filter(
      file => file !== __filename
    );
    const offenders = files.flatMap(file =>
      importedModules(readFileSync(file, 'utf-8'))
        .filter(isForbidden)
        .map(module => `${relative(SRC, file)} imports ${module}`)
    );
    expect(offenders).toEqual([]);
  });
});
