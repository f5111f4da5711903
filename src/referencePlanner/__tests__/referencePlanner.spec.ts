import { progressUpdatesOf } from '../../protocol/schemas';
import {
  GeneratingRequest,
  normalizeGeneratingRequest,
  normalizePlanningRequest,
  PlanningRequest
} from '../../protocol';
import {
  ActionInput,
  PlanningAnswer,
  ReferencePlanner,
  SKIPPED_STEPS_VARIABLE
} from '../referencePlanner';
import { IObservationOptions, requestBody } from './requests';

function planning(options: IObservationOptions): PlanningRequest {
  const parsed = normalizePlanningRequest(requestBody(options));
  if (!parsed.ok) {
    throw new Error(parsed.error);
  }
  return parsed.request;
}

function generating(options: IObservationOptions): GeneratingRequest {
  const parsed = normalizeGeneratingRequest(
    requestBody({ ...options, stream: true })
  );
  if (!parsed.ok) {
    throw new Error(parsed.error);
  }
  return parsed.request;
}

function codeOf(actions: ActionInput[]): string[] {
  return actions.flatMap(a =>
    a.action === 'add' && a.shot_type === 'action' ? [a.content] : []
  );
}

const LOAD = { stageId: 'data_loading', stepId: 'load_data' };
const TRACEBACK = [
  'Traceback (most recent call last):',
  '  File "<cell>", line 4, in <module>',
  "FileNotFoundError: [Errno 2] No such file or directory: 'data/housing.csv'"
].join('\n');

