import {
  type CellOutcome,
  cellsToRun,
  comparedNames,
  compareRuns,
  type Fingerprints,
  type ICellStep,
  type ICheckCell,
  type IFingerprint,
  MAX_RECORDED_VALUES,
  readReproducibilityRecord,
  recordedValues,
  sameValue,
  shownValue
} from '../reproducibility';

const value = (
  summary: unknown,
  digest: string | null = null,
  type = typeof summary === 'number' ? 'int' : 'DataFrame(3×2)'
): IFingerprint => ({ type, summary, digest });

const cell = (index: number, source = `x${index} = ${index}`): ICheckCell => ({
  id: `c${index}`,
  index,
  source,
  failedInRun: false
});

const OK: CellOutcome = { status: 'ok' };

function step(
  index: number,
  values: Fingerprints,
  outcome: CellOutcome = OK,
  source?: string
): ICellStep {
  return { cell: cell(index, source), outcome, values };
}

describe('which cells and values', () => {
  it('runs the run’s code cells that ran, in notebook order; not the user’s, not markdown, not empty ones', () => {
    const run = { step_id: 'p1', behavior_id: 'b1' };
    expect(
      cellsToRun([
        {
          id: 'a',
          type: 'markdown',
          source: '# t',
          metadata: run,
          executionCount: null
        },
        {
          id: 'b',
          type: 'code',
          source: 'df = load()',
          metadata: run,
          executionCount: 1
        },
        {
          id: 'c',
          type: 'code',
          source: 'mine = 1',
          metadata: {},
          executionCount: 2
        },
        {
          id: 'd',
          type: 'code',
          source: 'never_ran()',
          metadata: run,
          executionCount: null
        },
        {
          id: 'e',
          type: 'code',
          source: '  ',
          metadata: run,
          executionCount: 3
        },
        {
          id: 'f',
          type: 'code',
          source: 'boom()',
          metadata: { ...run, exec_error: true },
          executionCount: 4
        }
      ])
    ).toEqual([
      { id: 'b', index: 2, source: 'df = load()', failedInRun: false },
      { id: 'f', index: 6, source: 'boom()', failedInRun: true }
    ]);
  });

  it('compares the deliverables and the expected variables once each, Python names only', () => {
    expect(
      comparedNames(['answer'], ['df', 'answer', 'not a name', 'totals'])
    ).toEqual(['answer', 'df', 'totals']);
  });
});

