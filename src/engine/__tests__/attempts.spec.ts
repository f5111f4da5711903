import {
  afterSourceRestored,
  ATTEMPT_LIMITS,
  clipMiddle,
  type ICellAttempt,
  newAttempt,
  OBSERVED_ATTEMPT_LIMITS,
  observedAttempts,
  readAttempts,
  restoreAttempt,
  rewriteStatus,
  stepAttempts,
  withAttempt
} from '../ports/attempts';
import { sourceHash } from '../ports/driver';

const AT = new Date('2026-01-02T03:04:05.000Z');

function attempt(code: string, error: string | null = 'KeyError: x') {
  return {
    code,
    error,
    traceback: null,
    at: AT.toISOString(),
    by: 'planner'
  } as ICellAttempt;
}

describe('whether the run may rewrite a cell', () => {
  it('rewrites a code cell whose source is what the run wrote, and nothing else', () => {
    const source = 'df = pd.read_csv(path)';
    expect(
      rewriteStatus({ kind: 'code', source, stamped: sourceHash(source) })
    ).toBe('ok');
    expect(
      rewriteStatus({
        kind: 'code',
        source: `${source}  # mine`,
        stamped: sourceHash(source)
      })
    ).toBe('edited');
    // No stamp: nothing says the run wrote it.
    expect(rewriteStatus({ kind: 'code', source, stamped: null })).toBe(
      'edited'
    );
    expect(
      rewriteStatus({ kind: 'markdown', source, stamped: sourceHash(source) })
    ).toBe('not_code');
    expect(rewriteStatus(null)).toBe('missing');
  });
});

describe('an attempt, bounded', () => {
  it('keeps the code, the error line, the end of the traceback and when', () => {
    const traceback = `Traceback (most recent call last):\n${'  frame\n'.repeat(1000)}KeyError: 'region'`;
    const made = newAttempt(
      'df["region"]',
      { ename: 'KeyError', evalue: "'region'", traceback },
      AT,
      'planner'
    );
    expect(made).toEqual({
      code: 'df["region"]',
      error: "KeyError: 'region'",
      traceback: expect.stringMatching(/^….*KeyError: 'region'$/s),
      at: '2026-01-02T03:04:05.000Z',
      by: 'planner'
    });
    expect(made.traceback?.length).toBe(ATTEMPT_LIMITS.tracebackChars);
  });

  it('cuts long code to a head and a tail, a long error to its end, and keeps an attempt without error', () => {
    const code = `${'a'.repeat(30_000)}${'z'.repeat(30_000)}`;
    const made = newAttempt(
      code,
      { ename: 'ValueError', evalue: `first line\n${'v'.repeat(1000)}` },
      AT,
      'user'
    );
    expect(made.code.length).toBeLessThanOrEqual(ATTEMPT_LIMITS.codeChars);
    expect(made.code.startsWith('aaa')).toBe(true);
    expect(made.code.endsWith('zzz')).toBe(true);
    expect(made.code).toContain('characters omitted');
    expect(made.error?.length).toBe(ATTEMPT_LIMITS.errorChars);
    expect(made.by).toBe('user');
    expect(newAttempt('x = 1', null, AT, 'planner').error).toBeNull();
    expect(newAttempt('x = 1', {}, AT, 'planner').error).toBe(
      'The cell raised an error'
    );
  });

  it('clips in the middle only past the limit', () => {
    expect(clipMiddle('short', 10)).toBe('short');
    expect(clipMiddle('x'.repeat(500), 100).length).toBeLessThanOrEqual(100);
  });
});

describe('the history of a cell', () => {
  it('keeps the newest attempts, oldest first', () => {
    let history: ICellAttempt[] = [];
    for (let i = 1; i <= ATTEMPT_LIMITS.kept + 3; i++) {
      history = withAttempt(history, attempt(`try ${i}`));
    }
    expect(history).toHaveLength(ATTEMPT_LIMITS.kept);
    expect(history[0].code).toBe('try 4');
    expect(history[history.length - 1].code).toBe(
      `try ${ATTEMPT_LIMITS.kept + 3}`
    );
  });

  it('reads what a notebook holds leniently', () => {
    expect(readAttempts(undefined)).toEqual([]);
    expect(readAttempts('nope')).toEqual([]);
    expect(
      readAttempts([
        { code: 'a = 1', error: null, at: 'then', by: 'user' },
        { code: 3 },
        null,
        { code: 'b = 2', error: 5 }
      ])
    ).toEqual([
      { code: 'a = 1', error: null, traceback: null, at: 'then', by: 'user' },
      { code: 'b = 2', error: null, traceback: null, at: '', by: 'planner' }
    ]);
  });

  it('restores an attempt: its code comes back, the current code becomes the newest attempt', () => {
    const history = [attempt('one'), attempt('two')];
    const current = attempt('three', null);
    expect(restoreAttempt(history, 0, current)).toEqual({
      code: 'one',
      history: [attempt('two'), current]
    });
    expect(restoreAttempt(history, 5, current)).toBeNull();
  });

  it('forgets the newest attempt when a rewind puts its code back', () => {
    const history = [attempt('one'), attempt('two')];
    expect(afterSourceRestored(history, 'two')).toEqual([attempt('one')]);
    expect(afterSourceRestored(history, 'one')).toEqual(history);
    expect(afterSourceRestored([], 'x')).toEqual([]);
  });
});

describe('what the observation carries of the attempts', () => {
  it("sends the current code and the latest failed attempts' code and error line, bounded", () => {
    const history = Array.from({ length: 6 }, (_, i) =>
      attempt(`try_${i + 1} = ${'x'.repeat(2000)}`, `Error ${i + 1}`)
    );
    const observed = observedAttempts({
      id: 'c1',
      storeId: 'load.code',
      stepId: 'load',
      source: 'y'.repeat(5000),
      history
    });
    expect(observed).toMatchObject({
      cell_id: 'c1',
      store_id: 'load.code',
      step_id: 'load',
      attempts: 7
    });
    expect(observed.code.length).toBeLessThanOrEqual(
      OBSERVED_ATTEMPT_LIMITS.codeChars
    );
    expect(observed.failed.map(f => [f.attempt, f.error])).toEqual([
      [4, 'Error 4'],
      [5, 'Error 5'],
      [6, 'Error 6']
    ]);
    for (const failed of observed.failed) {
      expect(failed.code.length).toBeLessThanOrEqual(
        OBSERVED_ATTEMPT_LIMITS.failedCodeChars
      );
    }
    expect(JSON.stringify(observed).length).toBeLessThan(4000);
  });

  it("keeps the current step's latest rewritten cells only", () => {
    const cell = (id: string, stepId: string | null) =>
      observedAttempts({
        id,
        storeId: null,
        stepId,
        source: 'x',
        history: [attempt('y')]
      });
    const all = [
      cell('a', 'load'),
      cell('b', 'clean'),
      cell('c', 'clean'),
      cell('d', 'clean')
    ];
    expect(stepAttempts(all, 'clean').map(c => c.cell_id)).toEqual(['c', 'd']);
    expect(stepAttempts(all, 'load').map(c => c.cell_id)).toEqual(['a']);
    expect(stepAttempts(all, null)).toEqual([]);
    expect(stepAttempts(undefined, 'load')).toEqual([]);
  });
});
