/** Snapshots and progress states for the view tests. */
import { nullTranslator } from '@jupyterlab/translation';
import { WorkflowProgress } from '../../engine/state/progress';
import type { IProgressState } from '../../engine/state/progressState';
import type { ISavedRunState } from '../../engine/state/runState';
import type { IRunSnapshot } from '../../engine/types';
import type { WorkflowTemplate } from '../../protocol';

export const trans = nullTranslator.load('notebook_bcc');

export const TEMPLATE: WorkflowTemplate = {
  name: 'Exploratory analysis',
  stages: [
    {
      id: 'loading',
      name: 'Data loading',
      goal: 'Get the data in.',
      steps: [
        {
          id: 'load',
          name: 'Load the data',
          goal: 'Read the CSV.',
          expected_outputs: ['df']
        }
      ]
    },
    {
      id: 'cleaning',
      name: 'Data cleaning',
      goal: 'Clean it.',
      steps: [
        {
          id: 'missing',
          name: 'Summarize missing values',
          goal: 'Count the gaps.',
          expected_outputs: ['missing_summary']
        },
        {
          id: 'impute',
          name: 'Handle missing values',
          goal: 'Fill the gaps.',
          expected_outputs: ['df_clean']
        }
      ]
    },
    {
      id: 'findings',
      name: 'Findings',
      steps: [{ id: 'report', name: 'Report the findings' }]
    }
  ]
};

export function snapshot(overrides: Partial<IRunSnapshot> = {}): IRunSnapshot {
  return {
    state: 'IDLE',
    running: false,
    paused: false,
    pauseReason: null,
    pausing: false,
    error: null,
    task: null,
    workflowName: null,
    stage: { id: null, name: null, goal: null, focus: null },
    step: { id: null, name: null, goal: null, focus: null },
    behavior: { id: null, iteration: 0 },
    stages: [],
    outputs: {
      stages: { expected: [], produced: [], in_progress: [] },
      steps: { expected: [], produced: [], in_progress: [] },
      behaviors: { expected: [], produced: [], in_progress: [] }
    },
    behaviorsRun: 0,
    maxExecutionSteps: 0,
    bufferedActions: 0,
    lastTransition: null,
    lastTransitionAt: null,
    timings: [],
    progress: WorkflowProgress.emptyState(),
    plannerDialect: null,
    ...overrides
  };
}

/** A run in step `impute` (stage `cleaning`), behavior 3 running. */
export function runningSnapshot(
  overrides: Partial<IRunSnapshot> = {}
): IRunSnapshot {
  return snapshot({
    state: 'ACTION_RUNNING',
    running: true,
    task: 'What drives prices?',
    workflowName: 'Exploratory analysis',
    stage: {
      id: 'cleaning',
      name: 'Data cleaning',
      goal: 'Clean it.',
      focus: 'Clean **carefully**.'
    },
    step: {
      id: 'impute',
      name: 'Handle missing values',
      goal: 'Fill.',
      focus: 'Impute the *numeric* columns with the median.'
    },
    behavior: { id: 'behavior_003', iteration: 3 },
    stages: [
      {
        id: 'loading',
        name: 'Data loading',
        status: 'completed',
        steps: [{ id: 'load', name: 'Load the data', status: 'completed' }]
      },
      {
        id: 'cleaning',
        name: 'Data cleaning',
        status: 'current',
        steps: [
          {
            id: 'missing',
            name: 'Summarize missing values',
            status: 'completed'
          },
          { id: 'impute', name: 'Handle missing values', status: 'current' }
        ]
      },
      {
        id: 'findings',
        name: 'Findings',
        status: 'remaining',
        steps: [
          { id: 'report', name: 'Report the findings', status: 'remaining' }
        ]
      }
    ],
    outputs: {
      stages: {
        expected: ['missing_summary', 'df_clean'],
        produced: ['missing_summary'],
        in_progress: []
      },
      steps: {
        expected: ['df_clean'],
        produced: [],
        in_progress: ['df_clean']
      },
      behaviors: { expected: [], produced: [], in_progress: [] }
    },
    timings: [
      {
        behaviorId: 'behavior_001',
        iteration: 1,
        stageId: 'cleaning',
        stepId: 'missing',
        startedAt: '2024-01-01T00:00:00.000Z',
        endedAt: '2024-01-01T00:00:02.500Z',
        durationMs: 2500
      },
      {
        behaviorId: 'behavior_001',
        iteration: 1,
        stageId: 'cleaning',
        stepId: 'impute',
        startedAt: '2024-01-01T00:00:03.000Z',
        endedAt: '2024-01-01T00:00:04.000Z',
        durationMs: 1000
      },
      {
        behaviorId: 'behavior_002',
        iteration: 2,
        stageId: 'cleaning',
        stepId: 'impute',
        startedAt: '2024-01-01T00:00:04.000Z',
        endedAt: '2024-01-01T00:00:05.000Z',
        durationMs: 1000
      },
      {
        behaviorId: 'behavior_003',
        iteration: 3,
        stageId: 'cleaning',
        stepId: 'impute',
        startedAt: '2024-01-01T00:00:05.000Z',
        endedAt: null,
        durationMs: null
      }
    ],
    progress: progressInImputeStep(),
    ...overrides
  });
}

