/**
 * What views ask of a run's rewind state, without the rewind log itself (which needs zod): kept apart so
 * the panel and the commands load at startup without the runtime (docs/architecture.md#lazy-loading).
 */

/** A rewind needs the loop idle or paused. */
export function canRewind(run: { running: boolean; paused: boolean }): boolean {
  return !run.running || run.paused;
}

/** A step's key in `IRewindView.redoSteps`. */
export function stepKey(stageId: string | null, stepId: string): string {
  return `${stageId ?? ''}/${stepId}`;
}
