#!/usr/bin/env node
/*
 * The rooms of a folder and their floors, drawn from its imports (type-only ones included, as
 * scripts/cycles.js counts them). A room is each top-level entry of the folder (a subfolder or a
 * file), tests left out; an arrow is an import from one room into another. Arrows running back up:
 * the fewest arrows whose removal leaves the rooms without a circle (an exact search over the arrows
 * that lie on a circle). Floors: the longest chain of arrows down from a room, once those are removed.
 * Exits 1 when an arrow runs back up.
 *
 *   node scripts/floors.js [--root src/engine]
 */
'use strict';

const fs = require('fs');
const path = require('path');
const ts = require('typescript');

const args = process.argv.slice(2);
const rootArg = args.indexOf('--root');
const repo = path.resolve(__dirname, '..');
const root = path.resolve(repo, rootArg >= 0 ? args[rootArg + 1] : 'src');

function sourceFiles(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!['__tests__', 'node_modules'].includes(entry.name)) {
        out.push(...sourceFiles(full));
      }
    } else if (
      /\.tsx?$/.test(entry.name) &&
      !/\.(d|spec)\.tsx?$/.test(entry.name)
    ) {
      out.push(full);
    }
  }
  return out;
}

function resolve(from, specifier) {
  if (!specifier.startsWith('.')) {
    return null;
  }
  const base = path.resolve(path.dirname(from), specifier);
  for (const candidate of [
    base,
    `${base}.ts`,
    `${base}.tsx`,
    `${base}/index.ts`
  ]) {
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) {
      return candidate;
    }
  }
  return null;
}

function importsOf(file) {
  const source = ts.createSourceFile(
    file,
    fs.readFileSync(file, 'utf8'),
    ts.ScriptTarget.Latest,
    true
  );
  const found = [];
  const visit = node => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments.length > 0 &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      found.push(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const roomOf = file =>
  path
    .relative(root, file)
    .split(path.sep)[0]
    .replace(/\.tsx?$/, '');

function main() {
  const files = sourceFiles(root);
  const rooms = [...new Set(files.map(roomOf))].sort();
  // room -> room it imports -> the file-level imports that make the arrow
  const arrows = new Map(rooms.map(room => [room, new Map()]));
  for (const file of files) {
    for (const specifier of importsOf(file)) {
      const target = resolve(file, specifier);
      if (!target || !target.startsWith(root + path.sep)) {
        continue;
      }
      const [from, to] = [roomOf(file), roomOf(target)];
      if (from !== to) {
        const edges = arrows.get(from);
        const rel = f => path.relative(root, f);
        edges.set(to, [
          ...(edges.get(to) ?? []),
          `${rel(file)} -> ${rel(target)}`
        ]);
      }
    }
  }
  const all = [];
  for (const [from, edges] of arrows) {
    for (const to of edges.keys()) {
      all.push([from, to]);
    }
  }
  const reach = start => {
    const seen = new Set([start]);
    const queue = [start];
    while (queue.length > 0) {
      for (const next of arrows.get(queue.pop()).keys()) {
        if (!seen.has(next)) {
          seen.add(next);
          queue.push(next);
        }
      }
    }
    return seen;
  };
  const reaches = new Map(rooms.map(room => [room, reach(room)]));
  const onCircle = all.filter(([from, to]) => reaches.get(to).has(from));
  const acyclic = kept => {
    const out = new Map(rooms.map(room => [room, []]));
    kept.forEach(([from, to]) => out.get(from).push(to));
    const state = new Map();
    const visit = room => {
      state.set(room, 1);
      for (const next of out.get(room)) {
        if (state.get(next) === 1 || (!state.has(next) && !visit(next))) {
          return false;
        }
      }
      state.set(room, 2);
      return true;
    };
    return rooms.every(room => state.has(room) || visit(room));
  };
  let back = null;
  for (let size = 0; size <= onCircle.length && back === null; size++) {
    const pick = (start, chosen) => {
      if (chosen.length === size) {
        const removed = new Set(chosen);
        return acyclic(all.filter(arrow => !removed.has(arrow)))
          ? chosen
          : null;
      }
      for (let i = start; i < onCircle.length; i++) {
        const found = pick(i + 1, [...chosen, onCircle[i]]);
        if (found) {
          return found;
        }
      }
      return null;
    };
    back = pick(0, []);
  }
  const removed = new Set(back);
  const floor = new Map();
  const floorOf = room => {
    if (!floor.has(room)) {
      floor.set(room, 0);
      const below = [...arrows.get(room).keys()].filter(
        to => !removed.has(all.find(([f, t]) => f === room && t === to))
      );
      floor.set(room, 1 + Math.max(0, ...below.map(floorOf)));
    }
    return floor.get(room);
  };
  rooms.forEach(floorOf);
  const floors = Math.max(...floor.values());
  console.log(
    `${path.relative(repo, root)}/: ${rooms.length} rooms on ${floors} floors, ${back.length} arrow(s) running back up`
  );
  for (let n = floors; n >= 1; n--) {
    console.log(
      `  floor ${n}: ${rooms.filter(room => floor.get(room) === n).join(', ')}`
    );
  }
  for (const [from, to] of back) {
    console.log(`  back up: ${from} -> ${to}`);
    arrows
      .get(from)
      .get(to)
      .forEach(edge => console.log(`    ${edge}`));
  }
  process.exitCode = back.length > 0 ? 1 : 0;
}

main();
