import type {
  PlanningRequestInput,
  PlanningResponse,
  WorkflowTemplate
} from '../../protocol';
import {
  FakeNotebookDriver,
  FakePlannerService,
  IFakePlannerScript
} from '../testing';
import { RunTrace } from '../trace';
import type { IRunWarning } from '../types';
import {
  code,
  effectsOf,
  exec,
  ONE_STEP,
  plan,
  saved,
  setup,
  TEMPLATE,
  text,
  withTemplate
} from './runnerSetup';

/** A planner service that learns its dialect from the first answer and keeps a counter as its state. */
class DialectPlanner extends FakePlannerService {
  constructor(script: IFakePlannerScript) {
    super(script);
  }

  dialect: string | null = null;
  state = 0;
  calls: string[] = [];

  async planning(
    request: PlanningRequestInput,
    options: { signal?: AbortSignal } = {}
  ): Promise<PlanningResponse> {
    const answer = await super.planning(request, options);
    this.dialect = 'v1';
    this.state++;
    return answer;
  }

  saveState(): unknown {
    this.calls.push('save');
    return { requests: this.state };
  }

  restoreState(value: unknown): void {
    this.calls.push(`restore ${JSON.stringify(value)}`);
    this.state = (value as { requests: number }).requests;
  }

  resetState(): void {
    this.calls.push('reset');
    this.state = 0;
  }
}

const THREE_STEPS: WorkflowTemplate = {
  name: 'Three',
  stages: [
    {
      id: 's1',
      name: 'Stage 1',
      steps: [
        { id: 'a', name: 'A' },
        { id: 'b', name: 'B' },
        { id: 'c', name: 'C' }
      ]
    },
    { id: 's2', name: 'Stage 2', steps: [{ id: 'd', name: 'D' }] }
  ]
};

function stepIds(requests: PlanningRequestInput[]): (string | null)[] {
  return requests.map(r => r.observation.location.current?.step_id ?? null);
}

function achievedTo(
  transition: {
    next_stage_id?: string;
    next_step_id?: string;
    stage_complete?: boolean;
  },
  template?: WorkflowTemplate
): PlanningResponse {
  const extra: Partial<PlanningResponse> = {
    transition: { target_achieved: true, ...transition }
  };
  return template ? withTemplate(true, template, extra) : plan(true, extra);
}

describe('WorkflowRunner and the planner service state', () => {
  it('resets, saves and restores the service state with the run, and records its dialect once', async () => {
    const trace = new RunTrace();
    const { driver, client, runner } = setup(
      new DialectPlanner({
        planning: [withTemplate(true, TEMPLATE), plan(true), plan(true)]
      }),
      { trace }
    );
    expect(runner.snapshot.plannerDialect).toBeNull();
    await runner.start({ task: 't' });
    expect(client.calls[0]).toBe('reset');
    expect(client.calls).toContain('save');
    expect(runner.snapshot.plannerDialect).toBe('v1');
    expect(trace.plannerDialect).toBe('v1');
    expect(
      trace
        .toJSONL()
        .split('\n')
        .filter(line => line.includes('"kind":"dialect"'))
    ).toHaveLength(1);
    expect(trace.records.map(r => r.kind)).not.toContain('dialect');
    expect(saved(driver).planner).toEqual({ requests: 3 });
    expect(saved(driver).plannerDialect).toBe('v1');

    // A reload: a new service gets the saved state back before the run goes on.
    const state = saved(driver);
    state.phase = 'plan';
    state.fsm = { state: 'STEP_RUNNING', returnTo: null, history: [] };
    await driver.saveRunState(state);
    const { client: reloaded, runner: resumed } = setup(
      new DialectPlanner({ defaultPlanning: plan(true) }),
      { driver }
    );
    await resumed.resumeFromSaved();
    expect(reloaded.calls[0]).toBe('restore {"requests":3}');
    expect(reloaded.calls).not.toContain('reset');
    expect(resumed.snapshot.plannerDialect).toBe('v1');
  });

  it('works with a service that has none of the optional members', async () => {
    const s = setup({ planning: [withTemplate(true)] });
    await s.runner.start({ task: 't' });
    expect(s.runner.snapshot.plannerDialect).toBeNull();
    expect(saved(s.driver).planner).toBeUndefined();
  });
});

