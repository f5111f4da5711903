/**
 * What the reference planner makes of the data and the kernel: the target column the task names, a
 * kernel without pandas, and the fonts of its figures.
 */

import { ReferencePlanner, SKIPPED_STEPS_VARIABLE } from '../referencePlanner';
import { codeOf, generating, LOAD, planning } from './fixture';

const HOUSING_COLUMNS = [
  'Id',
  'MSZoning',
  'Neighborhood',
  'HouseStyle',
  'LotArea',
  'OverallQual',
  'YearBuilt',
  'GrLivArea',
  'GarageCars',
  'SaleCondition',
  'SalePrice'
];

/** What the load step prints in the kernel (see the load code): the shape, then the columns as JSON. */
function loadOutput(columns: string[]): string {
  return [
    `Loaded data/housing.csv: 400 rows x ${columns.length} columns`,
    `Columns: ${JSON.stringify(columns)}`,
    "<class 'pandas.DataFrame'>",
    'RangeIndex: 400 entries, 0 to 399'
  ].join('\n');
}

/** The `target_column` the planner last set while starting a run and after its load step. */
function targetSetFor(task: string, columns: string[]): unknown {
  const planner = new ReferencePlanner();
  const variables = { problem_description: task };
  const answers = [
    planner.plan(planning({ variables }), 'nb'),
    planner.plan(
      planning({
        ...LOAD,
        iteration: 1,
        feedback: 'success',
        variables: { ...variables, df: 'DataFrame(400×11)' },
        effects: [loadOutput(columns)]
      }),
      'nb'
    )
  ];
  let target: unknown = null;
  for (const answer of answers) {
    const value = answer.context_update?.variables?.target_column;
    if (value !== undefined) {
      target = value;
    }
  }
  return target;
}

const DISTRIBUTIONS = {
  stageId: 'exploratory_analysis',
  stepId: 'distributions'
};

