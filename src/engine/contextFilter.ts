/**
 * Applies the planner's `context_filter` to the full observation to make the /generating payload
 * (docs/protocol.md#context-filter). Defaults follow the documents' client pseudo-code:
 * - No filter: the full observation is sent.
 * - `variables_to_include` absent: no variable but the ones to summarize (as an empty list).
 * - `include_history` without `history_limit`: an empty history.
 * - A name in both lists gets its summary.
 * - `current_limit` / `history_limit` keep the most recent N effects.
 * - Patterns apply before limits; an invalid regular expression is reported and ignored.
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
import { errorMessage } from './registry';

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

function compilePatterns(
  sources: readonly string[] | undefined,
  kind: 'include' | 'exclude',
  warn: (note: IMessage) => void
): RegExp[] {
  const patterns: RegExp[] = [];
  for (const source of sources ?? []) {
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
  const keep = (text: string) =>
    (include.length === 0 || include.some(p => p.test(text))) &&
    !exclude.some(p => p.test(text));
  const effects = observation.context?.effects ?? { current: [], history: [] };
  const current =
    config.include_current === false
      ? []
      : lastN(effects.current.filter(keep), config.current_limit);
  const history = config.include_history
    ? lastN(effects.history.filter(keep), config.history_limit ?? 0)
    : [];
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
  return {
    observation: {
      location,
      context: { variables, effects: filteredEffects }
    },
    warnings,
    notes
  };
}
