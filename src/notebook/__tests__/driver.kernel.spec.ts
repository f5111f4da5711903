import type { ICodeCellModel } from '@jupyterlab/cells';
import type { KernelMessage } from '@jupyterlab/services';
import type { ICellProvenance } from '../../engine/ports/driver';
import { NotebookDriver } from '../notebookDriver';
import { RUN_STATE_METADATA_KEY } from '../metadata';
import {
  IOpenNotebook,
  openNotebook,
  quietConsole,
  useJupyterServer
} from './utils';

quietConsole();

const services = useJupyterServer();

const provenance: ICellProvenance = {
  stage_id: 's1',
  step_id: 'st1',
  behavior_id: 'b1',
  action_index: 0,
  action: 'add'
};

describe('NotebookDriver kernel inspection', () => {
  let notebook: IOpenNotebook;
  let driver: NotebookDriver;

  beforeAll(async () => {
    notebook = await openNotebook(services(), { windowingMode: 'none' });
    driver = new NotebookDriver({ panel: notebook.panel });
  }, 120000);

  afterAll(async () => {
    await notebook.dispose();
  }, 30000);

  const run = async (source: string) => {
    const cellId = await driver.addCell({
      kind: 'code',
      source,
      role: 'code',
      provenance
    });
    const result = await driver.execCell({ cellId, timeoutMs: 0 });
    expect(result.status).toBe('ok');
    const cell = notebook.panel.content.widgets.find(
      widget => widget.model.id === cellId
    )!;
    return { result, model: cell.model as ICodeCellModel };
  };

  /** Collects while recording what the kernel broadcasts and how the notebook changes. */
  const collectObserved = async () => {
    const kernel = notebook.panel.sessionContext.session!.kernel!;
    const broadcast: string[] = [];
    const onIopub = (_: unknown, msg: KernelMessage.IIOPubMessage) => {
      if (msg.header.msg_type !== 'status') {
        broadcast.push(msg.header.msg_type);
      }
    };
    const snapshot = () =>
      JSON.stringify(
        notebook.panel.model!.sharedModel.cells.map(cell => cell.toJSON())
      );
    const before = (await run('1')).model.executionCount!;
    const cellsBefore = snapshot();
    kernel.iopubMessage.connect(onIopub);
    const started = performance.now();
    const { values: variables, types } = await driver.collectVariables();
    const ms = performance.now() - started;
    kernel.iopubMessage.disconnect(onIopub);
    const cellsUnchanged = snapshot() === cellsBefore;
    const after = (await run('2')).model.executionCount!;
    return {
      variables,
      types,
      ms,
      broadcast,
      countDelta: after - before,
      cellsUnchanged
    };
  };

  it('collects user variables as short summaries, silently', async () => {
    await run(
      [
        'import os',
        'import numpy as np',
        'import pandas as pd',
        'from functools import partial',
        'count = 3',
        'ratio = 0.25',
        'flag = True',
        'nothing = None',
        "label = 'house prices'",
        "missing_summary = {'PoolQC': {'count': 1453, 'rate': 0.995}}",
        "log = ['MSSubClass: int64 -> object']",
        "pair = (1, 'a')",
        'arr = np.zeros((100, 3))',
        "small = pd.DataFrame({'a': [1, 2], 'b': [3, 4]})",
        "series = small['a']",
        'long_list = list(range(100000))',
        "long_text = 'x' * 2000",
        "frames = {'train': small, 'rows': 2}",
        '_private = 1',
        'def helper():\n    return 1',
        'class Model:\n    pass',
        'shortcut = partial(helper)'
      ].join('\n')
    );
    const observed = await collectObserved();
    console.log(
      `collectVariables with small variables: ${observed.ms.toFixed(1)} ms`
    );
    const variables = observed.variables;
    expect(variables).toMatchObject({
      count: 3,
      ratio: 0.25,
      flag: true,
      nothing: null,
      label: 'house prices',
      missing_summary: { PoolQC: { count: 1453, rate: 0.995 } },
      log: ['MSSubClass: int64 -> object'],
      pair: [1, 'a'],
      arr: 'ndarray(100, 3) float64',
      small: 'DataFrame(2×2)',
      series: 'Series(2)',
      long_list: 'list(len=100000)',
      frames: { train: 'DataFrame(2×2)', rows: 2 }
    });
    expect(variables.long_text).toMatch(/^str\(len=2000\): 'xxx/);
    for (const hidden of [
      '_private',
      'os',
      'np',
      'pd',
      'partial',
      'helper',
      'Model',
      'shortcut',
      'In',
      'Out',
      'exit',
      'quit',
      'get_ipython'
    ]) {
      expect(variables).not.toHaveProperty(hidden);
    }
    expect(Object.keys(variables).some(name => name.includes('bcc'))).toBe(
      false
    );
    expect(observed.countDelta).toBe(1);
    expect(observed.broadcast).toEqual([]);
    expect(observed.cellsUnchanged).toBe(true);
  }, 60000);

  it('reports the type and shape of every variable apart from its value', async () => {
    await run(
      [
        'import pandas as pd',
        "api_key = 'sk-live-0123456789'",
        "settings = {'token': 'abc', 'retries': 3}",
        "table = pd.DataFrame({'a': [1, 2, 3]})",
        'n = 4'
      ].join('\n')
    );
    const { types } = await collectObserved();
    expect(types).toMatchObject({
      api_key: 'str(len=18)',
      settings: 'dict(len=2)',
      table: 'DataFrame(3×1)',
      n: 'int'
    });
    expect(JSON.stringify(types)).not.toContain('sk-live');
  }, 60000);

  it('never runs code of an unknown class: no len(), no shape property, no repr', async () => {
    await run(
      [
        'import time',
        'lazy_calls = []',
        'class LazyFrame:',
        '    @property',
        '    def shape(self):',
        "        lazy_calls.append('shape'); time.sleep(5); return (1, 1)",
        '    def __len__(self):',
        "        lazy_calls.append('len'); raise RuntimeError('would compute')",
        '    def __repr__(self):',
        "        lazy_calls.append('repr'); time.sleep(5); return 'LazyFrame'",
        '    def head(self, n=5):',
        "        lazy_calls.append('head'); time.sleep(5); return self",
        '    def tail(self, n=5):',
        "        lazy_calls.append('tail'); time.sleep(5); return self",
        'lazy = LazyFrame()',
        "nested = {'frame': lazy}"
      ].join('\n')
    );
    const { variables, types } = await collectObserved();
    expect(variables.lazy).toBe('<LazyFrame>');
    expect(types.lazy).toBe('LazyFrame');
    const summary = await driver.summarizeVariables({
      lazy: 'last_1000000000_only',
      nested: 'head_only'
    });
    expect(summary.lazy).toBe(
      '<last_1000000000_only: not available for LazyFrame>'
    );
    const calls = await driver.summarizeVariables({ lazy_calls: 'head_only' });
    expect(calls.lazy_calls).toBe('[]');
  }, 60000);

  it('bounds a summary of a huge N in rows and characters', async () => {
    await run(
      [
        'import pandas as pd',
        'rows = list(range(1_000_000))',
        "wide = pd.DataFrame({'c%d' % i: range(1000) for i in range(200)})"
      ].join('\n')
    );
    const summary = await driver.summarizeVariables({
      rows: 'last_999999999_only',
      wide: 'last_1000000_only'
    });
    const rows = summary.rows as string;
    expect(rows.length).toBeLessThanOrEqual(4100);
    expect(rows).toContain('999999');
    expect(rows).not.toContain('999949,');
    const wide = summary.wide as string;
    expect(wide.length).toBeLessThanOrEqual(4100);
    expect(wide.split('\n').length).toBeLessThanOrEqual(60);
  }, 60000);

  it('summarizes a 1,000,000-row DataFrame without reading it', async () => {
    await run(
      [
        'import numpy as np',
        'import pandas as pd',
        'big = pd.DataFrame({',
        "    'a': np.arange(1_000_000),",
        "    'b': np.random.rand(1_000_000),",
        "    'c': ['text'] * 1_000_000",
        '})'
      ].join('\n')
    );
    const observed = await collectObserved();
    console.log(
      `collectVariables with a 1,000,000-row DataFrame: ${observed.ms.toFixed(1)} ms`
    );
    expect(observed.variables.big).toBe('DataFrame(1000000×3)');
    expect(observed.countDelta).toBe(1);
    expect(observed.broadcast).toEqual([]);
    expect(observed.cellsUnchanged).toBe(true);
  }, 60000);

  it('computes summarize strategies in the kernel, only for the names asked', async () => {
    await run(
      [
        'import numpy as np',
        'import pandas as pd',
        'corr = pd.DataFrame(np.eye(79))',
        "train = pd.DataFrame({'price': [100.0, 200.0, 300.0, 400.0, 500.0, 600.0]})",
        'history = list(range(100))',
        'scalar = 7'
      ].join('\n')
    );
    const summary = await driver.summarizeVariables({
      corr: 'shape_only',
      train: 'describe_only',
      history: 'last_5_only',
      scalar: 'head_only',
      absent: 'shape_only',
      corr_again: 'shape_only'
    });
    expect(Object.keys(summary).sort()).toEqual(
      ['absent', 'corr', 'corr_again', 'history', 'scalar', 'train'].sort()
    );
    expect(summary.corr).toBe('(79, 79)');
    expect(summary.train).toContain('mean');
    expect(summary.train).toContain('350.0');
    expect(summary.history).toBe('[95, 96, 97, 98, 99]');
    expect(summary.scalar).toBe('<head_only: not available for int>');
    expect(summary.absent).toBe(
      '<shape_only: not available (no variable absent)>'
    );

    const more = await driver.summarizeVariables({
      train: 'head_only',
      corr: 'median_only',
      'odd"name\\': 'last_2_only'
    });
    expect(more.train).toContain('price');
    expect((more.train as string).split('\n')).toHaveLength(6);
    expect(more.corr).toBe('<median_only: not available (unknown strategy)>');
    expect(more['odd"name\\']).toBe(
      '<last_2_only: not available (no variable odd"name\\)>'
    );
    expect(await driver.summarizeVariables({})).toEqual({});
  }, 60000);
});

describe('NotebookDriver run state', () => {
  it('saves the run state in the notebook metadata and reads it back after reopening', async () => {
    const first = await openNotebook(services(), {
      kernel: false,
      windowingMode: 'none'
    });
    const path = first.context.path;
    expect(first.panel.model!.sharedModel.nbformat_minor).toBe(4);
    const state = {
      progress: { stages: { current: 'data_cleaning' } },
      fsm: { state: 'BEHAVIOR_RUNNING', history: ['START_WORKFLOW'] },
      effects: { current: ['out'], history: [] },
      skipped: undefined
    };
    let cellId: string;
    try {
      const driver = new NotebookDriver({ panel: first.panel });
      expect(await driver.loadRunState()).toBeNull();
      cellId = await driver.addCell({
        kind: 'code',
        source: 'x = 1',
        role: 'code',
        provenance: { ...provenance, store_id: 'load' }
      });
      await driver.saveRunState(state);
      expect(await driver.loadRunState()).toEqual({
        progress: state.progress,
        fsm: state.fsm,
        effects: state.effects
      });
      expect(first.context.model.dirty).toBe(false);
    } finally {
      await first.dispose();
    }

    const onDisk = await services().contents.get(path, { content: true });
    expect(onDisk.content.metadata[RUN_STATE_METADATA_KEY]).toMatchObject({
      fsm: { state: 'BEHAVIOR_RUNNING' }
    });
    // A new test notebook is nbformat 4.4, which drops cell ids; saving the run upgrades it.
    expect(onDisk.content.nbformat_minor).toBe(5);

    const reopened = await openNotebook(services(), {
      path,
      kernel: false,
      windowingMode: 'none'
    });
    try {
      const driver = new NotebookDriver({ panel: reopened.panel });
      expect(await driver.loadRunState()).toEqual({
        progress: state.progress,
        fsm: state.fsm,
        effects: state.effects
      });
      const cell = reopened.panel.model!.sharedModel.cells.find(
        candidate => candidate.getId() === cellId
      );
      expect(cell?.getMetadata('notebook_bcc')).toMatchObject({
        store_id: 'load',
        behavior_id: 'b1',
        role: 'code'
      });
    } finally {
      await reopened.dispose();
    }
  }, 120000);
});
