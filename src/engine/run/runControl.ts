/**
 * Stop, pause and wake for the run loop: the user's controls reach the loop only at action boundaries
 * (`pausePoint`) and through the abort signal of the request in flight.
 */
import type { IPauseReason } from '../types';

export class RunStopped extends Error {
  /** `interruptKernel`: the user asked for a running cell to be interrupted (Stop's check box). */
  constructor(readonly interruptKernel = true) {
    super('The run was stopped');
    this.name = 'RunStopped';
  }
}

export class RunControl {
  get stopRequested(): boolean {
    return this._stopRequested;
  }

  /** The run was stopped to leave the notebook to another window (`IStopOptions.leaveNotebook`). */
  get leavingNotebook(): boolean {
    return this._leavingNotebook;
  }

  /** Aborted when the run is stopped; a new one per launch. */
  get signal(): AbortSignal {
    return this._abort.signal;
  }

  get pauseRequested(): boolean {
    return this._pauseRequested;
  }

  get paused(): boolean {
    return this._paused;
  }

  /** Why the run is paused or pausing, or null. */
  get pauseReason(): IPauseReason | null {
    return this._paused || this._pauseRequested ? this._pauseReason : null;
  }

  /** Pause once the current behavior has closed (the Step command). */
  pauseAfterBehavior = false;

  /** A new loop starts: nothing is stopped. */
  launch(): void {
    this._stopRequested = false;
    this._leavingNotebook = false;
    this._abort = new AbortController();
  }

  /**
   * Aborts the request in flight and wakes the loop so that it ends. Without `interruptKernel`, a
   * running cell is left to finish (the signal's reason says so).
   */
  stop(
    options: { interruptKernel?: boolean; leaveNotebook?: boolean } = {}
  ): void {
    this._stopRequested = true;
    this._leavingNotebook ||= options.leaveNotebook === true;
    this._abort.abort(new RunStopped(options.interruptKernel === true));
    for (const listener of [...this._stopListeners]) {
      listener();
    }
    this._stopListeners.clear();
    this.wake();
  }

  throwIfStopped(): void {
    if (this._stopRequested) {
      throw new RunStopped();
    }
  }

  requestPause(reason: IPauseReason): void {
    this._pauseRequested = true;
    this._pauseReason = reason;
    this.wake();
  }

  /** Clears a requested pause (Resume); false when there was none. */
  cancelPause(): boolean {
    if (!(this._paused || this._pauseRequested)) {
      return false;
    }
    this._pauseRequested = false;
    this.wake();
    return true;
  }

  /**
   * An action boundary: a requested pause takes effect here. `onPause` runs once paused, `onResume`
   * once resumed; throws `RunStopped` when the run is stopped while paused.
   */
  async pausePoint(hooks: {
    onPause: () => Promise<void>;
    onResume: () => void;
  }): Promise<void> {
    if (!this._pauseRequested || this._stopRequested) {
      return;
    }
    this._paused = true;
    await hooks.onPause();
    while (this._pauseRequested && !this._stopRequested) {
      await this.waitWake();
    }
    this._paused = false;
    this.throwIfStopped();
    this._pauseReason = null;
    hooks.onResume();
  }

  /** The loop settled (stopped, failed, max steps): no pause is pending any more. */
  clearPause(): void {
    this._paused = false;
    this._pauseRequested = false;
    this._pauseReason = null;
    this.pauseAfterBehavior = false;
  }

  /** Rejects with `RunStopped` as soon as the run is stopped, whatever `work` does. */
  untilStopped<T>(work: Promise<T>): Promise<T> {
    if (this._stopRequested) {
      return Promise.reject(new RunStopped());
    }
    return new Promise<T>((resolve, reject) => {
      const onStop = () => reject(new RunStopped());
      this._stopListeners.add(onStop);
      work.then(
        value => {
          this._stopListeners.delete(onStop);
          resolve(value);
        },
        (error: unknown) => {
          this._stopListeners.delete(onStop);
          reject(error);
        }
      );
    });
  }

  wake(): void {
    const wakers = this._wakers;
    this._wakers = [];
    for (const wake of wakers) {
      wake();
    }
  }

  waitWake(): Promise<void> {
    return new Promise(resolve => this._wakers.push(resolve));
  }

  private _abort = new AbortController();
  private _leavingNotebook = false;
  private _stopRequested = false;
  private _stopListeners = new Set<() => void>();
  private _pauseRequested = false;
  private _pauseReason: IPauseReason | null = null;
  private _paused = false;
  private _wakers: (() => void)[] = [];
}
