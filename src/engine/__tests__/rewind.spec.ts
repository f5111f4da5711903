import type { WorkflowTemplate } from '../../protocol';
import { CellMap } from '../state/cells';
import { EffectsStore } from '../state/effects';
import { WorkflowProgress } from '../state/progress';
import {
  editedByUser,
  IRunCheckpoint,
  MAX_CHECKPOINTS,
  readRewindState,
  RewindLog
} from '../state/rewind';
import { sourceHash } from '../ports/driver';

const TEMPLATE: WorkflowTemplate = {
  name: 'T',
  stages: [{ id: 's1', name: 'S', steps: [{ id: 'p1', name: 'P' }] }]
};

function checkpoint(
  kind: IRunCheckpoint['kind'],
  stepId: string | null,
  extra: Partial<IRunCheckpoint> = {}
): Omit<IRunCheckpoint, 'seq' | 'template'> {
  return {
    kind,
    stageId: 's1',
    stepId,
    behaviorId: null,
    at: '2026-01-01T00:00:00.000Z',
    progress: WorkflowProgress.emptyState(),
    effects: { epoch: 0, historyEnd: 0, end: 0 },
    cells: {
      storeIds: {},
      lastAddedCellId: null,
      lastTextCellId: null,
      titleCellId: null,
      createdCount: 0
    },
    contextVariables: {},
    filter: null,
    templateFromPlanner: false,
    lastTiming: null,
    ...extra
  };
}

describe('EffectsStore marks', () => {
  it('rolls back to the effects current and the history of the mark', () => {
    const store = new EffectsStore(() => 10);
    store.add('a');
    store.rotate();
    store.add('b');
    const mark = store.mark();
    store.rotate();
    store.add('c');
    store.add('d');
    expect(store.toJSON()).toEqual({
      current: ['c', 'd'],
      history: ['a', 'b']
    });
    expect(store.rollback(mark)).toBe(true);
    expect(store.toJSON()).toEqual({ current: ['b'], history: ['a'] });
  });

  it('keeps lining up when the bounded history drops its oldest effects', () => {
    const store = new EffectsStore(() => 2);
    store.add('a');
    store.rotate();
    store.add('b');
    store.rotate();
    const mark = store.mark();
    store.add('c');
    store.rotate();
    store.add('d');
    store.rotate();
    store.add('e');
    expect(store.history).toEqual(['c', 'd']);
    store.rollback(mark);
    // 'a' and 'b' were dropped before the rollback: what is left of the mark's history is kept.
    expect(store.toJSON()).toEqual({ current: [], history: [] });
    const again = new EffectsStore(() => 3);
    again.add('x');
    again.rotate();
    const early = again.mark();
    again.add('y');
    again.rotate();
    again.add('z');
    again.rotate();
    again.add('w');
    again.rotate();
    expect(again.history).toEqual(['y', 'z', 'w']);
    again.rollback(early);
    expect(again.toJSON()).toEqual({ current: [], history: [] });
  });

  it('does not roll back across a replacement by the planner', () => {
    const store = new EffectsStore(() => 10);
    store.add('a');
    const mark = store.mark();
    store.replace({ current: ['planner'] });
    expect(store.rollback(mark)).toBe(false);
    expect(store.current).toEqual(['planner']);
  });

  it('keeps its position across a save (the marks stay valid after a reload)', () => {
    const store = new EffectsStore(() => 1);
    store.add('a');
    store.rotate();
    store.add('b');
    store.rotate();
    const mark = store.mark();
    store.add('c');
    const restored = new EffectsStore(() => 1);
    restored.restore(store.toJSON());
    restored.setPosition(store.position);
    expect(restored.rollback(mark)).toBe(true);
    expect(restored.toJSON()).toEqual({ current: [], history: ['b'] });
  });
});

describe('CellMap marks', () => {
  it('rolls back names and forgets the cells created after the mark', () => {
    const cells = new CellMap();
    cells.cellAdded('c1', 'code', 'load');
    cells.cellAdded('m1', 'markdown', undefined, 'content');
    cells.setTitleCell('t1');
    const mark = cells.mark();
    cells.cellAdded('c2', 'code', 'load');
    cells.cellAdded('m2', 'markdown', undefined, 'content');
    expect(cells.createdSince(mark)).toEqual(['c2', 'm2']);
    cells.rollback(mark);
    expect(cells.created('c2')).toBe(false);
    expect(cells.created('c1')).toBe(true);
    expect(cells.lastAddedCellId).toBe('c1');
    expect(cells.lastTextCellId).toBe('m1');
    expect(cells.titleCellId).toBe('t1');
    const resolved = cells.resolve('load');
    expect(resolved.ok && resolved.cellId).toBe('c1');
  });
});

