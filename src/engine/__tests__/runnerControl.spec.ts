import { PlannerError } from '../../protocol';
import * as protocol from '../../protocol/messages';
import type { AnyAction } from '../actions/registry';
import { msg } from '../messages';
import { abortInterruptsKernel, type IKernelVariables } from '../ports/driver';
import { ActionStream, FakeNotebookDriver } from '../testing';
import {
  code,
  effectsOf,
  exec,
  plan,
  saved,
  settle,
  setup,
  TEMPLATE,
  text,
  when,
  withTemplate
} from './runnerSetup';

describe('WorkflowRunner failures, pause and stop', () => {
  it('falls back to /generating when /planning fails', async () => {
    const s = setup({
      planning: [new Error('planner down'), plan(true)],
      generating: [[code('x = 1'), exec()]]
    });
    const finished = await s.runner.start({ task: 't' });
    expect(finished.reason).toBe('completed');
    expect(s.client.generatingRequests).toHaveLength(1);
    expect(s.warnings.map(w => w.message)).toContain(
      '/planning failed: planner down; falling back to /generating'
    );
    expect(
      s.client.generatingRequests[0].observation.context?.effects?.current
    ).toEqual([
      '⚠️ WARN: /planning failed: planner down; continuing with /generating without a plan'
    ]);
    // The unfiltered observation went out.
    expect(
      s.client.generatingRequests[0].observation.context?.FSM
    ).toBeDefined();
    expect(
      s.client.planningRequests[1].behavior_feedback?.actions_executed
    ).toBe(2);
  });

  it('stops with a retryable error after repeated /planning failures', async () => {
    const s = setup({
      planning: [new Error('a'), new Error('b'), new Error('c'), plan(true)],
      generating: [[text('x')], [text('y')]]
    });
    const failed = await s.runner.start({ task: 't' });
    expect(failed.reason).toBe('error');
    expect(s.errors).toEqual([
      {
        endpoint: 'planning',
        message: '/planning failed: c (3 times in a row)',
        text: { id: 'planningFailedInARow', params: ['c', 3] },
        retryable: true
      }
    ]);
    const done = await s.runner.retry();
    expect(done.reason).toBe('completed');
    expect(s.client.planningRequests[3]).toEqual(s.client.planningRequests[2]);
  });

  it('enters ERROR when /generating fails and re-sends the request on retry', async () => {
    const s = setup({
      planning: [withTemplate(false), plan(true)],
      generating: [new Error('generator crashed'), [code('y = 2'), exec()]]
    });
    const failed = await s.runner.start({ task: 't' });
    expect(failed).toEqual({
      reason: 'error',
      message: '/generating failed: generator crashed',
      text: { id: 'generatingFailed', params: ['generator crashed'] }
    });
    expect(s.runner.snapshot.state).toBe('ERROR');
    expect(s.runner.snapshot.error).toEqual({
      endpoint: 'generating',
      message: '/generating failed: generator crashed',
      text: { id: 'generatingFailed', params: ['generator crashed'] },
      retryable: true
    });
    expect(s.errors).toHaveLength(1);
    expect(saved(s.driver).fsm.state).toBe('ERROR');

    const done = await s.runner.retry();
    expect(done.reason).toBe('completed');
    expect(s.client.generatingRequests).toHaveLength(2);
    expect(s.client.generatingRequests[1]).toEqual(
      s.client.generatingRequests[0]
    );
    expect(s.runner.snapshot.error).toBeNull();
    expect(s.driver.variables).toEqual({ y: '2' });
    expect(s.transitions).toContain('RESUME -> BEHAVIOR_RUNNING');
    expect(s.client.planningRequests[1].behavior_feedback).toMatchObject({
      behavior_id: 'behavior_001',
      actions_executed: 2
    });
    await expect(s.runner.retry()).rejects.toThrow(
      'There is no failed request to retry.'
    );
  });

  it("carries the planner client's message ids in its own errors and warnings, the English unchanged", async () => {
    const url = 'http://planner.test/generating';
    const timeout = new PlannerError({
      kind: 'timeout',
      url,
      ...protocol.say('firstByteTimeout', `POST ${url}`, 300)
    });
    const stream = new ActionStream();
    const s = setup({
      planning: [withTemplate(false), plan(false)],
      generating: [stream, timeout]
    });
    const run = s.runner.start({ task: 't' });
    const malformed = protocol.say(
      'lineProblem',
      `POST ${url}`,
      protocol.msg('malformedLine'),
      '{oops'
    );
    stream.pushEvents({ kind: 'warning', ...malformed, line: '{oops' });
    stream.push(text('one'));
    stream.end();
    const failed = await run;

    expect(s.warnings).toContainEqual({ ...malformed, source: 'planner' });
    expect(effectsOf(s.client.planningRequests[1])).toContain(
      `⚠️ WARN: POST ${url}: malformed line ignored: {oops`
    );
    expect(failed).toEqual({
      reason: 'error',
      message: `/generating failed: POST ${url} timed out: no data from the planner for 300 s after the request was sent`,
      text: msg('generatingFailed', timeout.text!)
    });
  });

  it('refuses with a message the UI can translate', async () => {
    const s = setup({ planning: [withTemplate(false), plan(true)] });
    // Nothing failed yet: there is nothing to retry.
    const error = await s.runner.retry().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({
      message: 'There is no failed request to retry.',
      text: { id: 'noFailedRequest', params: [] }
    });
  });

  it('names the variables a planner says it lacks, and retries with the ones the user gives', async () => {
    const url = 'http://planner.test/v1/actions';
    const missing = new PlannerError({
      kind: 'invalid',
      url,
      ...protocol.say('v1VariablesMissing', 'section_3_x', 'target_variable'),
      missingVariables: ['target_variable']
    });
    const s = setup({
      planning: [withTemplate(false), plan(true)],
      generating: [missing, [text('ran')]]
    });
    expect((await s.runner.start({ task: 't' })).reason).toBe('error');
    expect(s.runner.snapshot.error).toMatchObject({
      endpoint: 'generating',
      retryable: true,
      missingVariables: ['target_variable']
    });
    expect(
      (await s.runner.retry({ variables: { target_variable: 'revenue' } }))
        .reason
    ).toBe('completed');
    // The request is made again with the variable (not the failed one re-sent as it was).
    expect(
      s.client.generatingRequests[1].observation?.context?.variables
    ).toMatchObject({
      problem_description: 't',
      target_variable: 'revenue'
    });
    expect(
      s.client.planningRequests[1].observation?.context?.variables
    ).toMatchObject({
      target_variable: 'revenue'
    });
  });

  it('keeps what the planner’s error asks the user to do (open the LLM settings), on /planning and /generating', async () => {
    const url = 'http://planner.test/generating';
    const refused = new PlannerError({
      kind: 'http',
      url,
      status: 424,
      ...protocol.say('requestFailed', `POST ${url}`, 'HTTP 424: no key'),
      action: 'open-llm-settings'
    });
    const s = setup({
      planning: [withTemplate(false), plan(true)],
      generating: [refused]
    });
    expect((await s.runner.start({ task: 't' })).reason).toBe('error');
    expect(s.runner.snapshot.error).toMatchObject({
      endpoint: 'generating',
      action: 'open-llm-settings'
    });
    const planning = setup({
      planning: [
        new PlannerError({
          kind: 'invalid',
          url,
          message: 'bad answer',
          action: 'open-llm-settings'
        })
      ]
    });
    expect((await planning.runner.start({ task: 't' })).reason).toBe('error');
    expect(planning.runner.snapshot.error).toMatchObject({
      endpoint: 'planning',
      action: 'open-llm-settings'
    });
    // An error that asks nothing offers nothing more than Retry.
    const plain = setup({
      planning: [withTemplate(false)],
      generating: [new Error('boom')]
    });
    await plain.runner.start({ task: 't' });
    expect(plain.runner.snapshot.error?.action).toBeUndefined();
  });

  it('keeps what a stream applied before it broke and asks /planning on retry, not replaying it', async () => {
    const s = setup({
      planning: [withTemplate(false), plan(false), plan(true)],
      generating: [
        { actions: [text('first')], thenFail: new Error('connection reset') },
        [text('second')]
      ]
    });
    expect((await s.runner.start({ task: 't' })).reason).toBe('error');
    expect(s.driver.cells.map(c => c.source)).toEqual(['first']);
    expect(saved(s.driver).fsm.state).toBe('ERROR');

    expect((await s.runner.retry()).reason).toBe('completed');
    expect(s.driver.cells.map(c => c.source)).toEqual(['first', 'second']);
    expect(s.client.planningRequests[1].behavior_feedback).toMatchObject({
      behavior_id: 'behavior_001',
      actions_executed: 1,
      last_action_result: 'error'
    });
    expect(effectsOf(s.client.planningRequests[1]).join('\n')).toContain(
      '/generating failed: connection reset after 1 action(s) were applied'
    );
    expect(s.client.generatingRequests).toHaveLength(2);
  });

  it('pauses at an action boundary, buffers the stream and resumes in order', async () => {
    const stream = new ActionStream();
    const s = setup({
      planning: [withTemplate(false), plan(true)],
      generating: [stream]
    });
    const applied: number[] = [];
    s.runner.actionApplied.connect((_, a) => {
      applied.push(a.index);
      if (a.index === 0) {
        s.runner.pause();
        expect(s.runner.snapshot.pausing).toBe(true);
      }
    });
    const run = s.runner.start({ task: 't' });
    stream.push(code('a = 1'));
    const paused = await s.paused();
    expect(paused.state).toBe('PAUSED');
    expect(paused.pauseReason).toEqual({
      kind: 'user',
      message: 'Paused by the user',
      text: { id: 'pausedByUser', params: [] }
    });
    stream.push(exec(), text('after'), code('b = 2'), exec());
    stream.end();
    await settle();
    expect(stream.consumed).toBe(5);
    expect(applied).toEqual([0]);
    expect(s.runner.snapshot.bufferedActions).toBe(4);
    expect(s.driver.cells).toHaveLength(1);
    expect(saved(s.driver).fsm.state).toBe('PAUSED');

    s.runner.resume();
    const finished = await run;
    expect(finished.reason).toBe('completed');
    expect(applied).toEqual([0, 1, 2, 3, 4]);
    expect(s.driver.cells.map(c => c.source)).toEqual([
      'a = 1',
      'after',
      'b = 2'
    ]);
    expect(s.driver.executed).toEqual(['cell-1', 'cell-3']);
    expect(s.transitions).toContain('PAUSE -> PAUSED');
    expect(s.transitions).toContain('RESUME -> ACTION_COMPLETED');
    expect(
      s.client.planningRequests[1].behavior_feedback?.actions_executed
    ).toBe(5);
  });

  it('runs one behavior at a time in step mode', async () => {
    const s = setup({
      planning: [withTemplate(false), plan(false), plan(true)],
      generating: [[text('one')], [text('two')]]
    });
    const run = s.runner.start({ task: 't', stepMode: true });
    let snap = await s.paused();
    expect(snap.pauseReason).toEqual({
      kind: 'step',
      message: 'Step mode: paused after one behavior',
      text: { id: 'pausedStepMode', params: [] }
    });
    expect(snap.state).toBe('PAUSED');
    expect(snap.behavior.id).toBe('behavior_001');
    expect(s.client.planningRequests).toHaveLength(1);
    expect(s.driver.cells.map(c => c.source)).toEqual(['one']);

    s.runner.step();
    await when(s.runner.progressChanged, p => !p.paused);
    snap = await s.paused();
    expect(snap.behavior.id).toBe('behavior_002');
    expect(s.driver.cells.map(c => c.source)).toEqual(['one', 'two']);
    s.runner.resume();
    expect((await run).reason).toBe('completed');
  });

  it('pauses after the current behavior when step() is used while running', async () => {
    const stream = new ActionStream();
    const s = setup({
      planning: [withTemplate(false), plan(false), plan(true)],
      generating: [stream, [text('two')]]
    });
    const run = s.runner.start({ task: 't' });
    stream.push(text('one'));
    await when(s.runner.actionApplied, () => true);
    s.runner.step();
    stream.end();
    const snap = await s.paused();
    expect(snap.behaviorsRun).toBe(1);
    s.runner.resume();
    expect((await run).reason).toBe('completed');
    expect(s.driver.cells.map(c => c.source)).toEqual(['one', 'two']);
  });

  it('stops without interrupting: the running cell finishes, nothing more runs', async () => {
    const driver = new FakeNotebookDriver();
    const s = setup(
      {
        planning: [withTemplate(false, TEMPLATE)],
        generating: [[code('a = 1'), exec(), code('b = 2'), exec()]]
      },
      { driver }
    );
    let release: () => void = () => undefined;
    const seen: { aborted: boolean; interrupts: boolean }[] = [];
    driver.onExec = async (cell, fake, request) => {
      if (cell.source !== 'a = 1') {
        return undefined;
      }
      await new Promise<void>(resolve => (release = resolve));
      const signal = request.signal!;
      seen.push({
        aborted: signal.aborted,
        interrupts: abortInterruptsKernel(signal)
      });
      return fake.runSource(cell.source);
    };
    const run = s.runner.start({ task: 't' });
    while (driver.executed.length < 1) {
      await settle(1);
    }
    let stopped = false;
    const stopping = s.runner.stop().then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect((await run).reason).toBe('stopped');
    expect(seen).toEqual([{ aborted: true, interrupts: false }]);
    expect(driver.interruptCount).toBe(0);
    expect(driver.executed).toHaveLength(1);
    expect(driver.variables).toEqual({ a: '1' });
    expect(driver.cells.map(c => c.source)).toEqual(['a = 1']);
  });

  it('stops: aborts the stream, interrupts the kernel, saves a resumable state', async () => {
    const stream = new ActionStream();
    const driver = new FakeNotebookDriver();
    const s = setup(
      {
        planning: [withTemplate(false, TEMPLATE)],
        generating: [stream]
      },
      { driver }
    );
    const run = s.runner.start({ task: 'Predict' });
    stream.push(code('z = 3'), exec());
    await when(s.runner.actionApplied, a => a.index === 1);
    await s.runner.stop({ interruptKernel: true });
    const finished = await run;
    expect(finished).toEqual({
      reason: 'stopped',
      message: 'The run was stopped; it can be resumed from the current step.',
      text: { id: 'runStopped', params: [] }
    });
    expect(driver.interruptCount).toBe(1);
    expect(s.runner.isRunning).toBe(false);
    expect(s.runner.snapshot.state).toBe('IDLE');
    expect(s.transitions[s.transitions.length - 1]).toBe('CANCEL -> IDLE');

    const state = saved(driver);
    expect(state.phase).toBe('plan');
    expect(state.openBehavior).toBeNull();
    expect(state.pendingFeedback).toEqual({
      behavior_id: 'behavior_001',
      actions_executed: 2,
      actions_succeeded: 2,
      sections_added: 0,
      last_action_result: 'stopped'
    });
    expect(state.progress.stages.current).toBe('s1');
    expect(state.progress.steps.current).toBe('p1');
    expect(state.progress.behaviors.completed[0].goal).toMatch(/\(stopped\)$/);
    expect(state.fsm.state).toBe('IDLE');

    // Later, another runner on the same notebook resumes from the current step.
    const later = setup(
      { planning: [plan(true), plan(true), plan(true)] },
      { driver }
    );
    const resumed = await later.runner.resumeFromSaved();
    expect(resumed?.reason).toBe('completed');
    const first = later.client.planningRequests[0];
    expect(first.observation.location.current).toMatchObject({
      stage_id: 's1',
      step_id: 'p1',
      behavior_id: 'behavior_001'
    });
    expect(first.behavior_feedback?.last_action_result).toBe('stopped');
    expect(first.observation.context?.variables).toMatchObject({
      problem_description: 'Predict',
      z: '3'
    });
    expect(later.client.planningRequests).toHaveLength(3);
    expect(later.runner.snapshot.state).toBe('WORKFLOW_COMPLETED');
  });

  it('stops without writing to a notebook another window now runs: no save, no closing of the thinking cell', async () => {
    const stream = new ActionStream();
    const driver = new FakeNotebookDriver();
    const s = setup(
      {
        planning: [withTemplate(false, TEMPLATE), plan(true)],
        generating: [stream, [text('later')]]
      },
      { driver }
    );
    const run = s.runner.start({ task: 't' });
    stream.push(code('z = 3'), {
      action: 'is_thinking',
      text_array: ['Looking'],
      agent_name: 'Planner'
    } as AnyAction);
    await when(s.runner.actionApplied, a => a.index === 1);
    const saves = driver.saveCount;
    const cells = driver.cells.map(c => ({ ...c }));
    await s.runner.stop({ leaveNotebook: true });
    expect((await run).reason).toBe('stopped');
    expect(driver.saveCount).toBe(saves);
    expect(driver.cells).toEqual(cells);
    expect(driver.savesHeld).toBe(true);
    // A later run here (after Take over) saves again.
    await s.runner.start({ task: 't' });
    expect(driver.savesHeld).toBe(false);
  });

  it('stops even when the kernel never answers the variable inspection', async () => {
    const driver = new FakeNotebookDriver();
    const s = setup(
      {
        planning: [withTemplate(false), plan(false)],
        generating: [[code('a = 1'), exec()]]
      },
      { driver }
    );
    let inspections = 0;
    const hung = new Promise<IKernelVariables>(() => undefined);
    const collect = driver.collectVariables.bind(driver);
    driver.collectVariables = () => {
      inspections++;
      // The first inspection answers; every later one hangs like an interrupted silent request.
      return inspections === 1 ? collect() : hung;
    };
    const run = s.runner.start({ task: 't' });
    await when(s.runner.stateChanged, t => t.to === 'ACTION_COMPLETED');
    await settle();
    expect(inspections).toBeGreaterThan(1);
    await s.runner.stop();
    expect((await run).reason).toBe('stopped');
    expect(s.runner.isRunning).toBe(false);
    expect(saved(driver).fsm.state).toBe('IDLE');
  });

  it('resumes from nothing saved with null', async () => {
    const s = setup({});
    expect(await s.runner.resumeFromSaved()).toBeNull();
  });

  it('stops waiting for a confirmation when the run is stopped', async () => {
    let asked!: () => void;
    const question = new Promise<void>(resolve => (asked = resolve));
    const s = setup(
      {
        planning: [withTemplate(false)],
        generating: [
          [{ action: 'update_workflow', updated_workflow: TEMPLATE }]
        ]
      },
      {
        hooks: {
          confirmWorkflowUpdate: () => {
            asked();
            return new Promise<boolean>(() => undefined);
          }
        }
      }
    );
    const run = s.runner.start({ task: 't' });
    await question;
    expect(s.runner.snapshot.state).toBe('WORKFLOW_UPDATE_PENDING');
    await s.runner.stop();
    expect((await run).reason).toBe('stopped');
    expect(s.runner.snapshot.state).toBe('IDLE');
    expect(s.runner.snapshot.workflowName).toBe('Small');
  });

  it('stops with a clear message when the maximum number of behaviors is reached', async () => {
    const s = setup(
      {
        defaultPlanning: withTemplate(false),
        generating: [[text('1')], [text('2')], [text('3')]]
      },
      { settings: { maxExecutionSteps: 2 } }
    );
    const finished = await s.runner.start({ task: 't' });
    expect(finished.reason).toBe('max_steps');
    expect(finished.message).toBe(
      'Stopped after 2 behaviors: the maximum number of execution steps (2) was reached. Raise it in the settings, or resume the run to go on.'
    );
    expect(s.client.generatingRequests).toHaveLength(2);
    expect(s.warnings.map(w => w.message)).toContain(finished.message);
    expect(s.runner.snapshot.state).toBe('IDLE');
    expect(saved(s.driver).phase).toBe('plan');
  });

  it('warns about an unknown action type and goes on', async () => {
    const s = setup({
      planning: [withTemplate(false), plan(true)],
      generating: [[{ action: 'make_coffee', strength: 3 }, text('still here')]]
    });
    const finished = await s.runner.start({ task: 't' });
    expect(finished.reason).toBe('completed');
    const message =
      "⚠️ WARN: Unknown action type 'make_coffee' skipped: no handler is registered for it";
    expect(s.warnings).toContainEqual({
      message,
      text: { id: 'unknownAction', params: ['make_coffee'] },
      source: 'action'
    });
    expect(effectsOf(s.client.planningRequests[1])).toEqual([message]);
    expect(s.driver.cells.map(c => c.source)).toEqual(['still here']);
    expect(s.client.planningRequests[1].behavior_feedback).toMatchObject({
      actions_executed: 2,
      actions_succeeded: 1,
      // Any failed action makes the behavior's result an error (docs/protocol.md#the-loop).
      last_action_result: 'error'
    });
  });
});
