import type { ContextFilter, Observation } from '../../protocol';
import {
  applyContextFilter,
  checkEffectsPattern,
  MAX_PATTERN_INPUT_CHARS,
  missingVariableWarning,
  PATTERN_TIME_BUDGET_MS
} from '../contextFilter';

function observation(): Observation {
  return {
    location: {
      current: {
        stage_id: 'data_cleaning',
        step_id: 'handle_missing_values',
        behavior_id: 'behavior_003',
        behavior_iteration: 3
      },
      progress: {
        stages: {
          completed: [],
          current: 'data_cleaning',
          focus: 'stage focus',
          current_outputs: {
            expected: ['df_cleaned'],
            produced: [],
            in_progress: []
          }
        },
        steps: {
          completed: [],
          current: 'handle_missing_values',
          focus: 'step focus',
          current_outputs: {
            expected: ['df', 'missing_fill_report'],
            produced: ['missing_summary'],
            in_progress: []
          }
        },
        behaviors: {
          completed: [],
          current: 'behavior_003',
          iteration: 3,
          focus: 'behavior focus',
          current_outputs: {
            expected: ['df_working'],
            produced: [],
            in_progress: []
          }
        }
      },
      goals: { stage: 'clean', step: 'fill', behavior: null }
    },
    context: {
      variables: {
        df: 'DataFrame(1460×79)',
        missing_groups: { high_missing: ['PoolQC'] },
        correlation_matrix: 'DataFrame(79×79)',
        row_count: 1460
      },
      effects: {
        current: ['✓ loaded', 'DEBUG x=1', 'Error: boom', '✓ filled'],
        history: ['old 1', '✓ old 2', 'old 3']
      },
      notebook: {
        title: 'T',
        cell_count: 3,
        last_cell_type: 'code',
        last_output: 'x'
      },
      FSM: { state: 'BEHAVIOR_RUNNING', last_transition: null, timestamp: null }
    }
  };
}

