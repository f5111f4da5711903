import {
  MAX_BEHAVIOR_ACTIONS,
  MAX_QUEUED_ACTIONS,
  MAX_QUEUED_CHARS
} from '../run/actionQueue';
import { isSavedRunState } from '../saved/savedRun';
import {
  limitSavedRunState,
  MAX_SAVED_CHECKPOINTS,
  MAX_SAVED_ACTIONS_TAKEN,
  MAX_SAVED_BEHAVIORS,
  MAX_SAVED_EFFECT_CHARS,
  MAX_SAVED_VALUE_CHARS
} from '../saved/savedRunLimits';
import { ActionStream } from '../testing';
import {
  begunState,
  code,
  effectsOf,
  ONE_STEP,
  plan,
  saved,
  settle,
  setup,
  text,
  withTemplate
} from './runnerSetup';

describe('WorkflowRunner bounds what a stream may pile up', () => {
  it('stops reading a paused run’s stream when its queue is full, and applies all of it on resume', async () => {
    const stream = new ActionStream();
    const s = setup({
      planning: [withTemplate(false), plan(true)],
      generating: [stream]
    });
    s.runner.actionApplied.connect((_, a) => {
      if (a.index === 0) {
        s.runner.pause();
      }
    });
    const run = s.runner.start({ task: 't' });
    stream.push(code('a = 1'));
    await s.paused();
    // 10 MB more while paused: 20 cells of 512 KiB.
    const big = 'x'.repeat(512 * 1024);
    for (let i = 0; i < 20; i++) {
      stream.push(text(`${i} ${big}`));
    }
    stream.end();
    await settle(50);
    // The reader waits for room: about 4 MiB of lines are held, the rest stays in the stream.
    const held = s.runner.snapshot.bufferedActions;
    expect(held).toBeLessThanOrEqual(MAX_QUEUED_CHARS / big.length + 1);
    expect(stream.consumed).toBe(1 + held);
    expect(stream.consumed).toBeLessThan(21);
    expect(saved(s.driver).fsm.state).toBe('PAUSED');

    s.runner.resume();
    const finished = await run;
    expect(finished.reason).toBe('completed');
    // Nothing is lost: every action is applied once, in order.
    expect(s.driver.cells.map(c => c.source.split(' ')[0])).toEqual([
      'a',
      ...Array.from({ length: 20 }, (_, i) => String(i))
    ]);
  });

  it('holds at most the bounded count of tiny actions while paused', async () => {
    const stream = new ActionStream();
    const s = setup({
      planning: [withTemplate(false), plan(true)],
      generating: [stream]
    });
    s.runner.actionApplied.connect((_, a) => {
      if (a.index === 0) {
        s.runner.pause();
      }
    });
    const run = s.runner.start({ task: 't' });
    stream.push(code('a = 1'));
    await s.paused();
    stream.push(...Array.from({ length: 1500 }, (_, i) => text(`t${i}`)));
    stream.end();
    await settle(50);
    expect(s.runner.snapshot.bufferedActions).toBe(MAX_QUEUED_ACTIONS);
    expect(stream.consumed).toBe(1 + MAX_QUEUED_ACTIONS);
    s.runner.resume();
    expect((await run).reason).toBe('completed');
    expect(s.driver.cells).toHaveLength(1501);
    expect(s.driver.cells[1500].source).toBe('t1499');
  });

  it('reads no more than the bounded number of actions of one behavior, and says so', async () => {
    const stream = new ActionStream();
    const s = setup({
      planning: [withTemplate(false), plan(true)],
      generating: [stream]
    });
    const run = s.runner.start({ task: 't' });
    stream.push(
      ...Array.from({ length: 100_000 }, (_, i) => ({
        action: 'update_title' as const,
        title: `Title ${i}`
      }))
    );
    stream.end();
    const finished = await run;
    expect(finished.reason).toBe('completed');
    expect(stream.consumed).toBeLessThanOrEqual(MAX_BEHAVIOR_ACTIONS + 1);
    const message = `The planner sent more than ${MAX_BEHAVIOR_ACTIONS.toLocaleString('en-US')} actions in one behavior; the rest of its answer was not read (${MAX_BEHAVIOR_ACTIONS.toLocaleString('en-US')} actions kept).`;
    expect(s.warnings.map(w => w.message)).toContain(message);
    expect(s.warnings.find(w => w.message === message)?.text).toEqual({
      id: 'answerCutInBehavior',
      params: [
        MAX_BEHAVIOR_ACTIONS.toLocaleString('en-US'),
        MAX_BEHAVIOR_ACTIONS.toLocaleString('en-US')
      ]
    });
    expect(effectsOf(s.client.planningRequests[1])).toContain(`⚠️ ${message}`);
    expect(
      s.client.planningRequests[1].behavior_feedback?.actions_executed
    ).toBe(MAX_BEHAVIOR_ACTIONS);
  });

  it('cuts what is to be approved at once in interactive mode, with an effect', async () => {
    const stream = new ActionStream();
    const approved: number[] = [];
    const s = setup(
      {
        planning: [withTemplate(false), plan(true)],
        generating: [stream]
      },
      {
        settings: { interactive: true },
        hooks: {
          approveBehavior: async request => {
            approved.push(request.actions.length);
            return 'run';
          }
        }
      }
    );
    const run = s.runner.start({ task: 't' });
    stream.push(...Array.from({ length: 800 }, (_, i) => code(`x = ${i}`)));
    stream.end();
    expect((await run).reason).toBe('completed');
    expect(approved).toEqual([MAX_QUEUED_ACTIONS]);
    expect(s.driver.cells).toHaveLength(MAX_QUEUED_ACTIONS);
    expect(effectsOf(s.client.planningRequests[1]).join('\n')).toMatch(
      /to approve at once; the rest of its answer was not read/
    );
    expect(s.warnings.map(w => w.text?.id)).toContain('answerCutToApprove');
  });
});

