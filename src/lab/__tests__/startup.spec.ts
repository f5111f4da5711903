/**
 * What JupyterLab loads at startup: the modules `src/index.ts` reaches through static imports, as the
 * compiler emits them (an import used only as a type is gone), the `import()` calls left out. What is not
 * needed to show the toolbar button and the panel's shell stays out of it (docs/architecture.md#lazy-loading);
 * `make bench` measures the same in bytes (figure 6 of docs/performance.md).
 */
import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';

const SRC = path.resolve(__dirname, '../..');

function resolve(from: string, specifier: string): string | null {
  const base = path.resolve(path.dirname(from), specifier);
  for (const candidate of [
    base,
    `${base}.ts`,
    `${base}.tsx`,
    path.join(base, 'index.ts'),
    path.join(base, 'index.tsx')
  ]) {
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) {
      return candidate;
    }
  }
  return null;
}

/** The static imports and re-exports of a module as emitted (`import()` calls are not among them). */
function emittedImports(file: string): string[] {
  const output = ts.transpileModule(fs.readFileSync(file, 'utf8'), {
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      jsx: ts.JsxEmit.React
    },
    fileName: file
  }).outputText;
  const emitted = ts.createSourceFile(
    'emitted.js',
    output,
    ts.ScriptTarget.ES2022
  );
  const specifiers: string[] = [];
  for (const statement of emitted.statements) {
    if (
      (ts.isImportDeclaration(statement) ||
        ts.isExportDeclaration(statement)) &&
      statement.moduleSpecifier &&
      ts.isStringLiteral(statement.moduleSpecifier)
    ) {
      specifiers.push(statement.moduleSpecifier.text);
    }
  }
  return specifiers;
}

interface IStartup {
  /** The package's own modules, relative to `src/`. */
  modules: Set<string>;
  /** The packages they import. */
  packages: Set<string>;
}

function startup(): IStartup {
  const modules = new Set<string>();
  const packages = new Set<string>();
  const queue = [path.join(SRC, 'index.ts')];
  while (queue.length) {
    const file = queue.pop()!;
    const name = path.relative(SRC, file);
    if (modules.has(name)) {
      continue;
    }
    modules.add(name);
    for (const specifier of emittedImports(file)) {
      if (!specifier.startsWith('.')) {
        packages.add(specifier);
        continue;
      }
      const target = resolve(file, specifier);
      if (target && /\.tsx?$/.test(target)) {
        queue.push(target);
      }
    }
  }
  return { modules, packages };
}

/** The functions and classes the modules declare at their top level. */
function declared(modules: Set<string>): Set<string> {
  const names = new Set<string>();
  for (const name of modules) {
    const source = ts.createSourceFile(
      name,
      fs.readFileSync(path.join(SRC, name), 'utf8'),
      ts.ScriptTarget.ES2022
    );
    for (const statement of source.statements) {
      if (
        (ts.isFunctionDeclaration(statement) ||
          ts.isClassDeclaration(statement)) &&
        statement.name
      ) {
        names.add(statement.name.text);
      }
    }
  }
  return names;
}

describe('the startup code', () => {
  const { modules, packages } = startup();

  it('is the plugins and what they need at once', () => {
    expect(modules).toContain('index.ts');
    expect(modules).toContain('plugins/sidebar.ts');
    expect(modules).toContain('lab/lazy.ts');
    expect(modules).toContain('ui/components/SidebarView.tsx');
  });

  it("leaves the runtime, the trace store, the run view, the Test connection button, the LLM planner's first-run question, the schema an administrator's requirement shows, and the notes' and reproducibility check's chunk to chunks loaded on first use", () => {
    for (const lazy of [
      'lab/runtime.ts',
      'lab/traceStore.ts',
      'ui/components/RunView.tsx',
      'ui/settingsTestButton.tsx',
      'ui/llmApprovalQuestion.ts',
      'lab/requiredApproval.ts',
      'protocol/exchange.ts',
      'lab/keep.ts',
      'lab/reproducibility.ts',
      'notebook/noteEdits.ts',
      'ui/cellNotes.ts',
      'ui/noteDialog.ts'
    ]) {
      expect(modules).not.toContain(lazy);
    }
    const names = declared(modules);
    for (const name of [
      'WorkflowRunner',
      'NotebookDriver',
      'TraceStore',
      'TraceKeeper',
      'RunView',
      'ProgressTree',
      'TestConnectionButton'
    ]) {
      expect(names).not.toContain(name);
    }
  });

  it('imports neither zod nor the protocol index', () => {
    expect(
      [...packages].filter(p => p === 'zod' || p.startsWith('zod/'))
    ).toEqual([]);
    expect(modules).not.toContain('protocol/index.ts');
  });
});
