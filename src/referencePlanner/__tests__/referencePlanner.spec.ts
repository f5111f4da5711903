/**
 * The reference planner's decisions (docs/reference-planner.md): the workflow, the code of each step,
 * when a step is done, other approaches after a failure, and resuming from any observation.
 */

import { progressUpdatesOf } from '../../protocol/schemas';
import {
  PlanningAnswer,
  ReferencePlanner,
  SKIPPED_STEPS_VARIABLE
} from '../referencePlanner';
import { codeOf, generating, LOAD, planning } from './fixture';

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
