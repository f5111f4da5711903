/**
 * A retry of the reference planner rewrites the step's failed cell (`rewrite_cell`) when the client
 * offers the action, and adds a new cell as before when it does not.
 */
import {
  GeneratingRequest,
  normalizeGeneratingRequest,
  normalizePlanningRequest,
  PlanningRequest
} from '../../protocol';
import { ActionInput, ReferencePlanner } from '../referencePlanner';
import { IObservationOptions, requestBody } from './fixture';

const OFFER = { optional_actions: ['rewrite_cell'] };

function planning(options: IObservationOptions, offer = true): PlanningRequest {
  const body = requestBody(options);
  const parsed = normalizePlanningRequest({
    ...body,
    options: { ...body.options, ...(offer ? OFFER : {}) }
  });
  if (!parsed.ok) {
    throw new Error(parsed.error);
  }
  return parsed.request;
}

function generating(
  options: IObservationOptions,
  offer = true,
  context: Record<string, unknown> = {}
): GeneratingRequest {
  const body = requestBody({ ...options, stream: true });
  body.observation.context = { ...body.observation.context, ...context };
  const parsed = normalizeGeneratingRequest({
    ...body,
    options: { ...body.options, ...(offer ? OFFER : {}) }
  });
  if (!parsed.ok) {
    throw new Error(parsed.error);
  }
  return parsed.request;
}

const LOAD = { stageId: 'data_loading', stepId: 'load_data' };
const DECODE_ERROR =
  "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9 in position 12";

/** The load step's first attempt, then the answer to its failure and the retry's actions. */
function retry(offer: boolean, context: Record<string, unknown> = {}) {
  const planner = new ReferencePlanner();
  planner.plan(planning(LOAD, offer), 'nb');
  const first = planner.generate(
    generating({ ...LOAD, iteration: 1 }, offer),
    'nb'
  );
  planner.plan(
    planning(
      { ...LOAD, iteration: 1, feedback: 'error', effects: [DECODE_ERROR] },
      offer
    ),
    'nb'
  );
  const second = planner.generate(
    generating({ ...LOAD, iteration: 2 }, offer, context),
    'nb'
  );
  return { planner, first, second };
}

function named(actions: ActionInput[], name: string): ActionInput[] {
  return actions.filter(a => a.action === name);
}

describe('ReferencePlanner retries in the failed cell', () => {
  it('rewrites no cell when the attempt failed without an error of its code (a fault of the run)', () => {
    // Seen in the fault suite: after a cut stream and Retry, the step's cell, whose code had not failed,
    // was rewritten with the next approach.
    const planner = new ReferencePlanner();
    planner.plan(planning(LOAD), 'nb');
    planner.generate(generating({ ...LOAD, iteration: 1 }), 'nb');
    planner.plan(
      planning({
        ...LOAD,
        iteration: 1,
        feedback: 'error',
        effects: ['⚠️ /generating failed: the stream ended mid-line']
      }),
      'nb'
    );
    const second = planner.generate(
      generating({ ...LOAD, iteration: 2 }),
      'nb'
    );
    expect(named(second, 'rewrite_cell')).toEqual([]);
    expect(named(second, 'exec')).not.toEqual([]);
  });

  it('rewrites the cell of the failed attempt and runs it again, adding no cell', () => {
    const { planner, first, second } = retry(true);
    const [add] = named(first, 'add').filter(
      a => a.action === 'add' && a.shot_type === 'action'
    );
    const cell = add.action === 'add' ? add.store_id : undefined;
    expect(cell).toBe('load_data.read_csv_default');
    expect(second.map(a => a.action)).toEqual(['rewrite_cell', 'exec']);
    expect(second[0]).toMatchObject({
      action: 'rewrite_cell',
      codecell_id: cell,
      content: expect.stringContaining('encoding_errors="replace"')
    });
    expect(second[1]).toEqual({
      action: 'exec',
      codecell_id: cell,
      need_output: true
    });
    // A third try fixes the same cell again.
    planner.plan(
      planning({
        ...LOAD,
        iteration: 2,
        feedback: 'error',
        effects: [DECODE_ERROR]
      }),
      'nb'
    );
    const third = planner.generate(generating({ ...LOAD, iteration: 3 }), 'nb');
    expect(named(third, 'rewrite_cell')).toEqual([
      expect.objectContaining({ codecell_id: cell })
    ]);
    expect(third[0]).toMatchObject({
      content: expect.stringContaining('latin-1')
    });
  });

  it('fixes the cell the observation names among the step’s rewritten cells', () => {
    const { second } = retry(true, {
      cell_attempts: [
        {
          cell_id: 'abc-123',
          store_id: null,
          step_id: 'load_data',
          attempts: 2,
          code: 'df = pd.read_csv(DATA_PATH)',
          failed: []
        }
      ]
    });
    expect(second[0]).toMatchObject({
      action: 'rewrite_cell',
      codecell_id: 'abc-123'
    });
  });

  it('adds a new cell with a note, as before, to a client that does not offer rewrite_cell', () => {
    const { second } = retry(false);
    expect(named(second, 'rewrite_cell')).toEqual([]);
    expect(second.map(a => a.action)).toEqual(['add', 'add', 'add', 'exec']);
    expect(second[0]).toMatchObject({
      shot_type: 'observation',
      content: expect.stringContaining('Attempt 1 failed')
    });
    expect(second[2]).toMatchObject({
      shot_type: 'action',
      store_id: 'load_data.read_csv_sniffed'
    });
  });

  it('retries a load whose traceback quotes the code’s pandas guard: pandas is there, the file is not UTF-8', () => {
    // IPython shows the lines around the failing one, the guard's message among them.
    const traceback = [
      "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9 in position 4: invalid continuation byte",
      'Cell In[1], line 11',
      '      7     print(f"pandas cannot be imported in this kernel ({error}), so the data cannot be loaded.")',
      '---> 11     df = pd.read_csv(DATA_PATH)'
    ].join('\n');
    const planner = new ReferencePlanner();
    planner.plan(planning(LOAD), 'nb');
    planner.generate(generating({ ...LOAD, iteration: 1 }), 'nb');
    const answer = planner.plan(
      planning({
        ...LOAD,
        iteration: 1,
        feedback: 'error',
        effects: [traceback]
      }),
      'nb'
    );
    expect(answer.transition?.continue_behaviors).toBe(true);
    const actions = planner.generate(
      generating({ ...LOAD, iteration: 2 }),
      'nb'
    );
    expect(actions.map(a => a.action)).toEqual(['rewrite_cell', 'exec']);
  });
});