describe('ReferencePlanner decisions', () => {
  it('sends the workflow template and the first focus on the first planning answer', () => {
    const planner = new ReferencePlanner();
    const answer = planner.plan(planning({}), 'nb');
    expect(answer.targetAchieved).toBe(false);
    expect(answer.transition).toEqual({
      continue_behaviors: true,
      target_achieved: false
    });
    const template = answer.context_update?.workflow_update?.workflowTemplate;
    expect(template?.stages.map(s => s.id)).toEqual([
      'data_loading',
      'data_cleaning',
      'exploratory_analysis',
      'findings'
    ]);
    for (const stage of template?.stages ?? []) {
      for (const step of stage.steps) {
        expect(step.expected_outputs?.length).toBeGreaterThan(0);
      }
    }
    // The target waits for the data's columns (see "ReferencePlanner target column").
    expect(answer.context_update?.variables).toBeUndefined();
    const focus = progressUpdatesOf(answer.context_update)[0];
    expect(focus?.level).toBe('steps');
    expect(focus?.focus).toMatch(
      /### State analysis[\s\S]*### Targets[\s\S]*`df`[\s\S]*### Suggested method/
    );
    expect(answer.context_filter).toMatchObject({
      variables_to_include: ['problem_description', 'csv_file_path'],
      focus_to_include: ['stages', 'steps', 'behaviors'],
      outputs_tracking: { expected_variables: ['df'] }
    });
  });

  it('writes pandas code for the data file it was given', () => {
    const planner = new ReferencePlanner();
    planner.plan(planning(LOAD), 'nb');
    const actions = planner.generate(
      generating({ ...LOAD, iteration: 1 }),
      'nb'
    );
    const [code] = codeOf(actions);
    expect(code).toContain('DATA_PATH = "data/housing.csv"');
    expect(code).toContain('df = pd.read_csv(DATA_PATH)');
    const add = actions.find(
      a => a.action === 'add' && a.shot_type === 'action'
    );
    const exec = actions[actions.length - 1];
    expect(exec).toEqual({
      action: 'exec',
      codecell_id: add && 'store_id' in add ? add.store_id : '',
      need_output: true
    });
  });

  it('completes a step when its expected variables appear, and not when the last exec failed', () => {
    const planner = new ReferencePlanner();
    const done = planner.plan(
      planning({
        ...LOAD,
        iteration: 1,
        feedback: 'success',
        variables: { df: 'DataFrame(400×25)' }
      }),
      'nb'
    );
    expect(done.targetAchieved).toBe(true);
    expect(done.transition).toEqual({
      continue_behaviors: false,
      target_achieved: true
    });

    const failed = planner.plan(
      planning({
        ...LOAD,
        iteration: 1,
        feedback: 'error',
        variables: { df: 'DataFrame(400×25)' },
        effects: [TRACEBACK]
      }),
      'nb2'
    );
    expect(failed.targetAchieved).toBe(false);
  });

  it('retries with a different approach that fits the error, then gives up after three failures', () => {
    const planner = new ReferencePlanner();
    planner.plan(planning(LOAD), 'nb');
    const codes: string[] = [];
    codes.push(
      ...codeOf(planner.generate(generating({ ...LOAD, iteration: 1 }), 'nb'))
    );
    for (let iteration = 1; iteration <= 3; iteration++) {
      const answer = planner.plan(
        planning({
          ...LOAD,
          iteration,
          feedback: 'error',
          effects: [TRACEBACK]
        }),
        'nb'
      );
      expect(answer.targetAchieved).toBe(false);
      expect(answer.transition?.continue_behaviors).toBe(true);
      const actions = planner.generate(
        generating({ ...LOAD, iteration: iteration + 1 }),
        'nb'
      );
      if (iteration < 3) {
        expect(progressUpdatesOf(answer.context_update)[0]?.focus).toContain(
          'FileNotFoundError'
        );
        expect(answer.context_filter?.effects_config).toMatchObject({
          include_history: true
        });
        codes.push(...codeOf(actions));
        expect(
          actions.some(a => a.action === 'add' && a.shot_type === 'observation')
        ).toBe(true);
      } else {
        // Giving up: an explanation, the step ended, and the skip remembered in the variables.
        expect(codeOf(actions)).toEqual([]);
        expect(actions.map(a => a.action)).toEqual(['add', 'end_phase']);
        const note = actions[0].action === 'add' ? actions[0].content : '';
        expect(note).toMatch(/Skipping "Load and inspect the data"/);
        expect(note).toContain('FileNotFoundError');
        expect(
          answer.context_update?.variables?.[SKIPPED_STEPS_VARIABLE]
        ).toEqual(['load_data']);
      }
    }
    expect(new Set(codes).size).toBe(3);
    // The path error is answered first by the approach that looks for the file.
    expect(codes[1]).toContain('glob(');

    const after = planner.plan(
      planning({ ...LOAD, iteration: 4, feedback: 'success' }),
      'nb'
    );
    expect(after.targetAchieved).toBe(false);
    expect(after.transition).toEqual({
      continue_behaviors: false,
      target_achieved: false
    });
  });

  it('counts a repeated feedback request once', () => {
    const planner = new ReferencePlanner();
    planner.plan(planning(LOAD), 'nb');
    const first = planner.plan(
      planning({
        ...LOAD,
        iteration: 1,
        feedback: 'error',
        effects: [TRACEBACK]
      }),
      'nb'
    );
    const again = planner.plan(
      planning({
        ...LOAD,
        iteration: 1,
        feedback: 'error',
        effects: [TRACEBACK]
      }),
      'nb'
    );
    expect(again).toEqual(first);
  });

  it('picks up from any observation: a fresh planner resumes mid-workflow', () => {
    const planner = new ReferencePlanner();
    const step = { stageId: 'exploratory_analysis', stepId: 'correlations' };
    const variables = {
      df: 'DataFrame(400×25)',
      df_clean: 'DataFrame(400×24)',
      numeric_summary: 'DataFrame(15×9)'
    };
    const answer = planner.plan(planning({ ...step, variables }), 'resumed');
    expect(answer.targetAchieved).toBe(false);
    expect(answer.context_filter?.variables_to_summarize).toEqual({
      df_clean: 'describe_only'
    });
    expect(answer.context_update?.workflow_update).toBeUndefined();
    const [code] = codeOf(
      planner.generate(
        generating({ ...step, iteration: 1, variables }),
        'resumed'
      )
    );
    expect(code).toContain(
      'correlations = df_clean.drop(columns=id_columns).corr(numeric_only=True)'
    );

    // Without any planning call (e.g. the planner restarted between planning and generating).
    const cold = new ReferencePlanner();
    const coldActions = cold.generate(
      generating({ ...step, iteration: 2, variables, history: [TRACEBACK] }),
      'x'
    );
    expect(
      coldActions.some(a => a.action === 'add' && a.shot_type === 'observation')
    ).toBe(true);
    expect(codeOf(coldActions)[0]).toContain('select_dtypes(include="number")');
  });

  it('a restarted planner counts the earlier behaviors of the step from the observation', () => {
    const planner = new ReferencePlanner();
    const answer = planner.plan(
      planning({
        ...LOAD,
        iteration: 2,
        feedback: 'error',
        effects: [TRACEBACK]
      }),
      'nb'
    );
    expect(progressUpdatesOf(answer.context_update)[0]?.focus).toContain(
      'attempt 3 of 3'
    );
    const [code] = codeOf(
      planner.generate(generating({ ...LOAD, iteration: 3 }), 'nb')
    );
    expect(code).toContain('encoding="latin-1"');
    const last = planner.plan(
      planning({
        ...LOAD,
        iteration: 3,
        feedback: 'error',
        effects: [TRACEBACK]
      }),
      'nb'
    );
    expect(last.context_update?.variables?.[SKIPPED_STEPS_VARIABLE]).toEqual([
      'load_data'
    ]);
  });

  it('rebuilds missing inputs when the kernel lost them', () => {
    const planner = new ReferencePlanner();
    const step = { stageId: 'exploratory_analysis', stepId: 'distributions' };
    planner.plan(planning(step), 'restarted');
    const actions = planner.generate(
      generating({ ...step, iteration: 1 }),
      'restarted'
    );
    const codes = codeOf(actions);
    expect(codes).toHaveLength(2);
    expect(codes[0]).toContain('df = pd.read_csv(DATA_PATH)');
    expect(codes[0]).toContain(
      'df_clean, imputation_log = impute_missing_values(df)'
    );
    expect(codes[1]).toContain('numeric_summary = numeric_frame.describe().T');
  });

  it('completes a step at once when a resumed kernel already holds its outputs', () => {
    const planner = new ReferencePlanner();
    const answer = planner.plan(
      planning({
        stageId: 'data_cleaning',
        stepId: 'missing_values',
        variables: { df: 'DataFrame', missing_summary: {} }
      }),
      'nb'
    );
    expect(answer.targetAchieved).toBe(true);
  });

  it('publishes the findings as a Markdown cell once the report exists', () => {
    const planner = new ReferencePlanner();
    const step = { stageId: 'findings', stepId: 'findings_report' };
    const report = '## Findings\n\n- OverallQual drives SalePrice (+0.83).';
    const answer = planner.plan(
      planning({
        ...step,
        iteration: 1,
        feedback: 'success',
        variables: { findings_report: 'str(60)' },
        effects: [report]
      }),
      'nb'
    );
    expect(answer.targetAchieved).toBe(false);
    const actions = planner.generate(
      generating({ ...step, iteration: 2 }),
      'nb'
    );
    expect(actions[0]).toEqual({
      action: 'add',
      shot_type: 'observation',
      content: report
    });
    expect(actions.map(a => a.action)).toEqual([
      'add',
      'add',
      'end_phase',
      'next_event'
    ]);
    const done = planner.plan(
      planning({
        ...step,
        iteration: 2,
        feedback: 'success',
        variables: { findings_report: 'str(60)' }
      }),
      'nb'
    );
    expect(done.targetAchieved).toBe(true);
  });

  it('rebuilds the report when a kept kernel has it but its text is unknown', () => {
    const planner = new ReferencePlanner();
    const step = { stageId: 'findings', stepId: 'findings_report' };
    const variables = {
      df_clean: 'DataFrame(400×24)',
      findings_report: 'str(800)'
    };
    const answer = planner.plan(planning({ ...step, variables }), 'kept');
    expect(answer.targetAchieved).toBe(false);
    const [code] = codeOf(
      planner.generate(generating({ ...step, iteration: 1, variables }), 'kept')
    );
    expect(code).toContain('findings_report = build_findings_report(df_clean)');
    expect(code).toContain('"text/plain": findings_report');
  });

  it('answers an unknown step without looping', () => {
    const planner = new ReferencePlanner();
    const answer: PlanningAnswer = planner.plan(
      planning({ stageId: 'other', stepId: 'train_model' }),
      'nb'
    );
    expect(answer.transition).toEqual({
      continue_behaviors: false,
      target_achieved: false
    });
    const actions = planner.generate(
      generating({ stageId: 'other', stepId: 'train_model', iteration: 1 }),
      'nb'
    );
    expect(actions[actions.length - 1]).toEqual({
      action: 'end_phase',
      step_id: 'train_model'
    });
  });

  it('is deterministic', () => {
    const run = (): unknown[] => {
      const planner = new ReferencePlanner();
      return [
        planner.plan(planning({}), 'nb'),
        planner.generate(generating({ ...LOAD, iteration: 1 }), 'nb'),
        planner.plan(
          planning({
            ...LOAD,
            iteration: 1,
            feedback: 'error',
            effects: [TRACEBACK]
          }),
          'nb'
        ),
        planner.generate(generating({ ...LOAD, iteration: 2 }), 'nb')
      ];
    };
    expect(JSON.stringify(run())).toEqual(JSON.stringify(run()));
  });
});

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