describe('WorkflowRunner and the notebook a planner service may read', () => {
  it('gives the service the notebook with its last five cells, while the observation keeps the seed summary', async () => {
    const driver = new FakeNotebookDriver();
    for (let i = 1; i <= 6; i++) {
      driver.addUserCell(`note ${i}`, 'markdown');
    }
    const s = setup(
      {
        planning: [withTemplate(false), plan(true)],
        generating: [[code(`x = 1\nprint('${'y'.repeat(600)}')`), exec()]]
      },
      { driver }
    );
    await s.runner.start({ task: 't' });
    const afterBehavior = s.client.planningRequests[1];
    expect(afterBehavior.observation.context?.notebook).toEqual({
      title: null,
      cell_count: 7,
      last_cell_type: 'code',
      last_output: 'y'.repeat(600)
    });
    const notebook = s.client.planningNotebooks[1];
    expect(notebook?.execution_count).toBe(1);
    expect(notebook?.cells.map(c => c.content)).toEqual([
      'note 3',
      'note 4',
      'note 5',
      'note 6',
      `x = 1\nprint('${'y'.repeat(600)}')`
    ]);
    expect(notebook?.cells[4]).toMatchObject({
      type: 'code',
      outputs: ['y'.repeat(500) + '…'],
      metadata: { role: 'code', step_id: 'p1' }
    });
    expect(notebook?.cells[0]).toMatchObject({
      type: 'markdown',
      outputs: [],
      metadata: {}
    });
    expect(s.client.planningNotebooks[0]?.cells).toHaveLength(5);
    expect(s.client.generatingNotebooks[0]?.cells.at(-1)?.content).toBe(
      'note 6'
    );
  });
});

