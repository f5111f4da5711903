export * from './common';
export * from './dialect';
export * from './registry';
export * from './detect';
export * from './selector';
export * from './xml';
export * from './bcc/answers';
export { BccAdapter } from './bcc/adapter';
export { DEFAULT_BCC_IDLE_GOALS } from './bcc/plan';
export type { IBccOptions } from './bcc/plan';
export { V1Adapter } from './v1/adapter';
export type { IV1Settings } from './v1';
export {
  fullStepIndex,
  missingVariableNames,
  V1_ENTRY_STAGE_ID,
  V1_ENTRY_STEP_ID
} from './v1/state';
export type { IV1Options, IV1SavedState } from './v1/state';
