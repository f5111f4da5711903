import type { WorkflowTemplate } from '../../protocol';
import { WorkflowProgress } from '../state/progress';
import {
  artifactId,
  behaviorIdFor,
  MAX_ASSESSMENT_CHARS
} from '../state/progressState';

const TEMPLATE: WorkflowTemplate = {
  name: 'Ames',
  stages: [
    {
      id: 'data_loading',
      name: 'Load',
      goal: 'Load the data',
      steps: [
        { id: 'read_csv', name: 'Read CSV', description: 'Read the file' }
      ]
    },
    {
      id: 'data_cleaning',
      name: 'Clean',
      description: 'Clean the data',
      expected_outputs: ['df_cleaned'],
      steps: [
        {
          id: 'handle_missing_values',
          name: 'Missing values',
          goal: 'Fill missing values',
          expected_outputs: ['df', 'missing_fill_report']
        },
        { id: 'handle_outliers', name: 'Outliers' },
        { id: 'validate', name: 'Validate' }
      ]
    },
    { id: 'modeling', name: 'Model', steps: [] }
  ]
};

const NOW = () => new Date('2025-01-15T10:10:00.000Z');

function atCleaning(): WorkflowProgress {
  const progress = new WorkflowProgress(NOW);
  progress.setTemplate(TEMPLATE);
  progress.startStage('data_cleaning');
  progress.startStep('handle_missing_values');
  return progress;
}

