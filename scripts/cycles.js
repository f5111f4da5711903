#!/usr/bin/env node
/*
 * Import cycles in src/, type edges included (eslint's import/no-cycle skips `import type`).
 *
 * Every src/**\/*.ts(x) is parsed with the TypeScript compiler; its edges are the relative module
 * specifiers of `import` (value or `import type`, `import { type X }`), `export … from`,
 * `import x = require()`, `import('…')` calls and `typeof import('…')` types. A cycle is a strongly
 * connected component of more than one file (or a file that imports itself). Prints each component
 * with the edges inside it; exits 1 when there is any.
 *
 *   node scripts/cycles.js [--json] [--root DIR]
 */
'use strict';

const fs = require('fs');
const path = require('path');
const ts = require('typescript');

const args = process.argv.slice(2);
const asJson = args.includes('--json');
const rootArg = args.indexOf('--root');
const repo = path.resolve(__dirname, '..');
const root = path.resolve(repo, rootArg >= 0 ? args[rootArg + 1] : 'src');

function sourceFiles(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') {
        out.push(...sourceFiles(full));
      }
    } else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
      out.push(full);
    }
  }
  return out;
}

const EXTENSIONS = ['.ts', '.tsx', '/index.ts', '/index.tsx'];

function resolve(from, specifier) {
  if (!specifier.startsWith('.')) {
    return null;
  }
  const base = path.resolve(path.dirname(from), specifier);
  const stripped = base.replace(/\.js$/, '');
  for (const candidate of [base, stripped]) {
    if (/\.tsx?$/.test(candidate) && fs.existsSync(candidate)) {
      return candidate;
    }
    for (const ext of EXTENSIONS) {
      if (fs.existsSync(candidate + ext)) {
        return candidate + ext;
      }
    }
  }
  return null;
}

/** True when every name of an import/export clause is type-only. */
function typeOnlyClause(node) {
  if (ts.isImportDeclaration(node)) {
    const clause = node.importClause;
    if (!clause) {
      return false; // a side-effect import
    }
    if (clause.isTypeOnly) {
      return true;
    }
    if (clause.name) {
      return false;
    }
    const bindings = clause.namedBindings;
    return (
      !!bindings &&
      ts.isNamedImports(bindings) &&
      bindings.elements.length > 0 &&
      bindings.elements.every(element => element.isTypeOnly)
    );
  }
  if (node.isTypeOnly) {
    return true;
  }
  const clause = node.exportClause;
  return (
    !!clause &&
    ts.isNamedExports(clause) &&
    clause.elements.length > 0 &&
    clause.elements.every(element => element.isTypeOnly)
  );
}

/** [{specifier, kind: 'value'|'type'|'dynamic'}] of one file. */
function importsOf(file) {
  const text = fs.readFileSync(file, 'utf8');
  const source = ts.createSourceFile(
    file,
    text,
    ts.ScriptTarget.Latest,
    true,
    file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS
  );
  const found = [];
  const visit = node => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push({
        specifier: node.moduleSpecifier.text,
        kind: typeOnlyClause(node) ? 'type' : 'value'
      });
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      found.push({
        specifier: node.moduleReference.expression.text,
        kind: node.isTypeOnly ? 'type' : 'value'
      });
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments.length > 0 &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      found.push({ specifier: node.arguments[0].text, kind: 'dynamic' });
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      found.push({ specifier: node.argument.literal.text, kind: 'type' });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function buildGraph(files) {
  const graph = new Map();
  for (const file of files) {
    const edges = new Map();
    for (const { specifier, kind } of importsOf(file)) {
      const target = resolve(file, specifier);
      if (!target) {
        continue;
      }
      // A value edge outranks a type edge between the same two files.
      const known = edges.get(target);
      if (!known || known === 'type') {
        edges.set(target, kind);
      }
    }
    graph.set(file, edges);
  }
  return graph;
}

/** Tarjan's strongly connected components, iterative so deep graphs cannot overflow the stack. */
function components(graph) {
  let counter = 0;
  const index = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const result = [];
  for (const start of graph.keys()) {
    if (index.has(start)) {
      continue;
    }
    const work = [{ node: start, targets: null, next: 0 }];
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const node = frame.node;
      if (frame.targets === null) {
        index.set(node, counter);
        low.set(node, counter);
        counter += 1;
        stack.push(node);
        onStack.add(node);
        frame.targets = [...(graph.get(node) ?? new Map()).keys()].filter(t =>
          graph.has(t)
        );
      }
      if (frame.next < frame.targets.length) {
        const target = frame.targets[frame.next];
        frame.next += 1;
        if (!index.has(target)) {
          work.push({ node: target, targets: null, next: 0 });
        } else if (onStack.has(target)) {
          low.set(node, Math.min(low.get(node), index.get(target)));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent), low.get(node)));
      }
      if (low.get(node) === index.get(node)) {
        const members = [];
        let member;
        do {
          member = stack.pop();
          onStack.delete(member);
          members.push(member);
        } while (member !== node);
        const selfLoop = graph.get(node).has(node);
        if (members.length > 1 || selfLoop) {
          result.push(members.sort());
        }
      }
    }
  }
  return result;
}

function main() {
  const files = sourceFiles(root);
  const graph = buildGraph(files);
  const rel = file => path.relative(repo, file);
  const found = components(graph).map(members => {
    const inside = new Set(members);
    const edges = [];
    for (const from of members) {
      for (const [to, kind] of graph.get(from)) {
        if (inside.has(to)) {
          edges.push({ from: rel(from), to: rel(to), kind });
        }
      }
    }
    return { files: members.map(rel), edges };
  });
  if (asJson) {
    process.stdout.write(JSON.stringify(found, null, 2) + '\n');
  } else if (found.length === 0) {
    console.log(
      `No import cycles in ${rel(root)}/ (${files.length} files, type edges included).`
    );
  } else {
    found.forEach((cycle, i) => {
      console.log(`Cycle ${i + 1}: ${cycle.files.length} files`);
      for (const edge of cycle.edges) {
        console.log(`  ${edge.from} -> ${edge.to} (${edge.kind})`);
      }
    });
    console.log(
      `${found.length} import cycle(s) in ${rel(root)}/, type edges included.`
    );
  }
  process.exitCode = found.length > 0 ? 1 : 0;
}

main();