describe('WorkflowRunner transitions named by the planner', () => {
  it('follows next_stage_id, leaving the rest of the current stage', async () => {
    const s = setup({
      planning: [achievedTo({ next_stage_id: 's2' }, THREE_STEPS), plan(true)]
    });
    await s.runner.start({ task: 't' });
    expect(stepIds(s.client.planningRequests)).toEqual([null, 'd']);
    expect(s.finished.map(f => f.reason)).toEqual(['completed']);
    expect(
      saved(s.driver).progress.stages.completed.map(c => c.stage_id)
    ).toEqual(['s1', 's2']);
  });

  it('follows next_step_id within the stage and into another stage', async () => {
    const s = setup({
      planning: [
        achievedTo({ next_step_id: 'c' }, THREE_STEPS),
        achievedTo({ next_step_id: 'd' }),
        plan(true)
      ]
    });
    await s.runner.start({ task: 't' });
    expect(stepIds(s.client.planningRequests)).toEqual([null, 'c', 'd']);
  });

  it('goes to the named step of the named stage', async () => {
    const template: WorkflowTemplate = {
      name: 'Two stages',
      stages: [
        THREE_STEPS.stages[0],
        {
          id: 's2',
          name: 'Stage 2',
          steps: [
            { id: 'd', name: 'D' },
            { id: 'e', name: 'E' }
          ]
        }
      ]
    };
    const s = setup({
      planning: [
        achievedTo({ next_stage_id: 's2', next_step_id: 'e' }, template),
        plan(true)
      ]
    });
    await s.runner.start({ task: 't' });
    expect(stepIds(s.client.planningRequests)).toEqual([null, 'e']);
  });

  it('stage_complete skips the rest of the stage and starts the next one', async () => {
    const s = setup({
      planning: [achievedTo({ stage_complete: true }, THREE_STEPS), plan(true)]
    });
    await s.runner.start({ task: 't' });
    expect(stepIds(s.client.planningRequests)).toEqual([null, 'd']);
    expect(s.finished.map(f => f.reason)).toEqual(['completed']);
    const progress = saved(s.driver).progress;
    expect(progress.stages.completed.map(c => c.stage_id)).toEqual([
      's1',
      's2'
    ]);
    expect(progress.steps.completed.map(c => c.step_id)).toEqual(['d']);
    // The panel shows the steps that never ran as skipped, not as completed.
    expect(
      s.runner.snapshot.stages.map(stage => [
        stage.id,
        stage.status,
        stage.steps.map(step => `${step.id}:${step.status}`)
      ])
    ).toEqual([
      ['s1', 'completed', ['a:completed', 'b:skipped', 'c:skipped']],
      ['s2', 'completed', ['d:completed']]
    ]);
  });

  it('stage_complete in the last stage completes the workflow, whatever steps remain', async () => {
    const oneStage: WorkflowTemplate = {
      name: 'One stage',
      stages: [THREE_STEPS.stages[0]]
    };
    const s = setup({
      planning: [achievedTo({ stage_complete: true }, oneStage)]
    });
    await s.runner.start({ task: 't' });
    expect(stepIds(s.client.planningRequests)).toEqual([null]);
    expect(s.finished.map(f => f.reason)).toEqual(['completed']);
    expect(s.runner.snapshot.state).toBe('WORKFLOW_COMPLETED');
    expect(s.transitions.slice(-3)).toEqual([
      'COMPLETE_STEP -> STEP_COMPLETED',
      'COMPLETE_STAGE -> STAGE_COMPLETED',
      'COMPLETE_WORKFLOW -> WORKFLOW_COMPLETED'
    ]);
  });

  it('stage_complete ends the step even when its target is not achieved, and ignores a next step of the same stage', async () => {
    const s = setup({
      planning: [
        withTemplate(false, THREE_STEPS, {
          transition: { stage_complete: true, next_step_id: 'c' }
        }),
        plan(true)
      ]
    });
    await s.runner.start({ task: 't' });
    expect(stepIds(s.client.planningRequests)).toEqual([null, 'd']);
    expect(s.client.generatingRequests).toHaveLength(0);
  });

  it('warns about unknown ids, tells the planner, and goes on in order', async () => {
    const s = setup({
      planning: [
        achievedTo({ next_stage_id: 'nowhere' }, THREE_STEPS),
        achievedTo({ next_step_id: 'nothing' }),
        plan(true),
        plan(true)
      ]
    });
    await s.runner.start({ task: 't' });
    expect(stepIds(s.client.planningRequests)).toEqual([null, 'b', 'c', 'd']);
    const warnings = s.warnings.map((w: IRunWarning) => w.message);
    expect(warnings).toContain(
      "The planner named an unknown next stage 'nowhere'; the run goes on in order."
    );
    expect(warnings).toContain(
      "The planner named an unknown next step 'nothing'; the run goes on in order."
    );
    expect(effectsOf(s.client.planningRequests[1]).join('\n')).toContain(
      "unknown next stage 'nowhere'"
    );
  });
});

