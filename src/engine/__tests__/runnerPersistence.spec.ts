import { DslcAdapter } from '../../protocol';
import { endpointOf, RunTrace } from '../trace';
import type { TraceRecord } from '../../protocol/traceFormat';
import { FakeNotebookDriver } from '../testing';
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

describe('WorkflowRunner persistence and trace', () => {
  it('checkpoints after each behavior and step, and saves at once when the run ends', async () => {
    const s = setup({
      planning: [withTemplate(false), plan(false), plan(true)],
      generating: [[text('one')], [text('two')]]
    });
    await s.runner.start({ task: 't' });
    expect(s.finished.map(f => f.reason)).toEqual(['completed']);
    // Two behaviors and one step are checkpoints; only the end is written at once.
    expect(s.driver.saveCount).toBe(4);
    expect(s.driver.immediateSaveCount).toBe(1);
    expect(saved(s.driver).phase).toBe('done');
  });

  it('records the run trace through the client observer', async () => {
    const trace = new RunTrace();
    const { client, runner } = setup(
      {
        planning: [withTemplate(false), plan(true)],
        generating: [[text('hello'), code('x = 1')]],
        observer: trace
      },
      { trace }
    );
    expect(runner.trace).toBe(trace);
    await runner.start({ task: 't' });
    const records = trace
      .toJSONL()
      .trim()
      .split('\n')
      .map(line => JSON.parse(line) as TraceRecord);
    expect(records.map(r => `${r.seq} ${r.kind} ${r.endpoint}`)).toEqual([
      '1 request /planning',
      '1 response /planning',
      '1 end /planning',
      '2 request /generating',
      '2 response /generating',
      '2 line /generating',
      '2 line /generating',
      '2 end /generating',
      '3 request /planning',
      '3 response /planning',
      '3 end /planning'
    ]);
    const line = records[5];
    expect(line.kind === 'line' && JSON.parse(line.line)).toEqual({
      action: { action: 'add', shot_type: 'dialogue', content: 'hello' }
    });
    const request = records[8];
    expect(request.kind === 'request' && request.body).toEqual(
      client.planningRequests[1]
    );
  });

  it('drives the real DslcAdapter over HTTP and traces the raw lines', async () => {
    const trace = new RunTrace();
    const bodies: Record<string, string[]> = {
      '/planning': [
        JSON.stringify({
          targetAchieved: false,
          context_update: { workflow_update: { workflowTemplate: ONE_STEP } }
        }),
        JSON.stringify({ target_achieved: true })
      ],
      '/generating': [
        '{"action": {"type": "add_content", "content_type": "code", "content": "k = 5"}}\n' +
          'not json\n' +
          '{"action": {"action": "exec", "codecell_id": "lastAddedCellId"}}\n'
      ]
    };
    const fetch = async (url: string): Promise<Response> => {
      const path = endpointOf(url);
      const body = bodies[path]?.shift();
      return body === undefined
        ? new Response('missing', { status: 500 })
        : new Response(body, { status: 200 });
    };
    const client = new DslcAdapter({
      baseUrl: 'http://planner.local:28600',
      fetch,
      observer: [trace, { onWarning: () => undefined }]
    });
    const { driver, runner, warnings } = setup(client, { trace });
    expect((await runner.start({ task: 't' })).reason).toBe('completed');
    expect(driver.codeCells().map(c => c.source)).toEqual(['k = 5']);
    expect(driver.variables).toEqual({ k: '5' });
    expect(warnings.some(w => w.message.includes('not json'))).toBe(true);
    const lines = trace.records.filter(r => r.kind === 'line');
    expect(lines.map(r => (r.kind === 'line' ? r.line : ''))).toEqual([
      '{"action": {"type": "add_content", "content_type": "code", "content": "k = 5"}}',
      'not json',
      '{"action": {"action": "exec", "codecell_id": "lastAddedCellId"}}'
    ]);
  });

  it('resumes a run saved in ERROR, reporting the interrupted behavior', async () => {
    const driver = new FakeNotebookDriver();
    const s = setup(
      {
        planning: [withTemplate(false)],
        generating: [
          { actions: [text('partial')], thenFail: new Error('reset') }
        ]
      },
      { driver }
    );
    expect((await s.runner.start({ task: 't' })).reason).toBe('error');
    // The broken behavior was closed with what it applied; its feedback waits for the next plan.
    expect(saved(driver).openBehavior).toBeNull();
    expect(saved(driver).pendingFeedback?.behavior_id).toBe('behavior_001');
    const later = setup({ planning: [plan(true)] }, { driver });
    expect((await later.runner.resumeFromSaved())?.reason).toBe('completed');
    expect(later.client.planningRequests[0].behavior_feedback).toEqual({
      behavior_id: 'behavior_001',
      actions_executed: 1,
      actions_succeeded: 1,
      sections_added: 0,
      last_action_result: 'error'
    });
    expect(driver.cells.map(c => c.source)).toEqual(['partial']);
  });

  it('stops from ERROR into a resumable state', async () => {
    const s = setup({
      planning: [withTemplate(false)],
      generating: [new Error('down')]
    });
    await s.runner.start({ task: 't' });
    await s.runner.stop();
    expect(s.runner.snapshot.state).toBe('IDLE');
    expect(s.runner.snapshot.error).toBeNull();
    expect(s.finished.map(f => f.reason)).toEqual(['error', 'stopped']);
    expect(saved(s.driver).phase).toBe('plan');
    expect(saved(s.driver).pendingFeedback?.last_action_result).toBe('stopped');
  });

  it('starts a new run with the template saved in the notebook', async () => {
    const driver = new FakeNotebookDriver();
    const first = setup(
      { planning: [withTemplate(true, TEMPLATE), plan(true), plan(true)] },
      { driver }
    );
    await first.runner.start({ task: 'first' });
    const second = setup({ defaultPlanning: plan(true) }, { driver });
    await second.runner.start({ task: 'second' });
    expect(
      second.client.planningRequests.map(
        r => r.observation.location.current?.step_id
      )
    ).toEqual(['p1', 'p2', 'q1']);
    expect(
      second.client.planningRequests[0].observation.context?.variables
        ?.problem_description
    ).toBe('second');
  });

  it('accepts the superseded ARCHITECTURE.md fields', async () => {
    const s = setup({
      planning: [
        withTemplate(false, ONE_STEP, {
          behavior: { id: 'behavior_001', target: 'Write Section 2' },
          actions: [{ action: 'add', content: 'ignored' }],
          context_update: {
            todo_list_update: {
              operation: 'add',
              items: ['Section 2', 'Section 3']
            },
            section_progress: { current_section_id: 'intro' }
          }
        }),
        plan(true, {
          context_update: {
            todo_list_update: { operation: 'remove', items: ['Section 2'] }
          }
        })
      ],
      generating: [[text('Section 2')]]
    });
    await s.runner.start({ task: 't' });
    const generating = s.client.generatingRequests[0].observation;
    expect(generating.location.goals?.behavior).toBe('Write Section 2');
    expect(generating.context?.toDoList).toEqual(['Section 2', 'Section 3']);
    expect(generating.context?.section_progress).toEqual({
      current_section_id: 'intro'
    });
    expect(s.driver.cells.map(c => c.source)).toEqual(['Section 2']);
    expect(s.warnings.map(w => w.message)).toContain(
      'The /planning answer carried 1 actions; they are ignored (actions come from /generating).'
    );
    expect(
      s.client.planningRequests[1].observation.location.progress?.behaviors
        ?.completed?.[0]?.goal
    ).toBe('Write Section 2');
  });

  it('applies nothing of a broken stream in interactive mode', async () => {
    const approve = jest.fn(async () => 'run' as const);
    const s = setup(
      {
        planning: [withTemplate(false), plan(true)],
        generating: [
          { actions: [code('a = 1'), exec()], thenFail: new Error('cut') },
          [code('a = 1'), exec()]
        ]
      },
      { settings: { interactive: true }, hooks: { approveBehavior: approve } }
    );
    expect((await s.runner.start({ task: 't' })).reason).toBe('error');
    expect(approve).not.toHaveBeenCalled();
    expect(s.driver.cells).toEqual([]);
    expect((await s.runner.retry()).reason).toBe('completed');
    expect(approve).toHaveBeenCalledTimes(1);
    expect(s.driver.variables).toEqual({ a: '1' });
  });

  it('captures the live run state at once, for a notebook that closes before the loop can save', async () => {
    const s = setup({
      planning: [withTemplate(false), plan(false), plan(true)],
      generating: [[code('x = 1')], [code('y = 2')]]
    });
    expect(s.runner.captureRunState()).toBeNull();
    let captured: unknown = null;
    s.runner.actionApplied.connect(() => {
      captured ??= s.runner.captureRunState();
    });
    await s.runner.start({ task: 'capture' });
    expect(captured).toMatchObject({
      format: 'notebook-bcc-run',
      task: 'capture',
      openBehavior: { actionIndex: expect.any(Number) }
    });
    expect(s.runner.captureRunState()).toBeNull();
  });
});
