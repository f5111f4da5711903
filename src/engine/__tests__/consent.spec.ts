/**
 * Interactive mode asks before anything runs in the kernel for the planner
 * (docs/protocol.md#the-loop): new code and existing cells alike, variable collection and
 * summaries included; a changed setting applies from the next behavior; a stop ends the question.
 */
import { FakeNotebookDriver } from '../testing';
import type { BehaviorDecision, IBehaviorApproval } from '../types';
import {
  code,
  effectsOf,
  exec,
  ONE_STEP,
  plan,
  settle,
  setup,
  text,
  withTemplate
} from './runnerSetup';

/** A notebook with one cell of the user's, marked (or not) for the planner. */
async function notebookWithUserCell(
  source: string,
  marked: boolean
): Promise<{ driver: FakeNotebookDriver; cellId: string }> {
  const driver = new FakeNotebookDriver();
  const cellId = await driver.addCell({
    kind: 'code',
    source,
    role: 'code',
    provenance: {
      stage_id: null,
      step_id: null,
      behavior_id: null,
      action_index: 0,
      action: 'user'
    },
    metadata: marked ? { planner_may_run: true } : {}
  });
  return { driver, cellId };
}

describe('Interactive mode: what the user is shown', () => {
  it("asks before an exec of an existing cell and shows that cell's code", async () => {
    const { driver, cellId } = await notebookWithUserCell(
      'total = 40 + 2',
      true
    );
    const seen: IBehaviorApproval[] = [];
    const s = setup(
      {
        planning: [withTemplate(false), plan(true)],
        generating: [[text('Running your cell.'), exec(cellId)]]
      },
      {
        settings: { interactive: true },
        hooks: {
          approveBehavior: async request => {
            seen.push(request);
            // Nothing ran while the user was asked.
            expect(driver.executed).toEqual([]);
            return 'run';
          }
        },
        driver
      }
    );
    expect((await s.runner.start({ task: 't' })).reason).toBe('completed');
    expect(seen).toHaveLength(1);
    expect(seen[0].codeCells).toEqual([]);
    expect(seen[0].existingCells).toEqual([
      { cellId, position: 1, source: 'total = 40 + 2' }
    ]);
    expect(driver.executed).toEqual([cellId]);
  });

  it('shows new code once, and the existing cells a behavior runs after it', async () => {
    const { driver, cellId } = await notebookWithUserCell('y = 2', true);
    const seen: IBehaviorApproval[] = [];
    const s = setup(
      {
        planning: [withTemplate(false), plan(false), plan(true)],
        generating: [
          [code('x = 1', 'first'), exec()],
          // The run's own cell from the behavior before, by store id and by "last added"; the user's
          // cell twice; a new cell run by its store id.
          [
            exec('first'),
            exec(),
            exec(cellId),
            exec(cellId),
            code('z = 3', 'third'),
            exec('third'),
            exec()
          ]
        ]
      },
      {
        settings: { interactive: true },
        hooks: {
          approveBehavior: async request => {
            seen.push(request);
            return 'run';
          }
        },
        driver
      }
    );
    expect((await s.runner.start({ task: 't' })).reason).toBe('completed');
    expect(seen.map(r => r.codeCells)).toEqual([['x = 1'], ['z = 3']]);
    const first = driver.cells.find(c => c.source === 'x = 1')!.id;
    expect(seen.map(r => r.existingCells)).toEqual([
      [],
      [
        { cellId: first, position: 2, source: 'x = 1' },
        { cellId, position: 1, source: 'y = 2' }
      ]
    ]);
  });

  it('does not list a cell the planner may not run: its exec is refused anyway', async () => {
    const { driver, cellId } = await notebookWithUserCell('secret = 1', false);
    const seen: IBehaviorApproval[] = [];
    const s = setup(
      {
        planning: [withTemplate(false), plan(true)],
        generating: [[exec(cellId), exec('ghost')]]
      },
      {
        settings: { interactive: true },
        hooks: {
          approveBehavior: async request => {
            seen.push(request);
            return 'run';
          }
        },
        driver
      }
    );
    await s.runner.start({ task: 't' });
    expect(seen).toHaveLength(1);
    expect(seen[0].existingCells).toEqual([]);
    expect(driver.executed).toEqual([]);
  });
});