describe('WorkflowRunner bounds the run state saved in the notebook', () => {
  it('saves cut values and effects, with markers, and a valid state', async () => {
    const big = 'v'.repeat(1024 * 1024);
    const s = setup({
      planning: [
        withTemplate(false, undefined, {
          context_update: { variables: { big } }
        }),
        plan(false),
        plan(true)
      ],
      generating: [0, 1].map(i => [text(`behavior ${i}`)])
    });
    const finished = await s.runner.start({ task: 't' });
    expect(finished.reason).toBe('completed');
    const state = saved(s.driver);
    // A 1 MiB variable: unbounded, the save is over 1 MB.
    expect(JSON.stringify(state).length).toBeLessThan(100_000);
    const value = state.contextVariables.big as string;
    expect(value.length).toBeLessThan(MAX_SAVED_VALUE_CHARS + 200);
    expect(value).toContain('[TRUNCATED:');
    expect(isSavedRunState(state)).toBe(true);
  });

  it('saves the newest rewind checkpoints only, each with its context cut', () => {
    const state = begunState('t', ONE_STEP);
    const full = state.toJSON();
    const big = 'v'.repeat(1024 * 1024);
    const checkpoint = (seq: number) => ({
      seq,
      kind: 'behavior' as const,
      stageId: 's1',
      stepId: 'p1',
      behaviorId: `b${seq}`,
      at: new Date(0).toISOString(),
      template: null,
      progress: full.progress,
      effects: { epoch: 0, historyEnd: 0, end: 0 },
      cells: { createdCount: 0, storeIds: {} },
      contextVariables: { big },
      filter: null,
      templateFromPlanner: false,
      lastTiming: null
    });
    full.rewind = {
      checkpoints: Array.from({ length: 100 }, (_, i) => checkpoint(i)),
      templates: [],
      rewritten: [],
      records: [],
      effects: { epoch: 0, historyEnd: 0, end: 0 },
      nextSeq: 100
    } as unknown as NonNullable<typeof full.rewind>;
    const limited = limitSavedRunState(full);
    const kept = limited.rewind!.checkpoints;
    expect(kept.map(c => c.seq)).toEqual(
      Array.from(
        { length: MAX_SAVED_CHECKPOINTS },
        (_, i) => 100 - MAX_SAVED_CHECKPOINTS + i
      )
    );
    expect((kept[0].contextVariables.big as string).length).toBeLessThan(
      MAX_SAVED_VALUE_CHARS + 200
    );
    expect(full.rewind!.checkpoints).toHaveLength(100);
    expect(isSavedRunState(limited)).toBe(true);
  });

  it('keeps the newest completed behaviors and actions taken, oldest first out, with markers', () => {
    const state = begunState('t', ONE_STEP);
    const full = state.toJSON();
    full.progress.behaviors.completed = Array.from(
      { length: 1000 },
      (_, i) => ({
        behavior_id: `b${i}`,
        goal: `goal ${i}`
      })
    );
    full.progress.steps.completed = [
      {
        step_id: 'p0',
        goal: 'step',
        actions_taken: Array.from({ length: 1000 }, (_, i) => `goal ${i}`)
      }
    ];
    full.effects.current = ['e'.repeat(100_000)];
    const limited = limitSavedRunState(full);
    const behaviors = limited.progress.behaviors.completed;
    expect(behaviors).toHaveLength(MAX_SAVED_BEHAVIORS);
    expect(behaviors[0]).toEqual({
      goal: `[${1000 - MAX_SAVED_BEHAVIORS + 1} older completed behaviors not saved]`
    });
    expect(behaviors[1].behavior_id).toBe(`b${1000 - MAX_SAVED_BEHAVIORS + 1}`);
    expect(behaviors[behaviors.length - 1].behavior_id).toBe('b999');
    const taken = limited.progress.steps.completed[0].actions_taken ?? [];
    expect(taken).toHaveLength(MAX_SAVED_ACTIONS_TAKEN);
    expect(taken[0]).toBe(
      `[${1000 - MAX_SAVED_ACTIONS_TAKEN + 1} older actions not saved]`
    );
    expect(taken[taken.length - 1]).toBe('goal 999');
    expect(limited.effects.current[0].length).toBeLessThan(
      MAX_SAVED_EFFECT_CHARS + 200
    );
    // The run's own state is not cut.
    expect(full.progress.behaviors.completed).toHaveLength(1000);
    expect(isSavedRunState(limited)).toBe(true);
  });
});
