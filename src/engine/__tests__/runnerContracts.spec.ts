/**
 * Output contracts in the run loop (docs/protocol.md#output-contracts): a planner's contracts are
 * checked in the kernel after each behavior, the next observation carries the checks, and the run's end
 * says, in its outcome, what was delivered and which steps were given up (live, saved, resumed).
 */
import {
  normalizePlanningResponse,
  type PlanningResponse,
  type WorkflowTemplate
} from '../../protocol';
import { snapshotFromSaved } from '../snapshot';
import {
  code,
  exec,
  plan,
  saved,
  setup,
  TEMPLATE,
  text,
  withTemplate
} from './runnerSetup';

/** A planning answer as a planner sends it, read the way the client reads it. */
function answer(raw: unknown): PlanningResponse {
  const normalized = normalizePlanningResponse(raw);
  if (!normalized.ok) {
    throw new Error(normalized.error);
  }
  return normalized.response;
}

const REGION_TASK: WorkflowTemplate = {
  name: 'Revenue',
  stages: [
    {
      id: 's1',
      name: 'Answer',
      steps: [
        {
          id: 'sum_by_region',
          name: 'Revenue by region',
          output_contracts: [{ name: 'totals', kind: 'dict', keys: ['North'] }]
        },
        { id: 'pick_region', name: 'Pick the region' }
      ]
    }
  ]
};

const CONTRACT = {
  deliverables: [
    {
      name: 'answer',
      kind: 'label',
      of_column: 'region',
      describe: 'a region name'
    }
  ],
  summary: 'Deliver: `answer`, a region name'
};

/** The first answer: the plan, with the run's contract. */
const FIRST = answer({
  targetAchieved: false,
  context_update: {
    workflow_update: { workflowTemplate: REGION_TASK },
    contract: CONTRACT
  }
});