const clock = () => new Date('2024-01-01T00:00:00.000Z');

/** The progress state while step `missing` had completed its behavior (seen earlier in the run). */
export function progressInMissingStep(): IProgressState {
  const progress = new WorkflowProgress(clock);
  progress.setTemplate(TEMPLATE);
  progress.startStage('loading');
  progress.startStep('load');
  progress.planBehaviorOutputs(['df']);
  progress.startBehavior();
  progress.completeBehavior(['df']);
  progress.completeStep(['df']);
  progress.completeStage(['df']);
  progress.startStage('cleaning');
  progress.startStep('missing');
  progress.planBehaviorOutputs(['missing_summary']);
  progress.startBehavior();
  progress.setBehaviorGoal('Count the missing values per column');
  progress.completeBehavior(['df', 'missing_summary']);
  progress.setAssessment('steps', {
    reasoning: 'Every column was counted.'
  });
  return progress.toJSON();
}

/** The progress state of `runningSnapshot`: step `impute`, two behaviors done, the third running. */
export function progressInImputeStep(): IProgressState {
  const progress = WorkflowProgress.fromJSON(progressInMissingStep(), clock);
  progress.completeStep(['df', 'missing_summary']);
  progress.startStep('impute');
  progress.setFocus('stages', 'Clean **carefully**.');
  progress.setFocus('steps', 'Impute the *numeric* columns with the median.');
  progress.setAssessment('stages', { percent: 50 });
  progress.startBehavior();
  progress.setBehaviorGoal('Try the median');
  progress.completeBehavior(['df', 'missing_summary']);
  progress.startBehavior();
  progress.completeBehavior(['df', 'missing_summary']);
  progress.startBehavior();
  progress.setBehaviorGoal('Try the mode for categories');
  return progress.toJSON();
}

/** A run saved in a notebook, paused in the imputation step. */
export function savedRun(): ISavedRunState {
  return {
    format: 'notebook-bcc-run',
    version: 1,
    savedAt: '2024-01-01T00:00:06.000Z',
    task: 'What drives prices?',
    dataFiles: ['housing.csv'],
    phase: 'plan',
    pendingFeedback: null,
    openBehavior: null,
    endStepRequested: false,
    fsm: {
      state: 'PAUSED',
      returnTo: 'BEHAVIOR_COMPLETED',
      history: [
        {
          event: 'PAUSE',
          from: 'BEHAVIOR_COMPLETED',
          to: 'PAUSED',
          timestamp: '2024-01-01T00:00:06.000Z'
        }
      ]
    },
    progress: progressInImputeStep(),
    effects: { current: ['newest effect'], history: ['older effect'] },
    contextVariables: {},
    kernelVariables: {},
    cells: { storeIds: {}, lastAddedCellId: null } as never,
    filter: null,
    legacy: {},
    timings: runningSnapshot().timings,
    stepMode: false
  };
}
