export * from './actions/builtins';
export * from './run/cells';
export * from './contextFilter';
export * from './ports/driver';
export * from './effects';
export * from './fsm';
export * from './messages';
export * from './observation';
export * from './progress';
export {
  artifactId,
  behaviorIdFor,
  type IProgressState,
  type IStageAssessments,
  MAX_ASSESSMENT_CHARS
} from './progressState';
export * from './actions/registry';
export * from './run/runner';
export * from './run/runState';
export { RunStopped } from './run/runControl';
export * from './settings';
export * from './snapshot';
export * from './trace';
export * from './types';
