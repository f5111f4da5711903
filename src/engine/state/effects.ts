/**
 * Execution output processing (docs/protocol.md#effects): repeated log lines are summarized, then the
 * text is cut to a head and a tail so one cell cannot flood the planner's context.
 */

export const DEFAULT_MAX_OUTPUT_CHARS = 16000;

/** A run of this many lines (or more) that differ only in their numbers is summarized. */
const MIN_REPEAT = 3;

const NUMBER = /[-+]?\d+(?:[.,]\d+)*(?:[eE][-+]?\d+)?/g;

function lineShape(line: string): string {
  return line.replace(/\r$/, '').replace(NUMBER, '#');
}

/**
 * `Epoch 1/100 - loss: 0.52`, `Epoch 2/100 - loss: 0.48`, ... become
 * `<Epoch 1/100 - loss: 0.52 (repeated 100 times)>`. Blank lines are never summarized.
 */
export function summarizeRepetitiveLogs(text: string): string {
  if (!text) {
    return text;
  }
  const lines = text.split('\n');
  const result: string[] = [];
  let start = 0;
  while (start < lines.length) {
    const shape = lineShape(lines[start]);
    let end = start + 1;
    if (shape.trim() !== '') {
      while (end < lines.length && lineShape(lines[end]) === shape) {
        end++;
      }
    }
    const count = end - start;
    if (count >= MIN_REPEAT) {
      result.push(
        `<${lines[start].replace(/\r$/, '')} (repeated ${count} times)>`
      );
    } else {
      result.push(...lines.slice(start, end));
    }
    start = end;
  }
  return result.join('\n');
}

export function truncationMarker(omitted: number): string {
  return `\n\n... [TRUNCATED: ${omitted.toLocaleString('en-US')} characters omitted to prevent context overflow] ...\n\n`;
}

/**
 * Keeps the first `floor(maxChars / 2)` and the last `maxChars - floor(maxChars / 2)` characters around a
 * marker naming how many were dropped. `maxChars <= 0` means no limit.
 */
export function truncateOutput(
  text: string,
  maxChars: number = DEFAULT_MAX_OUTPUT_CHARS
): string {
  if (maxChars <= 0 || text.length <= maxChars) {
    return text;
  }
  const headLength = Math.floor(maxChars / 2);
  const tailLength = maxChars - headLength;
  const omitted = text.length - maxChars;
  return (
    text.slice(0, headLength) +
    truncationMarker(omitted) +
    text.slice(text.length - tailLength)
  );
}

export function processOutput(
  text: string,
  maxChars: number = DEFAULT_MAX_OUTPUT_CHARS
): string {
  return truncateOutput(summarizeRepetitiveLogs(text), maxChars);
}

/** Current effects one behavior keeps; a flood of warnings keeps its newest (docs/protocol.md#limits). */
export const MAX_CURRENT_EFFECTS = 200;
/** Longest effect kept, whatever the output setting: effects are saved in the notebook. */
export const MAX_EFFECT_CHARS = 200_000;

function droppedMarker(count: number): string {
  return `[${count.toLocaleString('en-US')} earlier effects of this behavior dropped: only the last ${MAX_CURRENT_EFFECTS} are kept]`;
}

const DROPPED_MARKER = /^\[([\d,]+) earlier effects of this behavior dropped: /;

/** The effects of the running behavior (`current`) and of earlier ones (`history`, bounded). */
export interface IEffectsState {
  current: string[];
  history: string[];
}

/** A position in the effects, kept by a rewind checkpoint (`EffectsStore.mark`). */
export interface IEffectsMark {
  epoch: number;
  /** Effects ever moved to history at that time (dropped ones included). */
  historyEnd: number;
  /** `historyEnd` plus the effects current at that time. */
  end: number;
}

export interface IEffectsPosition {
  dropped: number;
  epoch: number;
}

/** The methods that change the effects: only the run state's transactions call them. */
export type EffectsWrite =
  'add' | 'rotate' | 'replace' | 'restore' | 'rollback' | 'setPosition';

/** The effects as the parts of the loop see them: read only. */
export type EffectsReader = Omit<EffectsStore, EffectsWrite>;

export class EffectsStore {
  constructor(private _historyLimit: () => number) {}

  get current(): readonly string[] {
    return this._current;
  }

  get history(): readonly string[] {
    return this._history;
  }

  add(text: string): void {
    this._current.push(truncateOutput(text, MAX_EFFECT_CHARS));
    const marked = DROPPED_MARKER.exec(this._current[0] ?? '');
    const kept = this._current.length - (marked ? 1 : 0);
    if (kept > MAX_CURRENT_EFFECTS) {
      const before = marked ? Number(marked[1].replace(/,/g, '')) : 0;
      const excess = kept - MAX_CURRENT_EFFECTS;
      this._current.splice(0, excess + (marked ? 1 : 0));
      this._current.unshift(droppedMarker(before + excess));
    }
  }

  /** A new behavior starts: what the previous one produced becomes history. */
  rotate(): void {
    if (this._current.length === 0) {
      return;
    }
    this._history.push(...this._current);
    this._current = [];
    this._trimHistory();
  }

  /** `context_update.effects_update`: the planner's lists replace ours. */
  replace(update: { current?: string[]; history?: string[] }): void {
    this._epoch++;
    if (update.current) {
      this._current = [...update.current];
    }
    if (update.history) {
      this._history = [...update.history];
      this._trimHistory();
    }
  }

  toJSON(): IEffectsState {
    return { current: [...this._current], history: [...this._history] };
  }

  restore(state: IEffectsState): void {
    this._dropped = 0;
    this._epoch++;
    this._current = [...state.current];
    this._history = [...state.history];
    this._trimHistory();
  }

  /**
   * Where the effects stand, as positions in the one append-only sequence history + current (from
   * which only the oldest are ever dropped): what a rewind checkpoint keeps instead of the texts.
   */
  mark(): IEffectsMark {
    const historyEnd = this._dropped + this._history.length;
    return {
      epoch: this._epoch,
      historyEnd,
      end: historyEnd + this._current.length
    };
  }

  /** What marks are measured against, saved beside them so they still line up after a reload. */
  get position(): IEffectsPosition {
    return { dropped: this._dropped, epoch: this._epoch };
  }

  /** Measures marks against `position` (saved beside them): a resumed run's marks line up again. */
  setPosition(position: IEffectsPosition): void {
    this._dropped = Math.max(0, position.dropped);
    this._epoch = position.epoch;
  }

  /**
   * Back to `mark`: what came after it is forgotten and the effects current then are current again
   * (those the history has dropped since are lost). False when the planner replaced the lists since.
   */
  rollback(mark: IEffectsMark): boolean {
    if (mark.epoch !== this._epoch) {
      return false;
    }
    const all = [...this._history, ...this._current];
    const at = (position: number) => Math.max(0, position - this._dropped);
    this._history = all.slice(0, at(mark.historyEnd));
    this._current = all.slice(at(mark.historyEnd), at(mark.end));
    return true;
  }

  private _trimHistory(): void {
    const limit = Math.max(0, this._historyLimit());
    if (this._history.length > limit) {
      const excess = this._history.length - limit;
      this._history.splice(0, excess);
      this._dropped += excess;
    }
  }

  private _dropped = 0;
  /** Bumped when the planner replaces the lists: marks taken before no longer line up. */
  private _epoch = 0;

  private _current: string[] = [];
  private _history: string[] = [];
}
