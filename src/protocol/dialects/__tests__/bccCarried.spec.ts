/**
 * What the bcc adapter carries from one answer to the next (docs/dialects.md#bcc-loop): each step's
 * focus, goals and headings, the records it sends back, and the notebook it describes.
 */

import { type INotebookSummary } from '../../schemas';
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
  runFirstBehavior,
  scripted,
  STAGE_DONE,
  STAGES
} from './bccFixtures';

describe('bcc adapter: what it carries forward', () => {
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
});