describe("WorkflowRunner and a run's first template", () => {
  it("applies the planner's first template without asking, even over one saved by an earlier run", async () => {
    const driver = new FakeNotebookDriver();
    const first = setup(
      { planning: [withTemplate(true, TEMPLATE), plan(true), plan(true)] },
      { driver }
    );
    await first.runner.start({ task: 'first' });
    const confirm = jest.fn(async () => false);
    const second = setup(
      {
        planning: [withTemplate(true, THREE_STEPS)],
        defaultPlanning: plan(true)
      },
      { hooks: { confirmWorkflowUpdate: confirm }, driver }
    );
    await second.runner.start({ task: 'second' });
    expect(confirm).not.toHaveBeenCalled();
    expect(saved(driver).progress.template?.name).toBe('Three');
    // p1 is in the saved template; the stage is s1 in both, so the run goes on in it.
    expect(stepIds(second.client.planningRequests)).toEqual([
      'p1',
      'a',
      'b',
      'c',
      'd'
    ]);
  });

  it("starts at the new template's first stage when the current stage is not in it", async () => {
    const driver = new FakeNotebookDriver();
    const first = setup(
      { planning: [withTemplate(true, TEMPLATE), plan(true), plan(true)] },
      { driver }
    );
    await first.runner.start({ task: 'first' });
    const other: WorkflowTemplate = {
      name: 'Other',
      stages: [{ id: 'x', name: 'X', steps: [{ id: 'x1', name: 'X1' }] }]
    };
    const second = setup(
      {
        planning: [withTemplate(false, other), plan(true)],
        generating: [[text('hello')]]
      },
      { driver }
    );
    await second.runner.start({ task: 'second' });
    expect(stepIds(second.client.planningRequests)).toEqual(['p1', 'x1']);
    expect(
      saved(driver).progress.stages.completed.map(c => c.stage_id)
    ).toEqual(['x']);
  });

  it('honours provisional only on a run’s first template: a later one cannot let the next update skip the question', async () => {
    const withStage = (id: string): WorkflowTemplate => ({
      name: id,
      stages: [
        ...ONE_STEP.stages,
        { id, name: id, steps: [{ id: `${id}_1`, name: id }] }
      ]
    });
    const confirm = jest.fn(async () => false);
    const s = setup(
      {
        planning: [
          withTemplate(false, ONE_STEP),
          {
            targetAchieved: false,
            context_update: {
              workflow_update: {
                workflowTemplate: withStage('s8'),
                provisional: true
              }
            }
          },
          withTemplate(false, withStage('s9')),
          plan(true)
        ],
        generating: [[text('a')], [text('b')], [text('c')]]
      },
      { hooks: { confirmWorkflowUpdate: confirm } }
    );
    expect((await s.runner.start({ task: 't' })).reason).toBe('completed');
    expect(confirm).toHaveBeenCalledTimes(2);
  });

  it("replaces a provisional start template with the planner's first one without asking, after the step that sent it", async () => {
    // v1: the adapter starts the run in the server's entry step; that step streams the real plan.
    const entry: WorkflowTemplate = {
      name: 'Entry',
      stages: [
        { id: 'c0', name: 'Planning', steps: [{ id: 'c0_s1', name: 'Design' }] }
      ]
    };
    const planned: WorkflowTemplate = {
      name: 'Planned',
      stages: [
        { id: 'c1', name: 'Load', steps: [{ id: 'c1_s1', name: 'Read' }] },
        { id: 'c2', name: 'Explore', steps: [{ id: 'c2_s1', name: 'Plot' }] }
      ]
    };
    const confirm = jest.fn(async () => false);
    const s = setup(
      {
        planning: [
          {
            targetAchieved: false,
            context_update: {
              workflow_update: { workflowTemplate: entry, provisional: true }
            }
          },
          plan(true),
          plan(false),
          plan(true),
          plan(false),
          plan(true)
        ],
        generating: [
          [
            text('designing'),
            { action: 'update_workflow', updated_workflow: planned }
          ],
          [text('reading')],
          [text('plotting')]
        ]
      },
      { hooks: { confirmWorkflowUpdate: confirm } }
    );
    const finished = await s.runner.start({ task: 't' });
    expect(finished.reason).toBe('completed');
    expect(confirm).not.toHaveBeenCalled();
    // The entry step's feedback goes out under the entry step, then the plan's steps run in order.
    const feedback = s.client.planningRequests.filter(r => r.behavior_feedback);
    expect(stepIds(feedback)).toEqual(['c0_s1', 'c1_s1', 'c2_s1']);
    expect(
      s.client.generatingRequests.map(
        r => r.observation.location.current?.step_id
      )
    ).toEqual(['c0_s1', 'c1_s1', 'c2_s1']);
  });

  it('still asks about a later, different template of the same run', async () => {
    const confirm = jest.fn(async () => true);
    const s = setup(
      {
        planning: [
          withTemplate(true, TEMPLATE),
          withTemplate(true, THREE_STEPS)
        ],
        defaultPlanning: plan(true)
      },
      { hooks: { confirmWorkflowUpdate: confirm } }
    );
    await s.runner.start({ task: 't' });
    expect(confirm).toHaveBeenCalledTimes(1);
  });
});
