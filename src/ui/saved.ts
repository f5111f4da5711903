/**
 * A run saved in the notebook (the runner's `ISavedRunState`) seen as a snapshot, so the sidebar can
 * show where a run stands before it is resumed, e.g. right after the notebook was opened. The schema
 * that reads it is part of the runtime, loaded on first use (lab/lazy.ts).
 */
import type { ISavedRunState } from '../engine/runState';
import type { IRunSnapshot } from '../engine/types';
import { loadedRuntime, loadRuntime } from '../lab/lazy';

export type { ISavedRunState };

export interface ISavedRun {
  /** Null when the saved value is not a readable run state (see `problems`). */
  state: ISavedRunState | null;
  snapshot: IRunSnapshot | null;
  /** What is wrong with an unreadable one (`field: problem`), shown with Discard in the panel. */
  problems: string[] | null;
}

/**
 * The saved run in `raw` (a notebook's metadata value), or what is wrong with it; null when there is
 * none. `undefined` while the runtime loads: `onLoaded` is called once it has, to read again.
 */
export function readSavedRun(
  raw: unknown,
  maxExecutionSteps: number,
  onLoaded: () => void
): ISavedRun | null | undefined {
  if (raw === undefined || raw === null) {
    return null;
  }
  const runtime = loadedRuntime();
  if (!runtime) {
    loadRuntime().then(onLoaded, reason =>
      console.error('Notebook-BCC: the saved run could not be read.', reason)
    );
    return undefined;
  }
  const check = runtime.checkSavedRunState(raw);
  return check.ok
    ? {
        state: check.state,
        snapshot: runtime.snapshotFromSaved(check.state, maxExecutionSteps),
        problems: null
      }
    : { state: null, snapshot: null, problems: check.problems };
}
