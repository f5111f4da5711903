/**
 * What the parts of the loop are given by `WorkflowRunner`: the run state to read, the one way to
 * change it (`dispatch`, a transaction the runner applies), the runner's signals, and the services.
 */
import type { INotebookDriver } from '../ports/driver';
import type { ActionRegistry } from '../actions/registry';
import type { IRunSettings } from '../settings';
import type { RunStateView } from '../state/runState';
import type { IRunTransaction } from '../state/transaction';
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

/**
 * The runner's signals that no transaction carries, emitted on its behalf. (A transaction's own
 * transitions, effects and `show` are told by the runner as it applies it.)
 */
export interface IRunSignals {
  /** The loop's pause or queue changed (`RunControl`, the behavior's queue): not the run state. */
  progress(): void;
  error(error: IRunError): void;
  warning(warning: IRunWarning): void;
  actionApplied(event: IActionApplied): void;
}

export interface IRunHost {
  /** Read only: it changes through `dispatch`. */
  readonly state: RunStateView;
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
  /**
   * The one way to change the run state: the runner applies `transaction` at once, records it, tells
   * its transitions, effects and (`show`) the new snapshot, and saves when it asks; the promise settles
   * once that save is handed to the notebook.
   */
  dispatch(transaction: IRunTransaction): Promise<void>;
}
