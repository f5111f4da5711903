/**
 * Applies the planner's `context_filter` to the full observation to make the /generating payload
 * (docs/protocol.md#context-filter). Defaults follow the documents' client pseudo-code:
 * - No filter: the full observation is sent.
 * - `variables_to_include` absent: no variable but the ones to summarize (as an empty list).
 * - `include_history` without `history_limit`: an empty history.
 * - A name in both lists gets its summary.
 * - `current_limit` / `history_limit` keep the most recent N effects.
 * - Patterns apply before limits, to the first characters of each effect; an invalid or pathological
 *   regular expression is reported and ignored.
 * - Warnings are appended after the limits so that they always reach the planner.
 */
import type {
  ContextFilter,
  Observation,
  ObservationInput,
  Progress,
  ProgressLevel,
  ProgressLevelName
} from '../protocol';
import { englishText, type IMessage, msg } from './messages';
import { errorMessage } from './actions/registry';

export interface IFilterResult {
  observation: ObservationInput;
  /** Warning effects the filter produced (missing variables, invalid patterns). */
  warnings: string[];
  /** The same warnings as messages, for the view. */
  notes: IMessage[];
}

export function missingVariableWarning(name: string): string {
  return englishText(msg('variableNotFound', name));
}

function notAvailable(strategy: string): string {
  return `<${strategy}: not available>`;
}

/** Limits on planner-supplied effects patterns (docs/protocol.md#limits). */
export const MAX_PATTERN_CHARS = 200;
export const MAX_PATTERNS = 20;
export const MAX_PATTERN_REPEATS = 2;
/** A pattern sees this many characters of each effect (its head and tail halves), so no match runs long. */
export const MAX_PATTERN_INPUT_CHARS = 512;
/** Time all patterns of one request may take; past it, the remaining effects are kept unfiltered. */
export const PATTERN_TIME_BUDGET_MS = 200;

interface IGroupScan {
  /** Holds a quantifier, directly or in a nested group. */
  repeats: boolean;
  alternation: boolean;
}

/** The quantifier starting at `i` (`*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`): its length and whether it repeats. */
function quantifierAt(
  source: string,
  i: number
): { length: number; repeats: boolean; unbounded: boolean } | null {
  const c = source[i];
  if (c === '*' || c === '+') {
    return { length: 1, repeats: true, unbounded: true };
  }
  if (c === '?') {
    return { length: 1, repeats: false, unbounded: false };
  }
  if (c === '{') {
    const match = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(i, i + 24));
    if (match) {
      const max = match[2] === undefined ? Number(match[1]) : match[3];
      const unbounded = max === '';
      return {
        length: match[0].length,
        repeats: unbounded || Number(max) > 1,
        unbounded
      };
    }
  }
  return null;
}

/**
 * Why a planner's pattern is refused, or null: too long, a backreference, a repeated group that holds a
 * repeat or an alternation (exponential backtracking), or too many unbounded repeats (polynomial).
 * One pass over the pattern.
 */
export function checkEffectsPattern(source: string): string | null {
  if (source.length > MAX_PATTERN_CHARS) {
    return `longer than ${MAX_PATTERN_CHARS} characters`;
  }
  const groups: IGroupScan[] = [{ repeats: false, alternation: false }];
  let unbounded = 0;
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    let closed: IGroupScan | null = null;
    if (c === '\\') {
      const next = source[i + 1] ?? '';
      if (/[1-9k]/.test(next)) {
        return 'a backreference, which can take exponential time';
      }
      i += 2;
    } else if (c === '[') {
      i++;
      while (i < source.length && source[i] !== ']') {
        i += source[i] === '\\' ? 2 : 1;
      }
      i++;
    } else if (c === '(') {
      groups.push({ repeats: false, alternation: false });
      i++;
      continue;
    } else if (c === ')') {
      closed = groups.length > 1 ? (groups.pop() as IGroupScan) : null;
      i++;
    } else if (c === '|') {
      groups[groups.length - 1].alternation = true;
      i++;
      continue;
    } else {
      i++;
    }
    const quantifier = quantifierAt(source, i);
    const group = groups[groups.length - 1];
    if (closed) {
      group.repeats ||= closed.repeats;
    }
    if (!quantifier) {
      continue;
    }
    i += quantifier.length;
    if (source[i] === '?') {
      i++;
    }
    if (closed && quantifier.repeats && closed.repeats) {
      return 'nested quantifier (a repeated group holds a repeat), which can take exponential time';
    }
    if (closed && quantifier.repeats && closed.alternation) {
      return 'repeated alternation, which can take exponential time';
    }
    if (quantifier.unbounded && ++unbounded > MAX_PATTERN_REPEATS) {
      return `more than ${MAX_PATTERN_REPEATS} unbounded repeats, which can take polynomial time`;
    }
    group.repeats = true;
  }
  return null;
}

