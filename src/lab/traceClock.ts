/**
 * The clock of a notebook's `RunTrace`. At startup (`lazy.ts` builds the trace with it); the trace store
 * (`traceStore.ts`, loaded when a notebook opens) holds it still while it restores a kept trace.
 */

/** A clock for a `RunTrace`, which a restore holds still so the restored records keep their times. */
export class TraceClock {
  readonly now = (): number => this._fixed ?? Date.now();

  hold(time: number | null): void {
    this._fixed = time;
  }

  private _fixed: number | null = null;
}
