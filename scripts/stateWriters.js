#!/usr/bin/env node
/*
 * Which files of src/engine change the run state (docs/architecture.md#the-transaction): they assign a
 * field of `RunState` (directly or by `Object.assign`), or call a writing method or setter of one of
 * its five models (`WorkflowStateMachine`, `WorkflowProgress`, `EffectsStore`, `CellMap`, `RewindLog`).
 * A model's own class (its methods, its static constructors) is not counted. The files that call
 * `RunState.apply` (hand it a transaction) are listed apart. Type-aware: the receiver's type decides,
 * whatever the variable is called. Tests and `testing/` are left out.
 *
 *   node scripts/stateWriters.js
 */
'use strict';

const path = require('path');
const ts = require('typescript');

const repo = path.resolve(__dirname, '..');
const WRITES = new Map(
  Object.entries({
    RunState: ['reset', 'restore', 'begin'],
    WorkflowStateMachine: ['dispatch', 'restore'],
    WorkflowProgress: [
      'setTemplate',
      'replaceStageSteps',
      'setFocus',
      'setAssessment',
      'setExpected',
      'replaceOutputs',
      'planBehaviorOutputs',
      'addPlannedBehaviorOutputs',
      'planBehaviorId',
      'setBehaviorGoal',
      'recordAction',
      'startStage',
      'startStep',
      'adoptLocation',
      'startBehavior',
      'observeVariables',
      'completeBehavior',
      'skipCurrentStep',
      'completeStep',
      'completeStage',
      'restore',
      'reset'
    ],
    EffectsStore: [
      'add',
      'rotate',
      'replace',
      'restore',
      'rollback',
      'setPosition',
      'position'
    ],
    CellMap: [
      'cellAdded',
      'openThinking',
      'titleCellId',
      'setOpenThinking',
      'setTitleCell',
      'restore',
      'rollback',
      'clear'
    ],
    RewindLog: [
      'add',
      'rewriting',
      'retitling',
      'truncate',
      'record',
      'amend',
      'restore',
      'clear'
    ]
  })
);

function main() {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    path.join(repo, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined }
  );
  const program = ts.createProgram(parsed.fileNames, parsed.options);
  const checker = program.getTypeChecker();
  const typeName = node => {
    const type = checker.getTypeAtLocation(node);
    return (type.getSymbol() ?? type.aliasSymbol)?.getName();
  };
  const writes = new Map();
  const appliers = new Set();
  for (const source of program.getSourceFiles()) {
    const file = path.relative(repo, source.fileName);
    if (!file.startsWith('src/engine/') || /__tests__|\/testing\//.test(file)) {
      continue;
    }
    const note = (node, what) => {
      const line =
        source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      writes.set(file, [...(writes.get(file) ?? []), `${line}: ${what}`]);
    };
    const visit = node => {
      let access = null;
      let assigns = false;
      if (
        ts.isCallExpression(node) &&
        ts.isPropertyAccessExpression(node.expression)
      ) {
        access = node.expression;
      } else if (
        ts.isBinaryExpression(node) &&
        node.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
        ts.isPropertyAccessExpression(node.left)
      ) {
        access = node.left;
        assigns = true;
      }
      if (access) {
        const owner = typeName(access.expression);
        const name = access.name.text;
        if (owner === 'RunState' && name === 'apply' && !assigns) {
          appliers.add(file);
        }
        const own =
          ts.findAncestor(node, ts.isClassDeclaration)?.name?.text === owner;
        const written =
          WRITES.has(owner) &&
          (WRITES.get(owner).includes(name) ||
            (assigns && owner === 'RunState'));
        if (written && !own) {
          note(node, `${owner}.${name}${assigns ? ' =' : '()'}`);
        }
      }
      if (
        ts.isCallExpression(node) &&
        node.expression.getText(source) === 'Object.assign' &&
        node.arguments.length > 0 &&
        typeName(node.arguments[0]) === 'RunState' &&
        ts.findAncestor(node, ts.isClassDeclaration)?.name?.text !== 'RunState'
      ) {
        note(node, 'Object.assign(RunState)');
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  for (const [file, found] of [...writes].sort()) {
    const kinds = [...new Set(found.map(f => f.slice(f.indexOf(': ') + 2)))];
    console.log(`${file}: ${found.length} (${kinds.join(', ')})`);
  }
  console.log(`${writes.size} file(s) change the run state`);
  console.log(
    `RunState.apply called from: ${[...appliers].sort().join(', ') || 'nowhere'}`
  );
}

main();