describe('RewindLog', () => {
  it('finds the latest behavior checkpoint and the latest start of a step', () => {
    const log = new RewindLog();
    log.add(checkpoint('step', 'p1'), TEMPLATE);
    const b1 = log.add(checkpoint('behavior', 'p1'), TEMPLATE);
    const p2 = log.add(checkpoint('step', 'p2'), TEMPLATE);
    const b2 = log.add(checkpoint('behavior', 'p2'), TEMPLATE);
    expect(log.find({ kind: 'behavior' })).toBe(b2);
    expect(log.find({ kind: 'step', stageId: 's1', stepId: 'p2' })).toBe(p2);
    expect(log.find({ kind: 'step', stageId: 's2', stepId: 'p2' })).toBeNull();
    log.truncate(b2);
    expect(log.find({ kind: 'behavior' })).toBe(b1);
    log.truncate(p2);
    expect(log.latest).toBe(b1);
  });

  it('stores one copy of a template that does not change', () => {
    const log = new RewindLog();
    log.add(checkpoint('step', 'p1'), TEMPLATE);
    log.add(checkpoint('behavior', 'p1'), { ...TEMPLATE });
    const other = { ...TEMPLATE, name: 'U' };
    const last = log.add(checkpoint('behavior', 'p1'), other);
    const saved = log.toJSON({ dropped: 0, epoch: 0 });
    expect(saved.templates).toHaveLength(2);
    expect(log.template(last)).toEqual(other);
  });

  it('keeps a bounded number of checkpoints, and the sources only they need', () => {
    const log = new RewindLog();
    for (let i = 0; i < MAX_CHECKPOINTS + 5; i++) {
      log.add(checkpoint('behavior', `p${i}`), i < 3 ? TEMPLATE : null);
      log.rewriting('title', `# title ${i}`);
    }
    const saved = log.toJSON({ dropped: 0, epoch: 0 });
    expect(saved.checkpoints).toHaveLength(MAX_CHECKPOINTS);
    expect(saved.checkpoints[0].stepId).toBe('p5');
    expect(saved.templates).toHaveLength(0);
    expect(saved.rewritten).toHaveLength(MAX_CHECKPOINTS);
  });

  it('keeps the earliest source a cell had after a checkpoint', () => {
    const log = new RewindLog();
    const first = log.add(checkpoint('behavior', 'p1'), null);
    log.rewriting('title', '# one');
    log.rewriting('title', '# one, again');
    log.add(checkpoint('behavior', 'p1'), null);
    log.rewriting('title', '# two');
    expect(log.rewrittenSince(first)).toEqual([
      { cellId: 'title', source: '# one', afterSeq: first.seq }
    ]);
  });

  it('offers completed steps only, and the last behavior', () => {
    const log = new RewindLog();
    log.add(checkpoint('step', 'p1'), null);
    const b = log.add(checkpoint('behavior', 'p1'), null);
    b.behaviorId = 'behavior_001';
    log.add(checkpoint('step', 'p2'), null);
    expect(log.view(new Set(['s1/p1']))).toEqual({
      undo: { behaviorId: 'behavior_001', stepId: 'p1' },
      redoSteps: ['s1/p1'],
      last: null
    });
  });

  it('reads a saved log back, and refuses a broken one', () => {
    const log = new RewindLog();
    log.add(checkpoint('step', 'p1'), TEMPLATE);
    const saved = JSON.parse(
      JSON.stringify(log.toJSON({ dropped: 3, epoch: 2 }))
    ) as unknown;
    const read = readRewindState(saved);
    expect(read?.effects).toEqual({ dropped: 3, epoch: 2 });
    const copy = new RewindLog();
    copy.restore(read!);
    expect(copy.latest?.stepId).toBe('p1');
    expect(readRewindState({ checkpoints: 'no' })).toBeNull();
    // A checkpoint without its variables (a hand-edited file) could not be rolled back to, nor saved.
    const withoutVariables = structuredClone(saved) as {
      checkpoints: Record<string, unknown>[];
    };
    delete withoutVariables.checkpoints[0].contextVariables;
    expect(readRewindState(withoutVariables)).toBeNull();
  });
});

describe('sourceHash', () => {
  it('tells an edited source from the one the run wrote', () => {
    const written = 'x = 1';
    const cell = {
      id: 'c',
      kind: 'code' as const,
      source: written,
      provenance: null,
      sourceHash: sourceHash(written)
    };
    expect(sourceHash('x = 1')).toBe(sourceHash('x = 1'));
    expect(sourceHash('x = 1')).not.toBe(sourceHash('x = 2'));
    expect(editedByUser(cell)).toBe(false);
    expect(editedByUser({ ...cell, source: 'x = 2' })).toBe(true);
    expect(editedByUser({ ...cell, sourceHash: null })).toBe(true);
  });
});
