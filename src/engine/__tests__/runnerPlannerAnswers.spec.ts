import {
  ActionLineParser,
  PlannerError,
  PlanningResponse,
  WorkflowTemplate
} from '../../protocol';
import { ActionStream } from '../testing';
import type { ICellAdded } from '../types';
import {
  code,
  effectsOf,
  exec,
  ONE_STEP,
  plan,
  saved,
  setup,
  TEMPLATE,
  text,
  withTemplate
} from './runnerSetup';

/** The events a dslc `/generating` answer with these lines produces. */
function streamOf(...lines: string[]): ActionStream {
  const parser = new ActionLineParser('POST http://planner.test/generating');
  const stream = new ActionStream();
  stream.pushEvents(...lines.flatMap(line => parser.line(line)));
  stream.end();
  return stream;
}

function stepsPlanned(requests: { observation: unknown }[]): string[] {
  return requests.map(
    r =>
      (r.observation as { location: { current: { step_id: string } } }).location
        .current.step_id
  );
}

describe('WorkflowRunner and what planning answers and streams carry', () => {
  it('uses the behavior id of a planning answer; the iteration stays numeric', async () => {
    const s = setup({
      planning: [
        withTemplate(false, ONE_STEP, {
          behavior: { id: 'p1#b1', iteration: 7 }
        }),
        plan(false, { behavior: { id: 'p1#b2' } }),
        plan(false),
        plan(true)
      ],
      generating: [[text('a')], [text('b')], [text('c')]]
    });
    await s.runner.start({ task: 't' });
    const current = s.client.generatingRequests.map(
      r => r.observation.location.current
    );
    expect(current.map(c => [c?.behavior_id, c?.behavior_iteration])).toEqual([
      ['p1#b1', 1],
      ['p1#b2', 2],
      ['behavior_003', 3]
    ]);
    expect(
      s.client.planningRequests.map(r => r.behavior_feedback?.behavior_id)
    ).toEqual([undefined, 'p1#b1', 'p1#b2', 'behavior_003']);
    expect(s.driver.cells.map(c => c.provenance.behavior_id)).toEqual([
      'p1#b1',
      'p1#b2',
      'behavior_003'
    ]);
    expect(s.runner.snapshot.timings.map(t => t.behaviorId)).toEqual([
      'p1#b1',
      'p1#b2',
      'behavior_003'
    ]);
  });

  it('times each behavior even when the planner gives two the same id', async () => {
    const s = setup({
      planning: [
        withTemplate(false, ONE_STEP, { behavior: { id: 'same' } }),
        plan(false, { behavior: { id: 'same' } }),
        plan(true)
      ],
      generating: [[text('a')], [text('b')]]
    });
    await s.runner.start({ task: 't' });
    expect(s.runner.snapshot.timings.map(t => t.endedAt !== null)).toEqual([
      true,
      true
    ]);
  });

  it('shows a line without action but never sends it back as an effect', async () => {
    const s = setup({
      planning: [withTemplate(false), plan(true)],
      generating: [
        streamOf(
          JSON.stringify({ action: code('x = 1\nprint("out")') }),
          '{"status": "alive"}',
          JSON.stringify({ action: exec() }),
          '{"heartbeat": 2}'
        )
      ]
    });
    await s.runner.start({ task: 't' });
    expect(effectsOf(s.client.planningRequests[1])).toEqual(['out']);
    expect(s.warnings.map(w => w.message)).toEqual([
      'POST http://planner.test/generating: ignored line without action: {"status": "alive"}',
      'POST http://planner.test/generating: ignored line without action: {"heartbeat": 2}'
    ]);
  });

  it('hands a custom action keyed by type to its registered handler', async () => {
    const s = setup({
      planning: [withTemplate(false), plan(true)],
      generating: [
        streamOf(
          '{"type": "chart", "column": "SalePrice"}',
          '{"type": "nobody_handles_this"}'
        )
      ]
    });
    const seen: unknown[] = [];
    s.runner.registry.register('chart', action => {
      seen.push(action);
      return { ok: true };
    });
    await s.runner.start({ task: 't' });
    expect(seen).toEqual([{ action: 'chart', column: 'SalePrice' }]);
    // A type nobody handles is a line without action: shown, not an effect.
    expect(effectsOf(s.client.planningRequests[1])).toEqual([]);
    expect(s.warnings.map(w => w.message)).toEqual([
      `ignored line without action ('nobody_handles_this' has no handler): {"type": "nobody_handles_this"}`
    ]);
    expect(s.client.planningRequests[1].behavior_feedback).toMatchObject({
      actions_executed: 1,
      last_action_result: 'success'
    });
  });

  it('closes a thinking cell the stream left open when the behavior ends', async () => {
    const s = setup({
      planning: [withTemplate(false), plan(true)],
      generating: [[{ action: 'is_thinking', agent_name: 'Analyst' }]]
    });
    await s.runner.start({ task: 't' });
    expect(s.driver.cells).toHaveLength(1);
    expect(s.driver.cells[0].source).toBe('💭 Analyst thought for 0 s');
    expect(s.driver.cells[0].metadata).toMatchObject({
      finished_thinking: true,
      thinking_seconds: 0
    });
  });

  it('leaves no open thinking cell when the run is stopped mid-thought', async () => {
    const stream = new ActionStream();
    const s = setup({
      planning: [withTemplate(false)],
      generating: [stream]
    });
    const run = s.runner.start({ task: 't' });
    stream.push({ action: 'is_thinking' }, text('a'));
    await new Promise(resolve => setTimeout(resolve, 10));
    await s.runner.stop();
    await run;
    expect(s.driver.cells[0].source).toBe('💭 Thought for 0 s');
    expect(s.driver.cells[0].metadata.finished_thinking).toBe(true);
  });

  it('applies the planner’s produced and in_progress outputs of a level', async () => {
    const template: WorkflowTemplate = {
      name: 'T',
      stages: [
        {
          id: 's1',
          name: 'S1',
          steps: [{ id: 'p1', name: 'P1', expected_outputs: ['a', 'b'] }]
        }
      ]
    };
    const s = setup({
      planning: [
        withTemplate(false, template, {
          context_update: {
            progress_update: {
              level: 'steps',
              current_outputs: {
                expected: [],
                produced: ['a'],
                in_progress: ['b']
              }
            }
          }
        }),
        plan(true)
      ],
      generating: [[text('x')]]
    });
    await s.runner.start({ task: 't' });
    expect(
      s.client.generatingRequests[0].observation.location.progress?.steps
        ?.current_outputs
    ).toEqual({ expected: ['a', 'b'], produced: ['a'], in_progress: ['b'] });
  });

  it('applies a progress_update list, one entry per level', async () => {
    const template: WorkflowTemplate = {
      name: 'T',
      stages: [
        {
          id: 's1',
          name: 'S1',
          expected_outputs: ['report'],
          steps: [{ id: 'p1', name: 'P1', expected_outputs: ['a', 'b'] }]
        }
      ]
    };
    const s = setup({
      planning: [
        withTemplate(false, template, {
          context_update: {
            progress_update: [
              {
                level: 'steps',
                focus: 'Step focus',
                current_outputs: {
                  expected: [],
                  produced: ['a'],
                  in_progress: []
                }
              },
              {
                level: 'stages',
                current_outputs: {
                  expected: [],
                  produced: [],
                  in_progress: ['report']
                }
              }
            ]
          }
        }),
        plan(true)
      ],
      generating: [[text('x')]]
    });
    await s.runner.start({ task: 't' });
    const progress =
      s.client.generatingRequests[0].observation.location.progress;
    expect(progress?.steps?.current_outputs).toEqual({
      expected: ['a', 'b'],
      produced: ['a'],
      in_progress: []
    });
    expect(progress?.steps?.focus).toBe('Step focus');
    expect(progress?.stages?.current_outputs?.in_progress).toEqual(['report']);
  });

  it('does not run again the steps a step list marks completed or that lie before the current one', async () => {
    const s = setup({
      planning: [
        withTemplate(false, TEMPLATE, {
          context_update: {
            stage_steps_update: {
              stage_id: 's1',
              steps: [
                { id: 'p0', name: 'Before' },
                { id: 'p1', name: 'Load' },
                { id: 'p2', name: 'Explore', status: 'completed' },
                { id: 'p3', name: 'Clean' }
              ]
            }
          }
        }),
        (): PlanningResponse => plan(true)
      ]
    });
    s.client.generatingScript.push([text('a')]);
    await s.runner.start({ task: 't' });
    expect(stepsPlanned(s.client.planningRequests)).toEqual([
      null,
      'p1',
      'p3',
      'q1'
    ]);
  });

  it('starts a stage at its first step not marked completed', async () => {
    const template: WorkflowTemplate = {
      name: 'T',
      stages: [
        { id: 's1', name: 'S1', steps: [{ id: 'p1', name: 'P1' }] },
        {
          id: 's2',
          name: 'S2',
          steps: [
            { id: 'done', name: 'Done', status: 'completed' },
            { id: 'open', name: 'Open' }
          ]
        }
      ]
    };
    const s = setup({ planning: [withTemplate(true, template)] });
    await s.runner.start({ task: 't' });
    expect(stepsPlanned(s.client.planningRequests)).toEqual([null, 'open']);
  });

  it.each([
    [
      'rejects an answer as out of place',
      new PlannerError({
        kind: 'invalid',
        url: 'http://planner.test/planning',
        message: 'The planner answered <steps> to FSM state STEP_RUNNING'
      })
    ],
    [
      'cannot go on without an answer that failed (a bcc reflection)',
      new PlannerError({
        kind: 'http',
        status: 500,
        url: 'http://planner.test/reflecting',
        message:
          'POST http://planner.test/reflecting failed: HTTP 500: LLM timeout',
        needsAnswer: true
      })
    ]
  ])(
    'stops with Retry, without generating blind, when the service %s',
    async (_, error) => {
      const s = setup({
        planning: [withTemplate(false), error, plan(true)],
        generating: [[text('a')], [text('never')]]
      });
      const finished = await s.runner.start({ task: 't' });
      expect(finished.reason).toBe('error');
      expect(s.runner.snapshot.state).toBe('ERROR');
      expect(s.errors).toEqual([
        {
          endpoint: 'planning',
          message: `/planning failed: ${error.message}`,
          text: { id: 'planningFailed', params: [error.message] },
          retryable: true
        }
      ]);
      expect(s.client.generatingRequests).toHaveLength(1);
      const again = await s.runner.retry();
      expect(again.reason).toBe('completed');
      expect(s.client.planningRequests[2]).toEqual(
        s.client.planningRequests[1]
      );
      expect(s.client.generatingRequests).toHaveLength(1);
    }
  );

  it('keeps the task variables in every request, whatever the kernel holds', async () => {
    const s = setup({
      planning: [withTemplate(false), plan(true)],
      generating: [[text('a')]]
    });
    s.driver.variables = {
      problem_description: 'str: kernel text',
      csv_file_path: 'str: other.csv',
      sales: 'DataFrame(2×2)'
    };
    await s.runner.start({ task: 'Forecast', dataFiles: ['data/a.csv'] });
    for (const request of [
      ...s.client.planningRequests,
      ...s.client.generatingRequests
    ]) {
      expect(request.observation.context?.variables).toEqual({
        problem_description: 'Forecast',
        csv_file_path: 'data/a.csv',
        data_files: ['data/a.csv'],
        sales: 'DataFrame(2×2)'
      });
    }
  });

  it('keeps the values the user set for a Retry over the kernel’s, in every request and after a reload', async () => {
    const invalid = new PlannerError({
      kind: 'invalid',
      url: 'http://planner.test/planning',
      message: 'variables missing: column_names',
      missingVariables: ['column_names']
    });
    const s = setup({
      planning: [withTemplate(false), invalid, plan(true)],
      generating: [[text('a')]]
    });
    s.driver.variables = { column_names: 'list(4)', sales: 'DataFrame(2×2)' };
    await s.runner.start({ task: 'Forecast' });
    expect(s.runner.snapshot.state).toBe('ERROR');
    await s.runner.retry({
      variables: { column_names: "['month', 'revenue']" }
    });
    const after = s.client.planningRequests.slice(2);
    expect(after.length).toBeGreaterThan(0);
    for (const request of after) {
      expect(request.observation.context?.variables).toMatchObject({
        column_names: "['month', 'revenue']",
        sales: 'DataFrame(2×2)'
      });
    }
    expect(saved(s.driver).userVariables).toEqual(['column_names']);
  });

  it('reports added cells without a follow flag (the driver follows by its own setting)', async () => {
    const s = setup({
      planning: [withTemplate(false), plan(true)],
      generating: [[text('a')]]
    });
    const added: ICellAdded[] = [];
    s.runner.cellAdded.connect((_, event) => added.push(event));
    await s.runner.start({ task: 't' });
    expect(added).toEqual([
      {
        cellId: s.driver.cells[0].id,
        kind: 'markdown',
        role: 'content',
        provenance: s.driver.cells[0].provenance
      }
    ]);
  });
});
