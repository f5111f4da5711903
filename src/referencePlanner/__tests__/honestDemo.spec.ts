/**
 * The honest demo: the findings say what the task asked that the standard analysis did not do, a target
 * column the user picked is kept, the title keeps a file name as written, and no thinking fold repeats
 * the cell after it.
 */
import { caveatOf, unmetIntents } from '../intent';
import { ActionInput, ReferencePlanner } from '../referencePlanner';
import { STAGES, STEPS } from '../workflow';
import { codeOf, generating, planning } from './fixture';

const COLUMNS = ['Id', 'Neighborhood', 'OverallQual', 'GrLivArea', 'SalePrice'];
const LOAD_OUTPUT = [
  'Loaded data/housing.csv: 400 rows x 5 columns',
  `Columns: ${JSON.stringify(COLUMNS)}`
].join('\n');

/** The actions of the first attempt at every step, in workflow order, for `variables`. */
function firstAttempts(variables: Record<string, unknown>): ActionInput[][] {
  const planner = new ReferencePlanner();
  const steps = STAGES.flatMap(stage =>
    stage.steps.map(stepId => ({ stageId: stage.id, stepId }))
  );
  // The kernel holds what the earlier steps made, and the load step printed the columns.
  const kernel: Record<string, unknown> = {};
  return steps.map((step, index) => {
    const vars = { ...variables, ...kernel };
    const effects = index === 0 ? [] : [LOAD_OUTPUT];
    planner.plan(
      planning({ ...step, variables: vars, history: effects }),
      'nb'
    );
    const actions = planner.generate(
      generating({ ...step, iteration: 1, variables: vars, history: effects }),
      'nb'
    );
    for (const name of STEPS[step.stepId].expectedOutputs) {
      kernel[name] = `object(${name})`;
    }
    return actions;
  });
}

describe('what the task asks that the demo does not do', () => {
  it('recognises forecasts, models, classes, clusters, tests and comparisons, in English and Chinese', () => {
    const ids = (task: string) => unmetIntents(task).map(i => i.id);
    expect(
      ids('Forecast next quarter revenue for each region in sales.csv')
    ).toEqual(['forecast']);
    expect(ids('Predict SalePrice and fit a regression model')).toEqual([
      'predict',
      'model'
    ]);
    expect(ids('Classify the houses, then cluster the neighborhoods')).toEqual([
      'classify',
      'cluster'
    ]);
    expect(ids('Test whether revenue differs; compare East and West')).toEqual([
      'test',
      'compare'
    ]);
    expect(ids('预测下个季度的收入')).toEqual(['forecast']);
    expect(ids('对房价建模')).toEqual(['model']);
    expect(ids('把客户分类并聚类')).toEqual(['classify', 'cluster']);
    expect(ids('检验各地区的差异')).toEqual(['test']);
  });

  it('finds nothing missing in an exploratory task, and takes no part of a word for an intent', () => {
    expect(unmetIntents('What drives house prices in housing.csv?')).toEqual(
      []
    );
    expect(unmetIntents('housing.csv 中哪些因素影响房价？')).toEqual([]);
    expect(unmetIntents('Explore the contest results in latest.csv')).toEqual(
      []
    );
    expect(caveatOf('Explore sales.csv')).toBeNull();
  });

  it('opens the findings of a forecasting task with the forecast it did not make', () => {
    const task = 'Forecast next quarter revenue for each region in sales.csv';
    const caveat = caveatOf(task);
    expect(caveat).toMatch(
      /^\*\*Not done:\*\* the task asks for a forecast\. The built-in demo planner made no forecast: it only explored the data/
    );
    const findings = firstAttempts({ problem_description: task }).pop() ?? [];
    const [code] = codeOf(findings);
    expect(code).toContain(`NOT_DONE = ${JSON.stringify(caveat)}`);
    // The report's first lines: the heading, then what was not done, then the task.
    expect(code).toContain(
      'report = ["## Findings", "", *([NOT_DONE, ""] if NOT_DONE else []), f"**Task:** {TASK}", ""]'
    );
  });

  it('names two things not done together', () => {
    expect(caveatOf('预测并检验房价')).toContain(
      'made no forecast and ran no statistical test'
    );
  });
});

