/**
 * The actions of one behavior received and not yet applied, bounded in count and characters
 * (docs/protocol.md#limits): the reader waits for room (so the stream is not read while the run is
 * paused), and a behavior's actions past a total are not read at all.
 */

/** Actions held at once. */
export const MAX_QUEUED_ACTIONS = 500;
/** Characters of the lines of the actions held at once. */
export const MAX_QUEUED_CHARS = 4 * 1024 * 1024;
/** Actions one behavior may send; the rest of its answer is not read. */
export const MAX_BEHAVIOR_ACTIONS = 2000;

export class ActionQueue<T extends { line: string }> {
  /** The held actions, oldest first (the run state's `buffer`). */
  readonly items: T[] = [];

  /** Actions received in this behavior. */
  get received(): number {
    return this._received;
  }

  get chars(): number {
    return this._chars;
  }

  /** No room for more until some are taken. */
  get full(): boolean {
    return (
      this.items.length >= MAX_QUEUED_ACTIONS || this._chars >= MAX_QUEUED_CHARS
    );
  }

  /** The behavior has sent all the actions it may. */
  get spent(): boolean {
    return this._received >= MAX_BEHAVIOR_ACTIONS;
  }

  push(item: T): void {
    // The actions of one batch line share it: the line is counted once.
    const size = item.line === this._lastLine ? 0 : item.line.length;
    this._lastLine = item.line;
    this._sizes.push(size);
    this._chars += size;
    this._received++;
    this.items.push(item);
  }

  shift(): T | undefined {
    const item = this.items.shift();
    if (item !== undefined) {
      this._chars -= this._sizes.shift() ?? 0;
    }
    return item;
  }

  clear(): void {
    this.items.length = 0;
    this._sizes.length = 0;
    this._chars = 0;
  }

  private _received = 0;
  private _chars = 0;
  private _sizes: number[] = [];
  private _lastLine: string | null = null;
}
