import type { PlanningRequestInput } from '../../protocol';
import { WorkflowStateMachine } from '../state/fsm';
import { buildObservation, fitRequest } from '../observation';
import { WorkflowProgress } from '../state/progress';

function request(historyItems: number, itemLength = 500): PlanningRequestInput {
  const progress = new WorkflowProgress();
  progress.setTemplate({
    stages: [{ id: 's1', name: 'S1', steps: [{ id: 'p1', name: 'P1' }] }]
  });
  progress.startStage('s1');
  progress.startStep('p1');
  const fsm = new WorkflowStateMachine();
  fsm.dispatch('START_WORKFLOW');
  fsm.dispatch('START_STEP');
  const history = Array.from(
    { length: historyItems },
    (_, i) => `history ${i} ${'h'.repeat(itemLength)}`
  );
  return {
    observation: buildObservation({
      progress,
      variables: {
        problem_description: 'predict prices',
        df: 'DataFrame(1460×79)'
      },
      effects: { current: ['latest output'], history },
      notebook: {
        title: 'T',
        cell_count: 2,
        last_cell_type: 'code',
        last_output: 'ok',
        execution_count: 4,
        cells: [
          {
            id: 'c2',
            type: 'code',
            content: 'print("ok")',
            outputs: ['ok'],
            metadata: {}
          }
        ]
      },
      fsm: fsm.toContext()
    }),
    options: { stream: false }
  };
}

describe('buildObservation', () => {
  it('has the full structure of OBSERVATION_PROTOCOL', () => {
    const { observation } = request(1);
    expect(observation.location.current).toEqual({
      stage_id: 's1',
      step_id: 'p1',
      behavior_id: null,
      behavior_iteration: 0
    });
    expect(observation.location.progress?.stages?.current).toBe('s1');
    expect(observation.location.goals).toEqual({
      stage: 'S1',
      step: 'P1',
      behavior: null
    });
    expect(observation.context?.variables).toEqual({
      problem_description: 'predict prices',
      df: 'DataFrame(1460×79)'
    });
    expect(observation.context?.effects?.current).toEqual(['latest output']);
    // The seed's four fields only: the last cells go to a dialect that sends them, outside the observation.
    expect(observation.context?.notebook).toEqual({
      title: 'T',
      cell_count: 2,
      last_cell_type: 'code',
      last_output: 'ok'
    });
    expect(observation.context?.FSM).toMatchObject({
      state: 'STEP_RUNNING',
      last_transition: 'START_STEP -> STEP_RUNNING'
    });
  });
});

describe('the observation of a step with rewritten cells', () => {
  it("carries the current step's rewritten cells from the notebook summary, and no other step's", () => {
    const attempts = (stepId: string) => ({
      cell_id: `cell-${stepId}`,
      step_id: stepId,
      attempts: 2,
      code: 'x = 2',
      failed: [{ attempt: 1, code: 'x = 1/0', error: 'ZeroDivisionError' }]
    });
    const base = request(0).observation;
    const progress = new WorkflowProgress();
    progress.setTemplate({
      stages: [{ id: 's1', name: 'S1', steps: [{ id: 'p1', name: 'P1' }] }]
    });
    progress.startStage('s1');
    progress.startStep('p1');
    const observation = buildObservation({
      progress,
      variables: {},
      effects: { current: [], history: [] },
      notebook: {
        title: null,
        cell_count: 2,
        last_cell_type: 'code',
        last_output: null,
        execution_count: null,
        cells: [],
        attempts: [attempts('p0'), attempts('p1')]
      },
      fsm: new WorkflowStateMachine().toContext()
    });
    expect(observation.context?.cell_attempts).toEqual([attempts('p1')]);
    expect(base.context?.cell_attempts).toBeUndefined();
  });
});