describe('comparing values', () => {
  it('is the same value with the same type and summary, and the same digest when both have one', () => {
    expect(sameValue(value(3), value(3))).toBe(true);
    expect(sameValue(value(3), value(4))).toBe(false);
    expect(
      sameValue(value('DataFrame(3×2)', 'aa'), value('DataFrame(3×2)', 'aa'))
    ).toBe(true);
    expect(
      sameValue(value('DataFrame(3×2)', 'aa'), value('DataFrame(3×2)', 'bb'))
    ).toBe(false);
    // Past the kernel's budget a value has no digest: its summary decides.
    expect(
      sameValue(value('DataFrame(3×2)', 'aa'), value('DataFrame(3×2)', null))
    ).toBe(true);
    expect(
      sameValue(value({ a: 1 }, null, 'dict'), value({ a: 1 }, null, 'list'))
    ).toBe(false);
    expect(shownValue(value({ mean: 2.5 }, null, 'dict(len=1)'))).toBe(
      'dict(len=1) {"mean":2.5}'
    );
    expect(shownValue(value('x'.repeat(300), null, 'str'))).toHaveLength(120);
  });

  it('reproduces N of N when every value is the same and no cell failed', () => {
    const reference = { df: value('DataFrame(3×2)', 'd1'), answer: value(2) };
    const steps = [
      step(2, { df: reference.df }),
      step(4, { df: reference.df, answer: reference.answer })
    ];
    const result = compareRuns({
      names: ['answer', 'df', 'gone'],
      reference,
      steps,
      fresh: steps[1].values
    });
    expect(result).toMatchObject({
      compared: 2,
      matched: 2,
      first_difference: null
    });
    expect(result.values.map(v => [v.name, v.status])).toEqual([
      ['answer', 'same'],
      ['df', 'same']
    ]);
  });

  it('names the first cell that raised, and the values it left missing', () => {
    const reference = { df: value('DataFrame(3×2)', 'd1'), summary: value(5) };
    const steps = [
      step(2, { df: reference.df }),
      step(
        5,
        { df: reference.df },
        {
          status: 'error',
          ename: 'NameError',
          evalue: "name 'df_clean' is not defined",
          expected: false
        },
        '# Summarise\nsummary = df_clean.describe()'
      )
    ];
    const result = compareRuns({
      names: ['df', 'summary'],
      reference,
      steps,
      fresh: steps[1].values
    });
    expect(result.first_difference).toEqual({
      cell_id: 'c5',
      cell_index: 5,
      source: 'summary = df_clean.describe()',
      reason: "raised NameError: name 'df_clean' is not defined",
      kind: 'error',
      error: "NameError: name 'df_clean' is not defined"
    });
    expect(result.values.find(v => v.name === 'summary')).toMatchObject({
      status: 'missing',
      fresh: null
    });
  });

  it('passes over an error the run had too (its exec failed then)', () => {
    const reference = { n: value(1) };
    const steps = [
      step(
        1,
        {},
        { status: 'error', ename: 'ValueError', evalue: 'x', expected: true }
      ),
      step(2, { n: reference.n })
    ];
    expect(
      compareRuns({ names: ['n'], reference, steps, fresh: steps[1].values })
    ).toMatchObject({ compared: 1, matched: 1, first_difference: null });
  });

  it('says where a differing value took its final form: after the last cell that set it apart', () => {
    const reference = { total: value(10), other: value(1) };
    const steps = [
      step(1, { total: value(10), other: value(1) }),
      step(2, { total: value(99), other: value(1) }),
      step(3, { total: value(10), other: value(1) }),
      // From here on `total` differs for good.
      step(4, { total: value(11), other: value(1) }),
      step(5, { total: value(12), other: value(1) })
    ];
    const result = compareRuns({
      names: ['total', 'other'],
      reference,
      steps,
      fresh: steps[4].values
    });
    expect(result.first_difference).toMatchObject({
      cell_id: 'c4',
      reason: 'left `total` different from the run',
      kind: 'value',
      name: 'total'
    });
    expect(result.values[0]).toMatchObject({
      name: 'total',
      status: 'different',
      reference: '10',
      fresh: '12',
      cell_id: 'c4'
    });
    expect(result.matched).toBe(1);
  });

  it('takes the earlier of a differing value and a later failing cell', () => {
    const reference = { seed: value(1), df: value('DataFrame(3×2)', 'd') };
    const steps = [
      step(1, { seed: value(2) }),
      step(3, { seed: value(2) }, { status: 'timeout', seconds: 600 })
    ];
    const result = compareRuns({
      names: ['seed', 'df'],
      reference,
      steps,
      fresh: steps[1].values
    });
    expect(result.first_difference).toMatchObject({ cell_index: 1 });
    const timedOut = compareRuns({
      names: ['df'],
      reference,
      steps,
      fresh: steps[1].values
    });
    expect(timedOut.first_difference).toMatchObject({
      cell_index: 3,
      reason: 'did not finish within 600 s',
      kind: 'timeout',
      seconds: 600
    });
  });
});

describe('the record', () => {
  it('keeps the differences first, bounded', () => {
    const values = Array.from({ length: MAX_RECORDED_VALUES + 10 }, (_, i) => ({
      name: `v${i}`,
      status: i === 40 ? ('different' as const) : ('same' as const),
      reference: '1',
      fresh: '1'
    }));
    const kept = recordedValues(values);
    expect(kept).toHaveLength(MAX_RECORDED_VALUES);
    expect(kept[0].name).toBe('v40');
  });

  it('reads a record back liberally, and refuses what is not one', () => {
    const record = {
      checked_at: '2025-05-02T09:14:03.120Z',
      reproduced: true,
      compared: 1,
      matched: 1,
      values: []
    };
    expect(readReproducibilityRecord(record)).toBe(record);
    expect(readReproducibilityRecord({ ...record, compared: '1' })).toBeNull();
    expect(readReproducibilityRecord('yes')).toBeNull();
  });
});