describe('WorkflowProgress', () => {
  it('names behaviors and artifacts', () => {
    expect(behaviorIdFor(3)).toBe('behavior_003');
    expect(behaviorIdFor(1234)).toBe('behavior_1234');
    expect(artifactId('df_imputed', 'iter3')).toBe('df_imputed@iter3');
  });

  it('takes expected outputs and goals from the template', () => {
    const progress = atCleaning();
    expect(progress.outputs('stages').expected).toEqual(['df_cleaned']);
    expect(progress.outputs('steps').expected).toEqual([
      'df',
      'missing_fill_report'
    ]);
    expect(progress.goals()).toEqual({
      stage: 'Clean the data',
      step: 'Fill missing values',
      behavior: null
    });
    const view = progress.toProgress();
    expect(view.stages?.current).toBe('data_cleaning');
    expect(view.stages?.remaining).toEqual(['modeling']);
    expect(view.steps?.remaining).toEqual(['handle_outliers', 'validate']);
    expect(view.behaviors?.iteration).toBe(0);
  });

  it('tracks in_progress while a behavior runs and produced when it completes', () => {
    const progress = atCleaning();
    progress.planBehaviorOutputs(['missing_summary']);
    expect(progress.startBehavior()).toBe('behavior_001');
    expect(progress.outputs('behaviors')).toEqual({
      expected: ['missing_summary'],
      produced: [],
      in_progress: []
    });
    expect(progress.observeVariables(['missing_summary', 'tmp'])).toBe(true);
    expect(progress.outputs('behaviors').in_progress).toEqual([
      'missing_summary'
    ]);
    expect(progress.observeVariables(['missing_summary', 'tmp'])).toBe(false);
    progress.recordAction('add code: missing = df.isna().sum()');
    progress.setFocus('behaviors', '【Behavior 001】\n\nCount missing values');
    const item = progress.completeBehavior(['missing_summary', 'tmp']);
    expect(item).toEqual({
      behavior_id: 'behavior_001',
      goal: '【Behavior 001】',
      actions_taken: ['add code: missing = df.isna().sum()'],
      outputs_produced: {
        variables: ['missing_summary'],
        artifacts: [
          {
            artifact_id: 'missing_summary@behavior_001',
            variable_name: 'missing_summary',
            source: 'behavior_001',
            created_at: '2025-01-15T10:10:00.000Z'
          }
        ]
      }
    });
    expect(progress.outputs('behaviors')).toEqual({
      expected: ['missing_summary'],
      produced: ['missing_summary'],
      in_progress: []
    });
    // Rolled up into the running step at once (docs/protocol.md#outputs-tracking).
    expect(progress.outputs('steps').produced).toEqual(['missing_summary']);

    progress.planBehaviorOutputs(['missing_groups']);
    expect(progress.startBehavior()).toBe('behavior_002');
    expect(progress.outputs('behaviors')).toEqual({
      expected: ['missing_groups'],
      produced: [],
      in_progress: []
    });
    progress.completeBehavior(['missing_groups']);
    expect(progress.outputs('steps').produced).toEqual([
      'missing_summary',
      'missing_groups'
    ]);
    // A plan speaks for the next behavior only.
    progress.startBehavior();
    expect(progress.outputs('behaviors').expected).toEqual([]);
  });

  it('rolls step outputs into the stage when the step completes', () => {
    const progress = atCleaning();
    progress.planBehaviorOutputs(['missing_summary']);
    progress.startBehavior();
    progress.observeVariables(['missing_summary', 'df']);
    expect(progress.outputs('steps').in_progress).toEqual(['df']);
    progress.completeBehavior(['missing_summary', 'df']);
    const step = progress.completeStep(['missing_summary', 'df']);
    expect(step.step_id).toBe('handle_missing_values');
    expect(step.goal).toBe('Fill missing values');
    expect(step.actions_taken).toEqual(['Behavior behavior_001']);
    expect(step.outputs_produced?.variables).toEqual(['missing_summary', 'df']);
    expect(step.outputs_produced?.artifacts?.map(a => a.artifact_id)).toEqual([
      'missing_summary@behavior_001',
      'missing_summary@handle_missing_values',
      'df@handle_missing_values'
    ]);
    expect(progress.outputs('steps').in_progress).toEqual([]);
    expect(progress.outputs('stages').produced).toEqual([
      'missing_summary',
      'df'
    ]);

    expect(progress.nextStep()?.id).toBe('handle_outliers');
    progress.startStep('handle_outliers');
    expect(progress.outputs('steps')).toEqual({
      expected: [],
      produced: [],
      in_progress: []
    });
    expect(progress.iteration).toBe(0);
    expect(progress.completed('behaviors')).toEqual([]);
    expect(progress.completed('steps')).toHaveLength(1);
    expect(progress.toProgress().steps?.remaining).toEqual(['validate']);

    progress.completeStep(['df_cleaned']);
    progress.startStep('validate');
    progress.completeStep(['df_cleaned']);
    expect(progress.nextStep()).toBeNull();
    const stage = progress.completeStage(['df_cleaned']);
    expect(stage).toMatchObject({
      stage_id: 'data_cleaning',
      goal: 'Clean the data',
      actions_taken: ['Fill missing values', 'Outliers', 'Validate'],
      outputs_produced: { variables: ['missing_summary', 'df', 'df_cleaned'] }
    });
    expect(progress.nextStage()?.id).toBe('modeling');
  });

  it('replaces the steps of a stage and keeps going', () => {
    const progress = atCleaning();
    expect(
      progress.replaceStageSteps('data_cleaning', [
        {
          id: 'handle_missing_values',
          name: 'Missing',
          expected_outputs: ['df2']
        },
        { id: 'new_step', name: 'New' }
      ])
    ).toBe(true);
    expect(progress.outputs('steps').expected).toEqual(['df2']);
    expect(progress.nextStep()?.id).toBe('new_step');
    expect(progress.replaceStageSteps('nope', [])).toBe(false);
  });

  it('finds the first step not done when the current one left the template', () => {
    const progress = atCleaning();
    progress.replaceStageSteps('data_cleaning', [
      { id: 'a', name: 'A' },
      { id: 'b', name: 'B' }
    ]);
    expect(progress.nextStep()?.id).toBe('a');
  });

  it('adopts the location named by a first template without losing focus', () => {
    const progress = new WorkflowProgress(NOW);
    progress.startStage(null);
    progress.startStep(null);
    progress.setFocus('steps', 'plan for the first step');
    progress.setTemplate(TEMPLATE);
    progress.adoptLocation('data_loading', 'read_csv');
    expect(progress.location()).toEqual({
      stage_id: 'data_loading',
      step_id: 'read_csv',
      behavior_id: null,
      behavior_iteration: 0
    });
    expect(progress.focus('steps')).toBe('plan for the first step');
    expect(progress.goals().step).toBe('Read the file');
  });

  it('keeps the planner’s assessment of each stage and step for the whole run, saved with it', () => {
    const progress = atCleaning();
    // A behavior's assessment is its step's.
    progress.setAssessment('behaviors', {
      reasoning: 'Gaps filled in 3 of 5 columns.',
      percent: 60
    });
    progress.setAssessment('stages', { percent: 140 });
    progress.completeStep([]);
    progress.startStep('handle_outliers');
    progress.setAssessment('steps', { reasoning: 'Outliers capped.' });
    progress.setAssessment('steps', { reasoning: 'Outliers capped at p99.' });
    progress.setAssessment('stages', {});
    // A long reasoning is kept short: the run's metadata and every checkpoint carry it.
    progress.setAssessment('stages', { reasoning: 'x'.repeat(10_000) });
    expect(
      [...(progress.toJSON().assessments?.data_cleaning.stage?.reasoning ?? '')]
        .length
    ).toBe(MAX_ASSESSMENT_CHARS);
    progress.setAssessment('stages', { percent: 140 });
    progress.completeStage([]);
    progress.startStage('modeling');
    const copy = WorkflowProgress.fromJSON(
      JSON.parse(JSON.stringify(progress.toJSON())),
      NOW
    );
    expect(copy.toJSON().assessments).toEqual({
      data_cleaning: {
        // Bounded to 0-100; an empty assessment changes nothing.
        stage: { percent: 100 },
        steps: {
          handle_missing_values: {
            reasoning: 'Gaps filled in 3 of 5 columns.',
            percent: 60
          },
          handle_outliers: { reasoning: 'Outliers capped at p99.' }
        }
      }
    });
  });

  it('round-trips through JSON', () => {
    const progress = atCleaning();
    progress.planBehaviorOutputs(['x']);
    progress.startBehavior();
    progress.completeBehavior(['x'], 'stopped');
    const copy = WorkflowProgress.fromJSON(
      JSON.parse(JSON.stringify(progress.toJSON())),
      NOW
    );
    expect(copy.toProgress()).toEqual(progress.toProgress());
    expect(copy.completed('behaviors')[0].goal).toBe(
      'Behavior behavior_001 (stopped)'
    );
    expect(copy.startBehavior()).toBe('behavior_002');
  });
});
