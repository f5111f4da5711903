import type { WorkflowTemplate } from '../../protocol';
import type { IRunnerHooks } from '../types';
import {
  code,
  exec,
  ONE_STEP,
  plan,
  saved,
  setup,
  TEMPLATE,
  text,
  withTemplate
} from './runnerSetup';

describe('WorkflowRunner', () => {
  it('completes at once when the first plan says the goal is achieved', async () => {
    const s = setup({ planning: [withTemplate(true)] });
    const finished = await s.runner.start({
      task: 'Predict house prices',
      dataFiles: ['train.csv', 'test.csv']
    });
    expect(finished.reason).toBe('completed');
    expect(s.finished).toEqual([finished]);
    expect(s.client.generatingRequests).toHaveLength(0);
    const first = s.client.planningRequests[0];
    expect(first.observation.context?.variables).toMatchObject({
      problem_description: 'Predict house prices',
      csv_file_path: 'train.csv',
      data_files: ['train.csv', 'test.csv']
    });
    expect(first.behavior_feedback).toBeUndefined();
    expect(first.options).toEqual({
      stream: false,
      optional_actions: ['rewrite_cell']
    });
    expect(s.runner.snapshot.state).toBe('WORKFLOW_COMPLETED');
    expect(s.runner.isRunning).toBe(false);
    expect(s.transitions).toEqual([
      'START_WORKFLOW -> STAGE_RUNNING',
      'START_STEP -> STEP_RUNNING',
      'COMPLETE_STEP -> STEP_COMPLETED',
      'COMPLETE_STAGE -> STAGE_COMPLETED',
      'COMPLETE_WORKFLOW -> WORKFLOW_COMPLETED'
    ]);
    expect(saved(s.driver).phase).toBe('done');
    expect(saved(s.driver).progress.stages.completed[0].stage_id).toBe('s1');
  });

  it('moves through the steps and stages of the template itself', async () => {
    const s = setup({
      planning: [withTemplate(true, TEMPLATE), plan(true), plan(true)]
    });
    await s.runner.start({ task: 't' });
    const locations = s.client.planningRequests.map(r => [
      r.observation.location.current?.stage_id,
      r.observation.location.current?.step_id
    ]);
    expect(locations).toEqual([
      [null, null],
      ['s1', 'p2'],
      ['s2', 'q1']
    ]);
    expect(
      s.client.planningRequests[1].observation.location.progress?.steps
    ).toMatchObject({ current: 'p2', remaining: [] });
    expect(
      s.client.planningRequests[1].observation.location.progress?.steps
        ?.completed?.[0]
    ).toMatchObject({ step_id: 'p1', goal: 'Load the data' });
    expect(s.runner.snapshot.stages.map(st => st.status)).toEqual([
      'completed',
      'completed'
    ]);
  });

  it("puts the planner's focus texts in the snapshot, also when they come with the first template", async () => {
    const s = setup({
      planning: [
        withTemplate(false, ONE_STEP, {
          context_update: {
            progress_update: { level: 'steps', focus: 'Read the **CSV**.' }
          }
        }),
        plan(false, {
          context_update: {
            progress_update: { level: 'stages', focus: 'Get it all in.' }
          }
        }),
        plan(true)
      ],
      generating: [[text('one')], [text('two')]]
    });
    const seen: Array<[string | null, string | null]> = [];
    s.runner.cellAdded.connect(() => {
      const { stage, step } = s.runner.snapshot;
      seen.push([stage.focus, step.focus]);
    });
    const finished = await s.runner.start({ task: 't' });
    expect(finished.reason).toBe('completed');
    expect(seen).toEqual([
      [null, 'Read the **CSV**.'],
      ['Get it all in.', 'Read the **CSV**.']
    ]);
  });

  it("adds the filter's expected variables to the behavior's planned outputs, not in their place", async () => {
    const s = setup({
      planning: [
        withTemplate(false, ONE_STEP, {
          context_update: {
            progress_update: {
              level: 'behaviors',
              focus: 'Load',
              current_outputs: {
                expected: ['df'],
                produced: [],
                in_progress: []
              }
            }
          },
          context_filter: {
            outputs_tracking: { expected_variables: ['report'] }
          }
        }),
        plan(true)
      ],
      generating: [[code('df = 1')]]
    });
    await s.runner.start({ task: 't' });
    expect(
      s.client.generatingRequests[0].observation.location.progress?.behaviors
        ?.current_outputs?.expected
    ).toEqual(['df', 'report']);
  });

  it('runs three behaviors, then completes the step', async () => {
    const s = setup({
      planning: [
        withTemplate(false, ONE_STEP, {
          context_update: {
            progress_update: { level: 'behaviors', focus: 'Load the CSV' }
          },
          context_filter: { outputs_tracking: { expected_variables: ['df'] } }
        }),
        plan(false, { transition: { continue_behaviors: true } }),
        plan(false),
        plan(true)
      ],
      generating: [
        [
          { action: 'new_chapter', content: 'Load' },
          code('df = load()\nprint("loaded")', 'load'),
          exec('load')
        ],
        [text('Look at it'), code('print("rows: 1460")'), exec()],
        [code('raise KeyError("SalePrice")'), exec()]
      ]
    });
    const cells: string[] = [];
    s.runner.cellAdded.connect((_, c) =>
      cells.push(c.provenance.behavior_id ?? '')
    );
    const finished = await s.runner.start({ task: 't' });
    expect(finished.reason).toBe('completed');
    expect(s.client.generatingRequests).toHaveLength(3);
    expect(s.client.planningRequests).toHaveLength(4);

    const generating = s.client.generatingRequests;
    expect(
      generating.map(r => r.observation.location.current?.behavior_id)
    ).toEqual(['behavior_001', 'behavior_002', 'behavior_003']);
    expect(generating[0].options).toEqual({
      stream: true,
      optional_actions: ['rewrite_cell']
    });
    // The filter of the first plan shaped the first generating request.
    expect(generating[0].observation.location.progress?.behaviors).toEqual({
      focus: 'Load the CSV',
      current_outputs: { expected: ['df'], produced: [], in_progress: [] }
    });

    const feedback = s.client.planningRequests
      .slice(1)
      .map(r => r.behavior_feedback);
    expect(feedback).toEqual([
      {
        behavior_id: 'behavior_001',
        actions_executed: 3,
        actions_succeeded: 3,
        sections_added: 1,
        last_action_result: 'success'
      },
      {
        behavior_id: 'behavior_002',
        actions_executed: 3,
        actions_succeeded: 3,
        sections_added: 0,
        last_action_result: 'success'
      },
      {
        behavior_id: 'behavior_003',
        actions_executed: 2,
        actions_succeeded: 1,
        sections_added: 0,
        last_action_result: 'error'
      }
    ]);

    const second = s.client.planningRequests[1].observation;
    expect(second.context?.effects?.current).toEqual(['loaded']);
    expect(second.location.progress?.behaviors?.current_outputs).toEqual({
      expected: ['df'],
      produced: ['df'],
      in_progress: []
    });
    expect(second.location.progress?.steps?.current_outputs?.produced).toEqual([
      'df'
    ]);
    expect(second.context?.variables?.df).toBe('load()');

    const fourth = s.client.planningRequests[3].observation;
    expect(fourth.context?.effects?.current).toEqual([
      'Traceback (most recent call last):\n  Cell In[1], line 1\nKeyError: SalePrice'
    ]);
    expect(fourth.context?.effects?.history).toEqual(['loaded', 'rows: 1460']);
    expect(fourth.context?.FSM?.last_transition).toBe(
      'COMPLETE_BEHAVIOR -> BEHAVIOR_COMPLETED'
    );
    expect(s.transitions).toContain('NEXT_BEHAVIOR -> BEHAVIOR_RUNNING');
    expect(cells).toEqual([
      'behavior_001',
      'behavior_001',
      'behavior_002',
      'behavior_002',
      'behavior_003'
    ]);
    expect(s.driver.cells.map(c => c.source)).toEqual([
      '## Load',
      'df = load()\nprint("loaded")',
      'Look at it',
      'print("rows: 1460")',
      'raise KeyError("SalePrice")'
    ]);
    const snap = s.runner.snapshot;
    expect(snap.behaviorsRun).toBe(3);
    expect(snap.timings.map(t => t.behaviorId)).toEqual([
      'behavior_001',
      'behavior_002',
      'behavior_003'
    ]);
    expect(
      snap.timings.every(t => t.endedAt !== null && t.durationMs !== null)
    ).toBe(true);
    expect(s.driver.saveCount).toBeGreaterThanOrEqual(4);
  });

  it('asks before a workflow update and applies it when confirmed', async () => {
    const updated: WorkflowTemplate = {
      name: 'Updated',
      stages: [
        {
          id: 's1',
          name: 'Stage 1',
          steps: [
            { id: 'p1', name: 'Load' },
            { id: 'p_new', name: 'New step' }
          ]
        }
      ]
    };
    const states: string[] = [];
    const asked: [string | undefined, string | undefined][] = [];
    const hooks: IRunnerHooks = {
      confirmWorkflowUpdate: async (template, current) => {
        states.push(s.runner.snapshot.state);
        asked.push([template.name, current?.name]);
        return true;
      }
    };
    const s = setup(
      {
        planning: [withTemplate(false), plan(true), plan(true)],
        generating: [[{ action: 'update_workflow', updated_workflow: updated }]]
      },
      { hooks }
    );
    const finished = await s.runner.start({ task: 't' });
    expect(finished.reason).toBe('completed');
    expect(asked).toEqual([['Updated', 'Small']]);
    expect(states).toEqual(['WORKFLOW_UPDATE_PENDING']);
    expect(s.transitions).toContain(
      'UPDATE_WORKFLOW -> WORKFLOW_UPDATE_PENDING'
    );
    expect(s.transitions).toContain(
      'UPDATE_WORKFLOW_CONFIRMED -> ACTION_RUNNING'
    );
    expect(
      s.client.planningRequests[2].observation.location.current?.step_id
    ).toBe('p_new');
    expect(s.runner.snapshot.workflowName).toBe('Updated');
  });

  it('keeps the current workflow when the update is rejected', async () => {
    const other: WorkflowTemplate = {
      name: 'Other',
      stages: [{ id: 'x', name: 'X', steps: [{ id: 'x1', name: 'X1' }] }]
    };
    const confirm = jest.fn(async () => false);
    const s = setup(
      {
        planning: [withTemplate(false), withTemplate(true, other)]
      },
      { hooks: { confirmWorkflowUpdate: confirm } }
    );
    s.client.generatingScript.push([text('working')]);
    const finished = await s.runner.start({ task: 't' });
    expect(finished.reason).toBe('completed');
    expect(confirm).toHaveBeenCalledTimes(1);
    expect(s.transitions).toContain(
      'UPDATE_WORKFLOW_REJECTED -> BEHAVIOR_COMPLETED'
    );
    expect(s.runner.snapshot.workflowName).toBe('Small');
    expect(saved(s.driver).effects.current).toContain(
      'The workflow update was rejected by the user; the current workflow is kept.'
    );
  });

  it('applies a minor workflow update (same stages and steps) without asking', async () => {
    const renamed: WorkflowTemplate = {
      name: 'Small, renamed',
      stages: [
        {
          id: 's1',
          name: 'Stage one',
          steps: [{ id: 'p1', name: 'Load the CSV', goal: 'df exists' }]
        }
      ]
    };
    const confirm = jest.fn(async () => false);
    const s = setup(
      {
        planning: [withTemplate(false), plan(true)],
        generating: [
          [
            { action: 'update_workflow', updated_workflow: renamed },
            text('after')
          ]
        ]
      },
      { hooks: { confirmWorkflowUpdate: confirm } }
    );
    const finished = await s.runner.start({ task: 't' });
    expect(finished.reason).toBe('completed');
    expect(confirm).not.toHaveBeenCalled();
    expect(s.transitions).not.toContain(
      'UPDATE_WORKFLOW -> WORKFLOW_UPDATE_PENDING'
    );
    expect(s.runner.snapshot.workflowName).toBe('Small, renamed');
    expect(s.runner.snapshot.stages[0].steps[0].name).toBe('Load the CSV');
    const { current, history } = saved(s.driver).effects;
    expect([...history, ...current].join('\n')).toContain(
      'The planner updated the names or goals of the workflow'
    );
  });

  it('does not ask when workflow updates are accepted automatically', async () => {
    const confirm = jest.fn(async () => false);
    const s = setup(
      {
        planning: [withTemplate(false), withTemplate(true, TEMPLATE)],
        generating: [[text('a')]]
      },
      {
        settings: { autoAcceptWorkflowUpdates: true },
        hooks: { confirmWorkflowUpdate: confirm }
      }
    );
    await s.runner.start({ task: 't' });
    expect(confirm).not.toHaveBeenCalled();
    expect(s.runner.snapshot.workflowName).toBe('Ames');
  });

  it('switches stage when a workflow update names the next stage', async () => {
    const s = setup(
      {
        planning: [
          withTemplate(false, TEMPLATE),
          {
            targetAchieved: false,
            context_update: {
              workflow_update: {
                workflowTemplate: { ...TEMPLATE, name: 'Ames v2' },
                nextStageId: 's2'
              }
            }
          },
          plan(true)
        ],
        generating: [[text('a')]]
      },
      { settings: { autoAcceptWorkflowUpdates: true } }
    );
    await s.runner.start({ task: 't' });
    expect(
      s.client.planningRequests[2].observation.location.current
    ).toMatchObject({
      stage_id: 's2',
      step_id: 'q1'
    });
    expect(
      saved(s.driver).progress.stages.completed.map(c => c.stage_id)
    ).toEqual(['s1', 's2']);
  });

  it('changes the run only through recorded transactions: each transition and each save is one of theirs', async () => {
    const s = setup({
      planning: [withTemplate(false), plan(true)],
      generating: [[code('x = 1'), exec(), text('done')]]
    });
    await s.runner.start({ task: 't' });
    const record = s.runner.transactions;
    expect(record.map(r => r.seq)).toEqual(record.map((_, i) => i + 1));
    expect(
      record.flatMap(r => r.transitions.map(t => `${t.event} -> ${t.to}`))
    ).toEqual(s.transitions);
    expect(record.filter(r => r.save !== undefined)).toHaveLength(
      s.driver.saveCount
    );
    expect(record.map(r => r.origin)).toEqual(
      expect.arrayContaining([
        'runner.start',
        'rewind.stepCheckpoint',
        'plan.context',
        'phases.behaviorBegun',
        'notebook.cellAdded',
        'behavior.actionApplied',
        'phases.behaviorClosed',
        'phases.stepCompleted'
      ])
    );
  });
});