describe('applyContextFilter', () => {
  it('sends the full observation when no filter was given', () => {
    const full = observation();
    const result = applyContextFilter(full, null);
    expect(result.observation).toBe(full);
    expect(result.warnings).toEqual([]);
  });

  it('keeps the named variables, summaries and recent effects (API_PROTOCOL example)', () => {
    const filter: ContextFilter = {
      variables_to_include: ['df', 'missing_groups'],
      variables_to_summarize: { correlation_matrix: 'shape_only' },
      effects_config: { current_limit: 3 },
      focus_to_include: ['behaviors', 'steps']
    };
    const { observation: payload, warnings } = applyContextFilter(
      observation(),
      filter,
      { correlation_matrix: '(79, 79)' }
    );
    expect(warnings).toEqual([]);
    expect(payload.context?.variables).toEqual({
      df: 'DataFrame(1460×79)',
      missing_groups: { high_missing: ['PoolQC'] },
      correlation_matrix: '(79, 79)'
    });
    expect(payload.context?.effects).toEqual({
      current: ['DEBUG x=1', 'Error: boom', '✓ filled']
    });
    expect(payload.context?.notebook).toBeUndefined();
    expect(payload.context?.FSM).toBeUndefined();
    expect(payload.location.current?.behavior_id).toBe('behavior_003');
    expect(Object.keys(payload.location.progress ?? {})).toEqual([
      'behaviors',
      'steps'
    ]);
    expect(payload.location.progress?.behaviors).toEqual({
      focus: 'behavior focus',
      current_outputs: {
        expected: ['df_working'],
        produced: [],
        in_progress: []
      }
    });
    expect(payload.location.progress?.steps?.focus).toBe('step focus');
  });

  it('warns about a missing variable and falls back to its summary strategy', () => {
    const { observation: payload, warnings } = applyContextFilter(
      observation(),
      {
        variables_to_include: ['df', 'ghost', 'phantom'],
        variables_to_summarize: { phantom: 'head_only' }
      }
    );
    expect(warnings).toEqual([
      "⚠️ WARN: Variable 'ghost' requested but not found",
      "⚠️ WARN: Variable 'phantom' requested but not found"
    ]);
    expect(missingVariableWarning('ghost')).toBe(warnings[0]);
    expect(payload.context?.variables).toEqual({
      df: 'DataFrame(1460×79)',
      phantom: '<head_only: not available>'
    });
    expect(payload.context?.effects?.current?.slice(-2)).toEqual(warnings);
  });

  it('keeps warnings even when current effects are excluded', () => {
    const { observation: payload } = applyContextFilter(observation(), {
      variables_to_include: ['nope'],
      effects_config: { include_current: false }
    });
    expect(payload.context?.effects?.current).toEqual([
      "⚠️ WARN: Variable 'nope' requested but not found"
    ]);
  });

  it('keeps only the summaries when no variable is named to include, and warns for unknown ones', () => {
    const { observation: payload, warnings } = applyContextFilter(
      observation(),
      { variables_to_summarize: { df: 'describe_only', gone: 'shape_only' } },
      { df: 'describe(df)' }
    );
    // `variables_to_include` absent is an empty list (docs/protocol.md#context-filter).
    expect(payload.context?.variables).toEqual({ df: 'describe(df)' });
    expect(warnings).toEqual([
      "⚠️ WARN: Variable 'gone' to summarize (shape_only) requested but not found"
    ]);
  });

  it('marks a summary the kernel could not compute', () => {
    const { observation: payload } = applyContextFilter(observation(), {
      variables_to_include: [],
      variables_to_summarize: { df: 'last_5_only' }
    });
    expect(payload.context?.variables).toEqual({
      df: '<last_5_only: not available>'
    });
  });

  it('applies include/exclude patterns, history limits, and reports an invalid regex', () => {
    const { observation: payload, warnings } = applyContextFilter(
      observation(),
      {
        effects_config: {
          include_current: true,
          include_history: true,
          history_limit: 1,
          patterns: {
            include: ['^✓', '^Error', '(unclosed'],
            exclude: ['^DEBUG', 'filled']
          }
        }
      }
    );
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^⚠️ WARN: Invalid effects include pattern '\(unclosed' ignored: /
    );
    expect(payload.context?.effects).toEqual({
      current: ['✓ loaded', 'Error: boom', warnings[0]],
      history: ['✓ old 2']
    });
  });

  it('sends no history when it is asked for without a limit', () => {
    const unlimited = applyContextFilter(observation(), {
      effects_config: { include_history: true }
    });
    expect(unlimited.observation.context?.effects?.history).toEqual([]);
  });

  it('leaves history out unless asked and honours a zero limit', () => {
    const none = applyContextFilter(observation(), { effects_config: {} });
    expect(none.observation.context?.effects?.history).toBeUndefined();
    const zero = applyContextFilter(observation(), {
      effects_config: {
        current_limit: 0,
        include_history: true,
        history_limit: 0
      }
    });
    expect(zero.observation.context?.effects).toEqual({
      current: [],
      history: []
    });
  });

  it("keeps the step's rewritten cells whatever the filter: a fix is written from them", () => {
    const full = observation();
    const attempts = [
      {
        cell_id: 'c1',
        step_id: 'handle_missing_values',
        attempts: 2,
        code: 'df = df.fillna(0)',
        failed: [{ attempt: 1, code: 'df.fillna()', error: 'ValueError' }]
      }
    ];
    full.context = { variables: {}, ...full.context, cell_attempts: attempts };
    const { observation: payload } = applyContextFilter(full, {
      variables_to_include: ['df']
    });
    expect(payload.context?.cell_attempts).toEqual(attempts);
    const { observation: without } = applyContextFilter(observation(), {
      variables_to_include: ['df']
    });
    expect(without.context).not.toHaveProperty('cell_attempts');
  });

  it('defaults focus to the behaviors level and adds outputs tracking to it', () => {
    const { observation: payload } = applyContextFilter(observation(), {
      outputs_tracking: {
        expected_variables: ['df_working', 'imputation_log'],
        validation_required: ['high_missing_validated']
      }
    });
    expect(Object.keys(payload.location.progress ?? {})).toEqual(['behaviors']);
    expect(payload.location.progress?.behaviors?.current_outputs).toEqual({
      expected: ['df_working', 'imputation_log'],
      produced: [],
      in_progress: [],
      validation_required: ['high_missing_validated']
    });
  });
});

