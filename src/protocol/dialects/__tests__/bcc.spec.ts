import type { GeneratingEvent } from '../../actionStream';
import {
  type INotebookSummary,
  progressUpdatesOf,
  type PlanningRequestInput,
  type PlanningResponse,
  type ProgressUpdate
} from '../../schemas';
import type { IPlannerRequest } from '../../transport';
import { DEFAULT_SETTINGS, type IRunSettings } from '../../../engine/settings';
import { PlannerConnection } from '../../../lab/plannerConnection';
import { BccAdapter } from '../bcc/adapter';
import { collect, FakeTransport, json, ndjson, text } from './fakeTransport';

const STAGES = `<stages><remaining>
  <stage id="sales_data_check" title="Sales Data Check">
    <goal>Load sales.csv. Artifacts: sales_df; Acceptance: len(sales_df) > 0.</goal>
    <verified_artifacts><variable name="sales_df">DataFrame with 4 columns</variable></verified_artifacts>
    <required_variables><variable name="user_submit_files">uploaded CSV</variable><variable name="nowhere">x</variable></required_variables></stage>
  <stage id="revenue_forecast" title="Revenue Forecast" optional><goal>Forecast, MAPE < 10%.</goal></stage>
</remaining><focus>Keep MAPE < 10% & explain each region.</focus></stages>`;

const STEPS = `<step id="load_sales" title="Load"><goal>Read the file</goal><verified_artifacts><variable name="sales_df">df</variable></verified_artifacts></step>
<step id="check_sales" title="Check"><goal>Check it</goal></step><focus>be careful</focus><goals>Load then check</goals>`;

const STEPS2 = `<steps><step id="forecast" title="Forecast"><goal>Fit</goal></step></steps>`;

const behavior = (id: string, step: string) =>
  `<behavior id="${id}" step_id="${step}"><agent>Explore-Agent</agent><task>Read data/sales.csv into sales_df.</task>
  <inputs><variable name="path">data/sales.csv</variable></inputs>
  <outputs><artifact name="sales_df">the loaded DataFrame</artifact></outputs><acceptance><criterion>len(sales_df) > 0</criterion></acceptance></behavior>`;

const REFLECT_RUNNING = `<reflection current_step_is_complete="false"><decision><next_state>STEP_RUNNING</next_state><reasoning>print the shape</reasoning></decision>
  <context_for_next><variables_produced><variable name="sales_df" value="DataFrame 240x4">loaded</variable></variables_produced>
    <recommendations_for_next><if_continuing_behavior>Print sales_df.shape.</if_continuing_behavior></recommendations_for_next></context_for_next>
  <outputs_tracking_update><produced/><in_progress><artifact>sales_df</artifact></in_progress><remaining/></outputs_tracking_update></reflection>`;

const REFLECT_DONE = `<reflection current_step_is_complete="false"><new_variable><save_current_effect name="shape_text"/></new_variable><decision><next_state>STATE_Step_Completed</next_state></decision></reflection>`;

const STAGE_NOT_DONE = `<stage_reflection stage_is_complete="false"><step_evaluation><step_summary step_id="load_sales" completion_status="done">ok</step_summary></step_evaluation>
<stage_assessment><stage_progress completed_steps="1" remaining_steps="1" progress_percentage="50"/></stage_assessment>
<decision><next_state>STEP_RUNNING</next_state></decision>
<context_for_next><if_continuing_stage><next_step_id>check_sales</next_step_id><next_step_focus>Check nulls</next_step_focus>
<variables_to_carry_forward><variable name="rows" value="240"/></variables_to_carry_forward></if_continuing_stage></context_for_next></stage_reflection>`;

const STAGE_DONE = `<stage_reflection stage_is_complete="false"><progress percentage="100"/><stage_goal_review needs_update="true" proposed_goal="Load and check sales"/><decision><next_state>STAGE_COMPLETED</next_state></decision><outputs_update><produced><artifact>sales_df</artifact></produced></outputs_update></stage_reflection>`;

const GENERATED = JSON.stringify(
  [
    { action: { type: 'update_title', content: 'Sales' } },
    { action: { type: 'new_section', content: 'Sales Data Check' } },
    { action: { type: 'new_step', content: 'Reading' } },
    { action: { type: 'add', shot_type: 'markdown', content: 'We load.' } },
    { action: { type: 'add', shot_type: 'action', content: 'print(1)' } },
    {
      action: {
        type: 'exec',
        codecell_id: 'lastAddedCellId',
        need_output: true
      }
    },
    { type: 'add-text', content: 'bare' },
    { note: 'no action here' }
  ],
  null,
  2
);

function fsmOf(request: IPlannerRequest): string {
  const body = request.body as { state: { FSM: { state: string } } };
  return body.state.FSM.state;
}

function engineRequest(
  stage: string | null,
  step: string | null,
  feedback = false
): PlanningRequestInput {
  const body: PlanningRequestInput = {
    observation: {
      location: { current: { stage_id: stage, step_id: step } },
      context: {
        variables: {
          problem_description: 'Predict revenue',
          data_files: ['data/sales.csv'],
          sales_df: 'DataFrame(240×4)'
        },
        effects: { current: ['(240, 4)'], history: [] },
        notebook: { title: 'n', cell_count: 3 }
      }
    }
  };
  if (feedback) {
    body.behavior_feedback = {
      actions_executed: 2,
      last_action_result: 'success'
    };
  }
  return body;
}

function actionsOf(events: GeneratingEvent[]) {
  return events.flatMap(e => (e.kind === 'action' ? [e.action] : []));
}

