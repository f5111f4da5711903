/**
 * What the parts of the loop are given by `WorkflowRunner`: the run state to read, the one way to
 * change its fields (`change`, which the runner writes), the runner's signals, and the run's services.
 */
import type { IEffectsState } from '../state/effects';
import type { INotebookDriver } from '../ports/driver';
import type { ActionRegistry } from '../actions/registry';
import type { IRunSettings } from '../settings';
import type { RunTrace } from '../trace';
import type {
  IActionApplied,
  IPlannerService,
  IRunError,
  IRunnerHooks,
  IRunWarning
} from '../types';
import type { RunControl } from './runControl';
import type { RunNotebook } from './runNotebook';
import type { RunChanges, RunState } from '../state/runState';

/** The runner's signals, emitted on its behalf. */
export interface IRunSignals {
  progress(): void;
  effects(effects: IEffectsState): void;
  error(error: IRunError): void;
  warning(warning: IRunWarning): void;
  actionApplied(event: IActionApplied): void;
}

export interface IRunHost {
  /** Read only: its fields change through `change`. */
  readonly state: Readonly<RunState>;
  readonly control: RunControl;
  readonly client: IPlannerService;
  readonly hooks: IRunnerHooks;
  readonly driver: INotebookDriver;
  readonly notebook: RunNotebook;
  readonly registry: ActionRegistry;
  readonly trace: RunTrace;
  readonly signals: IRunSignals;
  /** Read at every use, so changed settings apply at once. */
  settings(): IRunSettings;
  now(): Date;
  /** The one way to change the run state's fields: the runner writes them. */
  change(changes: RunChanges): void;
}