describe('ReferencePlanner target column', () => {
  it('never takes a word of the task that is not a column: the Run dialog example finds SalePrice', () => {
    const planner = new ReferencePlanner();
    const variables = {
      problem_description: 'What drives house prices in housing.csv?'
    };
    const start = planner.plan(planning({ variables }), 'nb');
    expect(start.context_update?.variables?.target_column).toBeUndefined();
    const loaded = planner.plan(
      planning({
        ...LOAD,
        iteration: 1,
        feedback: 'success',
        variables: { ...variables, df: 'DataFrame(400×11)' },
        effects: [loadOutput(HOUSING_COLUMNS)]
      }),
      'nb'
    );
    expect(loaded.targetAchieved).toBe(true);
    expect(loaded.context_update?.variables).toEqual({
      target_column: 'SalePrice'
    });

    // The client carries the variable back; the exploratory stage gains the target step.
    const later = {
      ...variables,
      target_column: 'SalePrice',
      df: 'DataFrame(400×11)',
      df_clean: 'DataFrame(400×11)'
    };
    planner.plan(planning({ ...DISTRIBUTIONS, variables: later }), 'nb');
    const actions = planner.generate(
      generating({ ...DISTRIBUTIONS, iteration: 1, variables: later }),
      'nb'
    );
    expect(actions).toContainEqual(
      expect.objectContaining({
        action: 'update_stage_steps',
        stage_id: 'exploratory_analysis'
      })
    );
    expect(codeOf(actions)[0]).toContain('TARGET = "SalePrice"');
  });

  it('matches a named column whatever its case or spacing', () => {
    expect(targetSetFor('What drives saleprice?', HOUSING_COLUMNS)).toBe(
      'SalePrice'
    );
    expect(
      targetSetFor('What drives the sale price of a house?', HOUSING_COLUMNS)
    ).toBe('SalePrice');
    expect(
      targetSetFor('Predict `revenue` per region', [
        'month',
        'region',
        'units',
        'revenue'
      ])
    ).toBe('revenue');
    expect(
      targetSetFor('Predict revenue next month', [
        'month',
        'region',
        'units',
        'revenue'
      ])
    ).toBe('revenue');
  });

  it('reads the target of a task written in Chinese', () => {
    const cases: Array<[string, string[], string]> = [
      [
        '房价（SalePrice）受哪些因素影响？请使用 housing.csv。',
        HOUSING_COLUMNS,
        'SalePrice'
      ],
      ['预测 SalePrice', HOUSING_COLUMNS, 'SalePrice'],
      ['影响 saleprice 的因素有哪些？', HOUSING_COLUMNS, 'SalePrice'],
      ['SalePrice 受哪些因素影响？', HOUSING_COLUMNS, 'SalePrice'],
      ['目标列：SalePrice，数据是 housing.csv', HOUSING_COLUMNS, 'SalePrice'],
      ['目标变量是「SalePrice」', HOUSING_COLUMNS, 'SalePrice'],
      ['哪些因素影响房价？', ['面积', '卧室数', '区域', '房价'], '房价'],
      ['房价受哪些因素影响？', ['面积', '卧室数', '区域', '房价'], '房价'],
      ['房价的主要影响因素是什么？', ['面积', '区域', '房价'], '房价'],
      ['预测销量', ['月份', '地区', '销量', '收入'], '销量']
    ];
    for (const [task, columns, target] of cases) {
      expect([task, targetSetFor(task, columns)]).toEqual([task, target]);
    }
  });

  it('goes on without a target when the task names none of the columns, and says so', () => {
    expect(targetSetFor('What drives the market?', HOUSING_COLUMNS)).toBeNull();
    expect(
      targetSetFor('What drives Revenue in housing.csv?', HOUSING_COLUMNS)
    ).toBeNull();
    expect(targetSetFor('哪些因素影响房价？', HOUSING_COLUMNS)).toBeNull();
    // A word shared by several columns is no choice between them.
    expect(
      targetSetFor('What drives prices?', [...HOUSING_COLUMNS, 'ListPrice'])
    ).toBeNull();

    const planner = new ReferencePlanner();
    const variables = { problem_description: 'What drives the weather?' };
    planner.plan(
      planning({
        ...LOAD,
        iteration: 1,
        feedback: 'success',
        variables: { ...variables, df: 'DataFrame(400×11)' },
        effects: [loadOutput(HOUSING_COLUMNS)]
      }),
      'nb'
    );
    const frames = { ...variables, df: 'DataFrame(400×11)' };
    planner.plan(planning({ ...DISTRIBUTIONS, variables: frames }), 'nb');
    const actions = planner.generate(
      generating({ ...DISTRIBUTIONS, iteration: 1, variables: frames }),
      'nb'
    );
    expect(actions.map(a => a.action)).not.toContain('update_stage_steps');
    expect(codeOf(actions)[0]).toContain('TARGET = ""');
    const intro = actions.find(
      a =>
        a.action === 'add' &&
        a.shot_type === 'dialogue' &&
        a.content.includes('**Method:**')
    );
    expect(intro && intro.action === 'add' ? intro.content : '').toMatch(
      /none of the data's columns/
    );
  });

  it('keeps the target for a second run on the same data, whose load step the kept kernel skips', () => {
    const planner = new ReferencePlanner();
    const variables = {
      problem_description: 'What drives house prices in housing.csv?'
    };
    planner.plan(
      planning({
        ...LOAD,
        iteration: 1,
        feedback: 'success',
        variables: { ...variables, df: 'DataFrame(400×11)' },
        effects: [loadOutput(HOUSING_COLUMNS)]
      }),
      'nb'
    );
    // The second run: its variables start afresh, and `df` is already in the kernel.
    const kept = { ...variables, df: 'DataFrame(400×11)' };
    const again = planner.plan(planning({ ...LOAD, variables: kept }), 'nb');
    expect(again.targetAchieved).toBe(true);
    expect(again.context_update?.variables).toEqual({
      target_column: 'SalePrice'
    });

    // Another data file: the columns seen for the first one say nothing about it.
    const other = {
      ...kept,
      csv_file_path: 'data/sales.csv',
      problem_description: 'What drives house prices in sales.csv?'
    };
    const elsewhere = planner.plan(
      planning({ ...DISTRIBUTIONS, variables: other }),
      'nb'
    );
    expect(elsewhere.context_update?.variables).toBeUndefined();
    const actions = planner.generate(
      generating({ ...DISTRIBUTIONS, iteration: 1, variables: other }),
      'nb'
    );
    expect(codeOf(actions)[0]).toContain('TARGET = ""');
    // Unknown columns are no reason to tell the user the task names none of them.
    expect(JSON.stringify(actions)).not.toContain('No target column');
  });

  it('does not relate the columns to a name it could not check against the data', () => {
    // A planner that never saw the load output (restarted, or a resumed run) and a task naming a word.
    const planner = new ReferencePlanner();
    const step = { stageId: 'exploratory_analysis', stepId: 'target_drivers' };
    const variables = {
      problem_description: 'What drives house prices in housing.csv?',
      df: 'DataFrame(400×11)',
      df_clean: 'DataFrame(400×11)'
    };
    const answer = planner.plan(planning({ ...step, variables }), 'fresh');
    expect(answer.context_update?.variables?.[SKIPPED_STEPS_VARIABLE]).toEqual([
      'target_drivers'
    ]);
    const actions = planner.generate(
      generating({ ...step, iteration: 1, variables }),
      'fresh'
    );
    expect(codeOf(actions)).toEqual([]);
  });
});

