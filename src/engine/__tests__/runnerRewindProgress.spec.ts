/** A rewind under way (busy, stopped, paused, saved), and what a rewind tells the planner and keeps. */
import { PlannerError } from '../../protocol';
import { canRewind } from '../rewindView';
import { FakeNotebookDriver } from '../testing';
import {
  code,
  effectsOf,
  exec,
  plan,
  saved,
  settle,
  setup,
  TEMPLATE,
  threeStepRun,
  when,
  withTemplate
} from './runnerSetup';

async function completedRun(driver: FakeNotebookDriver, interactive = false) {
  const s = setup(threeStepRun(), {
    settings: { interactive },
    hooks: interactive ? { approveBehavior: async () => 'run' } : {},
    driver
  });
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
    const s = setup(threeStepRun());
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
    const s = setup(threeStepRun());
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