function compilePatterns(
  sources: readonly string[] | undefined,
  kind: 'include' | 'exclude',
  warn: (note: IMessage) => void
): RegExp[] {
  const patterns: RegExp[] = [];
  const all = sources ?? [];
  if (all.length > MAX_PATTERNS) {
    warn(msg('tooManyPatterns', all.length, kind, MAX_PATTERNS));
  }
  for (const source of all.slice(0, MAX_PATTERNS)) {
    const refused = checkEffectsPattern(source);
    if (refused) {
      warn(
        msg('patternRefused', kind, source.slice(0, MAX_PATTERN_CHARS), refused)
      );
      continue;
    }
    try {
      patterns.push(new RegExp(source));
    } catch (error) {
      warn(msg('invalidPattern', kind, source, errorMessage(error)));
    }
  }
  return patterns;
}

function lastN(items: readonly string[], limit: number | undefined): string[] {
  if (limit === undefined) {
    return [...items];
  }
  return limit <= 0 ? [] : items.slice(-limit);
}

export function applyContextFilter(
  observation: Observation,
  filter: ContextFilter | null | undefined,
  summaries: Record<string, unknown> = {}
): IFilterResult {
  if (!filter) {
    return { observation, warnings: [], notes: [] };
  }
  const warnings: string[] = [];
  const notes: IMessage[] = [];
  const warn = (note: IMessage) => {
    notes.push(note);
    warnings.push(englishText(note));
  };
  const all = observation.context?.variables ?? {};
  const summarize = filter.variables_to_summarize ?? {};

  const variables: Record<string, unknown> = {};
  for (const name of filter.variables_to_include ?? []) {
    if (name in all) {
      variables[name] = all[name];
    } else {
      warn(msg('variableNotFound', name));
      if (name in summarize) {
        variables[name] =
          name in summaries ? summaries[name] : notAvailable(summarize[name]);
      }
    }
  }
  for (const [name, strategy] of Object.entries(summarize)) {
    if (name in all) {
      variables[name] =
        name in summaries ? summaries[name] : notAvailable(strategy);
    } else if (!filter.variables_to_include?.includes(name)) {
      warn(msg('summarizedVariableNotFound', name, strategy));
    }
  }

  const config = filter.effects_config ?? {};
  const include = compilePatterns(config.patterns?.include, 'include', warn);
  const exclude = compilePatterns(config.patterns?.exclude, 'exclude', warn);
  const started = Date.now();
  let overBudget = false;
  const matches = (pattern: RegExp, effect: string) => {
    if (effect.length <= MAX_PATTERN_INPUT_CHARS) {
      return pattern.test(effect);
    }
    const half = MAX_PATTERN_INPUT_CHARS / 2;
    return (
      pattern.test(effect.slice(0, half)) ||
      pattern.test(effect.slice(effect.length - half))
    );
  };
  const keep = (effect: string) => {
    if (overBudget || Date.now() - started > PATTERN_TIME_BUDGET_MS) {
      overBudget = true;
      return true;
    }
    return (
      (include.length === 0 || include.some(p => matches(p, effect))) &&
      !exclude.some(p => matches(p, effect))
    );
  };
  const effects = observation.context?.effects ?? { current: [], history: [] };
  const current =
    config.include_current === false
      ? []
      : lastN(effects.current.filter(keep), config.current_limit);
  const history = config.include_history
    ? lastN(effects.history.filter(keep), config.history_limit ?? 0)
    : [];
  if (overBudget) {
    warn(msg('patternsOverBudget', PATTERN_TIME_BUDGET_MS));
  }
  const filteredEffects: { current: string[]; history?: string[] } = {
    current: [...current, ...warnings]
  };
  if (config.include_history) {
    filteredEffects.history = history;
  }

  const levels: readonly ProgressLevelName[] = filter.focus_to_include ?? [
    'behaviors'
  ];
  const source: Progress = observation.location.progress ?? {};
  const progress: Record<string, Partial<ProgressLevel>> = {};
  for (const level of levels) {
    const full = source[level];
    const view: Partial<ProgressLevel> = {};
    if (full?.focus) {
      view.focus = full.focus;
    }
    if (full?.current_outputs) {
      view.current_outputs = { ...full.current_outputs };
    }
    progress[level] = view;
  }
  const tracking = filter.outputs_tracking;
  if (tracking && progress.behaviors) {
    const outputs = progress.behaviors.current_outputs ?? {
      expected: [],
      produced: [],
      in_progress: []
    };
    const expected = [...outputs.expected];
    for (const name of tracking.expected_variables ?? []) {
      if (!expected.includes(name)) {
        expected.push(name);
      }
    }
    progress.behaviors.current_outputs = {
      ...outputs,
      expected,
      ...(tracking.validation_required
        ? { validation_required: [...tracking.validation_required] }
        : {})
    };
  }

  const location: ObservationInput['location'] = {
    current: observation.location.current,
    progress
  };
  if (observation.location.goals) {
    location.goals = observation.location.goals;
  }
  // The step's rewritten cells pass any filter: a fix is written from them (docs/protocol.md#context).
  const attempts = observation.context?.cell_attempts;
  // The user's notes are what the user asked of the planner: no filter leaves them out.
  const userNotes = observation.context?.user_notes;
  return {
    observation: {
      location,
      context: {
        variables,
        effects: filteredEffects,
        ...(attempts ? { cell_attempts: attempts } : {}),
        ...(userNotes?.length ? { user_notes: userNotes } : {})
      }
    },
    warnings,
    notes
  };
}
