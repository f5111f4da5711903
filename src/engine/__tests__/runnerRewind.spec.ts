/** Rewind on a live runner: undo a behavior, redo from a step, after a reload, and what is refused. */
import { ActionStream, FakeNotebookDriver } from '../testing';
import type { IRunSnapshot } from '../types';
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
  threeStepRun,
  title,
  when,
  withTemplate
} from './runnerSetup';

describe('WorkflowRunner rewind', () => {
  it('undoes the last behavior: its cells go, the title comes back, the run waits paused', async () => {
    const s = setup({
      ...threeStepRun(),
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
    });
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
    const s = setup(threeStepRun(), { driver });
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
    const s = setup(threeStepRun(), { driver });
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
    const s = setup(threeStepRun());
    await s.runner.start({ task: 't' });
    const reloaded = setup(
      {
        planning: [plan(false), plan(true)],
        generating: [[code('c = 31'), exec()]]
      },
      { driver: s.driver }
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