describe('the target column', () => {
  it('keeps the column picked in the Run dialog for a task that names none ("housing.csv 中哪些因素影响房价？")', () => {
    const attempts = firstAttempts({
      problem_description: 'housing.csv 中哪些因素影响房价？',
      target_column: 'SalePrice'
    });
    const distributions = attempts[3];
    expect(distributions).toContainEqual(
      expect.objectContaining({
        action: 'update_stage_steps',
        stage_id: 'exploratory_analysis'
      })
    );
    expect(codeOf(distributions)[0]).toContain('TARGET = "SalePrice"');
    const [findings] = codeOf(attempts[attempts.length - 1]);
    expect(findings).toContain('TARGET = "SalePrice"');
  });

  it('says in the findings that no target was given, rather than dropping it silently', () => {
    const attempts = firstAttempts({
      problem_description: 'housing.csv 中哪些因素影响房价？'
    });
    expect(codeOf(attempts[3])[0]).toContain('TARGET = ""');
    const intro = attempts[3].find(
      a => a.action === 'add' && a.content.includes('**Method:**')
    );
    expect(intro && 'content' in intro ? intro.content : '').toContain(
      'Target column in the Run dialog'
    );
    const [findings] = codeOf(attempts[attempts.length - 1]);
    expect(findings).toContain('TARGET = ""');
    expect(findings).toContain('No target column was given');
  });
});

describe('the notebook the demo writes', () => {
  const titleOf = (task: string) =>
    firstAttempts({ problem_description: task })[0].find(
      a => a.action === 'update_title'
    );

  it('keeps a file name that starts the task as it is written, and capitalises a word', () => {
    expect(titleOf('housing.csv 中哪些因素影响房价？')).toMatchObject({
      title: 'housing.csv 中哪些因素影响房价？'
    });
    expect(
      titleOf('forecast next quarter revenue for each region in sales.csv')
    ).toMatchObject({
      title: 'Forecast next quarter revenue for each region in sales.csv'
    });
  });

  it('sends one thinking fold per run, whose text no later cell repeats', () => {
    const attempts = firstAttempts({
      problem_description: 'Forecast next quarter revenue in sales.csv'
    });
    const all = attempts.flat();
    const thinking = all.filter(a => a.action === 'is_thinking');
    expect(thinking).toHaveLength(1);
    expect(attempts[0]).toContain(thinking[0]);
    const text =
      thinking[0].action === 'is_thinking' ? thinking[0].thinking_text : '';
    expect(text).toMatch(/same exploratory analysis .* for every task/);
    expect(text).toContain('made no forecast');
    // The cells of its step say what the step does, not what the fold said.
    const next = attempts[0].flatMap(a =>
      a.action === 'add' ? [a.content] : []
    );
    for (const sentence of (text ?? '').split(/(?<=\.) /)) {
      expect(next.filter(cell => cell.includes(sentence))).toEqual([]);
    }
    // Only the findings, at the end of the run, say again what was not done.
    const plan = (text ?? '').split(/(?<=\.) /)[0];
    const cells = all.flatMap(a => (a.action === 'add' ? [a.content] : []));
    expect(cells.filter(cell => cell.includes(plan))).toEqual([]);
  });

  it('drops the cells that pandas 3 keeps as NaN when it stacks a masked correlation matrix', () => {
    const attempts = firstAttempts({ problem_description: 'Explore it' });
    const code = attempts.flatMap(codeOf).join('\n');
    expect(code).toContain('upper.stack().dropna()');
    expect(code).toContain('matrix.where(~lower).stack().dropna()');
    expect(code).not.toMatch(/\.stack\(\)\.(?!dropna)/);
  });
});