describe('bcc adapter', () => {
  it('runs stages, steps, behaviors and reflections, carrying the whole plan', async () => {
    const reflections = [
      REFLECT_RUNNING,
      REFLECT_DONE,
      STAGE_NOT_DONE,
      REFLECT_DONE,
      STAGE_DONE,
      REFLECT_DONE,
      STAGE_DONE
    ];
    let behaviors = 0;
    const transport = new FakeTransport(req => {
      if (req.path === 'generating') {
        return text(GENERATED, 200, 'application/json');
      }
      if (req.path === 'reflecting') {
        return text(
          reflections.shift() ?? '',
          200,
          'application/xml; charset=utf-8'
        );
      }
      switch (fsmOf(req)) {
        case 'IDLE':
          return text(STAGES);
        case 'STAGE_RUNNING':
          return text(behaviors === 0 ? STEPS : STEPS2, 200, 'application/xml');
        default:
          behaviors++;
          return text(behavior(`b${behaviors}`, 'load_sales'));
      }
    });
    const logs: string[] = [];
    const warnings: string[] = [];
    const service = new BccAdapter({
      transport,
      notebookId: 'nb1',
      log: m => logs.push(m),
      now: () => new Date(0)
    });
    const onWarning = (w: { message: string }) => warnings.push(w.message);

    const start = await service.planning(engineRequest(null, null), {
      onWarning
    });
    expect(transport.requests.map(fsmOf)).toEqual([
      'IDLE',
      'STAGE_RUNNING',
      'STEP_RUNNING'
    ]);
    const idle = transport.requests[0].body as Record<string, any>;
    expect(idle.observation.location.goals).toContain(
      'Problem: Predict revenue. Data files: ["data/sales.csv"]'
    );
    expect(idle.state.variables.user_problem).toBe('Predict revenue');
    expect(idle.state.notebook).toEqual({
      title: 'n',
      cell_count: 3,
      notebook_id: 'nb1'
    });
    expect(idle.observation).not.toHaveProperty('context');
    expect(idle.options).toEqual({ stream: false });
    const stepsRequest = transport.requests[1].body as Record<string, any>;
    // The BCC client carries the IDLE goals text on until <steps> brings its own.
    expect(stepsRequest.observation.location.goals).toBe(
      idle.observation.location.goals
    );
    expect(stepsRequest.observation.location.progress.stages.current).toEqual({
      stage_id: 'sales_data_check',
      title: 'Sales Data Check',
      goal: expect.stringContaining('Artifacts'),
      verified_artifacts: { sales_df: 'DataFrame with 4 columns' },
      required_variables: { user_submit_files: 'uploaded CSV', nowhere: 'x' }
    });
    // Named lists travel as {name: description} maps, except current_outputs.expected.
    expect(
      stepsRequest.observation.location.progress.stages.current_outputs
    ).toEqual({
      expected: [{ name: 'sales_df', description: 'DataFrame with 4 columns' }],
      produced: [],
      in_progress: []
    });
    expect(
      stepsRequest.observation.location.progress.stages.remaining[0]
    ).toMatchObject({ stage_id: 'revenue_forecast', optional: true });
    expect(stepsRequest.state.FSM).toEqual({
      state: 'STAGE_RUNNING',
      last_transition: 'START_WORKFLOW',
      timestamp: '1970-01-01T00:00:00.000Z',
      previous_state: 'IDLE'
    });
    const behaviorRequest = transport.requests[2].body as Record<string, any>;
    expect(behaviorRequest.observation.location.goals).toBe('Load then check');
    // Like every recorded payload, the behaviors level says its iteration (null before the first).
    expect(
      behaviorRequest.observation.location.progress.behaviors.iteration
    ).toBeNull();
    expect(behaviorRequest.observation.location.progress.steps.current).toEqual(
      {
        step_id: 'load_sales',
        title: 'Load',
        goal: 'Read the file',
        verified_artifacts: { sales_df: 'df' },
        required_variables: {}
      }
    );
    expect(
      behaviorRequest.observation.location.progress.steps.remaining
    ).toEqual([
      {
        step_id: 'check_sales',
        title: 'Check',
        goal: 'Check it',
        verified_artifacts: {},
        required_variables: {}
      }
    ]);

    expect(start.targetAchieved).toBe(false);
    const template = start.context_update?.workflow_update?.workflowTemplate;
    expect(template?.stages.map(s => s.name)).toEqual([
      'Sales Data Check',
      'Revenue Forecast (optional)'
    ]);
    expect(template?.stages[0].steps.map(s => s.id)).toEqual([
      'load_sales',
      'check_sales'
    ]);
    expect(template?.stages[0].expected_outputs).toEqual(['sales_df']);
    const started = levelsOf(start);
    expect(started.behaviors).toMatchObject({
      current_outputs: { expected: ['sales_df'] }
    });
    expect(started.behaviors?.focus).toContain(
      'Explore-Agent: Read data/sales.csv'
    );
    // §3.3: the focus of <stages> and of <steps> is the stages' and the steps' focus.
    expect(started.stages?.focus).toBe(
      'Keep MAPE < 10% & explain each region.'
    );
    expect(started.steps?.focus).toBe('be careful');
    expect(start.behavior).toMatchObject({ id: 'b1', iteration: 1 });
    expect(warnings.join()).toContain('required variables not found: nowhere');
    expect(logs.join()).toContain('XML repaired');

    const events = await collect(
      service.generating(engineRequest('sales_data_check', 'load_sales'))
    );
    const generating = transport.bodies('generating')[0] as Record<string, any>;
    expect(generating.options).toEqual({ stream: true });
    expect(generating.state.FSM.state).toBe('BEHAVIOR_RUNNING');
    const actions = actionsOf(events);
    expect(
      actions.map(a => [
        a.action,
        (a as { content?: string }).content ?? (a as { title?: string }).title
      ])
    ).toEqual([
      ['new_section', 'Sales Data Check'],
      ['new_step', 'Load'],
      ['update_title', 'Sales'],
      ['new_step', 'Reading'],
      ['add', 'We load.'],
      ['add', 'print(1)'],
      ['exec', undefined],
      ['add', 'bare']
    ]);
    expect(actions[4]).toMatchObject({ shot_type: 'dialogue' });
    expect(actions[5]).toMatchObject({ shot_type: 'action' });
    expect(logs.join()).toContain('new_section "Sales Data Check" skipped');
    expect(logs.join()).toContain('line without action');

    // Not complete: the next behavior comes from /planning at STEP_RUNNING.
    const next = await service.planning(
      engineRequest('sales_data_check', 'load_sales', true)
    );
    expect(next.targetAchieved).toBe(false);
    expect(next.context_update?.variables).toEqual({
      sales_df: 'DataFrame 240x4'
    });
    expect(next.behavior?.id).toBe('b2');
    // The reflection's tracking (the last behavior's) and the next behavior's expected share one entry.
    expect(levelsOf(next).behaviors).toMatchObject({
      current_outputs: {
        expected: ['sales_df'],
        produced: [],
        in_progress: ['sales_df']
      }
    });
    // Its reasoning is the step's assessment (the progress panel shows it).
    expect(levelsOf(next).steps).toEqual({
      level: 'steps',
      assessment: { reasoning: 'print the shape' }
    });
    const reflecting = transport.bodies('reflecting')[0] as Record<string, any>;
    expect(reflecting.state.FSM).toMatchObject({
      state: 'BEHAVIOR_COMPLETED',
      last_transition: 'COMPLETE_ACTION'
    });
    expect(reflecting.behavior_feedback).toMatchObject({ actions_executed: 2 });
    expect(reflecting.observation.location.progress.behaviors.iteration).toBe(
      1
    );
    expect(reflecting.notebook_id).toBe('nb1');
    const b2request = transport.requests.at(-1)?.body as Record<string, any>;
    expect(
      b2request.observation.location.progress.behaviors.completed[0]
    ).toMatchObject({
      behavior_id: 'b1',
      completion_status: 'success',
      inputs: { path: 'data/sales.csv' },
      outputs: { sales_df: 'the loaded DataFrame' }
    });

    // Complete, then the stage reflection names the next step.
    await collect(
      service.generating(engineRequest('sales_data_check', 'load_sales'))
    );
    const stepDone = await service.planning(
      engineRequest('sales_data_check', 'load_sales', true)
    );
    expect(stepDone.targetAchieved).toBe(true);
    expect(stepDone.transition?.next_step_id).toBe('check_sales');
    expect(stepDone.context_update?.variables).toEqual({
      shape_text: '(240, 4)',
      rows: '240'
    });
    // The stage's progress percentage; the next step's focus waits for that step (below): given now,
    // it would be the focus of the step that just ended.
    expect(progressUpdatesOf(stepDone.context_update)).toEqual([
      { level: 'stages', assessment: { percent: 50 } }
    ]);
    const stageRequest = transport.bodies('reflecting')[2] as Record<
      string,
      any
    >;
    expect(stageRequest.state.FSM.state).toBe('STEP_COMPLETED');

    // The engine moves to the next step itself; the step start plans its behavior.
    const check = await service.planning(
      engineRequest('sales_data_check', 'check_sales')
    );
    expect(check.behavior?.id).toBe('b3');
    expect(levelsOf(check).steps?.focus).toBe('Check nulls');
    expect(
      (transport.requests.at(-1)?.body as Record<string, any>).observation
        .location.goals
    ).toBe('Check it');
    await collect(
      service.generating(engineRequest('sales_data_check', 'check_sales'))
    );
    const stageDone = await service.planning(
      engineRequest('sales_data_check', 'check_sales', true)
    );
    expect(stageDone.transition?.next_stage_id).toBe('revenue_forecast');
    expect(stageDone.context_update?.progress_update).toEqual({
      level: 'stages',
      current_outputs: {
        expected: [],
        produced: ['sales_df'],
        in_progress: []
      },
      assessment: { percent: 100 }
    });
    expect(
      stageDone.context_update?.workflow_update?.workflowTemplate.stages[0].goal
    ).toBe('Load and check sales');

    // The next stage: steps arrive as a stage_steps_update, then its first behavior.
    const second = await service.planning(
      engineRequest('revenue_forecast', null)
    );
    expect(second.context_update?.stage_steps_update).toMatchObject({
      stage_id: 'revenue_forecast',
      steps: [{ id: 'forecast' }]
    });
    // The workflow's focus stays the focus of every stage.
    expect(levelsOf(second).stages?.focus).toBe(
      'Keep MAPE < 10% & explain each region.'
    );
    const headings = actionsOf(
      await collect(
        service.generating(engineRequest('revenue_forecast', 'forecast'))
      )
    );
    expect(
      headings.slice(0, 2).map(a => (a as { content?: string }).content)
    ).toEqual(['Revenue Forecast (optional)', 'Forecast']);
    const last = await service.planning(
      engineRequest('revenue_forecast', 'forecast', true)
    );
    expect(last.targetAchieved).toBe(true);
    expect(last.transition?.next_stage_id).toBeUndefined();
    expect(
      (service.saveState() as { plan: { fsm: { state: string } } }).plan.fsm
        .state
    ).toBe('WORKFLOW_COMPLETED');
  });

  it('falls back from /reflecting to /planning, then decides locally', async () => {
    let planningServesReflections = true;
    const transport = new FakeTransport(req => {
      if (req.path === 'reflecting') {
        return json({ detail: 'Not Found' }, 404);
      }
      if (req.path === 'generating') {
        return ndjson([{ action: { type: 'add', content: 'x' } }]);
      }
      const state = fsmOf(req);
      if (state === 'BEHAVIOR_COMPLETED' || state === 'STEP_COMPLETED') {
        return planningServesReflections
          ? text(
              state === 'STEP_COMPLETED'
                ? '<stage_reflection stage_is_complete="false"/>'
                : '<reflection current_step_is_complete="true"/>'
            )
          : text('gone', 404);
      }
      return text(
        state === 'IDLE'
          ? '<stages><stage id="s1" title="S1"/></stages>'
          : state === 'STAGE_RUNNING'
            ? '<steps><step id="a" title="A"/><step id="b" title="B"/></steps>'
            : '<behavior id="x"><task>t</task></behavior>'
      );
    });
    const warnings: string[] = [];
    const service = new BccAdapter({ transport });
    await service.planning(engineRequest(null, null));
    await collect(service.generating(engineRequest('s1', 'a')));
    const done = await service.planning(engineRequest('s1', 'a', true));
    expect(done.transition?.next_step_id).toBe('b');
    expect(transport.paths().filter(p => p === 'POST reflecting')).toHaveLength(
      1
    );

    planningServesReflections = false;
    await service.planning(engineRequest('s1', 'b'));
    const local = await service.planning(engineRequest('s1', 'b', true), {
      onWarning: w => warnings.push(w.message)
    });
    expect(local.targetAchieved).toBe(true);
    expect(local.transition?.next_stage_id).toBeUndefined();
    expect(warnings.join()).toContain('client decides');
  });

  it('reads the NDJSON reflection form and JSON planning answers', async () => {
    let complete = false;
    const transport = new FakeTransport(req => {
      if (req.path === 'reflecting') {
        return ndjson([
          { action: { type: 'add-text', content: 'Looks fine' } },
          ...(complete
            ? [
                { action: { type: 'mark_step_complete' } },
                { action: { type: 'mark_stage_complete' } }
              ]
            : []),
          { action: { type: 'complete_reflection' } }
        ]);
      }
      if (req.path === 'generating') {
        return ndjson([
          { type: 'add', shotType: 'action', content: 'x = 1' },
          { type: 'update_last_text', text: 'edited' },
          { type: 'comment_result', content: 'x is set.' }
        ]);
      }
      const state = fsmOf(req);
      return json(
        state === 'IDLE'
          ? {
              stages: [
                {
                  stage_id: 's1',
                  title: 'S1',
                  verified_artifacts: { sales_df: 'the data' },
                  required_variables: { user_submit_files: 'the CSV' }
                }
              ]
            }
          : state === 'STAGE_RUNNING'
            ? {
                steps: [
                  {
                    step_id: 'a',
                    title: 'A',
                    verified_artifacts: [
                      { name: 'sales_df', description: 'df' }
                    ]
                  }
                ]
              }
            : {
                behavior_id: 'a_b1',
                task: 'do',
                inputs: [{ name: 'path', description: 'data/sales.csv' }],
                outputs: { sales_df: 'loaded' }
              }
      );
    });
    const service = new BccAdapter({ transport });
    const start = await service.planning(engineRequest(null, null));
    expect(start.behavior?.id).toBe('a_b1');
    // Maps and lists alike, whichever way a JSON answer names its artifacts.
    expect(
      start.context_update?.workflow_update?.workflowTemplate.stages
    ).toMatchObject([
      {
        id: 's1',
        expected_outputs: ['sales_df'],
        steps: [{ id: 'a', expected_outputs: ['sales_df'] }]
      }
    ]);
    expect(start.context_update?.progress_update).toMatchObject({
      level: 'behaviors',
      current_outputs: { expected: ['sales_df'] }
    });
    expect(
      (transport.requests[2].body as Record<string, any>).observation.location
        .progress.stages.current
    ).toMatchObject({
      verified_artifacts: { sales_df: 'the data' },
      required_variables: { user_submit_files: 'the CSV' }
    });
    const first = actionsOf(
      await collect(service.generating(engineRequest('s1', 'a')))
    );
    expect(first.map(a => a.action)).toEqual([
      'new_section',
      'new_step',
      'add',
      'update_last_text',
      'add',
      'archive_effects'
    ]);
    // comment_result: a markdown cell, then effects.current moves into history (§3.4).
    expect(first[4]).toMatchObject({
      shot_type: 'dialogue',
      content: 'x is set.'
    });
    const again = await service.planning(engineRequest('s1', 'a', true));
    expect(again.targetAchieved).toBe(false);
    // NDJSON: no planning call; the next /generating follows directly.
    expect(transport.paths().slice(-1)).toEqual(['POST reflecting']);
    const second = actionsOf(
      await collect(service.generating(engineRequest('s1', 'a')))
    );
    expect(second[0]).toMatchObject({ action: 'add', content: 'Looks fine' });
    // The behavior is recorded, and /generating runs its next iteration (NEXT_BEHAVIOR), a plan object too.
    expect(again.behavior).toMatchObject({ id: 'a_b2', iteration: 2 });
    const sent = transport.bodies('generating')[1] as Record<string, any>;
    expect(sent.state.FSM).toMatchObject({
      state: 'BEHAVIOR_RUNNING',
      last_transition: 'NEXT_BEHAVIOR'
    });
    const behaviorsSent = sent.observation.location.progress.behaviors;
    expect(behaviorsSent.current).toMatchObject({
      behavior_id: 'a_b2',
      task: 'do',
      outputs: { sales_df: 'loaded' }
    });
    expect(
      behaviorsSent.completed.map((b: { behavior_id: string }) => b.behavior_id)
    ).toEqual(['a_b1']);
    complete = true;
    const done = await service.planning(engineRequest('s1', 'a', true));
    expect(done.targetAchieved).toBe(true);
  });

  it('says stage_complete when a stage reflection ends the last stage while steps remain', async () => {
    let ndjsonReflection = false;
    const transport = new FakeTransport(req => {
      if (req.path === 'generating') {
        return ndjson([{ action: { type: 'add', content: 'x' } }]);
      }
      if (req.path === 'reflecting') {
        if (ndjsonReflection) {
          return ndjson([
            { action: { type: 'mark_stage_complete' } },
            { action: { type: 'complete_reflection' } }
          ]);
        }
        return text(
          fsmOf(req) === 'STEP_COMPLETED'
            ? '<stage_reflection stage_is_complete="true"/>'
            : '<reflection current_step_is_complete="true"/>'
        );
      }
      const state = fsmOf(req);
      return text(
        state === 'IDLE'
          ? '<stages><stage id="s1" title="S1"/><stage id="s2" title="S2"/></stages>'
          : state === 'STAGE_RUNNING'
            ? '<steps><step id="a" title="A"/><step id="b" title="B"/></steps>'
            : '<behavior id="x"><task>t</task></behavior>'
      );
    });
    const service = new BccAdapter({ transport });
    await service.planning(engineRequest(null, null));
    await collect(service.generating(engineRequest('s1', 'a')));
    const first = await service.planning(engineRequest('s1', 'a', true));
    expect(first.transition).toEqual({
      target_achieved: true,
      next_stage_id: 's2',
      stage_complete: true
    });

    ndjsonReflection = true;
    await service.planning(engineRequest('s2', null));
    await collect(service.generating(engineRequest('s2', 'a')));
    const last = await service.planning(engineRequest('s2', 'a', true));
    expect(last.targetAchieved).toBe(true);
    expect(last.transition).toEqual({
      target_achieved: true,
      stage_complete: true
    });
    expect(
      (service.saveState() as { plan: { fsm: { state: string } } }).plan.fsm
        .state
    ).toBe('WORKFLOW_COMPLETED');
    expect(transport.requests.map(fsmOf).filter(s => s === 'IDLE')).toEqual([
      'IDLE'
    ]);
  });

  it('sends the notebook the engine describes, with its last cells, as state.notebook', async () => {
    const transport = new FakeTransport(req => {
      if (req.path === 'generating') {
        return ndjson([{ action: { type: 'add', content: 'x' } }]);
      }
      const state = fsmOf(req);
      return text(
        state === 'IDLE'
          ? '<stages><stage id="s1" title="S1"/></stages>'
          : state === 'STAGE_RUNNING'
            ? '<steps><step id="a" title="A"/></steps>'
            : '<behavior id="x"><task>t</task></behavior>'
      );
    });
    const notebook: INotebookSummary = {
      title: 'Sales',
      cell_count: 2,
      last_cell_type: 'code',
      last_output: '(240, 4)',
      execution_count: 3,
      cells: [
        {
          id: 'c1',
          type: 'markdown',
          content: '# Sales',
          outputs: [],
          metadata: { role: 'title' }
        },
        {
          id: 'c2',
          type: 'code',
          content: 'print(df.shape)',
          outputs: ['(240, 4)'],
          metadata: {}
        }
      ]
    };
    const service = new BccAdapter({ transport, notebookId: 'nb1' });
    await service.planning(engineRequest(null, null), { notebook });
    const later = { ...notebook, cell_count: 3, execution_count: 4 };
    await collect(
      service.generating(engineRequest('s1', 'a'), { notebook: later })
    );
    const states = transport.requests.map(
      r => (r.body as { state: { notebook: unknown } }).state.notebook
    );
    expect(states).toEqual([
      { ...notebook, notebook_id: 'nb1' },
      { ...notebook, notebook_id: 'nb1' },
      { ...notebook, notebook_id: 'nb1' },
      { ...later, notebook_id: 'nb1' }
    ]);
  });

  it('plans the behavior first when asked to generate with none planned (the generation start mode)', async () => {
    const transport = new FakeTransport(req => {
      if (req.path === 'generating') {
        return ndjson([{ action: { type: 'add', content: 'x' } }]);
      }
      if (req.path === 'reflecting') {
        return text(
          fsmOf(req) === 'STEP_COMPLETED'
            ? '<stage_reflection stage_is_complete="false"/>'
            : '<reflection current_step_is_complete="true"/>'
        );
      }
      const state = fsmOf(req);
      const stage = (req.body as Record<string, any>).observation.location
        .current.stage_id;
      return text(
        state === 'IDLE'
          ? '<stages><stage id="s1" title="S1"><required_variables><variable name="nowhere">x</variable></required_variables></stage><stage id="s2" title="S2"/></stages>'
          : state === 'STAGE_RUNNING'
            ? stage === 's1'
              ? '<steps><step id="a" title="A"/><step id="b" title="B"/></steps>'
              : '<steps><step id="c" title="C"/></steps>'
            : '<behavior><task>t</task></behavior>'
      );
    });
    const service = new BccAdapter({ transport });
    const first = await collect(service.generating(engineRequest(null, null)));
    expect(transport.requests.map(fsmOf)).toEqual([
      'IDLE',
      'STAGE_RUNNING',
      'STEP_RUNNING',
      'BEHAVIOR_RUNNING'
    ]);
    const generating = transport.bodies('generating')[0] as Record<string, any>;
    expect(
      generating.observation.location.progress.behaviors.current
    ).toMatchObject({ behavior_id: 'a_b1', task: 't' });
    // The plan reaches the engine as actions: the template first, then the client's headings.
    const actions = actionsOf(first);
    expect(actions.map(a => a.action)).toEqual([
      'update_workflow',
      'new_section',
      'new_step',
      'add'
    ]);
    expect(actions[0]).toMatchObject({
      updated_workflow: {
        stages: [
          { id: 's1', steps: [{ id: 'a' }, { id: 'b' }] },
          { id: 's2', steps: [] }
        ]
      }
    });
    expect(
      first.flatMap(e => (e.kind === 'warning' ? [e.message] : []))
    ).toEqual([
      expect.stringContaining('required variables not found: nowhere')
    ]);

    // The engine moved to step b itself; generating first plans b's behavior, nothing else.
    await service.planning(engineRequest('s1', 'a', true));
    await collect(service.generating(engineRequest('s1', 'b')));
    expect(transport.requests.slice(-2).map(fsmOf)).toEqual([
      'STEP_RUNNING',
      'BEHAVIOR_RUNNING'
    ]);

    // A new stage: its steps come as update_stage_steps.
    await service.planning(engineRequest('s1', 'b', true));
    const third = actionsOf(
      await collect(service.generating(engineRequest('s2', null)))
    );
    expect(transport.requests.slice(-3).map(fsmOf)).toEqual([
      'STAGE_RUNNING',
      'STEP_RUNNING',
      'BEHAVIOR_RUNNING'
    ]);
    expect(third[0]).toMatchObject({
      action: 'update_stage_steps',
      stage_id: 's2',
      updated_steps: [{ id: 'c' }]
    });
  });

  it('reads a body by its first character before its content type: NDJSON and JSON served as text/plain', async () => {
    const transport = new FakeTransport(req => {
      if (req.path === 'generating') {
        return ndjson([{ action: { type: 'add', content: 'x' } }]);
      }
      if (req.path === 'reflecting') {
        return text(
          [
            { action: { type: 'add-text', content: 'Done.' } },
            { action: { type: 'mark_step_complete' } },
            { action: { type: 'mark_stage_complete' } },
            { action: { type: 'complete_reflection' } }
          ]
            .map(line => JSON.stringify(line))
            .join('\n'),
          200,
          'text/plain; charset=utf-8'
        );
      }
      const state = fsmOf(req);
      return text(
        JSON.stringify(
          state === 'IDLE'
            ? { stages: [{ stage_id: 's1', title: 'S1' }] }
            : state === 'STAGE_RUNNING'
              ? { steps: [{ step_id: 'a', title: 'A' }] }
              : { behavior_id: 'a_b1', task: 'do' }
        ),
        200,
        'text/plain'
      );
    });
    const service = new BccAdapter({ transport });
    const start = await service.planning(engineRequest(null, null));
    expect(start.behavior?.id).toBe('a_b1');
    await collect(service.generating(engineRequest('s1', 'a')));
    const done = await service.planning(engineRequest('s1', 'a', true));
    expect(done.targetAchieved).toBe(true);
    expect(done.transition).toMatchObject({ stage_complete: true });
  });

  it('reads XML sent as a JSON string (a FastAPI handler returning a str), with the LLM’s sentence around it', async () => {
    const transport = new FakeTransport(req => {
      if (req.path === 'generating') {
        return ndjson([{ action: { type: 'add', content: 'x' } }]);
      }
      if (req.path === 'reflecting') {
        return json(
          fsmOf(req) === 'STEP_COMPLETED'
            ? '<stage_reflection stage_is_complete="true"/>'
            : 'The step is done.\n<reflection current_step_is_complete="true"/>'
        );
      }
      const state = fsmOf(req);
      return json(
        state === 'IDLE'
          ? 'Here is the plan:\n```xml\n<stages><stage id="s1" title="S1"/></stages>\n```'
          : state === 'STAGE_RUNNING'
            ? '<steps><step id="a" title="A"/><step id="b" title="B"/></steps>'
            : '<behavior id="a_b1"><task>t</task></behavior>'
      );
    });
    const service = new BccAdapter({ transport });
    const start = await service.planning(engineRequest(null, null));
    expect(start.behavior?.id).toBe('a_b1');
    expect(
      start.context_update?.workflow_update?.workflowTemplate.stages[0].steps
    ).toHaveLength(2);
    await collect(service.generating(engineRequest('s1', 'a')));
    const done = await service.planning(engineRequest('s1', 'a', true));
    expect(done.transition).toEqual({
      target_achieved: true,
      stage_complete: true
    });
  });

  it.each([
    [
      'one pretty-printed JSON array',
      (actions: object[]) =>
        text(JSON.stringify(actions, null, 2), 200, 'application/json')
    ],
    [
      '{"actions": [...]}',
      (actions: object[]) =>
        json({ actions: actions.map(a => ({ action: a })) })
    ]
  ])(
    'reads a reflection sent as %s, like a /generating answer',
    async (_form, answer) => {
      let complete = false;
      const transport = new FakeTransport(req => {
        if (req.path === 'generating') {
          return ndjson([{ action: { type: 'add', content: 'x' } }]);
        }
        if (req.path === 'reflecting') {
          return answer([
            { type: 'add-text', content: 'Looks fine' },
            ...(complete ? [{ type: 'mark_step_complete' }] : []),
            { type: 'complete_reflection' }
          ]);
        }
        const state = fsmOf(req);
        return text(
          state === 'IDLE'
            ? '<stages><stage id="s1" title="S1"/></stages>'
            : state === 'STAGE_RUNNING'
              ? '<steps><step id="a" title="A"/></steps>'
              : '<behavior id="a_b1"><task>t</task></behavior>'
        );
      });
      const service = new BccAdapter({ transport });
      await service.planning(engineRequest(null, null));
      await collect(service.generating(engineRequest('s1', 'a')));
      const again = await service.planning(engineRequest('s1', 'a', true));
      expect(again.targetAchieved).toBe(false);
      const next = actionsOf(
        await collect(service.generating(engineRequest('s1', 'a')))
      );
      expect(next[0]).toMatchObject({ action: 'add', content: 'Looks fine' });
      complete = true;
      const done = await service.planning(engineRequest('s1', 'a', true));
      expect(done.targetAchieved).toBe(true);
    }
  );

  it('runs a plan whose stages, steps and behavior have no ids (named from their titles)', async () => {
    const transport = new FakeTransport(req => {
      if (req.path === 'generating') {
        return ndjson([{ action: { type: 'add', content: 'x' } }]);
      }
      if (req.path === 'reflecting') {
        return text(
          fsmOf(req) === 'STEP_COMPLETED'
            ? '<stage_reflection stage_is_complete="false"/>'
            : '<reflection current_step_is_complete="true"/>'
        );
      }
      const state = fsmOf(req);
      return text(
        state === 'IDLE'
          ? '<stages><stage title="Load"><goal>g</goal></stage><stage title="Model"/></stages>'
          : state === 'STAGE_RUNNING'
            ? '<steps><step title="Read it"/><step title="Check"/></steps>'
            : '<behavior><task>do it</task></behavior>'
      );
    });
    const service = new BccAdapter({ transport });
    const start = await service.planning(engineRequest(null, null));
    const stages =
      start.context_update?.workflow_update?.workflowTemplate.stages ?? [];
    expect(stages.map(s => [s.id, s.steps.map(step => step.id)])).toEqual([
      ['load', ['read_it', 'check']],
      ['model', []]
    ]);
    expect(start.behavior?.id).toBe('read_it_b1');
    await collect(service.generating(engineRequest('load', 'read_it')));
    const done = await service.planning(engineRequest('load', 'read_it', true));
    expect(done.transition).toMatchObject({ next_step_id: 'check' });
    const sent = transport.bodies('generating')[0] as Record<string, any>;
    expect(sent.observation.location.progress.steps.current).toMatchObject({
      step_id: 'read_it',
      title: 'Read it'
    });
  });

  it('rejects an answer that does not fit the state, and HTTP errors', async () => {
    const transport = new FakeTransport(req =>
      fsmOf(req) === 'IDLE' ? text('<behavior id="x"/>') : text('boom', 500)
    );
    const service = new BccAdapter({ transport });
    await expect(service.planning(engineRequest(null, null))).rejects.toThrow(
      /<behavior> to FSM state IDLE/
    );
    const bad = new BccAdapter({
      transport: new FakeTransport(() => text('<unknown/>'))
    });
    await expect(bad.planning(engineRequest(null, null))).rejects.toThrow(
      /expected <stages>/
    );
    const failing = new BccAdapter({
      transport: new FakeTransport(() => text('server down', 503))
    });
    await expect(failing.planning(engineRequest(null, null))).rejects.toThrow(
      /HTTP 503: server down/
    );
  });

  it('restores only the kinds of cell it writes itself: code or an exec hidden in a notebook file never runs on Resume', async () => {
    const transport = new FakeTransport(req => {
      const state = fsmOf(req);
      return text(
        state === 'IDLE'
          ? '<stages><stage id="s1" title="S1"><goal>g</goal></stage></stages>'
          : state === 'STAGE_RUNNING'
            ? '<steps><step id="a" title="A"><goal>ga</goal></step></steps>'
            : '<behavior id="a_b1"><task>t</task></behavior>'
      );
    });
    const writer = new BccAdapter({ transport });
    await writer.planning(engineRequest(null, null));
    const saved = JSON.parse(JSON.stringify(writer.saveState())) as {
      plan: unknown;
      pending: unknown[];
    };
    saved.pending = [
      { type: 'update_title', title: 'Kept' },
      { type: 'add', shot_type: 'markdown', content: 'kept text' },
      { type: 'new_step', content: 'Kept step' },
      {
        type: 'add',
        shot_type: 'action',
        content: 'import os; os.system("x")'
      },
      { type: 'add', content: 'no shot type' },
      { type: 'exec', codecell_id: 'lastAddedCellId' },
      { type: 'update_stage_steps', stage_id: 's1', updated_steps: [] }
    ];
    const restored = new BccAdapter({ transport });
    restored.restoreState(saved);
    const actions = actionsOf(
      await collect(restored.generating(engineRequest('s1', 'a')))
    );
    expect(actions.map(a => a.action)).not.toContain('exec');
    expect(actions.filter(a => a.action === 'add').map(a => a.content)).toEqual(
      ['kept text']
    );
    expect(actions.slice(0, 3)).toMatchObject([
      { action: 'update_title', title: 'Kept' },
      { action: 'add', content: 'kept text' },
      { action: 'new_step', content: 'Kept step' }
    ]);
    expect(actions.map(a => a.action)).toContain('update_stage_steps');
  });

  it('accepts a <workflow> root and a truncated document; saves and restores the plan and the cells still to write', async () => {
    const transport = new FakeTransport(req => {
      const state = fsmOf(req);
      return text(
        state === 'IDLE'
          ? '<workflow><title>Sales study</title><description>About sales</description><stages><stage id="s1" title="S1"><goal>g</goal></stage></stages></workflow>'
          : state === 'STAGE_RUNNING'
            ? '<steps><step id="a" title="A"><goal>ga</gaol></step><step id="b" title="B"><goal>trunc'
            : '<behavior id="a_b1"><task>t</task></behavior>'
      );
    });
    const service = new BccAdapter({ transport });
    const start = await service.planning(engineRequest(null, null));
    expect(
      start.context_update?.workflow_update?.workflowTemplate
    ).toMatchObject({
      name: 'Sales study',
      stages: [
        {
          id: 's1',
          steps: [
            { id: 'a', goal: 'ga' },
            { id: 'b', goal: 'trunc' }
          ]
        }
      ]
    });
    const saved = JSON.parse(JSON.stringify(service.saveState()));
    const restored = new BccAdapter({ transport });
    restored.restoreState(saved);
    // A reload between the planning answer and its /generating (e.g. while an interactive run waits
    // for the user's go-ahead) still writes the title, the description and the stage's heading.
    const actions = actionsOf(
      await collect(restored.generating(engineRequest('s1', 'a')))
    );
    expect(actions).toMatchObject([
      { action: 'update_title', title: 'Sales study' },
      { action: 'add', content: 'About sales' },
      { action: 'new_section', content: 'S1' },
      { action: 'new_step', content: 'A' }
    ]);
    const again = new BccAdapter({ transport });
    again.restoreState(JSON.parse(JSON.stringify(restored.saveState())));
    expect(
      actionsOf(await collect(again.generating(engineRequest('s1', 'a'))))
    ).toEqual([]);
    expect(
      (
        restored.saveState() as {
          plan: { steps: { current: { step_id: string } } };
        }
      ).plan.steps.current.step_id
    ).toBe('a');
    const fresh = actionsOf(
      await collect(service.generating(engineRequest('s1', 'a')))
    );
    expect(fresh.slice(0, 3)).toMatchObject([
      { action: 'update_title', title: 'Sales study' },
      { action: 'add', content: 'About sales' },
      { action: 'new_section', content: 'S1' }
    ]);
  });

  it('keeps a structured <whathappened> as an object on the behavior record it sends back', async () => {
    const happened =
      '<whathappened><overview>Loaded 240 rows</overview><background>CSV from the user</background></whathappened>';
    const transport = scripted(req =>
      fsmOf(req) === 'BEHAVIOR_COMPLETED'
        ? text(
            `<reflection current_step_is_complete="false"><decision><next_state>STEP_RUNNING</next_state></decision><context_for_next>${happened}</context_for_next></reflection>`
          )
        : text('<stage_reflection stage_is_complete="false"/>')
    );
    const service = new BccAdapter({ transport });
    await runFirstBehavior(service);
    await service.planning(
      engineRequest('sales_data_check', 'load_sales', true)
    );
    const next = transport.requests.at(-1)?.body as Record<string, any>;
    expect(
      next.observation.location.progress.behaviors.completed[0].whathappened
    ).toEqual({ overview: 'Loaded 240 rows', background: 'CSV from the user' });
  });

  it('gives each new step its own focus: the next_step_focus meant for it, else the step list’s', async () => {
    let stageReflections = 0;
    let behaviors = 0;
    const transport = new FakeTransport(req => {
      if (req.path === 'generating') {
        return text(GENERATED, 200, 'application/json');
      }
      if (req.path === 'reflecting') {
        if (fsmOf(req) === 'BEHAVIOR_COMPLETED') {
          return text(REFLECT_DONE);
        }
        stageReflections++;
        return text(
          `<stage_reflection stage_is_complete="false"><decision><next_state>STEP_RUNNING</next_state></decision>${stageReflections === 1 ? '<context_for_next><if_continuing_stage><next_step_focus>Check nulls</next_step_focus></if_continuing_stage></context_for_next>' : ''}</stage_reflection>`
        );
      }
      switch (fsmOf(req)) {
        case 'IDLE':
          return text(STAGES);
        case 'STAGE_RUNNING':
          return text(
            '<steps><step id="load" title="Load"/><step id="check" title="Check"/><step id="report" title="Report"/><focus>be careful</focus></steps>'
          );
        default:
          behaviors++;
          return text(behavior(`b${behaviors}`, 'x'));
      }
    });
    const service = new BccAdapter({ transport });
    const focusAt = async (step: string) => {
      const answer = await service.planning(
        engineRequest('sales_data_check', step)
      );
      await collect(
        service.generating(engineRequest('sales_data_check', step))
      );
      await service.planning(engineRequest('sales_data_check', step, true));
      return levelsOf(answer).steps?.focus;
    };
    await service.planning(engineRequest(null, null));
    await collect(
      service.generating(engineRequest('sales_data_check', 'load'))
    );
    await service.planning(engineRequest('sales_data_check', 'load', true));
    expect(await focusAt('check')).toBe('Check nulls');
    // The second stage reflection names no focus: the third step is not shown the second's.
    expect(await focusAt('report')).toBe('be careful');
  });

  /** The `progress_update` entries of an answer, by level. */
  function levelsOf(
    response: PlanningResponse
  ): Partial<Record<string, ProgressUpdate>> {
    return Object.fromEntries(
      progressUpdatesOf(response.context_update).map(e => [e.level, e])
    );
  }

  /** The run's start (stages, steps, the first behavior planned) and that behavior's /generating. */
  async function runFirstBehavior(service: BccAdapter): Promise<void> {
    await service.planning(engineRequest(null, null));
    await collect(
      service.generating(engineRequest('sales_data_check', 'load_sales'))
    );
  }

  /** A server with two stages of two steps whose reflections and generations the test scripts. */
  function scripted(
    reflect: (req: IPlannerRequest) => Response,
    generate: () => Response = () => text(GENERATED, 200, 'application/json')
  ) {
    let behaviors = 0;
    return new FakeTransport(req => {
      if (req.path === 'generating') {
        return generate();
      }
      if (req.path === 'reflecting') {
        return reflect(req);
      }
      switch (fsmOf(req)) {
        case 'IDLE':
          return text(STAGES);
        case 'STAGE_RUNNING':
          return text(
            (req.body as any).observation.location.progress.stages.current
              .stage_id === 'sales_data_check'
              ? STEPS
              : `<steps><step id="forecast" title="Forecast"><goal>Fit</goal></step><step id="explain" title="Explain"><goal>Say</goal></step></steps>`,
            200,
            'application/xml'
          );
        default:
          behaviors++;
          return text(behavior(`b${behaviors}`, 'load_sales'));
      }
    });
  }

  it('makes a failed /reflecting an error to retry, never a fallback that runs the behavior again', async () => {
    let fail = true;
    const transport = scripted(() =>
      fail ? text('LLM timeout', 500) : text(REFLECT_RUNNING)
    );
    const service = new BccAdapter({ transport });
    await runFirstBehavior(service);
    const error = await service
      .planning(engineRequest('sales_data_check', 'load_sales', true))
      .catch(e => e);
    expect(error.message).toMatch(/HTTP 500: LLM timeout/);
    expect(error.needsAnswer).toBe(true);
    // Retry: the same question again, and the behavior is recorded once.
    fail = false;
    const answer = await service.planning(
      engineRequest('sales_data_check', 'load_sales', true)
    );
    expect(answer.targetAchieved).toBe(false);
    expect(
      transport.requests.map(r => `${r.path}:${fsmOf(r)}`).slice(-3)
    ).toEqual([
      'reflecting:BEHAVIOR_COMPLETED',
      'reflecting:BEHAVIOR_COMPLETED',
      'planning:STEP_RUNNING'
    ]);
    const plan = (service.saveState() as any).plan;
    expect(plan.behaviors.completed.map((b: any) => b.behavior_id)).toEqual([
      'b1'
    ]);
  });

  it('rejects a reflection whose root does not fit the state just sent', async () => {
    const service = new BccAdapter({
      transport: scripted(() => text(STAGE_DONE))
    });
    await runFirstBehavior(service);
    await expect(
      service.planning(engineRequest('sales_data_check', 'load_sales', true))
    ).rejects.toMatchObject({
      kind: 'invalid',
      message: expect.stringMatching(
        /<stage_reflection> to FSM state BEHAVIOR_COMPLETED/
      )
    });
    const second = new BccAdapter({
      transport: scripted(req =>
        fsmOf(req) === 'BEHAVIOR_COMPLETED'
          ? text(REFLECT_DONE)
          : text(REFLECT_RUNNING)
      )
    });
    await runFirstBehavior(second);
    await expect(
      second.planning(engineRequest('sales_data_check', 'load_sales', true))
    ).rejects.toThrow(/<reflection> to FSM state STEP_COMPLETED/);
  });

  it('asks the stage question again when Retry follows an unreadable stage reflection', async () => {
    let stageAnswer = 'Sorry, I cannot comply.';
    const transport = scripted(req =>
      fsmOf(req) === 'BEHAVIOR_COMPLETED'
        ? text(REFLECT_DONE)
        : text(stageAnswer)
    );
    const service = new BccAdapter({ transport });
    await runFirstBehavior(service);
    await expect(
      service.planning(engineRequest('sales_data_check', 'load_sales', true))
    ).rejects.toMatchObject({ kind: 'invalid' });
    stageAnswer = STAGE_NOT_DONE;
    const answer = await service.planning(
      engineRequest('sales_data_check', 'load_sales', true)
    );
    expect(answer.transition).toMatchObject({ next_step_id: 'check_sales' });
    expect(
      transport.requests.map(r => `${r.path}:${fsmOf(r)}`).slice(-3)
    ).toEqual([
      'reflecting:BEHAVIOR_COMPLETED',
      'reflecting:STEP_COMPLETED',
      'reflecting:STEP_COMPLETED'
    ]);
  });

  it('starts the first step with START_STEP and moves effects.current into history for /generating', async () => {
    const transport = scripted(() => text(REFLECT_RUNNING));
    const service = new BccAdapter({ transport });
    await service.planning(engineRequest(null, null));
    const behaviorRequest = transport.requests[2].body as any;
    expect(behaviorRequest.state.FSM).toMatchObject({
      state: 'STEP_RUNNING',
      last_transition: 'START_STEP'
    });
    await collect(
      service.generating(engineRequest('sales_data_check', 'load_sales'))
    );
    const generating = transport.bodies('generating')[0] as any;
    expect(generating.state.effects).toEqual({
      current: [],
      history: ['(240, 4)']
    });
  });

  it('writes the comments of an NDJSON reflection that ends the stage once', async () => {
    const transport = scripted(() =>
      ndjson([
        { action: { type: 'add-text', content: 'Nice work' } },
        { action: { type: 'mark_step_complete' } },
        { action: { type: 'mark_stage_complete' } },
        { action: { type: 'complete_reflection' } }
      ])
    );
    const service = new BccAdapter({ transport });
    await runFirstBehavior(service);
    await service.planning(
      engineRequest('sales_data_check', 'load_sales', true)
    );
    const next = actionsOf(
      await collect(
        service.generating(engineRequest('revenue_forecast', 'forecast'))
      )
    );
    expect(next.filter(a => a.content === 'Nice work')).toHaveLength(1);
  });

  it('updates a later stage goal with the steps of the stages before it', async () => {
    const transport = scripted(req =>
      fsmOf(req) === 'BEHAVIOR_COMPLETED'
        ? text(REFLECT_DONE)
        : text(
            (req.body as any).observation.location.progress.stages.current
              .stage_id === 'sales_data_check'
              ? STAGE_DONE.replace(
                  '<stage_goal_review needs_update="true" proposed_goal="Load and check sales"/>',
                  ''
                )
              : `<stage_reflection stage_is_complete="false"><stage_goal_review><needs_update>true</needs_update><proposed_goal>Forecast per region</proposed_goal></stage_goal_review><decision><next_state>STEP_RUNNING</next_state></decision></stage_reflection>`
          )
    );
    const service = new BccAdapter({ transport });
    await runFirstBehavior(service);
    await service.planning(
      engineRequest('sales_data_check', 'load_sales', true)
    );
    await service.planning(engineRequest('revenue_forecast', null));
    await collect(
      service.generating(engineRequest('revenue_forecast', 'forecast'))
    );
    const answer = await service.planning(
      engineRequest('revenue_forecast', 'forecast', true)
    );
    const template = answer.context_update?.workflow_update?.workflowTemplate;
    expect(
      template?.stages.map(s => [s.id, s.goal, s.steps.map(t => t.id)])
    ).toEqual([
      ['sales_data_check', expect.any(String), ['load_sales', 'check_sales']],
      ['revenue_forecast', 'Forecast per region', ['forecast', 'explain']]
    ]);
  });

  it('skips the server’s heading of an optional stage, which the client wrote with "(optional)"', async () => {
    const transport = scripted(
      req =>
        text(fsmOf(req) === 'BEHAVIOR_COMPLETED' ? REFLECT_DONE : STAGE_DONE),
      () =>
        ndjson([
          { action: { type: 'new_section', content: '## Revenue Forecast' } },
          { action: { type: 'add', content: 'x' } }
        ])
    );
    const service = new BccAdapter({ transport });
    await runFirstBehavior(service);
    await service.planning(
      engineRequest('sales_data_check', 'load_sales', true)
    );
    const next = actionsOf(
      await collect(
        service.generating(engineRequest('revenue_forecast', 'forecast'))
      )
    );
    expect(
      next.filter(a => a.action === 'new_section').map(a => a.content)
    ).toEqual(['Revenue Forecast (optional)']);
  });

  it('plans the next behavior on Retry after an unreadable <behavior>, without asking the reflection again', async () => {
    let behaviorAnswers = 0;
    const transport = new FakeTransport(req => {
      if (req.path === 'generating') {
        return text(GENERATED, 200, 'application/json');
      }
      if (req.path === 'reflecting') {
        return text(REFLECT_RUNNING);
      }
      switch (fsmOf(req)) {
        case 'IDLE':
          return text(STAGES);
        case 'STAGE_RUNNING':
          return text(STEPS, 200, 'application/xml');
        default:
          behaviorAnswers++;
          return text(
            behaviorAnswers === 2
              ? 'I cannot plan that.'
              : behavior(`b${behaviorAnswers}`, 'load_sales')
          );
      }
    });
    const service = new BccAdapter({ transport });
    await runFirstBehavior(service);
    await expect(
      service.planning(engineRequest('sales_data_check', 'load_sales', true))
    ).rejects.toMatchObject({ kind: 'invalid' });
    const retried = await service.planning(
      engineRequest('sales_data_check', 'load_sales', true)
    );
    expect(retried.behavior?.id).toBe('b3');
    expect(
      transport.requests.map(r => `${r.path}:${fsmOf(r)}`).slice(-3)
    ).toEqual([
      'reflecting:BEHAVIOR_COMPLETED',
      'planning:STEP_RUNNING',
      'planning:STEP_RUNNING'
    ]);
  });

  it('passes on the step verdict’s variables when Retry follows a failed stage reflection', async () => {
    let stageFails = true;
    const transport = scripted(req =>
      fsmOf(req) === 'BEHAVIOR_COMPLETED'
        ? text(REFLECT_DONE)
        : stageFails
          ? text('LLM timeout', 500)
          : text(STAGE_NOT_DONE)
    );
    const service = new BccAdapter({ transport });
    await runFirstBehavior(service);
    await expect(
      service.planning(engineRequest('sales_data_check', 'load_sales', true))
    ).rejects.toMatchObject({ needsAnswer: true });
    stageFails = false;
    const answer = await service.planning(
      engineRequest('sales_data_check', 'load_sales', true)
    );
    expect(answer.context_update?.variables).toMatchObject({
      shape_text: '(240, 4)',
      rows: '240'
    });
  });

  it('applies a step verdict’s <if_moving_forward> as the next step’s focus, unless the stage reflection names one', async () => {
    const moving = `<reflection current_step_is_complete="true"><decision><next_state>STEP_COMPLETED</next_state></decision><context_for_next><recommendations_for_next><if_moving_forward>Now look for gaps in the months</if_moving_forward></recommendations_for_next></context_for_next></reflection>`;
    let stageReflections = 0;
    const transport = scripted(req => {
      if (fsmOf(req) === 'BEHAVIOR_COMPLETED') {
        return text(moving);
      }
      stageReflections++;
      return text(
        stageReflections === 1
          ? '<stage_reflection stage_is_complete="false"><decision><next_state>STEP_RUNNING</next_state></decision></stage_reflection>'
          : STAGE_DONE
      );
    });
    const service = new BccAdapter({ transport });
    await runFirstBehavior(service);
    const verdict = await service.planning(
      engineRequest('sales_data_check', 'load_sales', true)
    );
    expect(verdict.transition?.next_step_id).toBe('check_sales');
    const next = await service.planning(
      engineRequest('sales_data_check', 'check_sales')
    );
    expect(levelsOf(next).steps?.focus).toBe('Now look for gaps in the months');
    const behaviorRequest = transport.requests.at(-1)?.body as any;
    expect(behaviorRequest.observation.location.progress.steps.focus).toBe(
      'Now look for gaps in the months'
    );
    // The stage reflection's own next_step_focus is more specific: it wins (the earlier test).
  });

  it('keeps a stage reflection’s <experience_summary> and <key_findings> on the completed stage it sends back', async () => {
    const transport = scripted(req =>
      fsmOf(req) === 'BEHAVIOR_COMPLETED'
        ? text(REFLECT_DONE)
        : text(
            `<stage_reflection stage_is_complete="true"><step_evaluation><key_findings><finding priority="high">240 rows, 4 columns</finding><finding priority="low">no missing months</finding></key_findings></step_evaluation><experience_summary>Reading the CSV needed no cleaning.</experience_summary><decision><next_state>STAGE_COMPLETED</next_state></decision></stage_reflection>`
          )
    );
    const service = new BccAdapter({ transport });
    await runFirstBehavior(service);
    const done = await service.planning(
      engineRequest('sales_data_check', 'load_sales', true)
    );
    expect(done.transition).toMatchObject({ stage_complete: true });
    await service.planning(engineRequest('revenue_forecast', null));
    const stepsRequest = transport.requests.find(
      r =>
        fsmOf(r) === 'STAGE_RUNNING' &&
        (r.body as any).observation.location.progress.stages.completed.length >
          0
    )?.body as any;
    expect(
      stepsRequest.observation.location.progress.stages.completed[0]
    ).toMatchObject({
      stage_id: 'sales_data_check',
      completion_status: 'success',
      experience_summary: 'Reading the CSV needed no cleaning.',
      key_findings: ['240 rows, 4 columns', 'no missing months']
    });
    // Saved with the plan: a reload sends them too.
    const restored = new BccAdapter({ transport });
    restored.restoreState(JSON.parse(JSON.stringify(service.saveState())));
    expect(
      (restored.saveState() as any).plan.stages.completed[0].key_findings
    ).toEqual(['240 rows, 4 columns', 'no missing months']);
  });

  it('applies the NDJSON actions after a malformed line as they arrive, not when the body ends', async () => {
    const lines = [
      JSON.stringify({ action: { type: 'add', content: 'first' } }),
      'data: {"type": "add", "content": ',
      JSON.stringify({ action: { type: 'add', content: 'second' } })
    ];
    const head = new TextEncoder().encode(lines.join('\n') + '\n');
    let sent = false;
    // The body breaks off after these lines: what was held back until its end is never applied.
    const breaking = () =>
      new Response(
        new ReadableStream<Uint8Array>({
          pull(controller) {
            if (sent) {
              controller.error(new TypeError('network error'));
            } else {
              sent = true;
              controller.enqueue(head);
            }
          }
        }),
        { status: 200, headers: { 'Content-Type': 'application/x-ndjson' } }
      );
    const transport = scripted(() => text(REFLECT_RUNNING), breaking);
    const service = new BccAdapter({ transport });
    await service.planning(engineRequest(null, null));
    const events: GeneratingEvent[] = [];
    await expect(
      (async () => {
        for await (const event of service.generating(
          engineRequest('sales_data_check', 'load_sales')
        )) {
          events.push(event);
        }
      })()
    ).rejects.toThrow();
    const contents = actionsOf(events).map(
      a => (a as { content?: string }).content
    );
    expect(contents).toEqual(expect.arrayContaining(['first', 'second']));
    expect(
      events.some(
        e => e.kind === 'warning' && e.message.includes('data: {"type"')
      )
    ).toBe(true);
  });

  it('still reads a pretty-printed JSON array whole when its first line opens it', async () => {
    const transport = scripted(
      () => text(REFLECT_RUNNING),
      () => text(GENERATED, 200, 'application/x-ndjson')
    );
    const service = new BccAdapter({ transport });
    const events = await (async () => {
      await service.planning(engineRequest(null, null));
      return collect(
        service.generating(engineRequest('sales_data_check', 'load_sales'))
      );
    })();
    expect(actionsOf(events).map(a => a.action)).toContain('exec');
    expect(events.filter(e => e.kind === 'warning')).toEqual([]);
  });

  it('checks the required variables of every stage and step it enters, not only the first ones', async () => {
    const stepsWithNeeds = `<steps><step id="load_sales" title="Load"><goal>Read</goal></step><step id="check_sales" title="Check"><goal>Check</goal><required_variables><variable name="holiday_calendar">the holidays</variable></required_variables></step></steps>`;
    const stagesWithNeeds = `<stages><stage id="sales_data_check" title="Sales Data Check"><goal>Load</goal></stage><stage id="revenue_forecast" title="Revenue Forecast"><goal>Fit</goal><required_variables><variable name="forecast_horizon">months ahead</variable></required_variables></stage></stages>`;
    let stageReflections = 0;
    let behaviors = 0;
    const transport = new FakeTransport(req => {
      if (req.path === 'generating') {
        return text(GENERATED, 200, 'application/json');
      }
      if (req.path === 'reflecting') {
        if (fsmOf(req) === 'BEHAVIOR_COMPLETED') {
          return text(REFLECT_DONE);
        }
        stageReflections++;
        return text(stageReflections === 1 ? STAGE_NOT_DONE : STAGE_DONE);
      }
      switch (fsmOf(req)) {
        case 'IDLE':
          return text(stagesWithNeeds);
        case 'STAGE_RUNNING':
          return text(stepsWithNeeds);
        default:
          behaviors++;
          return text(behavior(`b${behaviors}`, 'x'));
      }
    });
    const service = new BccAdapter({ transport });
    const warned: string[] = [];
    const onWarning = (w: { message: string }) => warned.push(w.message);
    await service.planning(engineRequest(null, null), { onWarning });
    expect(warned).toEqual([]);
    const finishStep = async (step: string) => {
      await collect(
        service.generating(engineRequest('sales_data_check', step))
      );
      return service.planning(engineRequest('sales_data_check', step, true), {
        onWarning
      });
    };
    await finishStep('load_sales');
    expect(warned).toEqual([
      expect.stringContaining('required variables not found: holiday_calendar')
    ]);
    await service.planning(engineRequest('sales_data_check', 'check_sales'));
    await finishStep('check_sales');
    expect(warned).toEqual([
      expect.stringContaining('holiday_calendar'),
      expect.stringContaining('required variables not found: forecast_horizon')
    ]);
  });

  it('sends notebook_id with /planning and /reflecting but not with /generating (§3.2), through the extension’s planner service', async () => {
    const sent: { path: string; body: Record<string, unknown> }[] = [];
    const server = scripted(() => text(REFLECT_RUNNING));
    const settings: IRunSettings = {
      ...DEFAULT_SETTINGS,
      baseUrl: 'http://bcc.test',
      transport: 'browser'
    };
    const service = new PlannerConnection({
      settings: () => settings,
      pluginSettings: () => ({ protocol: 'bcc' }),
      notebookId: () => 'sales.ipynb',
      fetch: async (url, init) => {
        const path = String(url).replace('http://bcc.test/', '');
        const body = JSON.parse(String(init?.body)) as Record<string, unknown>;
        sent.push({ path, body });
        return server.send({ method: 'POST', path, body });
      }
    });
    jest.spyOn(console, 'debug').mockImplementation(() => undefined);
    await service.planning(engineRequest(null, null));
    await collect(
      service.generating(engineRequest('sales_data_check', 'load_sales'))
    );
    await service.planning(
      engineRequest('sales_data_check', 'load_sales', true)
    );
    const ids = sent.map(s => [s.path, s.body.notebook_id]);
    expect(ids).toEqual([
      ['planning', 'sales.ipynb'],
      ['planning', 'sales.ipynb'],
      ['planning', 'sales.ipynb'],
      ['generating', undefined],
      ['reflecting', 'sales.ipynb'],
      ['planning', 'sales.ipynb']
    ]);
  });
});
