/**
 * What a saved run may hold in the notebook's metadata (docs/protocol.md#limits): the newest
 * completed behaviors and effects, each effect and context value cut to a head and a tail, and a
 * marker wherever something older was left out. Only the copy written to the notebook is cut.
 */
import { truncateOutput } from '../state/effects';
import type { ISavedRunState } from '../state/runState';

/** Completed behaviors kept; the oldest go first. */
export const MAX_SAVED_BEHAVIORS = 200;
/** Entries of a completed item's `actions_taken` kept; the oldest go first. */
export const MAX_SAVED_ACTIONS_TAKEN = 100;
/** Longest effect text saved. */
export const MAX_SAVED_EFFECT_CHARS = 4000;
/** Longest context variable saved, as JSON. */
export const MAX_SAVED_VALUE_CHARS = 20_000;
/** Rewind checkpoints saved (the newest); a reloaded run can rewind no further back. */
export const MAX_SAVED_CHECKPOINTS = 30;

function marker(count: number, what: string): string {
  return `[${count.toLocaleString('en-US')} older ${what} not saved]`;
}

/** The last `max` of `items`, after a marker item made by `mark` when some were left out. */
function newest<T>(items: T[], max: number, mark: (dropped: number) => T): T[] {
  if (items.length <= max) {
    return items;
  }
  const dropped = items.length - max + 1;
  return [mark(dropped), ...items.slice(dropped)];
}

function cutValue(value: unknown): unknown {
  const json = typeof value === 'string' ? value : JSON.stringify(value);
  if (json === undefined || json.length <= MAX_SAVED_VALUE_CHARS) {
    return value;
  }
  return truncateOutput(json, MAX_SAVED_VALUE_CHARS);
}

/** A copy of `saved` within the limits; `saved` itself is not changed. */
export function limitSavedRunState(saved: ISavedRunState): ISavedRunState {
  const effects = (texts: string[]) =>
    texts.map(text => truncateOutput(text, MAX_SAVED_EFFECT_CHARS));
  const level = <
    T extends { completed: ISavedRunState['progress']['steps']['completed'] }
  >(
    state: T,
    max: number,
    name: string
  ): T => ({
    ...state,
    completed: newest(
      state.completed.map(item =>
        item.actions_taken
          ? {
              ...item,
              actions_taken: newest(
                item.actions_taken,
                MAX_SAVED_ACTIONS_TAKEN,
                n => marker(n, 'actions')
              )
            }
          : item
      ),
      max,
      n => ({ goal: marker(n, name) })
    )
  });
  const limitProgress = (
    progress: ISavedRunState['progress']
  ): ISavedRunState['progress'] => ({
    ...progress,
    stages: level(progress.stages, Number.POSITIVE_INFINITY, 'stages'),
    steps: level(progress.steps, Number.POSITIVE_INFINITY, 'steps'),
    behaviors: level(
      progress.behaviors,
      MAX_SAVED_BEHAVIORS,
      'completed behaviors'
    )
  });
  const cutVariables = (variables: Record<string, unknown>) => {
    const cut: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(variables)) {
      cut[name] = cutValue(value);
    }
    return cut;
  };
  const rewind = saved.rewind;
  return {
    ...saved,
    effects: {
      current: effects(saved.effects.current),
      history: effects(saved.effects.history)
    },
    progress: limitProgress(saved.progress),
    contextVariables: cutVariables(saved.contextVariables),
    // Each checkpoint holds its own progress and context: bounded like the run's own.
    ...(rewind
      ? {
          rewind: {
            ...rewind,
            checkpoints: rewind.checkpoints
              .slice(-MAX_SAVED_CHECKPOINTS)
              .map(checkpoint => ({
                ...checkpoint,
                progress: limitProgress(checkpoint.progress),
                contextVariables: cutVariables(checkpoint.contextVariables)
              }))
          }
        }
      : {})
  };
}
