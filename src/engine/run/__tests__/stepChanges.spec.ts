/** What the run's beginning, its steps and the ends of a loop change, decided without a runner. */
import type { WorkflowTemplate } from '../../../protocol';
import { op } from '../../state/transaction';
import { behaviorBegun } from '../behaviorChanges';
import type { ILocation } from '../planUpdate';
import {
  failed,
  retried,
  runBegun,
  savedRunResumed,
  settled,
  stepCompleted
} from '../stepChanges';
import {
  applied,
  begunState,
  newState,
  TEMPLATE
} from '../../__tests__/runnerSetup';

const NOW = new Date('2026-01-01T10:00:00Z');

/** TEMPLATE with step p2 of s1 marked done by the plan. */
const P2_DONE: WorkflowTemplate = {
  ...TEMPLATE,
  stages: [
    {
      ...TEMPLATE.stages[0],
      steps: [
        TEMPLATE.stages[0].steps[0],
        { ...TEMPLATE.stages[0].steps[1], status: 'completed' }
      ]
    },
    TEMPLATE.stages[1]
  ]
};

describe('runBegun', () => {
  it('sets the task, data files, model and target as context variables, at the first step', () => {
    const state = applied(
      newState(),
      ...runBegun(
        {
          task: 'predict',
          dataFiles: ['train.csv', 'test.csv'],
          llmModel: 'gemma',
          targetColumn: 'SalePrice',
          stepMode: true
        },
        TEMPLATE,
        'generate'
      )
    );
    expect(state.contextVariables).toEqual({
      problem_description: 'predict',
      csv_file_path: 'train.csv',
      data_files: ['train.csv', 'test.csv'],
      llm_model: 'gemma',
      target_column: 'SalePrice'
    });
    expect([
      state.progress.currentStageId,
      state.progress.currentStepId
    ]).toEqual(['s1', 'p1']);
    expect(state.fsm.state).toBe('STEP_RUNNING');
    expect(state.stepMode).toBe(true);
    expect(state.phase).toBe('generate');
  });

  it('starts nowhere until the planner sends a template, and forgets the run before', () => {
    const state = begunState('first', TEMPLATE);
    applied(state, op.effects('add', 'old'));
    applied(state, ...runBegun({ task: 'second' }, null, 'plan'));
    expect(state.progress.currentStageId).toBeNull();
    expect(state.effects.current).toEqual([]);
    expect(state.contextVariables).toEqual({ problem_description: 'second' });
  });
});