describe('planner-supplied effects patterns', () => {
  it('refuses patterns that can backtrack without end, saying why', () => {
    expect(checkEffectsPattern('(a+)+$')).toMatch(/nested quantifier/);
    expect(checkEffectsPattern('(x+x+)+y')).toMatch(/nested quantifier/);
    expect(checkEffectsPattern('(?:a|a)*b')).toMatch(/repeated alternation/);
    expect(checkEffectsPattern('(a*)*')).toMatch(/nested quantifier/);
    expect(checkEffectsPattern('((ab)*c){2,}')).toMatch(/nested quantifier/);
    expect(checkEffectsPattern('(a)\\1')).toMatch(/backreference/);
    expect(checkEffectsPattern('x'.repeat(201))).toMatch(/longer than 200/);
    expect(checkEffectsPattern('.*a.*b.*c')).toMatch(/more than 2/);
  });

  it('accepts the patterns planners send', () => {
    for (const ok of [
      '^✓',
      '^Error',
      'filled',
      '^⚠️ WARN',
      'Traceback \\(most recent call last\\)',
      '(?:foo|bar)',
      '[(+*]+',
      '\\d+(\\.\\d+)?',
      '.*loss: [0-9.]+'
    ]) {
      expect([ok, checkEffectsPattern(ok)]).toEqual([ok, null]);
    }
  });

  it('ignores a pathological pattern with a warning effect, and applies the rest', () => {
    const full = observation();
    full.context?.effects?.current.push('a'.repeat(40) + '!');
    const started = Date.now();
    const { observation: payload, warnings } = applyContextFilter(full, {
      effects_config: {
        patterns: { include: ['(a+)+$', '^✓'], exclude: ['(a|aa)+$'] }
      }
    });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(warnings).toEqual([
      "⚠️ WARN: Effects include pattern '(a+)+$' refused: nested quantifier (a repeated group holds a repeat), which can take exponential time",
      "⚠️ WARN: Effects exclude pattern '(a|aa)+$' refused: repeated alternation, which can take exponential time"
    ]);
    expect(payload.context?.effects?.current).toEqual([
      '✓ loaded',
      '✓ filled',
      ...warnings
    ]);
  });

  it('matches a pattern against the head and the tail of a long effect only', () => {
    const full = observation();
    const filler = 'x'.repeat(MAX_PATTERN_INPUT_CHARS);
    full.context?.effects?.current.splice(
      0,
      4,
      `${filler} Error: middle ${filler}`,
      `Error: head ${filler}`,
      `${filler} Error: tail`
    );
    const { observation: payload } = applyContextFilter(full, {
      effects_config: { patterns: { include: ['Error'] } }
    });
    expect(payload.context?.effects?.current).toEqual([
      `Error: head ${filler}`,
      `${filler} Error: tail`
    ]);
  });

  it('stops filtering past its time budget and says so', () => {
    const full = observation();
    let now = 0;
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => {
      now += PATTERN_TIME_BUDGET_MS / 2;
      return now;
    });
    try {
      const { observation: payload, warnings } = applyContextFilter(full, {
        effects_config: { patterns: { exclude: ['.'] } }
      });
      expect(warnings).toEqual([
        `⚠️ WARN: Effects patterns took over ${PATTERN_TIME_BUDGET_MS} ms; the remaining effects are sent unfiltered`
      ]);
      // The first effects were filtered out; the rest are kept as they are.
      expect(payload.context?.effects?.current?.slice(0, -1)).toEqual(
        full.context?.effects?.current.slice(-2)
      );
    } finally {
      clock.mockRestore();
    }
  });
});
