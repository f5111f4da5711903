/**
 * A run saved in the notebook (the runner's `ISavedRunState`) seen as a snapshot, so the sidebar can
 * show where a run stands before it is resumed, e.g. right after the notebook was opened.
 */
export { isSavedRunState } from '../engine/runState';
export type { ISavedRunState } from '../engine/runState';
export { snapshotFromSaved } from '../engine/snapshot';