describe('stepCompleted', () => {
  it.each<
    [
      string,
      WorkflowTemplate,
      ILocation | null,
      boolean,
      [string | null, string | null, string]
    ]
  >([
    ['the next step of the stage', TEMPLATE, null, false, ['s1', 'p2', 'plan']],
    [
      'the next stage, past a step done',
      P2_DONE,
      null,
      false,
      ['s2', 'q1', 'plan']
    ],
    [
      'the step a transition names',
      TEMPLATE,
      { stageId: 's1', stepId: 'p2' },
      false,
      ['s1', 'p2', 'plan']
    ],
    [
      'another stage a transition names',
      TEMPLATE,
      { stageId: 's2', stepId: null },
      false,
      ['s2', 'q1', 'plan']
    ],
    [
      'the next stage when the stage completes',
      TEMPLATE,
      { stageId: 's1', stepId: 'p2' },
      true,
      ['s2', 'q1', 'plan']
    ]
  ])(
    'goes to %s',
    (_, template, target, stageComplete, [stage, step, phase]) => {
      const state = begunState('t', template);
      applied(state, op.fsm('COMPLETE_STEP'));
      applied(
        state,
        ...stepCompleted(state, {
          target,
          stageComplete,
          startPhase: 'plan'
        })
      );
      expect([
        state.progress.currentStageId,
        state.progress.currentStepId,
        state.phase
      ]).toEqual([stage, step, phase]);
      expect(state.fsm.state).toBe('STEP_RUNNING');
      // Leaving the stage completes it (and starts the next one's steps afresh).
      expect(state.progress.completed('stages').map(s => s.stage_id)).toEqual(
        stage === 's1' ? [] : ['s1']
      );
      expect(state.progress.completed('steps').map(s => s.step_id)).toEqual(
        stage === 's1' ? ['p1'] : []
      );
    }
  );

  it('completes the workflow after its last step', () => {
    const state = begunState('t', TEMPLATE);
    for (const _ of ['p1', 'p2', 'q1']) {
      applied(state, op.fsm('COMPLETE_STEP'));
      applied(
        state,
        ...stepCompleted(state, {
          target: null,
          stageComplete: false,
          startPhase: 'generate'
        })
      );
    }
    expect(state.fsm.state).toBe('WORKFLOW_COMPLETED');
    expect(state.phase).toBe('done');
    expect(state.progress.completed('stages').map(s => s.stage_id)).toEqual([
      's1',
      's2'
    ]);
  });

  it('notes why a step ended and clears what was pending for it', () => {
    const state = begunState('t', TEMPLATE);
    applied(
      state,
      op.set({
        endStepRequested: true,
        pendingFeedback: {
          behavior_id: 'b',
          actions_executed: 0,
          actions_succeeded: 0,
          sections_added: 0,
          last_action_result: 'success'
        }
      }),
      op.fsm('COMPLETE_STEP')
    );
    applied(
      state,
      ...stepCompleted(state, {
        note: 'ended without reaching its target',
        target: null,
        stageComplete: false,
        startPhase: 'plan'
      })
    );
    expect(state.endStepRequested).toBe(false);
    expect(state.pendingFeedback).toBeNull();
    expect(state.progress.completed('steps')[0].goal).toBe(
      'Load the data (ended without reaching its target)'
    );
  });
});

describe('the ends of a loop and what follows', () => {
  function midBehavior() {
    const state = begunState('t', TEMPLATE);
    return applied(
      state,
      ...behaviorBegun(state, { now: NOW, maxHistoryItems: 10 })
    );
  }

  it('settles a stopped loop: the behavior recorded as stopped, the step planned again', () => {
    const state = midBehavior();
    applied(state, op.set({ phase: 'generate' }));
    applied(state, ...settled(state, 'stopped', NOW));
    expect(state.behavior).toBeNull();
    expect(state.pendingFeedback?.last_action_result).toBe('stopped');
    expect(state.phase).toBe('plan');
    expect(state.fsm.state).toBe('IDLE');
  });

  it('keeps a completed run done when it settles', () => {
    const state = begunState('t', TEMPLATE);
    applied(state, op.set({ phase: 'done' }));
    applied(state, ...settled(state, 'max_steps', NOW));
    expect(state.phase).toBe('done');
  });

  it('fails into ERROR with the error kept, and a retry goes on with the variables the user set', () => {
    const state = begunState('t', TEMPLATE);
    const error = {
      endpoint: 'planning' as const,
      message: 'down',
      retryable: true
    };
    applied(state, ...failed(error));
    expect(state.fsm.state).toBe('ERROR');
    expect(state.error).toEqual(error);
    applied(state, ...retried(state, { target_column: 'Price' }));
    expect(state.fsm.state).toBe('STEP_RUNNING');
    expect(state.error).toBeNull();
    expect(state.userVariables).toEqual(['target_column']);
    expect(state.contextVariables.target_column).toBe('Price');
    expect(state.variablesDirty).toBe(true);
  });

  it('resumes a saved run cut mid-behavior: the behavior closed as interrupted, the step planned again', () => {
    const state = midBehavior();
    applied(state, op.fsm('START_ACTION'));
    applied(state, op.restore(state.toJSON()));
    applied(state, ...savedRunResumed(state, NOW));
    expect(state.pendingFeedback?.last_action_result).toBe('interrupted');
    expect(state.fsm.state).toBe('STEP_RUNNING');
    expect(state.phase).toBe('plan');
  });
});