describe('fitRequest', () => {
  it('leaves a request that fits alone', () => {
    const small = request(2);
    const { request: fitted, report } = fitRequest(small, 18600);
    expect(fitted).toBe(small);
    expect(report.note).toBeNull();
    expect(report.historyDropped).toBe(0);
  });

  it('drops the oldest history first and says so', () => {
    const big = request(100);
    expect(JSON.stringify(big).length).toBeGreaterThan(18600);
    const { request: fitted, report } = fitRequest(big, 18600);
    expect(JSON.stringify(fitted).length).toBeLessThanOrEqual(18600);
    expect(report.fits).toBe(true);
    const history = fitted.observation.context?.effects?.history ?? [];
    expect(report.historyDropped).toBe(100 - history.length);
    expect(history.length).toBeGreaterThan(0);
    expect(history[history.length - 1]).toMatch(/^history 99 /);
    expect(history[0]).toMatch(
      new RegExp(`^history ${report.historyDropped} `)
    );
    // The note is about the request, not an output: it goes beside the effects, never among them.
    expect(fitted.observation.context?.effects?.current).toEqual([
      'latest output'
    ]);
    expect(fitted.observation.context?.notices).toEqual([
      `[context trimmed: ${report.historyDropped} history items dropped to fit 18600 characters]`
    ]);
    // The original is untouched.
    expect(big.observation.context?.effects?.history).toHaveLength(100);
  });

  it('shortens long values when dropping history is not enough', () => {
    const big = request(0);
    const context = big.observation.context;
    if (!context?.variables || !context.effects?.current) {
      throw new Error('bad fixture');
    }
    context.variables.huge = 'v'.repeat(30000);
    context.effects.current.push('e'.repeat(30000));
    const { request: fitted, report } = fitRequest(big, 18600);
    expect(report.fits).toBe(true);
    expect(JSON.stringify(fitted).length).toBeLessThanOrEqual(18600);
    expect(report.steps).toContain('FSM history dropped');
    expect(report.steps.some(s => s.endsWith('long values shortened'))).toBe(
      true
    );
    const huge = fitted.observation.context?.variables?.huge as string;
    expect(huge).toContain('[TRUNCATED:');
    expect(huge.startsWith('vvv')).toBe(true);
    expect(fitted.observation.context?.variables?.df).toBe(
      'DataFrame(1460×79)'
    );
    expect(report.note).toMatch(
      /^\[context trimmed: .* to fit 18600 characters\]$/
    );
  });

  it("shortens the rewritten cells' code with the other long values", () => {
    const big = request(0);
    const context = big.observation.context;
    if (!context) {
      throw new Error('bad fixture');
    }
    context.cell_attempts = [
      {
        cell_id: 'c1',
        attempts: 3,
        code: 'c'.repeat(1500),
        failed: [1, 2].map(attempt => ({
          attempt,
          code: 'f'.repeat(600),
          error: 'KeyError: x'
        }))
      }
    ];
    const { request: fitted, report } = fitRequest(big, 1800);
    const [cell] = fitted.observation.context?.cell_attempts ?? [];
    expect(report.steps.some(s => s.endsWith('long values shortened'))).toBe(
      true
    );
    expect(cell.code.length).toBeLessThan(1500);
    expect(cell.code).toContain('[TRUNCATED:');
    expect(cell.failed.map(f => f.error)).toEqual([
      'KeyError: x',
      'KeyError: x'
    ]);
  });

  it('sends a request it cannot fit as it is, with a note saying so', () => {
    const big = request(3);
    const { request: fitted, report } = fitRequest(big, 200);
    expect(report.fits).toBe(false);
    expect(report.note).toMatch(/still over 200 characters, sent as is\]$/);
    expect(fitted.observation.context?.notices).toEqual([report.note]);
    expect(fitted.observation.location.current?.stage_id).toBe('s1');
  });
});

describe('fitRequest on thousands of items', () => {
  /** Characters JSON.stringify produced while `work` ran: the cost of measuring. */
  function serialized(work: () => void): number {
    const original = JSON.stringify;
    let chars = 0;
    const spy = jest.spyOn(JSON, 'stringify').mockImplementation(((
      ...args: Parameters<typeof JSON.stringify>
    ) => {
      const text = original(...args);
      chars += text?.length ?? 0;
      return text;
    }) as typeof JSON.stringify);
    try {
      work();
    } finally {
      spy.mockRestore();
    }
    return chars;
  }

  it('measures 5,000 history items in time linear in the request', () => {
    const big = request(5000, 100);
    const length = JSON.stringify(big).length;
    let fits = false;
    const chars = serialized(() => {
      fits = fitRequest(big, 18600).report.fits;
    });
    expect(fits).toBe(true);
    // A constant number of passes over the request, not one per dropped item (quadratic: ~2,500x).
    expect(chars).toBeLessThan(16 * length);
  });

  it('drops 5,000 current effects (warnings) in time linear in the request', () => {
    const big = request(0);
    const current = big.observation.context?.effects?.current ?? [];
    for (let i = 0; i < 5000; i++) {
      current.push(`⚠️ WARN: POST /generating: warning ${i} ${'w'.repeat(80)}`);
    }
    const length = JSON.stringify(big).length;
    let fitted = big;
    const chars = serialized(() => {
      fitted = fitRequest(big, 18600).request;
    });
    expect(JSON.stringify(fitted).length).toBeLessThanOrEqual(18600);
    const kept = fitted.observation.context?.effects?.current ?? [];
    // The newest warnings are the ones kept; the note goes beside them.
    expect(kept[kept.length - 1]).toMatch(
      /^⚠️ WARN: POST \/generating: warning 4999 /
    );
    expect(fitted.observation.context?.notices).toEqual([
      expect.stringMatching(/older current effects dropped/)
    ]);
    expect(chars).toBeLessThan(16 * length);
  });

  it('drops the oldest of many completed behaviors in time linear in the request', () => {
    const big = request(0);
    const behaviors = big.observation.location.progress?.behaviors;
    if (!behaviors) {
      throw new Error('bad fixture');
    }
    behaviors.completed = Array.from({ length: 3000 }, (_, i) => ({
      behavior_id: `b${i}`,
      goal: `goal ${i} ${'g'.repeat(60)}`
    }));
    const length = JSON.stringify(big).length;
    let fitted = big;
    const chars = serialized(() => {
      fitted = fitRequest(big, 18600).request;
    });
    expect(JSON.stringify(fitted).length).toBeLessThanOrEqual(18600);
    const kept =
      fitted.observation.location.progress?.behaviors?.completed ?? [];
    expect(kept[kept.length - 1]?.behavior_id).toBe('b2999');
    expect(chars).toBeLessThan(16 * length);
  });
});
