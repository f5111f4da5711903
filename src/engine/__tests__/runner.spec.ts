import type { ISignal } from '@lumino/signaling';
import { PlannerClient } from '../../protocol';
import type {
  Action,
  ExecAction,
  PlanningRequestInput,
  PlanningResponse,
  UnknownAction,
  WorkflowTemplate
} from '../../protocol';
import { isSavedRunState, ISavedRunState, WorkflowRunner } from '../runner';
import { DEFAULT_SETTINGS, IRunSettings } from '../settings';
import { endpointOf, RunTrace } from '../trace';
import type { TraceRecord } from '../../protocol/traceFormat';
import {
  ActionStream,
  FakeNotebookDriver,
  FakePlannerService,
  IFakePlannerScript
} from '../testing';
import type {
  IRunError,
  IRunFinished,
  IRunnerHooks,
  IRunSnapshot,
  IRunWarning,
  IWorkflowRunner
} from '../types';

type AnyAction = Action | UnknownAction;

const TEMPLATE: WorkflowTemplate = {
  name: 'Ames',
  stages: [
    {
      id: 's1',
      name: 'Stage 1',
      goal: 'Understand the data',
      steps: [
        { id: 'p1', name: 'Load', goal: 'Load the data' },
        { id: 'p2', name: 'Explore' }
      ]
    },
    { id: 's2', name: 'Stage 2', steps: [{ id: 'q1', name: 'Model' }] }
  ]
};

const ONE_STEP: WorkflowTemplate = {
  name: 'Small',
  stages: [{ id: 's1', name: 'Stage 1', steps: [{ id: 'p1', name: 'Load' }] }]
};

function exec(codecell_id = 'lastAddedCellId', need_output = true): ExecAction {
  return {
    action: 'exec',
    codecell_id,
    need_output,
    auto_debug: false,
    keep_debug_button_visible: false
  };
}

function code(content: string, store_id?: string): AnyAction {
  return store_id
    ? { action: 'add', shot_type: 'action', content, store_id }
    : { action: 'add', shot_type: 'action', content };
}

function text(content: string): AnyAction {
  return { action: 'add', shot_type: 'dialogue', content };
}

function plan(
  targetAchieved: boolean,
  extra: Partial<PlanningResponse> = {}
): PlanningResponse {
  return { targetAchieved, ...extra };
}

function withTemplate(
  targetAchieved: boolean,
  template: WorkflowTemplate = ONE_STEP,
  extra: Partial<PlanningResponse> = {}
): PlanningResponse {
  return {
    targetAchieved,
    ...extra,
    context_update: {
      ...extra.context_update,
      workflow_update: { workflowTemplate: template }
    }
  };
}

/** Resolves once `predicate` holds for a value the signal emits (or for `initial`). */
function when<T>(
  signal: ISignal<IWorkflowRunner, T>,
  predicate: (value: T) => boolean,
  initial?: T
): Promise<T> {
  return new Promise(resolve => {
    if (initial !== undefined && predicate(initial)) {
      resolve(initial);
      return;
    }
    const slot = (_: IWorkflowRunner, value: T) => {
      if (predicate(value)) {
        signal.disconnect(slot);
        resolve(value);
      }
    };
    signal.connect(slot);
  });
}

/** Lets pending promise callbacks run (the stream reader, the loop) without any timing. */
async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    await new Promise<void>(resolve => setImmediate(resolve));
  }
}

interface ISetup {
  driver: FakeNotebookDriver;
  client: FakePlannerService;
  runner: WorkflowRunner;
  settings: IRunSettings;
  warnings: IRunWarning[];
  errors: IRunError[];
  finished: IRunFinished[];
  transitions: string[];
  paused(): Promise<IRunSnapshot>;
}

function setup(
  script: IFakePlannerScript,
  overrides: Partial<IRunSettings> = {},
  hooks: IRunnerHooks = {},
  driver = new FakeNotebookDriver()
): ISetup {
  const client = new FakePlannerService(script);
  const settings = { ...DEFAULT_SETTINGS, ...overrides };
  const runner = new WorkflowRunner({
    driver,
    client,
    settings: () => settings,
    hooks
  });
  const s: ISetup = {
    driver,
    client,
    runner,
    settings,
    warnings: [],
    errors: [],
    finished: [],
    transitions: [],
    paused: () =>
      when(runner.progressChanged, snap => snap.paused, runner.snapshot)
  };
  runner.warning.connect((_, w) => s.warnings.push(w));
  runner.errorOccurred.connect((_, e) => s.errors.push(e));
  runner.finished.connect((_, f) => s.finished.push(f));
  runner.stateChanged.connect((_, t) =>
    s.transitions.push(`${t.event} -> ${t.to}`)
  );
  return s;
}

