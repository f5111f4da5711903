/**
 * The workflow the reference planner proposes: data loading > cleaning > exploratory analysis >
 * findings. Steps are keyed by id; the client navigates, the planner answers for whichever step the
 * observation says is current.
 */
import type { z } from 'zod';

import type { WorkflowStepSchema, WorkflowTemplateSchema } from '../protocol';

export type StepInput = z.input<typeof WorkflowStepSchema>;
export type TemplateInput = z.input<typeof WorkflowTemplateSchema>;

export interface IStepPlan {
  id: string;
  stageId: string;
  name: string;
  goal: string;
  /** Variables that must exist in the kernel for the step to count as done. */
  expectedOutputs: string[];
  /** Variables the step's code reads; `frame` means `df_clean`, or `df` before cleaning produced it. */
  inputs: Array<'df' | 'frame' | string>;
  /** What each expected output is, for the focus text. */
  outputNotes: Record<string, string>;
}

export interface IStagePlan {
  id: string;
  name: string;
  goal: string;
  steps: string[];
}

export const STEPS: Record<string, IStepPlan> = {
  load_data: {
    id: 'load_data',
    stageId: 'data_loading',
    name: 'Load and inspect the data',
    goal: 'Read the data file into a DataFrame and look at its columns, types and first rows.',
    expectedOutputs: ['df'],
    inputs: [],
    outputNotes: { df: 'the raw data as a pandas DataFrame' }
  },
  missing_values: {
    id: 'missing_values',
    stageId: 'data_cleaning',
    name: 'Summarize missing values',
    goal: 'Count the missing values of every column and rank the columns by how much is missing.',
    expectedOutputs: ['missing_summary'],
    inputs: ['df'],
    outputNotes: {
      missing_summary: 'dict column -> {count, rate} for every column with gaps'
    }
  },
  impute_missing: {
    id: 'impute_missing',
    stageId: 'data_cleaning',
    name: 'Impute missing values',
    goal: 'Produce a cleaned copy of the data without missing values, logging what was done to each column.',
    expectedOutputs: ['df_clean', 'imputation_log'],
    inputs: ['df', 'missing_summary'],
    outputNotes: {
      df_clean: 'the cleaned DataFrame (no missing values, dates parsed)',
      imputation_log: 'dict column -> what was done'
    }
  },
  distributions: {
    id: 'distributions',
    stageId: 'exploratory_analysis',
    name: 'Describe distributions',
    goal: 'Describe the distribution of each numeric column and the most frequent categories.',
    expectedOutputs: ['numeric_summary'],
    inputs: ['frame'],
    outputNotes: {
      numeric_summary:
        'DataFrame of count/mean/std/quantiles/skew per numeric column'
    }
  },
  correlations: {
    id: 'correlations',
    stageId: 'exploratory_analysis',
    name: 'Correlate numeric columns',
    goal: 'Compute the correlation matrix of the numeric columns and list the strongest pairs.',
    expectedOutputs: ['correlations'],
    inputs: ['frame'],
    outputNotes: { correlations: 'numeric-only correlation matrix (DataFrame)' }
  },
  target_drivers: {
    id: 'target_drivers',
    stageId: 'exploratory_analysis',
    name: 'Relate the columns to the target',
    goal: 'Rank numeric columns by their correlation with the target and categorical columns by how much the target mean varies across their levels.',
    expectedOutputs: ['target_correlations', 'category_effects'],
    inputs: ['frame'],
    outputNotes: {
      target_correlations:
        'Series: correlation of each numeric column with the target, strongest first',
      category_effects:
        'Series: spread of the target mean across the levels of each categorical column'
    }
  },
  findings_report: {
    id: 'findings_report',
    stageId: 'findings',
    name: 'Report the findings',
    goal: 'Write the findings as Markdown, both as the variable `findings_report` and as a notebook cell.',
    expectedOutputs: ['findings_report'],
    inputs: [
      'frame',
      'missing_summary',
      'imputation_log',
      'numeric_summary',
      'correlations',
      'target_correlations',
      'category_effects'
    ],
    outputNotes: { findings_report: 'the findings as a Markdown string' }
  }
};

export const STAGES: IStagePlan[] = [
  {
    id: 'data_loading',
    name: 'Data loading',
    goal: 'Get the data into the kernel and understand its shape.',
    steps: ['load_data']
  },
  {
    id: 'data_cleaning',
    name: 'Data cleaning',
    goal: 'Know where data is missing and produce a clean working copy.',
    steps: ['missing_values', 'impute_missing']
  },
  {
    id: 'exploratory_analysis',
    name: 'Exploratory analysis',
    goal: 'Describe the columns and how they relate to each other.',
    steps: ['distributions', 'correlations']
  },
  {
    id: 'findings',
    name: 'Findings',
    goal: 'Turn the results into a short written report.',
    steps: ['findings_report']
  }
];

export function stageOf(
  stageId: string | null | undefined
): IStagePlan | undefined {
  return STAGES.find(stage => stage.id === stageId);
}

export function stepTemplate(step: IStepPlan): StepInput {
  return {
    id: step.id,
    name: step.name,
    description: step.goal,
    goal: step.goal,
    expected_outputs: [...step.expectedOutputs]
  };
}

/** The exploratory stage's steps once a target column is known to exist. */
export function exploratorySteps(withTarget: boolean): StepInput[] {
  const stage = stageOf('exploratory_analysis');
  const ids = stage ? [...stage.steps] : [];
  if (withTarget) {
    ids.push('target_drivers');
  }
  return ids.map(id => stepTemplate(STEPS[id]));
}

export function workflowTemplate(
  task: string,
  dataPath: string | null
): TemplateInput {
  const subject = dataPath ? baseName(dataPath) : 'the data';
  return {
    name: task
      ? `Exploratory analysis: ${task}`
      : `Exploratory analysis of ${subject}`,
    stages: STAGES.map(stage => {
      const steps = stage.steps.map(id => stepTemplate(STEPS[id]));
      return {
        id: stage.id,
        name: stage.name,
        description: stage.goal,
        goal: stage.goal,
        expected_outputs: steps.flatMap(step => step.expected_outputs ?? []),
        steps
      };
    })
  };
}

export function baseName(path: string): string {
  const parts = path.split(/[\\/]/);
  return parts[parts.length - 1] || path;
}
