import type { PlanningResponse } from '../../protocol';
import { ActionStream, FakeNotebookDriver } from '../testing';
import {
  code,
  effectsOf,
  exec,
  ISetup,
  ONE_STEP,
  plan,
  saved,
  setup,
  TEMPLATE,
  text,
  withTemplate
} from './runnerSetup';

/** Twelve behaviors whose execs print 2,500 characters each: the history outgrows the context. */
function longOutputsRun() {
  const behaviors = 12;
  const driver = new FakeNotebookDriver();
  driver.onExec = cell => ({
    status: 'ok',
    output: `${cell.id}: ${'o'.repeat(2500)}`
  });
  return setup(
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
    { driver }
  );
}

function allRequests(s: ISetup) {
  return [...s.client.planningRequests, ...s.client.generatingRequests];
}

describe('WorkflowRunner actions, requests and modes', () => {
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
    // The custom action's effect, then the exec's output (the fake kernel prints nothing).
    expect(effectsOf(s.client.planningRequests[1])).toEqual([
      'chart of SalePrice',
      ''
    ]);
  });

  it("moves the previous behavior's effects to history when a behavior applies nothing", async () => {
    const s = setup({
      planning: [withTemplate(false), plan(false), plan(true)],
      generating: [[code('print("first")'), exec()], []]
    });
    const finished = await s.runner.start({ task: 't' });
    expect(finished.reason).toBe('completed');
    expect(effectsOf(s.client.planningRequests[1])).toEqual(['first']);
    // The empty behavior's own effects are none: "first" is the behavior before's, now in history.
    expect(effectsOf(s.client.planningRequests[2])).toEqual([]);
    expect(
      s.client.planningRequests[2].observation.context?.effects?.history?.flat()
    ).toContain('first');
  });

  it('stamps each cell with where the run is when the cell is added, also after a workflow update in the same behavior', async () => {
    const s = setup({
      planning: [plan(false)],
      generating: [
        [
          text('before any workflow'),
          { action: 'update_workflow', updated_workflow: ONE_STEP },
          code('x = 1')
        ]
      ],
      defaultPlanning: plan(true)
    });
    await s.runner.start({ task: 't' });
    expect(s.driver.cells.map(cell => cell.provenance?.stage_id)).toEqual([
      null,
      's1'
    ]);
    expect(s.driver.cells[1].provenance).toMatchObject({
      stage_id: 's1',
      step_id: 'p1'
    });
  });

  it('keeps every request within maxContextLength with a large history', async () => {
    const s = longOutputsRun();
    await s.runner.start({ task: 't' });
    expect(s.runner.effects.history.length).toBeGreaterThan(10);
    const requests = allRequests(s);
    for (const request of requests) {
      expect(JSON.stringify(request).length).toBeLessThanOrEqual(18600);
    }
    const last =
      s.client.planningRequests[s.client.planningRequests.length - 1];
    expect(last.observation.context?.notices).toEqual([
      expect.stringMatching(
        /^\[context trimmed: \d+ history items dropped.* to fit 18600 characters\]$/
      )
    ]);
    for (const request of requests) {
      expect(effectsOf(request).join()).not.toContain('[context trimmed:');
    }
    expect(s.warnings.filter(w => w.source === 'engine')).toEqual([]);
  });

  it('leaves room for what the planner service adds to every body (the notebook id)', async () => {
    const overhead = 1500;
    const s = longOutputsRun();
    s.client.requestOverhead = () => overhead;
    await s.runner.start({ task: 't' });
    const requests = allRequests(s);
    const longest = Math.max(...requests.map(r => JSON.stringify(r).length));
    expect(longest + overhead).toBeLessThanOrEqual(18600);
    // Trimming did happen: without the overhead the requests would have used the room.
    expect(longest).toBeGreaterThan(18600 - overhead - 3000);
  });

  it('fits what the service sends: nothing is trimmed when its own body fits (a v1 server is sent no variable summaries)', async () => {
    const s = longOutputsRun();
    const sizes: number[] = [];
    // A service that sends only the effects' last two items.
    s.client.sentSize = request => {
      const effects = request.observation.context?.effects;
      const size = JSON.stringify(effects?.current?.slice(-2) ?? []).length;
      sizes.push(size);
      return size;
    };
    await s.runner.start({ task: 't' });
    expect(sizes.length).toBeGreaterThan(0);
    const requests = allRequests(s);
    expect(requests.some(r => JSON.stringify(r).length > 18600)).toBe(true);
    for (const request of requests) {
      expect(effectsOf(request).join()).not.toContain('[context trimmed:');
    }
  });

  it('trims a request whose sent body is too long only by what the body is over', async () => {
    const s = longOutputsRun();
    // A service that leaves 6,000 characters of every request out.
    const sentSize = (request: { observation: unknown }) =>
      JSON.stringify(request).length - 6000;
    s.client.sentSize = sentSize;
    await s.runner.start({ task: 't' });
    const requests = allRequests(s);
    for (const request of requests) {
      expect(sentSize(request)).toBeLessThanOrEqual(18600);
    }
    // Not trimmed down to 18,600 as if everything were sent.
    expect(
      Math.max(...requests.map(r => JSON.stringify(r).length))
    ).toBeGreaterThan(18600 + 3000);
  });

  it('pauses when the kernel is gone and goes on after resume', async () => {
    const driver = new FakeNotebookDriver();
    driver.kernelAlive = false;
    const s = setup(
      {
        planning: [withTemplate(false), plan(true)],
        generating: [[code('x = 1'), exec(), text('after')]]
      },
      { driver }
    );
    const run = s.runner.start({ task: 't' });
    const snap = await s.paused();
    expect(snap.pauseReason).toEqual({
      kind: 'kernel',
      message: 'The kernel is not usable: The kernel is dead',
      text: { id: 'kernelUnusableDetail', params: ['The kernel is dead'] }
    });
    expect(s.warnings.map(w => w.message)).toContain(
      'The kernel is not usable: The kernel is dead'
    );
    expect(s.driver.cells).toHaveLength(1);
    driver.kernelAlive = true;
    s.runner.resume();
    expect((await run).reason).toBe('completed');
    expect(s.driver.cells.map(c => c.source)).toEqual(['x = 1', 'after']);
    // The exec failed on the dead kernel: the behavior's result is an error even though the last
    // action succeeded (docs/protocol.md#the-loop).
    expect(
      s.client.planningRequests[1].behavior_feedback?.last_action_result
    ).toBe('error');
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
      {
        settings: { interactive: true },
        hooks: {
          approveBehavior: async request => {
            seen.push(request.codeCells);
            return decisions.shift() ?? 'run';
          }
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
      { driver }
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
    expect(s.warnings).toContainEqual({
      message: warning,
      text: { id: 'variableNotFound', params: ['ghost'] },
      source: 'filter'
    });
    // The warning is an effect of the behavior the planner hears about next.
    expect(effectsOf(s.client.planningRequests[1])).toEqual([warning]);
  });

  it('moves the current effects into history at archive_effects, in the middle of a behavior', async () => {
    const s = setup({
      planning: [withTemplate(false), plan(true)],
      generating: [
        [
          code("print('before')"),
          exec(),
          { action: 'archive_effects' },
          code("print('after')"),
          exec()
        ]
      ]
    });
    await s.runner.start({ task: 't' });
    const effects = s.client.planningRequests[1].observation.context?.effects;
    expect(effects?.history).toEqual(['before']);
    expect(effects?.current).toEqual(['after']);
  });

  it('starts with /generating in generation mode', async () => {
    const s = setup(
      { planning: [plan(true)], generating: [[text('first')]] },
      { settings: { startMode: 'generation' } }
    );
    await s.runner.start({ task: 't' });
    expect(s.client.generatingRequests).toHaveLength(1);
    expect(s.client.planningRequests[0].behavior_feedback?.behavior_id).toBe(
      'behavior_001'
    );
  });

  it('asks /planning first in generation mode while the planner service has yet to find its dialect', async () => {
    const s = setup(
      {
        planning: [
          withTemplate(false, TEMPLATE),
          plan(true),
          plan(true),
          plan(true)
        ],
        generating: [[text('p1')], [text('p2')], [text('q1')]]
      },
      { settings: { startMode: 'generation' } }
    );
    // Detection rides on the run's first planning request; then the dialect is known.
    let detecting = true;
    Object.defineProperty(s.client, 'needsPlanningFirst', {
      get: () => detecting
    });
    const planning = s.client.planning.bind(s.client);
    s.client.planning = async (...args) => {
      const answer = await planning(...args);
      detecting = false;
      return answer;
    };
    expect((await s.runner.start({ task: 't' })).reason).toBe('completed');
    expect(
      s.client.planningRequests.map(r => [
        r.observation.location.current?.step_id,
        r.behavior_feedback?.behavior_id ?? null
      ])
    ).toEqual([
      // The first planning request of a run comes before any template, as in reflection mode.
      [null, null],
      ['p1', 'behavior_001'],
      ['p2', 'behavior_001'],
      ['q1', 'behavior_001']
    ]);
    expect(s.driver.cells.map(c => c.source)).toEqual(['p1', 'p2', 'q1']);
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
    // /planning first gets the feedback of the behavior that ended the step (docs/protocol.md#the-loop).
    expect(
      s.client.planningRequests[1].observation.location.current?.step_id
    ).toBe('p1');
    expect(s.client.planningRequests[1].behavior_feedback).toBeDefined();
    expect(
      s.client.planningRequests[2].observation.location.current?.step_id
    ).toBe('p2');
    expect(s.client.planningRequests[2].behavior_feedback).toBeUndefined();
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
    // The warning names the step as the panel does, not by its id.
    expect(s.warnings.map(w => w.message)).toContain(
      "The planner ended step 'Load' without reaching its target; moving on."
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
