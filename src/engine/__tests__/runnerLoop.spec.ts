import type { PlanningRequestInput, PlanningResponse } from '../../protocol';
import { FakePlannerService, IFakePlannerScript } from '../testing';
import { FakeNotebookDriver } from '../testing';
import { plan, setup, TEMPLATE, text, withTemplate } from './runnerSetup';

/** A planner whose /planning answers come with a normalisation warning (e.g. a dropped field). */
class WarningPlanner extends FakePlannerService {
  constructor(script: IFakePlannerScript) {
    super(script);
  }

  async planning(
    request: PlanningRequestInput,
    options: {
      signal?: AbortSignal;
      onWarning?: (warning: { message: string }) => void;
    } = {}
  ): Promise<PlanningResponse> {
    if (this.planningRequests.length === 0) {
      options.onWarning?.({
        message: 'progress_update was dropped: level is missing'
      });
    }
    return super.planning(request, options);
  }
}

describe("WorkflowRunner follows the documents' loop", () => {
  it('sends the feedback of a behavior that ended with end_phase before the step completes', async () => {
    const s = setup({
      planning: [withTemplate(false, TEMPLATE), plan(false), plan(true)],
      generating: [
        [text('done'), { action: 'end_phase', step_id: 'p1' }, text('tail')]
      ]
    });
    await s.runner.start({ task: 't' });
    const [, second, third] = s.client.planningRequests;
    expect(second.observation.location.current?.step_id).toBe('p1');
    expect(second.behavior_feedback).toMatchObject({
      behavior_id: 'behavior_001',
      actions_executed: 3,
      last_action_result: 'success'
    });
    // The step completes whatever that answer says: end_phase ended it.
    expect(third.observation.location.current?.step_id).toBe('p2');
    expect(third.behavior_feedback).toBeUndefined();
    expect(s.client.generatingRequests).toHaveLength(1);
  });

  it('completes an end_phase step even when that /planning call fails', async () => {
    const s = setup({
      planning: [
        withTemplate(false, TEMPLATE),
        new Error('planner down'),
        plan(true)
      ],
      generating: [[{ action: 'end_phase' }]]
    });
    await s.runner.start({ task: 't' });
    expect(
      s.client.planningRequests[2].observation.location.current?.step_id
    ).toBe('p2');
    expect(s.client.generatingRequests).toHaveLength(1);
  });

  it('reports last_action_result error when any action of the behavior failed', async () => {
    const s = setup({
      planning: [withTemplate(false), plan(true)],
      generating: [[{ action: 'no_such_action' }, text('after')]]
    });
    await s.runner.start({ task: 't' });
    expect(s.client.planningRequests[1].behavior_feedback).toMatchObject({
      actions_executed: 2,
      actions_succeeded: 1,
      last_action_result: 'error'
    });
  });

  it('sends the problems found in a /planning answer to the planner as effects', async () => {
    const { client, runner, warnings } = setup(
      new WarningPlanner({
        planning: [withTemplate(false), plan(true)],
        generating: [[text('hello')]]
      })
    );
    await runner.start({ task: 't' });
    expect(warnings.map(w => w.message)).toContain(
      'progress_update was dropped: level is missing'
    );
    expect(
      client.generatingRequests[0].observation.context?.effects?.current
    ).toContain('⚠️ WARN: progress_update was dropped: level is missing');
  });

  it('collects the kernel variables before every /planning call', async () => {
    const driver = new FakeNotebookDriver();
    const s = setup(
      {
        planning: [withTemplate(false), plan(true)],
        generating: [
          () => {
            // The user runs a cell while the behavior is generated.
            driver.variables.by_hand = 'int: 7';
            return [text('no code here')];
          }
        ]
      },
      { driver }
    );
    await s.runner.start({ task: 't' });
    expect(
      s.client.planningRequests[1].observation.context?.variables
    ).toHaveProperty('by_hand');
  });
});
