import { PlannerError } from '../../protocol';
import { canRewind } from '../rewindView';
import { ActionStream, FakeNotebookDriver } from '../testing';
import type { IRunSnapshot } from '../types';
import {
  AnyAction,
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

function title(value: string): AnyAction {
  return { action: 'update_title', title: value };
}

/** p1: one behavior; p2: one behavior; q1: one behavior; each achieved at its next plan. */
function threeSteps() {
  return {
    planning: [
      withTemplate(false, TEMPLATE),
      plan(true),
      plan(false),
      plan(true),
      plan(false),
      plan(true)
    ],
    generating: [
      [title('First'), code('a = 1'), exec(), text('loaded')],
      [title('Second'), code('b = 2'), exec(), text('explored')],
      [code('c = 3'), exec()]
    ]
  };
}

describe('WorkflowRunner rewind', () => {
  it('undoes the last behavior: its cells go, the title comes back, the run waits paused', async () => {
    const s = setup(
      {
        ...threeSteps(),
        planning: [
          withTemplate(false, TEMPLATE),
          plan(true),
          plan(false),
          plan(false),
          plan(true),
          plan(false),
          plan(true)
        ],
        generating: [
          [title('First'), code('a = 1'), exec(), text('loaded')],
          [title('Second'), code('b = 2'), exec(), text('explored')],
          [code('b = 22'), exec()],
          [code('c = 3'), exec()]
        ]
      },
      {}
    );
    const done = s.runner.start({ task: 't', stepMode: true });
    await s.paused();
    const effectsAtP2 = s.runner.effects;
    s.runner.resume();
    await when(
      s.runner.progressChanged,
      snap => snap.paused && snap.step.id === 'p2',
      undefined
    );
    const before = s.driver.cells.map(c => c.source);
    expect(before).toEqual([
      '# Second',
      'a = 1',
      'loaded',
      'b = 2',
      'explored'
    ]);
    expect(s.runner.snapshot.rewind?.undo).toEqual({
      behaviorId: 'behavior_001',
      stepId: 'p2'
    });

    const planned = await s.runner.rewindPlan({ kind: 'behavior' });
    expect(planned?.remove.map(c => c.summary)).toEqual(['b = 2', 'explored']);
    expect(planned?.restore.map(c => c.summary)).toEqual(['# First']);
    expect(planned?.keep).toEqual([]);

    const record = await s.runner.rewind({ kind: 'behavior' });
    expect(record).toMatchObject({
      kind: 'undo_behavior',
      stepId: 'p2',
      behaviorId: 'behavior_001',
      removed: 2,
      restored: 1,
      kernelRestarted: false
    });
    expect(record.effect).toBe(
      'The user rewound to step p2, before behavior behavior_001; cells from steps p2 were removed (2 cell(s)).'
    );
    expect(s.driver.cells.map(c => c.source)).toEqual([
      '# First',
      'a = 1',
      'loaded'
    ]);
    await s.paused();
    const snap = s.runner.snapshot;
    expect(snap.paused).toBe(true);
    expect(snap.running).toBe(true);
    expect(snap.step.id).toBe('p2');
    expect(snap.behavior.iteration).toBe(0);
    expect(
      snap.progress.behaviors.completed.map(b => b.behavior_id)
    ).not.toContain('behavior_001');
    // Effects: the behavior's own are gone, the rewind is told.
    expect(s.runner.effects).toEqual({
      current: [...effectsAtP2.current, record.effect],
      history: effectsAtP2.history
    });
    expect(s.finished).toEqual([]);
    // The saved run and the trace say so too.
    expect(saved(s.driver).rewind?.records.map(r => r.effect)).toEqual([
      record.effect
    ]);
    expect(s.runner.trace.toJSONL()).toContain('"kind":"rewind"');

    const asked = s.client.planningRequests.length;
    s.runner.resume();
    await when(
      s.runner.progressChanged,
      snap2 => snap2.paused && s.client.generatingRequests.length === 3,
      undefined
    );
    expect(effectsOf(s.client.planningRequests[asked])).toContain(
      record.effect
    );
    expect(s.client.planningRequests[asked].behavior_feedback).toBeFalsy();
    // The cell map was rolled back: the new behavior's exec runs its own cell.
    expect(s.driver.cells.map(c => c.source)).toContain('b = 22');
    s.runner.resume();
    await when(
      s.runner.progressChanged,
      snap2 => snap2.paused && s.client.generatingRequests.length === 4,
      undefined
    );
    s.runner.resume();
    expect((await done).reason).toBe('stopped');
    // The first loop ended for the rewind; the run goes on in the new one.
    const end = await when(
      s.runner.finished,
      () => true,
      s.finished.length > 0 ? s.finished[0] : undefined
    );
    expect(end.reason).toBe('completed');
    expect(s.driver.cells.map(c => c.source)).toEqual([
      '# First',
      'a = 1',
      'loaded',
      'b = 22',
      'c = 3'
    ]);
  });

  it('redoes from a step: later cells go, the user cells stay, the kernel re-runs the kept cells', async () => {
    const driver = new FakeNotebookDriver();
    const s = setup(threeSteps(), {}, {}, driver);
    expect((await s.runner.start({ task: 't' })).reason).toBe('completed');
    expect(s.runner.snapshot.rewind?.redoSteps).toEqual([
      's1/p1',
      's1/p2',
      's2/q1'
    ]);
    const aCell = driver.codeCells()[0].id;
    const afterLoad = driver.cells.findIndex(c => c.source === 'loaded') + 1;
    driver.addUserCell('mine = 5', 'code', afterLoad);
    const edited = driver.cells.find(c => c.source === 'explored')!;
    edited.source = 'explored, with my notes';
    const executedBefore = driver.executed.length;

    const planned = await s.runner.rewindPlan({
      kind: 'step',
      stageId: 's1',
      stepId: 'p2'
    });
    expect(planned?.steps).toEqual(['p2', 'q1']);
    expect(planned?.remove.map(c => c.summary)).toEqual(['b = 2', 'c = 3']);
    expect(planned?.keep.map(c => c.summary)).toEqual([
      'explored, with my notes'
    ]);
    expect(planned?.restore.map(c => c.summary)).toEqual(['# First']);

    s.client.planningScript.push(
      plan(false),
      plan(true),
      plan(false),
      plan(true)
    );
    s.client.generatingScript.push(
      [code('b = 20'), exec()],
      [code('c = 30'), exec()]
    );
    const told: { at: IRunSnapshot | null } = { at: null };
    s.runner.progressChanged.connect((_, snap) => {
      if (!told.at && snap.rewind?.last) {
        told.at = snap;
      }
    });
    const record = await s.runner.rewind(
      { kind: 'step', stageId: 's1', stepId: 'p2' },
      { restartKernel: true }
    );
    expect(record).toMatchObject({
      kind: 'redo_from_step',
      steps: ['p2', 'q1'],
      removed: 2,
      kept: 1,
      kernelRestarted: true,
      rerun: 2,
      rerunError: null
    });
    expect(record.effect).toBe(
      'The user rewound to step p2; cells from steps p2..q1 were removed (2 cell(s)). 1 cell(s) the user edited were kept.'
    );
    expect(driver.restartCount).toBe(1);
    // Told as soon as the rewind is done, the run is no longer complete, before the new loop starts.
    expect(told.at?.state).toBe('STEP_RUNNING');
    expect(told.at?.step.id).toBe('p2');
    expect(driver.executed.slice(executedBefore, executedBefore + 2)).toEqual([
      aCell,
      driver.cells.find(c => c.source === 'mine = 5')!.id
    ]);
    const end = await when(s.runner.finished, () => true);
    expect(end.reason).toBe('completed');
    expect(driver.cells.map(c => c.source)).toEqual([
      '# First',
      'a = 1',
      'loaded',
      'mine = 5',
      'explored, with my notes',
      'b = 20',
      'c = 30'
    ]);
    expect(driver.variables).toEqual({
      a: '1',
      mine: '5',
      b: '20',
      c: '30'
    });
    expect(
      s.runner.snapshot.stages.flatMap(stage =>
        stage.steps.map(step => `${step.id}:${step.status}`)
      )
    ).toEqual(['p1:completed', 'p2:completed', 'q1:completed']);
    expect(s.runner.snapshot.state).toBe('WORKFLOW_COMPLETED');
  });

  it('records a redo whose kernel does not answer after its restart; the run goes on', async () => {
    const driver = new FakeNotebookDriver();
    const s = setup(threeSteps(), {}, {}, driver);
    expect((await s.runner.start({ task: 't' })).reason).toBe('completed');
    driver.restartFailure = 'The kernel did not answer for 40 s.';
    const executedBefore = driver.executed.length;
    s.client.planningScript.push(plan(false), plan(true));
    s.client.generatingScript.push([code('c = 30'), exec()]);
    const record = await s.runner.rewind(
      { kind: 'step', stageId: 's2', stepId: 'q1' },
      { restartKernel: true }
    );
    expect(record).toMatchObject({
      kind: 'redo_from_step',
      removed: 1,
      kernelRestarted: true,
      rerun: 0,
      rerunError: 'The kernel did not answer for 40 s.'
    });
    expect(record.effect).toContain(
      'After a kernel restart, re-running the kept cells stopped: The kernel did not answer for 40 s.'
    );
    // No kept cell ran; the redone step's own cell does, in the run that goes on.
    const end = await when(s.runner.finished, () => true);
    expect(end.reason).toBe('completed');
    expect(driver.executed.slice(executedBefore)).toEqual([
      driver.cells.find(c => c.source === 'c = 30')!.id
    ]);
  });

  it('rewinds a run saved in the notebook, after a reload', async () => {
    const s = setup(threeSteps());
    await s.runner.start({ task: 't' });
    const reloaded = setup(
      {
        planning: [plan(false), plan(true)],
        generating: [[code('c = 31'), exec()]]
      },
      {},
      {},
      s.driver
    );
    const record = await reloaded.runner.rewind({
      kind: 'step',
      stageId: 's2',
      stepId: 'q1'
    });
    expect(record.removed).toBe(1);
    const end = await when(reloaded.runner.finished, () => true);
    expect(end.reason).toBe('completed');
    expect(s.driver.codeCells().map(c => c.source)).toEqual([
      'a = 1',
      'b = 2',
      'c = 31'
    ]);
  });

  it('refuses while the run is busy, and when nothing is kept for the step', async () => {
    const stream = new ActionStream();
    const s = setup({
      planning: [withTemplate(false, TEMPLATE)],
      generating: [stream]
    });
    const done = s.runner.start({ task: 't' });
    await settle();
    await expect(s.runner.rewind({ kind: 'behavior' })).rejects.toThrow(
      'Pause the run before rewinding it.'
    );
    expect(await s.runner.rewindPlan({ kind: 'behavior' })).toBeNull();
    stream.push(code('x = 1'));
    await s.runner.stop();
    await done;
    await expect(
      s.runner.rewind({ kind: 'step', stageId: 's9', stepId: 'nope' })
    ).rejects.toThrow('That point of the run is no longer kept.');
  });
});

/** A finished run of `threeSteps`, with the planner's answers for a redo from p2 queued. */
async function completedRun(driver: FakeNotebookDriver, interactive = false) {
  const s = setup(
    threeSteps(),
    { interactive },
    interactive ? { approveBehavior: async () => 'run' } : {},
    driver
  );
  expect((await s.runner.start({ task: 't' })).reason).toBe('completed');
  s.client.planningScript.push(
    plan(false),
    plan(true),
    plan(false),
    plan(true)
  );
  s.client.generatingScript.push(
    [code('b = 20'), exec()],
    [code('c = 30'), exec()]
  );
  return s;
}

/** Holds the driver's kernel restart until `open()`; `reached` resolves once the rewind asks for it. */
function holdRestart(driver: FakeNotebookDriver) {
  let open = () => {};
  let reach = () => {};
  const reached = new Promise<void>(resolve => (reach = resolve));
  driver.onRestart = () => {
    reach();
    return new Promise<void>(resolve => (open = resolve));
  };
  return { reached, open: () => open() };
}

const REDO_P2 = { kind: 'step', stageId: 's1', stepId: 'p2' } as const;

describe('WorkflowRunner rewind in progress', () => {
  it('is busy from the start of a rewind to the loop it starts: Resume, Run and another rewind are refused', async () => {
    const driver = new FakeNotebookDriver();
    const s = await completedRun(driver);
    const restart = holdRestart(driver);
    const rewound = s.runner.rewind(REDO_P2, { restartKernel: true });
    await restart.reached;

    expect(s.runner.isRunning).toBe(true);
    expect(s.runner.snapshot).toMatchObject({
      running: true,
      rewinding: true
    });
    expect(canRewind(s.runner.snapshot)).toBe(false);
    await expect(s.runner.resumeFromSaved()).rejects.toThrow(
      'A run is already active in this notebook.'
    );
    await expect(s.runner.start({ task: 'again' })).rejects.toThrow(
      'A run is already active in this notebook.'
    );
    await expect(s.runner.rewind({ kind: 'behavior' })).rejects.toThrow(
      'A run is already active in this notebook.'
    );
    expect(await s.runner.rewindPlan({ kind: 'behavior' })).toBeNull();

    restart.open();
    await rewound;
    const end = await when(s.runner.finished, () => true);
    expect(end.reason).toBe('completed');
    // One loop went on from p2: each redone cell once.
    expect(driver.cells.map(c => c.source)).toEqual([
      '# First',
      'a = 1',
      'loaded',
      'b = 20',
      'c = 30'
    ]);
  });

  it('stops during the restart and re-run: the run stays rewound, starts no loop, and can be resumed', async () => {
    const driver = new FakeNotebookDriver();
    const s = await completedRun(driver);
    const asked = s.client.planningRequests.length;
    const restart = holdRestart(driver);
    const rewound = s.runner.rewind(REDO_P2, { restartKernel: true });
    await restart.reached;

    const stopped = s.runner.stop();
    restart.open();
    await stopped;
    const record = await rewound;
    expect(record).toMatchObject({ removed: 3, rerun: 0 });
    expect(record.rerunError).toContain('stopped');
    expect(s.runner.isRunning).toBe(false);
    expect(s.runner.snapshot).toMatchObject({ running: false, task: 't' });
    expect(s.runner.snapshot.state).not.toBe('WORKFLOW_COMPLETED');
    expect(s.finished.map(f => f.reason)).toEqual(['completed', 'stopped']);
    await settle();
    expect(s.client.planningRequests.length).toBe(asked);
    expect(saved(driver).rewind?.records).toHaveLength(1);

    // Resume goes on from the step rewound to.
    expect((await s.runner.resumeFromSaved())?.reason).toBe('completed');
    expect(driver.codeCells().map(c => c.source)).toEqual([
      'a = 1',
      'b = 20',
      'c = 30'
    ]);
  });

  it('takes a Pause asked during the rewind: the loop it starts waits paused', async () => {
    const driver = new FakeNotebookDriver();
    const s = await completedRun(driver);
    const asked = s.client.planningRequests.length;
    const restart = holdRestart(driver);
    const rewound = s.runner.rewind(REDO_P2, { restartKernel: true });
    await restart.reached;
    s.runner.pause();
    expect(s.runner.snapshot).toMatchObject({ rewinding: true, pausing: true });
    restart.open();
    await rewound;
    await s.paused();
    expect(s.client.planningRequests.length).toBe(asked);
    s.runner.resume();
    expect((await when(s.runner.finished, () => true)).reason).toBe(
      'completed'
    );
  });

  it('saves the rewound run before the kernel restarts, and again once the kept cells ran', async () => {
    const driver = new FakeNotebookDriver();
    const s = await completedRun(driver);
    const removed = driver.cells
      .filter(c => c.source === 'b = 2' || c.source === 'c = 3')
      .map(c => c.id);
    expect(saved(driver).cells.created).toEqual(
      expect.arrayContaining(removed)
    );
    const restart = holdRestart(driver);
    const rewound = s.runner.rewind(REDO_P2, { restartKernel: true });
    await restart.reached;

    // The notebook's own save soon writes the cells without the removed ones: its run state matches.
    const before = saved(driver);
    expect(before.rewind?.records.map(r => r.kind)).toEqual(['redo_from_step']);
    expect(before.cells.created).not.toEqual(
      expect.arrayContaining([removed[0]])
    );
    expect(before.cells.created).not.toEqual(
      expect.arrayContaining([removed[1]])
    );
    expect(before.progress.steps.current).toBe('p2');
    expect(before.fsm.state).not.toBe('WORKFLOW_COMPLETED');

    restart.open();
    const record = await rewound;
    expect(saved(driver).rewind?.records).toEqual([record]);
    expect(record).toMatchObject({ kernelRestarted: true, rerun: 1 });
    await when(s.runner.finished, () => true);
  });
});

describe('WorkflowRunner rewind, what it tells and keeps', () => {
  it('sends the planner no variable of a removed cell after a redo with a restart, in interactive mode', async () => {
    const driver = new FakeNotebookDriver();
    const s = await completedRun(driver, true);
    expect(driver.variables).toMatchObject({ b: '2', c: '3' });
    const asked = s.client.planningRequests.length;
    await s.runner.rewind(REDO_P2, { restartKernel: true });
    await when(s.runner.finished, () => true);
    const variables =
      s.client.planningRequests[asked].observation.context?.variables ?? {};
    expect(variables).not.toHaveProperty('b');
    expect(variables).not.toHaveProperty('c');
    // The kept cell ran again at the user's request: what it made is there.
    expect(variables).toMatchObject({ a: '1' });
  });

  it('says so when the kernel could not be restarted, and runs no kept cell', async () => {
    const driver = new FakeNotebookDriver();
    const s = await completedRun(driver);
    driver.restartRefusal =
      'The kernel is dead. Restart it, then resume the run.';
    const executedBefore = driver.executed.length;
    const asked = s.client.planningRequests.length;
    const record = await s.runner.rewind(REDO_P2, { restartKernel: true });
    expect(record).toMatchObject({
      kernelRestarted: false,
      rerun: 0,
      rerunError: 'The kernel is dead. Restart it, then resume the run.'
    });
    expect(record.effect).toContain(
      'The kernel was not restarted: The kernel is dead.'
    );
    expect(record.effect).not.toContain('After a kernel restart');
    expect(driver.restartCount).toBe(0);
    await when(s.runner.finished, () => true);
    expect(effectsOf(s.client.planningRequests[asked]).join('\n')).toContain(
      'The kernel was not restarted'
    );
    expect(driver.executed.slice(executedBefore, executedBefore + 1)).toEqual([
      driver.cells.find(c => c.source === 'b = 20')!.id
    ]);
  });

  it('keeps the values the user typed in Set Variables through a redo', async () => {
    const missing = new PlannerError({
      kind: 'invalid',
      url: 'http://planner.test/generating',
      message: 'the planner lacks region',
      missingVariables: ['region']
    });
    const s = setup({
      planning: [
        withTemplate(false, TEMPLATE),
        plan(true),
        plan(false),
        plan(true),
        plan(false),
        plan(true)
      ],
      generating: [
        [code('a = 1'), exec()],
        missing,
        [code('b = 2'), exec()],
        [code('c = 3'), exec()]
      ]
    });
    expect((await s.runner.start({ task: 't' })).reason).toBe('error');
    expect((await s.runner.retry({ variables: { region: 'eu' } })).reason).toBe(
      'completed'
    );
    s.client.planningScript.push(
      plan(false),
      plan(true),
      plan(false),
      plan(true)
    );
    s.client.generatingScript.push(
      [code('b = 20'), exec()],
      [code('c = 30'), exec()]
    );
    const asked = s.client.planningRequests.length;
    await s.runner.rewind(REDO_P2);
    await when(s.runner.finished, () => true);
    expect(
      s.client.planningRequests[asked].observation.context?.variables
    ).toMatchObject({ region: 'eu' });
  });

  it('puts the notebook title back when the behavior that changed it is undone', async () => {
    const s = setup(threeSteps());
    const done = s.runner.start({ task: 't', stepMode: true });
    await s.paused();
    expect(s.driver.notebookSummary().title).toBe('First');
    s.runner.resume();
    await when(
      s.runner.progressChanged,
      snap => snap.paused && snap.step.id === 'p2',
      undefined
    );
    expect(s.driver.notebookSummary().title).toBe('Second');
    await s.runner.rewind({ kind: 'behavior' });
    expect(s.driver.cells[0].source).toBe('# First');
    expect(s.driver.notebookSummary().title).toBe('First');
    await s.runner.stop();
    await done;
  });

  it('forgets a run whose saved copy the user discards: nothing is left to rewind or to write back', async () => {
    const s = setup(threeSteps());
    expect((await s.runner.start({ task: 't' })).reason).toBe('completed');
    // "Discard the Saved Workflow Run": the runner forgets the run, the command removes the metadata.
    s.runner.forgetRun();
    s.driver.savedState = null;
    expect(s.runner.snapshot).toMatchObject({
      task: null,
      state: 'IDLE',
      running: false
    });
    expect(s.runner.snapshot.rewind?.redoSteps).toEqual([]);
    await expect(s.runner.rewind(REDO_P2)).rejects.toThrow(
      'There is no run to rewind in this notebook.'
    );
    expect(s.driver.savedState).toBeNull();
  });
});
