export * from './actions/builtins';
export * from './state/cells';
export * from './contextFilter';
export * from './ports/driver';
export * from './state/effects';
export * from './state/fsm';
export * from './messages';
export * from './observation';
export * from './state/progress';
export {
  artifactId,
  behaviorIdFor,
  type IProgressState,
  type IStageAssessments,
  MAX_ASSESSMENT_CHARS
} from './state/progressState';
export * from './actions/registry';
export * from './run/runner';
export * from './state/runState';
export { RunStopped } from './run/runControl';
export * from './settings';
export * from './snapshot';
export * from './trace';
export * from './types';
