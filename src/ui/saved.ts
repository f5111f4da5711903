/**
 * A run saved in the notebook (the runner's `ISavedRunState`) seen as a snapshot, so the sidebar can
 * show where a run stands before it is resumed, e.g. right after the notebook was opened. The schema
 * that reads it is part of the runtime, loaded on first use: `lab/lazy.ts` implements the reader and
 * the plugins hand it to the run models.
 */
import type { ISavedRunState } from '../engine/state/runState';
import type { IRunSnapshot } from '../engine/types';

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
 * none. `undefined` while the reader is not ready: it calls `onLoaded` once it is, to read again.
 */
export type SavedRunReader = (
  raw: unknown,
  maxExecutionSteps: number,
  onLoaded: () => void
) => ISavedRun | null | undefined;
