/**
 * The output checks in a real IPython kernel (docs/protocol.md#output-contracts): each kind of
 * contract, a row number where a label was asked, a rounding, a missing variable, a hidden name, a check
 * that raises, and the time budget; silently, like the variable collection.
 */
import type { KernelMessage } from '@jupyterlab/services';
import type { ICellProvenance } from '../../engine/ports/driver';
import type { OutputContract } from '../../protocol';
import { NotebookDriver } from '../notebookDriver';
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

const SECRETS = ['*_token', '*_api_key'];

describe('NotebookDriver output checks', () => {
  let notebook: IOpenNotebook;
  let driver: NotebookDriver;

  beforeAll(async () => {
    notebook = await openNotebook(services(), { windowingMode: 'none' });
    driver = new NotebookDriver({ panel: notebook.panel });
    await run(
      [
        'import numpy as np',
        'import pandas as pd',
        "df = pd.DataFrame({'region': ['North', 'South', 'East', 'West'], 'revenue': [10.5, 3.2, 7.7, 1.0]})",
        "answer = df.groupby('region')['revenue'].sum().idxmax()",
        "row_number = df['revenue'].idxmax()",
        'numpy_row = np.int64(859)',
        "nowhere = 'Atlantis'",
        "mean_revenue = round(df['revenue'].mean(), 2)",
        "unrounded = df['revenue'].mean() / 3",
        'infinite = float("inf")',
        'orders = 85',
        'orders_float = 85.0',
        'ratio = 2.5',
        'has_gaps = np.bool_(False)',
        "title = 'Revenue by region'",
        "blank = '   '",
        "by_region = df.groupby('region')['revenue'].sum()",
        "by_row = df['revenue']",
        "summary = df.groupby('region', as_index=False)['revenue'].sum()",
        "stats = {'mean': np.float64(5.6), 'median': 5.45, 'api_key': 'sk-1', 'rows': df}",
        'pairs = [(1, 2)]',
        "auth_token = 'North'",
        'class Odd:\n    def __str__(self):\n        raise RuntimeError("no text")',
        'odd_keys = {Odd(): 1}'
      ].join('\n')
    );
  }, 120000);

  afterAll(async () => {
    await notebook.dispose();
  }, 30000);

  async function run(source: string): Promise<void> {
    const cellId = await driver.addCell({
      kind: 'code',
      source,
      role: 'code',
      provenance
    });
    const result = await driver.execCell({ cellId, timeoutMs: 0 });
    expect(result).toMatchObject({ status: 'ok' });
  }

  const check = (contracts: OutputContract[], redacted = SECRETS) =>
    driver.checkOutputs(contracts, redacted);

  it('says a label is right only when it is a value of the column asked, and names a row number', async () => {
    const label = (name: string, extra: Partial<OutputContract> = {}) => ({
      name,
      kind: 'label' as const,
      of_column: 'region',
      ...extra
    });
    const results = await check([
      label('answer'),
      label('row_number'),
      label('numpy_row'),
      label('nowhere'),
      label('answer', { frame: 'sales' }),
      label('title', { of_column: 'country' }),
      { name: 'title', kind: 'label' }
    ]);
    expect(results.answer).toEqual({
      ok: false,
      kind: 'label',
      type: 'str',
      value: 'North',
      // The last contract of a name is the one checked: `frame: 'sales'` does not exist.
      reason:
        "`answer` could not be checked against sales['region']: there is no DataFrame `sales`"
    });
    expect(results.row_number).toEqual({
      ok: false,
      kind: 'label',
      type: 'int',
      value: '0',
      reason:
        "`row_number` is 0, an int: not a value of df['region'] (a row number where a label was asked?)"
    });
    expect(results.numpy_row).toMatchObject({
      ok: false,
      type: 'int64',
      value: '859',
      reason:
        "`numpy_row` is 859, an int64: not a value of df['region'] (a row number where a label was asked?)"
    });
    expect(results.nowhere).toMatchObject({
      ok: false,
      value: 'Atlantis',
      reason: "`nowhere` is 'Atlantis': not a value of df['region']"
    });
    expect(results.title).toEqual({
      ok: true,
      kind: 'label',
      type: 'str',
      value: 'Revenue by region'
    });
    const right = await check([label('answer')]);
    expect(right.answer).toEqual({
      ok: true,
      kind: 'label',
      type: 'str',
      value: 'North'
    });
    const noColumn = await check([label('answer', { of_column: 'country' })]);
    expect(noColumn.answer.reason).toBe(
      "`answer` could not be checked against df['country']: `df` has no column 'country'"
    );
  });

  it('checks numbers, their rounding, integers, bools and texts', async () => {
    const results = await check([
      { name: 'mean_revenue', kind: 'number', decimals: 2 },
      { name: 'unrounded', kind: 'number', decimals: 2 },
      { name: 'infinite', kind: 'number' },
      { name: 'has_gaps', kind: 'number' },
      { name: 'orders', kind: 'integer' },
      { name: 'orders_float', kind: 'integer' },
      { name: 'ratio', kind: 'integer' },
      { name: 'has_gaps', kind: 'bool' },
      { name: 'blank', kind: 'text' },
      { name: 'title', kind: 'text' }
    ]);
    expect(results.mean_revenue).toEqual({
      ok: true,
      kind: 'number',
      type: 'float64',
      value: '5.6'
    });
    expect(results.unrounded).toMatchObject({
      ok: false,
      value: '1.8666666666666665',
      reason:
        '`unrounded` is 1.8666666666666665, a float64, not rounded to 2 decimals'
    });
    expect(results.infinite.reason).toBe(
      '`infinite` is inf, a float, not a finite number'
    );
    expect(results.orders).toMatchObject({ ok: true, value: '85' });
    expect(results.orders_float).toMatchObject({ ok: true, value: '85.0' });
    expect(results.ratio.reason).toBe(
      '`ratio` is 2.5, a float, not an integer'
    );
    expect(results.has_gaps).toEqual({
      ok: true,
      kind: 'bool',
      type: 'bool',
      value: 'False'
    });
    expect(results.blank.reason).toBe('`blank` is an empty text');
    expect(results.title.ok).toBe(true);
    // A text the task allows only some values of (DABench's "either "normal" or "not_normal"").
    const allowed = await check([
      { name: 'title', kind: 'text', one_of: ['Costs', 'Revenue by region'] }
    ]);
    expect(allowed.title.ok).toBe(true);
    const refused = await check([
      { name: 'title', kind: 'text', one_of: ['Sales', 'Costs'] }
    ]);
    expect(refused.title.reason).toBe(
      "`title` is 'Revenue by region', not one of: 'Sales', 'Costs'"
    );
    const bool = await check([{ name: 'has_gaps', kind: 'number' }]);
    expect(bool.has_gaps.reason).toBe(
      '`has_gaps` is False, a bool, not a number'
    );
  });

  it('checks a Series’ index, a DataFrame’s columns, a dict’s keys and lists, showing no frame', async () => {
    const results = await check([
      { name: 'by_region', kind: 'series', index: 'region' },
      { name: 'by_row', kind: 'series', index: 'region' },
      { name: 'summary', kind: 'dataframe', columns: ['region', 'revenue'] },
      { name: 'df', kind: 'dataframe', columns: ['region', 'units'] },
      { name: 'stats', kind: 'dict', keys: ['mean', 'median', 'api_key'] },
      { name: 'pairs', kind: 'list' },
      { name: 'title', kind: 'list' }
    ]);
    expect(results.by_region).toEqual({
      ok: true,
      kind: 'series',
      type: 'Series(4)',
      value: null
    });
    expect(results.by_row.reason).toBe(
      "`by_row` is a Series whose index is not region: its labels are not values of df['region']"
    );
    expect(results.summary).toEqual({
      ok: true,
      kind: 'dataframe',
      type: 'DataFrame(4×2)',
      value: null
    });
    expect(results.df.reason).toBe(
      "`df` is a DataFrame without the columns ['units']"
    );
    // A dict shows the keys asked, a secret-looking key's value hidden.
    expect(results.stats).toEqual({
      ok: true,
      kind: 'dict',
      type: 'dict(len=4)',
      value: '{"mean": "5.6", "median": "5.45", "api_key": "<redacted>"}'
    });
    expect(results.pairs).toEqual({
      ok: true,
      kind: 'list',
      type: 'list(len=1)',
      value: null
    });
    expect(results.title.reason).toBe('`title` is a str, not a list');
    const lacking = await check([
      { name: 'stats', kind: 'dict', keys: ['mode'] },
      { name: 'by_region', kind: 'dataframe' }
    ]);
    expect(lacking.stats.reason).toBe(
      "`stats` is a dict without the keys ['mode']"
    );
    expect(lacking.by_region.reason).toBe(
      '`by_region` is a Series(4), not a DataFrame'
    );
  });

  it('says a variable is missing, hides a secret-looking name’s value, and reports a check that raises', async () => {
    const results = await check([
      { name: 'answer_region', kind: 'label', of_column: 'region' },
      { name: 'auth_token', kind: 'label', of_column: 'region' },
      { name: 'auth_token2', kind: 'number' },
      { name: 'stats', kind: 'any' }
    ]);
    expect(results.answer_region).toEqual({
      ok: false,
      kind: 'label',
      type: null,
      value: null,
      reason: '`answer_region` is missing'
    });
    expect(results.auth_token).toEqual({
      ok: true,
      kind: 'label',
      type: 'str',
      value: null
    });
    expect(results.stats.ok).toBe(true);
    const hidden = await check([{ name: 'auth_token', kind: 'number' }]);
    // Its reason does not say the value either.
    expect(hidden.auth_token).toEqual({
      ok: false,
      kind: 'number',
      type: 'str',
      value: null,
      reason: '`auth_token` is a str, not a number'
    });
    // Without redaction, the value is shown.
    const shown = await check([{ name: 'auth_token', kind: 'label' }], []);
    expect(shown.auth_token.value).toBe('North');
    const raising = await check([
      { name: 'odd_keys', kind: 'dict', keys: ['a'] }
    ]);
    expect(raising.odd_keys).toMatchObject({
      ok: false,
      reason: 'checking `odd_keys` raised RuntimeError: no text'
    });
  });

  it('runs silently, leaves no name behind, and stays within its time budget', async () => {
    const kernel = notebook.panel.sessionContext.session!.kernel!;
    const broadcast: string[] = [];
    const onIopub = (_: unknown, msg: KernelMessage.IIOPubMessage) => {
      if (msg.header.msg_type !== 'status') {
        broadcast.push(msg.header.msg_type);
      }
    };
    const cells = JSON.stringify(
      notebook.panel.model!.sharedModel.cells.map(cell => cell.toJSON())
    );
    kernel.iopubMessage.connect(onIopub);
    const many = Array.from({ length: 200 }, (_, i) => ({
      name: i % 2 ? 'df' : 'answer',
      kind: (i % 2 ? 'dataframe' : 'label') as OutputContract['kind'],
      of_column: 'region'
    }));
    const started = performance.now();
    await check(many);
    const ms = performance.now() - started;
    kernel.iopubMessage.disconnect(onIopub);
    console.log(`checkOutputs of 200 contracts: ${ms.toFixed(1)} ms`);
    expect(broadcast.filter(type => type !== 'execute_input')).toEqual([]);
    expect(
      JSON.stringify(
        notebook.panel.model!.sharedModel.cells.map(cell => cell.toJSON())
      )
    ).toBe(cells);
    const { values } = await driver.collectVariables();
    expect(Object.keys(values).some(name => name.includes('bcc'))).toBe(false);
    expect(Object.keys(values)).not.toContain('CheckFailed');
    // Past the budget (a column whose values take 1 s each to hash), the next checks are not made.
    await run(
      [
        'import time',
        'class SlowLabel:',
        '    def __hash__(self):',
        '        time.sleep(1)',
        '        return 0',
        'slow_frame = pd.DataFrame({"region": [SlowLabel(), SlowLabel(), SlowLabel()]})'
      ].join('\n')
    );
    const late = await check([
      {
        name: 'answer',
        kind: 'label',
        of_column: 'region',
        frame: 'slow_frame'
      },
      { name: 'title', kind: 'text' }
    ]);
    expect(late.answer.ok).toBe(false);
    expect(late.title).toEqual({
      ok: false,
      kind: 'text',
      type: 'str',
      value: 'Revenue by region',
      reason: '`title` was not checked: the checks took over 2 s'
    });
  });
});