function saved(driver: FakeNotebookDriver): ISavedRunState {
  if (!isSavedRunState(driver.savedState)) {
    throw new Error('nothing saved');
  }
  return driver.savedState;
}

function effectsOf(request: PlanningRequestInput | undefined): string[] {
  return request?.observation.context?.effects?.current ?? [];
}

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
    expect(first.options).toEqual({ stream: false });
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
    expect(generating[0].options).toEqual({ stream: true });
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
      {},
      hooks
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
      {},
      { confirmWorkflowUpdate: confirm }
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
      {},
      { confirmWorkflowUpdate: confirm }
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
      { autoAcceptWorkflowUpdates: true },
      { confirmWorkflowUpdate: confirm }
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
      { autoAcceptWorkflowUpdates: true }
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
      message: '/generating failed: generator crashed'
    });
    expect(s.runner.snapshot.state).toBe('ERROR');
    expect(s.runner.snapshot.error).toEqual({
      endpoint: 'generating',
      message: '/generating failed: generator crashed',
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
    expect(paused.pauseReason).toBe('Paused by the user');
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
    expect(snap.pauseReason).toBe('Step mode: paused after one behavior');
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

  it('stops: aborts the stream, interrupts the kernel, saves a resumable state', async () => {
    const stream = new ActionStream();
    const driver = new FakeNotebookDriver();
    const s = setup(
      {
        planning: [withTemplate(false, TEMPLATE)],
        generating: [stream]
      },
      {},
      {},
      driver
    );
    const run = s.runner.start({ task: 'Predict' });
    stream.push(code('z = 3'), exec());
    await when(s.runner.actionApplied, a => a.index === 1);
    await s.runner.stop({ interruptKernel: true });
    const finished = await run;
    expect(finished).toEqual({
      reason: 'stopped',
      message: 'The run was stopped; it can be resumed from the current step.'
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
      {},
      {},
      driver
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

  it('stops even when the kernel never answers the variable inspection', async () => {
    const driver = new FakeNotebookDriver();
    const s = setup(
      {
        planning: [withTemplate(false), plan(false)],
        generating: [[code('a = 1'), exec()]]
      },
      {},
      {},
      driver
    );
    let inspections = 0;
    const hung = new Promise<Record<string, unknown>>(() => undefined);
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
      {},
      {
        confirmWorkflowUpdate: () => {
          asked();
          return new Promise<boolean>(() => undefined);
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
      { maxExecutionSteps: 2 }
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
    expect(s.warnings).toContainEqual({ message, source: 'action' });
    expect(effectsOf(s.client.planningRequests[1])).toEqual([message]);
    expect(s.driver.cells.map(c => c.source)).toEqual(['still here']);
    expect(s.client.planningRequests[1].behavior_feedback).toMatchObject({
      actions_executed: 2,
      actions_succeeded: 1,
      last_action_result: 'success'
    });
  });

  it('uses a custom action registered while the run is going', async () => {
    let s!: ISetup;
    const register = (): PlanningResponse => {
      s.runner.registry.register('chart', async (action, context) => {
        await context.run.addCell({
          kind: 'code',
          source: `plot(${String(action.column)})`,
          role: 'code'
        });
        context.effects.add(`chart of ${String(action.column)}`);
        return { ok: true, summary: 'chart', sectionAdded: false };
      });
      return withTemplate(false);
    };
    s = setup({
      planning: [register, plan(true)],
      generating: [[{ action: 'chart', column: 'SalePrice' }, exec()]]
    });
    const finished = await s.runner.start({ task: 't' });
    expect(finished.reason).toBe('completed');
    expect(s.warnings).toEqual([]);
    expect(s.driver.cells[0]).toMatchObject({
      source: 'plot(SalePrice)',
      provenance: {
        behavior_id: 'behavior_001',
        action: 'chart',
        action_index: 0
      }
    });
    expect(s.driver.executed).toEqual([s.driver.cells[0].id]);
    expect(effectsOf(s.client.planningRequests[1])).toEqual([
      'chart of SalePrice'
    ]);
  });

  it('keeps every request within maxContextLength with a large history', async () => {
    const behaviors = 12;
    const driver = new FakeNotebookDriver();
    driver.onExec = cell => ({
      status: 'ok',
      output: `${cell.id}: ${'o'.repeat(2500)}`
    });
    const s = setup(
      {
        planning: [
          withTemplate(false),
          ...Array.from({ length: behaviors - 1 }, () => plan(false))
        ],
        defaultPlanning: plan(true),
        generating: Array.from({ length: behaviors }, (_, i) => [
          code(`v${i} = ${i}`),
          exec(),
          exec()
        ])
      },
      {},
      {},
      driver
    );
    await s.runner.start({ task: 't' });
    expect(s.runner.effects.history.length).toBeGreaterThan(10);
    const requests = [
      ...s.client.planningRequests,
      ...s.client.generatingRequests
    ];
    for (const request of requests) {
      expect(JSON.stringify(request).length).toBeLessThanOrEqual(18600);
    }
    const last =
      s.client.planningRequests[s.client.planningRequests.length - 1];
    const note = effectsOf(last).find(e => e.startsWith('[context trimmed:'));
    expect(note).toMatch(
      /^\[context trimmed: \d+ history items dropped.* to fit 18600 characters\]$/
    );
    expect(s.warnings.filter(w => w.source === 'engine')).toEqual([]);
  });

  it('pauses when the kernel is gone and goes on after resume', async () => {
    const driver = new FakeNotebookDriver();
    driver.kernelAlive = false;
    const s = setup(
      {
        planning: [withTemplate(false), plan(true)],
        generating: [[code('x = 1'), exec(), text('after')]]
      },
      {},
      {},
      driver
    );
    const run = s.runner.start({ task: 't' });
    const snap = await s.paused();
    expect(snap.pauseReason).toBe(
      'The kernel is not usable: The kernel is dead'
    );
    expect(s.warnings.map(w => w.message)).toContain(
      'The kernel is not usable: The kernel is dead'
    );
    expect(s.driver.cells).toHaveLength(1);
    driver.kernelAlive = true;
    s.runner.resume();
    expect((await run).reason).toBe('completed');
    expect(s.driver.cells.map(c => c.source)).toEqual(['x = 1', 'after']);
    expect(
      s.client.planningRequests[1].behavior_feedback?.last_action_result
    ).toBe('success');
  });

  it('asks before running code in interactive mode', async () => {
    const decisions: ('run' | 'skip' | 'stop')[] = ['skip', 'run', 'stop'];
    const seen: string[][] = [];
    const s = setup(
      {
        planning: [withTemplate(false), plan(false), plan(false), plan(false)],
        generating: [
          [text('intro'), code('```python\na = 1\n```'), exec()],
          [text('no code here')],
          [code('b = 2'), exec()],
          [code('c = 3'), exec()]
        ]
      },
      { interactive: true },
      {
        approveBehavior: async request => {
          seen.push(request.codeCells);
          return decisions.shift() ?? 'run';
        }
      }
    );
    const finished = await s.runner.start({ task: 't' });
    expect(finished.reason).toBe('stopped');
    expect(seen).toEqual([['a = 1'], ['b = 2'], ['c = 3']]);
    expect(s.driver.cells.map(c => c.source)).toEqual([
      'no code here',
      'b = 2'
    ]);
    expect(s.driver.variables).toEqual({ b: '2' });
    expect(s.runner.snapshot.state).toBe('IDLE');
    expect(s.client.planningRequests[1].behavior_feedback).toMatchObject({
      actions_executed: 0,
      last_action_result: 'skipped'
    });
    expect(effectsOf(s.client.planningRequests[1])).toEqual([
      'Behavior behavior_001 was skipped by the user: its 3 actions were not applied.'
    ]);
  });

  it('applies the context filter to the generating request', async () => {
    const driver = new FakeNotebookDriver();
    driver.variables = { df: 'DataFrame(1460×79)', big: 'matrix' };
    const s = setup(
      {
        planning: [
          withTemplate(false, ONE_STEP, {
            context_filter: {
              variables_to_include: ['df', 'ghost'],
              variables_to_summarize: { big: 'shape_only' },
              effects_config: { current_limit: 1 }
            }
          }),
          plan(true)
        ],
        generating: [[text('ok')]]
      },
      {},
      {},
      driver
    );
    await s.runner.start({ task: 't' });
    const request = s.client.generatingRequests[0];
    expect(request.observation.context?.variables).toEqual({
      df: 'DataFrame(1460×79)',
      big: 'shape_only(big)'
    });
    expect(driver.summarizeRequests).toEqual([{ big: 'shape_only' }]);
    const warning = "⚠️ WARN: Variable 'ghost' requested but not found";
    expect(request.observation.context?.effects?.current).toEqual([warning]);
    expect(s.warnings).toContainEqual({ message: warning, source: 'filter' });
    // The warning is an effect of the behavior the planner hears about next.
    expect(effectsOf(s.client.planningRequests[1])).toEqual([warning]);
  });

  it('starts with /generating in generation mode', async () => {
    const s = setup(
      { planning: [plan(true)], generating: [[text('first')]] },
      { startMode: 'generation' }
    );
    await s.runner.start({ task: 't' });
    expect(s.client.generatingRequests).toHaveLength(1);
    expect(s.client.planningRequests[0].behavior_feedback?.behavior_id).toBe(
      'behavior_001'
    );
  });

  it('completes the step after the behavior that sent end_phase', async () => {
    const s = setup({
      planning: [withTemplate(false, TEMPLATE), plan(true), plan(true)],
      generating: [
        [text('done'), { action: 'end_phase', step_id: 'p1' }, text('tail')]
      ]
    });
    await s.runner.start({ task: 't' });
    expect(s.driver.cells.map(c => c.source)).toEqual(['done', 'tail']);
    expect(
      s.client.planningRequests[1].observation.location.current?.step_id
    ).toBe('p2');
    expect(s.client.planningRequests[1].behavior_feedback).toBeUndefined();
  });

  it('moves on when the planner ends the behavior loop without the target', async () => {
    const s = setup({
      planning: [
        withTemplate(false, TEMPLATE),
        plan(false, { transition: { continue_behaviors: false } }),
        plan(true),
        plan(true)
      ],
      generating: [[text('try')]]
    });
    expect((await s.runner.start({ task: 't' })).reason).toBe('completed');
    expect(s.warnings.map(w => w.message)).toContain(
      "The planner ended step 'p1' without reaching its target; moving on."
    );
    expect(saved(s.driver).progress.stages.completed[0]).toMatchObject({
      stage_id: 's1'
    });
  });

  it('replaces the steps of a stage from stage_steps_update', async () => {
    const s = setup({
      planning: [
        withTemplate(true, TEMPLATE, {
          context_update: {
            stage_steps_update: {
              stage_id: 's1',
              steps: [
                { id: 'p1', name: 'Load' },
                { id: 'p_clean', name: 'Clean' }
              ]
            }
          }
        }),
        plan(true),
        plan(true)
      ]
    });
    await s.runner.start({ task: 't' });
    expect(
      s.client.planningRequests[1].observation.location.current?.step_id
    ).toBe('p_clean');
    expect(s.transitions).toContain('UPDATE_STEP_CONFIRMED -> STEP_RUNNING');
  });

  it('refuses to start twice and reports the planner stream warnings', async () => {
    const stream = new ActionStream();
    const s = setup({
      planning: [withTemplate(false), plan(true)],
      generating: [stream]
    });
    const run = s.runner.start({ task: 't' });
    await expect(s.runner.start({ task: 'again' })).rejects.toThrow(
      'A run is already active in this notebook.'
    );
    stream.warn('malformed JSON line ignored');
    stream.end();
    expect((await run).reason).toBe('completed');
    expect(s.warnings).toContainEqual({
      message: 'malformed JSON line ignored',
      source: 'planner'
    });
  });
});

describe('WorkflowRunner persistence and trace', () => {
  it('records the run trace through the client observer', async () => {
    const trace = new RunTrace();
    const client = new FakePlannerService({
      planning: [withTemplate(false), plan(true)],
      generating: [[text('hello'), code('x = 1')]],
      observer: trace
    });
    const runner = new WorkflowRunner({
      driver: new FakeNotebookDriver(),
      client,
      settings: () => DEFAULT_SETTINGS,
      trace
    });
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

  it('drives the real PlannerClient over HTTP and traces the raw lines', async () => {
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
    const client = new PlannerClient({
      baseUrl: 'http://planner.local:28600',
      fetch,
      observer: [trace, { onWarning: () => undefined }]
    });
    const driver = new FakeNotebookDriver();
    const runner = new WorkflowRunner({
      driver,
      client,
      settings: () => DEFAULT_SETTINGS,
      trace
    });
    const warnings: string[] = [];
    runner.warning.connect((_, w) => warnings.push(w.message));
    expect((await runner.start({ task: 't' })).reason).toBe('completed');
    expect(driver.codeCells().map(c => c.source)).toEqual(['k = 5']);
    expect(driver.variables).toEqual({ k: '5' });
    expect(warnings.some(w => w.includes('not json'))).toBe(true);
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
      {},
      {},
      driver
    );
    expect((await s.runner.start({ task: 't' })).reason).toBe('error');
    // The broken behavior was closed with what it applied; its feedback waits for the next plan.
    expect(saved(driver).openBehavior).toBeNull();
    expect(saved(driver).pendingFeedback?.behavior_id).toBe('behavior_001');
    const later = setup({ planning: [plan(true)] }, {}, {}, driver);
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
      {},
      {},
      driver
    );
    await first.runner.start({ task: 'first' });
    const second = setup({ defaultPlanning: plan(true) }, {}, {}, driver);
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
      { interactive: true },
      { approveBehavior: approve }
    );
    expect((await s.runner.start({ task: 't' })).reason).toBe('error');
    expect(approve).not.toHaveBeenCalled();
    expect(s.driver.cells).toEqual([]);
    expect((await s.runner.retry()).reason).toBe('completed');
    expect(approve).toHaveBeenCalledTimes(1);
    expect(s.driver.variables).toEqual({ a: '1' });
  });
});
