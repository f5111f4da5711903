import type { ObservationInput } from '../../protocol';
import { WorkflowStateMachine } from '../state/fsm';
import { englishText, msg } from '../messages';
import { WorkflowProgress } from '../state/progress';
import {
  fitToContext,
  generatingBody,
  type IRequestInputs,
  observationOf,
  planningBody,
  summariesToCompute
} from '../run/requests';
import { REDACTED } from '../variables';

function inputs(over: Partial<IRequestInputs> = {}): IRequestInputs {
  const progress = new WorkflowProgress();
  progress.setTemplate({
    stages: [{ id: 's1', name: 'S1', steps: [{ id: 'p1', name: 'P1' }] }]
  });
  progress.startStage('s1');
  progress.startStep('p1');
  return {
    parts: {
      progress,
      effects: { current: ['printed 3'], history: ['loaded the data'] },
      notebook: {
        title: 'T',
        cell_count: 1,
        last_cell_type: 'code',
        last_output: '3',
        execution_count: 1,
        cells: []
      },
      fsm: new WorkflowStateMachine().toContext()
    },
    variables: {
      context: { problem_description: 'from the context', n: 1 },
      kernel: { n: 2, df: 'DataFrame(3×2)', api_key: 'sk-1' },
      task: { problem_description: 'predict prices' }
    },
    isRedacted: name => name.includes('key'),
    maxLength: 100_000,
    service: {},
    ...over
  };
}

/** A body far over `max` characters: many long effects. */
function longInputs(max: number, over: Partial<IRequestInputs> = {}) {
  const base = inputs({ maxLength: max, ...over });
  base.parts.effects = {
    current: ['now'],
    history: Array.from({ length: 50 }, (_, i) => `${i} ${'h'.repeat(400)}`)
  };
  return base;
}

describe('observationOf', () => {
  it('lets the kernel override the context, and the task override both, redacting all but the task', () => {
    const variables = observationOf(inputs()).context?.variables;
    expect(variables).toEqual({
      problem_description: 'predict prices',
      n: 2,
      df: 'DataFrame(3×2)',
      api_key: REDACTED
    });
  });

  it('sends what the user typed as typed, whatever its name', () => {
    const given = inputs();
    given.variables.task = { my_key: 'typed' };
    expect(observationOf(given).context?.variables?.my_key).toBe('typed');
  });
});

describe('planningBody', () => {
  it('asks for a plan, with the feedback when there is one', () => {
    const feedback = {
      behavior_id: 'b1',
      actions_executed: 2,
      last_action_result: 'success'
    };
    const { request, reports } = planningBody(inputs(), feedback);
    expect(request.options).toEqual({
      stream: false,
      optional_actions: ['rewrite_cell']
    });
    expect(request.behavior_feedback).toEqual(feedback);
    expect(request.observation.location.current?.step_id).toBe('p1');
    expect(reports).toEqual([]);
    expect(planningBody(inputs(), null).request).not.toHaveProperty(
      'behavior_feedback'
    );
  });
});

describe('summariesToCompute', () => {
  const filter = { variables_to_summarize: { df: 'shape_only' } };

  it.each([
    ['no filter', null, false],
    ['a filter without summaries', { variables_to_include: ['df'] }, false],
    ['an empty list of summaries', { variables_to_summarize: {} }, false]
  ])('asks nothing for %s', (_name, given, interactive) => {
    expect(summariesToCompute(given, interactive)).toEqual({
      ask: null,
      refused: null
    });
  });

  it('asks the kernel for the summaries the filter names', () => {
    expect(summariesToCompute(filter, false)).toEqual({
      ask: { df: 'shape_only' },
      refused: null
    });
  });

  it('runs nothing in interactive mode, and says so to the user and the planner', () => {
    const { ask, refused } = summariesToCompute(filter, true);
    expect(ask).toBeNull();
    expect(refused).toMatchObject({ source: 'filter' });
    expect(refused?.effect).toMatch(/interactive mode/);
    expect(refused?.message).toBe(refused?.effect);
  });
});

describe('generatingBody', () => {
  it('sends the full observation, streamed, without a filter', () => {
    const { request, reports } = generatingBody(inputs(), null, {});
    expect(request.options).toEqual({
      stream: true,
      optional_actions: ['rewrite_cell']
    });
    expect(request.observation).toEqual(observationOf(inputs()));
    expect(reports).toEqual([]);
  });

  it('keeps what the filter names, with the summaries (redacted), and reports what is missing', () => {
    const { request, reports } = generatingBody(
      inputs(),
      {
        variables_to_include: ['df', 'missing'],
        variables_to_summarize: { api_key: 'head_only', n: 'shape_only' }
      },
      { api_key: 'sk-1 head', n: 'int' }
    );
    expect(request.observation.context?.variables).toEqual({
      df: 'DataFrame(3×2)',
      api_key: REDACTED,
      n: 'int'
    });
    const missing = msg('variableNotFound', 'missing');
    expect(reports).toEqual([
      { message: missing, source: 'filter', effect: englishText(missing) }
    ]);
  });
});

describe('fitToContext', () => {
  const size = (request: unknown) => JSON.stringify(request).length;

  it('leaves a request that fits as it is', () => {
    const request = planningBody(inputs(), null).request;
    expect(fitToContext({ maxLength: 100_000, service: {} }, request)).toEqual({
      request,
      reports: []
    });
  });

  it('trims a long request to the maximum length', () => {
    const { request, reports } = planningBody(longInputs(8000), null);
    expect(size(request)).toBeLessThanOrEqual(8000);
    expect(reports).toEqual([]);
  });

  it('leaves room for what the service adds to every body', () => {
    const plain = planningBody(longInputs(8000), null).request;
    const withOverhead = planningBody(
      longInputs(8000, { service: { requestOverhead: () => 3000 } }),
      null
    ).request;
    expect(size(withOverhead)).toBeLessThanOrEqual(5000);
    expect(size(withOverhead)).toBeLessThan(size(plain));
  });

  it('sends a long request whole when what the service sends of it fits', () => {
    const full = planningBody(longInputs(100_000), null).request;
    const { request } = planningBody(
      longInputs(8000, { service: { sentSize: () => 1000 } }),
      null
    );
    expect(request).toEqual(full);
  });

  it('trims by what the service sends too much, not by what it leaves out', () => {
    const service = {
      sentSize: (r: { observation: ObservationInput }) => size(r) - 2000
    };
    const { request } = planningBody(longInputs(8000, { service }), null);
    expect(service.sentSize(request)).toBeLessThanOrEqual(8000);
    expect(size(request)).toBeGreaterThan(8000);
  });

  it('reports a request that cannot fit, and sends it anyway', () => {
    const { request, reports } = planningBody(longInputs(50), null);
    expect(size(request)).toBeGreaterThan(50);
    expect(reports).toEqual([
      {
        message: msg('requestTooLong', size(request), 50),
        source: 'engine',
        effect: null
      }
    ]);
  });
});