describe('Interactive mode: nothing is evaluated in the kernel before approval', () => {
  it('collects no variables before the first approval, nor after a skipped behavior', async () => {
    const driver = new FakeNotebookDriver();
    driver.variables = { api_key: 'sk-123', df: 'DataFrame(3×2)' };
    const asked: number[] = [];
    const decisions: BehaviorDecision[] = ['skip', 'run'];
    const s = setup(
      {
        planning: [withTemplate(false), plan(false), plan(false), plan(true)],
        generating: [
          [code('a = 1'), exec()],
          [code('b = 2'), exec()],
          [text('no code')]
        ]
      },
      {
        settings: { interactive: true },
        hooks: {
          approveBehavior: async () => {
            asked.push(driver.collectCount);
            return decisions.shift() ?? 'run';
          }
        },
        driver
      }
    );
    expect((await s.runner.start({ task: 't' })).reason).toBe('completed');
    // Asked twice (the third behavior adds no code): the kernel was not asked before either, even
    // after the first one was skipped.
    expect(asked).toEqual([0, 0]);
    expect(driver.collectCount).toBeGreaterThan(0);
    const variables = s.client.planningRequests.map(
      r => r.observation.context?.variables ?? {}
    );
    expect(variables.map(v => 'df' in v)).toEqual([false, false, true, true]);
    expect(driver.variables).toEqual({
      api_key: 'sk-123',
      df: 'DataFrame(3×2)',
      b: '2'
    });
  });

  it('does not collect while an approval is pending, nor when the run resumes after a skip', async () => {
    const driver = new FakeNotebookDriver();
    driver.variables = { df: 'DataFrame(3×2)' };
    let answer!: (decision: BehaviorDecision) => void;
    const s = setup(
      {
        planning: [withTemplate(false), plan(true)],
        generating: [[code('a = 1'), exec()]]
      },
      {
        settings: { interactive: true },
        hooks: {
          approveBehavior: () =>
            new Promise<BehaviorDecision>(resolve => (answer = resolve))
        },
        driver
      }
    );
    const run = s.runner.start({ task: 't' });
    await settle();
    expect(s.runner.snapshot.state).toBe('BEHAVIOR_RUNNING');
    s.runner.pause();
    await settle();
    expect(driver.collectCount).toBe(0);
    answer('skip');
    await s.paused();
    s.runner.resume();
    expect((await run).reason).toBe('completed');
    expect(driver.collectCount).toBe(0);
    expect(driver.executed).toEqual([]);
  });

  it("computes no summaries the planner's context filter asks for", async () => {
    const driver = new FakeNotebookDriver();
    driver.variables = { big: 'matrix' };
    const s = setup(
      {
        planning: [
          withTemplate(false, ONE_STEP, {
            context_filter: { variables_to_summarize: { big: 'shape_only' } }
          }),
          plan(true)
        ],
        generating: [[text('ok')]]
      },
      {
        settings: { interactive: true },
        hooks: { approveBehavior: async () => 'run' },
        driver
      }
    );
    await s.runner.start({ task: 't' });
    expect(driver.summarizeRequests).toEqual([]);
    expect(driver.collectCount).toBe(0);
    const warning =
      '⚠️ WARN: Variable summaries were not computed: in interactive mode nothing runs in the kernel before the user approves it.';
    expect(effectsOf(s.client.planningRequests[1])).toContain(warning);
  });

  it('still collects and summarizes outside interactive mode', async () => {
    const driver = new FakeNotebookDriver();
    driver.variables = { big: 'matrix' };
    const s = setup(
      {
        planning: [
          withTemplate(false, ONE_STEP, {
            context_filter: { variables_to_summarize: { big: 'shape_only' } }
          }),
          plan(true)
        ],
        generating: [[text('ok')]]
      },
      { driver }
    );
    await s.runner.start({ task: 't' });
    expect(driver.summarizeRequests).toEqual([{ big: 'shape_only' }]);
    expect(driver.collectCount).toBeGreaterThan(0);
  });
});