describe('ReferencePlanner without pandas in the kernel', () => {
  const NO_PANDAS = [
    '---------------------------------------------------------------------------',
    'ModuleNotFoundError                       Traceback (most recent call last)',
    'Cell In[1], line 1',
    '----> 1 import pandas as pd',
    '',
    "ModuleNotFoundError: No module named 'pandas'"
  ].join('\n');

  it('gives up the step at once with how to install pandas, then ends the analysis', () => {
    const planner = new ReferencePlanner();
    planner.plan(planning(LOAD), 'nb');
    planner.generate(generating({ ...LOAD, iteration: 1 }), 'nb');
    const answer = planner.plan(
      planning({
        ...LOAD,
        iteration: 1,
        feedback: 'error',
        effects: [NO_PANDAS]
      }),
      'nb'
    );
    expect(answer.context_update?.variables?.[SKIPPED_STEPS_VARIABLE]).toEqual([
      'load_data'
    ]);
    const actions = planner.generate(
      generating({ ...LOAD, iteration: 2 }),
      'nb'
    );
    // No second attempt: another way of reading the file cannot help.
    expect(codeOf(actions)).toEqual([]);
    expect(actions.map(a => a.action)).toEqual(['add', 'end_phase']);
    const note = actions[0].action === 'add' ? actions[0].content : '';
    expect(note).toContain('pip install pandas matplotlib');
    expect(note).not.toContain('What was tried');

    // After the explanation the run goes straight to its last stage instead of skipping every step.
    const after = planner.plan(
      planning({ ...LOAD, iteration: 2, feedback: 'success' }),
      'nb'
    );
    expect(after.transition).toEqual({
      continue_behaviors: false,
      target_achieved: false,
      stage_complete: true,
      next_stage_id: 'findings'
    });
  });

  it('recognises the note of the guarded load code as well as the bare error', () => {
    const planner = new ReferencePlanner();
    planner.plan(planning(LOAD), 'nb');
    const [code] = codeOf(
      planner.generate(generating({ ...LOAD, iteration: 1 }), 'nb')
    );
    // The first load attempt checks for pandas before using it, and prints a note instead of a traceback.
    const note =
      /except ImportError as error:\n(?:.*\n)*?\s+print\(f?"([^"]+)"\)/.exec(
        code
      );
    expect(note).not.toBeNull();
    const printed = (note?.[1] ?? '').replace(
      '{error}',
      "No module named 'pandas'"
    );
    expect(printed).toContain('pip install pandas matplotlib');
    const answer = planner.plan(
      planning({
        ...LOAD,
        iteration: 1,
        feedback: 'success',
        effects: [printed]
      }),
      'nb'
    );
    expect(answer.context_update?.variables?.[SKIPPED_STEPS_VARIABLE]).toEqual([
      'load_data'
    ]);
  });
});

describe('ReferencePlanner figures', () => {
  it('falls back to installed CJK fonts after DejaVu Sans, naming no font that is missing', () => {
    const planner = new ReferencePlanner();
    const step = { stageId: 'exploratory_analysis', stepId: 'correlations' };
    const variables = {
      df: 'DataFrame(400×25)',
      df_clean: 'DataFrame(400×24)'
    };
    planner.plan(planning({ ...step, variables }), 'nb');
    const [code] = codeOf(
      planner.generate(generating({ ...step, iteration: 1, variables }), 'nb')
    );
    expect(code).toContain('font_manager.fontManager.ttflist');
    expect(code).toMatch(/"font\.family": \["DejaVu Sans", \*cjk_fonts\]/);
    expect(code).toContain('"Noto Sans CJK SC"');
    expect(code).toContain('"Microsoft YaHei"');
  });
});
