/**
 * The bcc loop as the engine drives it (docs/dialects.md#bcc-loop): stages, steps, behaviors and
 * reflections, the plan carried whole on every request, and what the client checks as it moves on.
 */

import { progressUpdatesOf } from '../../schemas';
import { BccAdapter } from '../bcc/adapter';
import { collect, FakeTransport, ndjson, text } from './fakeTransport';
import {
  actionsOf,
  behavior,
  engineRequest,
  fsmOf,
  GENERATED,
  levelsOf,
  REFLECT_DONE,
  REFLECT_RUNNING,
  scripted,
  STAGE_DONE,
  STAGE_NOT_DONE,
  STAGES,
  STEPS,
  STEPS2
} from './bccFixtures';

describe('bcc adapter: the loop', () => {
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
});