describe('Interactive mode: a changed setting applies from the next behavior', () => {
  it('turned on during a behavior: that behavior goes on, the next one asks', async () => {
    const asked: string[] = [];
    const s = setup(
      {
        planning: [withTemplate(false), plan(false), plan(true)],
        generating: [
          [code('a = 1'), exec(), code('b = 2'), exec()],
          [code('c = 3'), exec()]
        ]
      },
      {
        settings: { interactive: false },
        hooks: {
          approveBehavior: async request => {
            asked.push(request.behaviorId);
            return 'run';
          }
        }
      }
    );
    s.runner.actionApplied.connect((_, event) => {
      if (event.index === 0) {
        s.settings.interactive = true;
      }
    });
    expect((await s.runner.start({ task: 't' })).reason).toBe('completed');
    expect(asked).toEqual(['behavior_002']);
    expect(s.driver.variables).toEqual({ a: '1', b: '2', c: '3' });
  });

  it('turned off while a behavior is asked: the next one runs unasked', async () => {
    const asked: string[] = [];
    const s = setup(
      {
        planning: [withTemplate(false), plan(false), plan(true)],
        generating: [
          [code('a = 1'), exec()],
          [code('b = 2'), exec()]
        ]
      },
      {
        settings: { interactive: true },
        hooks: {
          approveBehavior: async request => {
            asked.push(request.behaviorId);
            s.settings.interactive = false;
            return 'run';
          }
        }
      }
    );
    expect((await s.runner.start({ task: 't' })).reason).toBe('completed');
    expect(asked).toEqual(['behavior_001']);
    expect(s.driver.variables).toEqual({ a: '1', b: '2' });
  });
});

describe('Interactive mode: a stop ends the question', () => {
  it('aborts the signal the approval was given, and nothing runs', async () => {
    let signal: AbortSignal | null = null;
    const s = setup(
      {
        planning: [withTemplate(false)],
        generating: [[code('a = 1'), exec()]]
      },
      {
        settings: { interactive: true },
        hooks: {
          approveBehavior: (_, given) => {
            signal = given;
            // A dialog nobody answers.
            return new Promise<BehaviorDecision>(() => undefined);
          }
        }
      }
    );
    const run = s.runner.start({ task: 't' });
    await settle();
    expect(signal).not.toBeNull();
    expect(signal!.aborted).toBe(false);
    await s.runner.stop();
    expect((await run).reason).toBe('stopped');
    expect(signal!.aborted).toBe(true);
    expect(s.driver.cells).toEqual([]);
    expect(s.driver.executed).toEqual([]);
    expect(s.driver.collectCount).toBe(0);
  });

  it('aborts the signal of a pending workflow update question', async () => {
    let signal: AbortSignal | null = null;
    const s = setup(
      {
        planning: [withTemplate(false)],
        generating: [
          [
            text('before'),
            {
              action: 'update_workflow',
              updated_workflow: {
                name: 'Other',
                stages: [
                  { id: 'x', name: 'X', steps: [{ id: 'x1', name: 'X1' }] }
                ]
              }
            },
            text('after')
          ]
        ]
      },
      {
        hooks: {
          confirmWorkflowUpdate: (_, __, given) => {
            signal = given;
            return new Promise<boolean>(() => undefined);
          }
        }
      }
    );
    const run = s.runner.start({ task: 't' });
    await settle();
    expect(signal).not.toBeNull();
    await s.runner.stop();
    expect((await run).reason).toBe('stopped');
    expect(signal!.aborted).toBe(true);
    expect(s.driver.cells.map(c => c.source)).toEqual(['before']);
  });
});