describe('WorkflowRunner: output contracts', () => {
  it('checks a step’s contracts and the deliverables after each behavior, and sends the checks with the next /planning', async () => {
    const s = setup({
      planning: [FIRST, plan(true), plan(false), plan(true)],
      generating: [
        [code("totals = {'North': 10}"), exec()],
        [code("answer = 'North'"), exec()]
      ]
    });
    s.driver.onExec = (_cell, driver) => {
      if (driver.executed.length === 1) {
        driver.variables.totals = { North: 10 };
        return { status: 'ok', output: '' };
      }
      return undefined;
    };
    const finished = await s.runner.start({ task: 'Which region?' });
    expect(s.driver.checkRequests.map(r => r.map(c => c.name))).toEqual([
      // After the first behavior: the step's contract and the deliverable.
      ['totals', 'answer'],
      // After the second, in the next step: the deliverable.
      ['answer'],
      // At the end: the deliverables once more.
      ['answer']
    ]);
    const afterFirst = s.client.planningRequests[1];
    expect(afterFirst.behavior_feedback).toBeDefined();
    expect(afterFirst.observation.context?.output_checks).toEqual({
      totals: { ok: true, kind: 'dict', type: 'dict(len=1)', value: null },
      answer: {
        ok: false,
        kind: 'label',
        type: null,
        value: null,
        reason: '`answer` is missing'
      }
    });
    const afterSecond = s.client.planningRequests[3];
    expect(afterSecond.observation.context?.output_checks).toEqual({
      answer: { ok: true, kind: 'label', type: 'str', value: 'North' }
    });
    // The step's contract made its variable an expected output.
    expect(
      s.client.planningRequests[1].observation.location.progress?.steps
        ?.current_outputs?.expected
    ).toEqual(['totals']);
    expect(finished).toMatchObject({
      reason: 'completed',
      message: 'The workflow is complete: every stage and step is done.',
      outcome: {
        ok: true,
        contractSummary: 'Deliver: `answer`, a region name',
        deliverables: [{ name: 'answer', status: 'delivered', value: 'North' }]
      }
    });
    expect(s.runner.snapshot.outcome?.ok).toBe(true);
    expect(s.runner.snapshot.outputChecks?.answer).toMatchObject({
      ok: true,
      behaviorId: null
    });
  });

  it('ends with problems when a row number stands where a label was asked, and says so in the saved run', async () => {
    const s = setup({
      planning: [FIRST, plan(true), plan(false), plan(true)],
      generating: [
        [code("totals = {'North': 10}"), exec()],
        [code("answer = df['revenue'].idxmax()"), exec()]
      ]
    });
    s.driver.onExec = (_cell, driver) => {
      if (driver.executed.length === 1) {
        driver.variables.totals = { North: 10 };
      } else {
        driver.variables.answer = 859;
      }
      return { status: 'ok', output: '' };
    };
    const finished = await s.runner.start({ task: 'Which region?' });
    const reason =
      "`answer` is 859, an int: not a value of df['region'] (a row number where a label was asked?)";
    expect(
      s.client.planningRequests[3].observation.context?.output_checks?.answer
    ).toEqual({
      ok: false,
      kind: 'label',
      type: 'int',
      value: '859',
      reason
    });
    expect(finished.reason).toBe('completed');
    expect(finished.message).toBe(
      'The workflow ended with problems: `answer` not delivered.'
    );
    expect(finished.outcome).toMatchObject({
      ok: false,
      deliverables: [{ name: 'answer', status: 'failed', reason }]
    });
    const file = saved(s.driver);
    expect(file.outcome?.summary).toBe(
      'Finished with problems: `answer` not delivered'
    );
    expect(file.contracts?.checks.answer).toMatchObject({ ok: false, reason });
    expect(snapshotFromSaved(file, 10).outcome).toMatchObject({
      ok: false,
      deliverables: [{ status: 'failed', value: '859' }]
    });
  });

  it('says a step given up, with the planner’s reason, at the end: live, in the saved run and once resumed elsewhere', async () => {
    const gaveUp = answer({
      targetAchieved: false,
      transition: { continue_behaviors: false },
      context_update: {
        progress_update: {
          level: 'steps',
          focus:
            'The file has no date column; the monthly totals cannot be made.'
        }
      }
    });
    const s = setup(
      {
        planning: [
          withTemplate(false, TEMPLATE),
          gaveUp,
          plan(false),
          plan(false)
        ],
        generating: [[text('tried')], [text('exploring')]]
      },
      // The run stops (resumable) after two behaviors: one of step p1, one of p2.
      { settings: { maxExecutionSteps: 2 } }
    );
    expect((await s.runner.start({ task: 't' })).reason).toBe('max_steps');
    expect(s.warnings.map(w => w.message)).toContain(
      "The planner gave up step 'Load': The file has no date column; the monthly totals cannot be made."
    );
    const live = s.runner.snapshot;
    expect(live.outcome?.givenUp).toEqual([
      {
        stageId: 's1',
        stepId: 'p1',
        name: 'Load',
        reason:
          'The file has no date column; the monthly totals cannot be made.'
      }
    ]);

    // Another window (a reload) resumes the saved run and completes it.
    const { runner } = setup(
      { planning: [plan(true), plan(true)] },
      { driver: s.driver, settings: { ...s.settings, maxExecutionSteps: 0 } }
    );
    const finished = await runner.resumeFromSaved();
    expect(finished?.reason).toBe('completed');
    expect(finished?.message).toBe(
      'The workflow ended with problems: 1 step given up.'
    );
    expect(finished?.outcome?.givenUp.map(step => step.name)).toEqual(['Load']);
    expect(runner.snapshot.state).toBe('WORKFLOW_COMPLETED');
    expect(runner.snapshot.outcome?.ok).toBe(false);
    expect(saved(s.driver).outcome?.summary).toBe(
      'Finished with problems: 1 step given up'
    );
    // Opened once more, the completed run still says it.
    const { runner: again } = setup(
      {},
      { driver: s.driver, settings: { ...s.settings, maxExecutionSteps: 0 } }
    );
    expect((await again.resumeFromSaved())?.outcome?.ok).toBe(false);
    runner.dispose();
    again.dispose();
  });

  it('checks the contracts a progress_update sends for the current step, which become its expected outputs', async () => {
    const s = setup({
      planning: [
        withTemplate(false, TEMPLATE, {
          context_update: {
            progress_update: {
              level: 'steps',
              current_outputs: {
                expected: [],
                produced: [],
                in_progress: [],
                contracts: [{ name: 'share', kind: 'number', decimals: 2 }]
              }
            }
          }
        }),
        plan(true)
      ],
      generating: [[code('share = 0.12'), exec()]]
    });
    s.driver.onExec = (_cell, driver) => {
      driver.variables.share = 0.12;
      return { status: 'ok', output: '' };
    };
    await s.runner.start({ task: 't' });
    expect(s.driver.checkRequests[0]).toEqual([
      { name: 'share', kind: 'number', decimals: 2 }
    ]);
    expect(
      s.client.planningRequests[1].observation.location.progress?.steps
        ?.current_outputs?.expected
    ).toEqual(['share']);
    expect(
      s.client.planningRequests[1].observation.context?.output_checks
    ).toEqual({
      share: { ok: true, kind: 'number', type: 'float', value: '0.12' }
    });
  });

  it('says when the kernel could not check, and a deliverable it could not check is not delivered', async () => {
    const s = setup({
      planning: [FIRST, plan(true), plan(true)],
      generating: [[text('a')], [text('b')]]
    });
    s.driver.checkFailure =
      'The kernel did not answer the variable inspection within 30 s.';
    const finished = await s.runner.start({ task: 't' });
    expect(s.warnings.map(w => w.message)).toContain(
      'The outputs could not be checked in the kernel: The kernel did not answer the variable inspection within 30 s.'
    );
    expect(finished.outcome?.deliverables[0]).toMatchObject({
      status: 'failed',
      reason:
        '`answer` could not be checked: The kernel did not answer the variable inspection within 30 s.'
    });
  });

  it('evaluates nothing for the planner in interactive mode before approved code ran', async () => {
    const s = setup(
      {
        planning: [FIRST, plan(false), plan(true)],
        generating: [[text('no code')], [code("answer = 'North'"), exec()]]
      },
      {
        settings: { interactive: true },
        hooks: { approveBehavior: async () => 'run' }
      }
    );
    await s.runner.start({ task: 't' });
    // No check after the behavior without code; one after the approved code, one at the end.
    expect(s.driver.checkRequests).toHaveLength(2);
    expect(
      s.client.planningRequests[1].observation.context?.output_checks
    ).toBeUndefined();
    expect(
      s.client.planningRequests[2].observation.context?.output_checks?.answer
        ?.ok
    ).toBe(true);
  });

  it('changes nothing for a planner that sends no contract', async () => {
    const s = setup({
      planning: [
        withTemplate(false, TEMPLATE),
        plan(true),
        plan(true),
        plan(true)
      ],
      generating: [[code('x = 1'), exec()]]
    });
    const finished = await s.runner.start({ task: 't' });
    expect(s.driver.checkRequests).toEqual([]);
    expect(finished.outcome).toMatchObject({ ok: true, deliverables: [] });
    expect(finished.message).toBe(
      'The workflow is complete: every stage and step is done.'
    );
    expect(s.runner.snapshot.outcome).toBeUndefined();
    expect(
      s.client.planningRequests.some(
        r => r.observation.context?.output_checks !== undefined
      )
    ).toBe(false);
  });
});
