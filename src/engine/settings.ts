/**
 * Run settings (spec README item 12). The plugin maps JupyterLab settings onto this; the engine reads
 * only this object, so a changed setting applies to the next request without a reload.
 */
export interface IRunSettings {
  /** Planner base URL, e.g. `http://localhost:28600`. */
  baseUrl: string;
  /** Optional bearer token; empty = none. */
  token: string;
  /** Optional notebook id sent to the planner; empty = the notebook's path. */
  notebookId: string;
  /** 0 = unlimited. Counted in behaviors. */
  maxExecutionSteps: number;
  /** Confirm before each behavior's code runs. */
  interactive: boolean;
  /** `reflection` = planning first (default); `generation` = generating first. */
  startMode: 'reflection' | 'generation';
  /** Per exec, in seconds; 0 = none. */
  executionTimeout: number;
  /** Upper bound of a planning/generating request body, in characters. */
  maxContextLength: number;
  /** Bound of effects history (and other histories). */
  maxHistoryItems: number;
  /** truncateOutput limit, in characters. */
  effectTruncation: number;
  /** Accept major workflow updates without asking. */
  autoAcceptWorkflowUpdates: boolean;
  /** Scroll to new cells as they appear. */
  followNewCells: boolean;
  /** Timeout for the first byte of a response, in seconds. */
  firstByteTimeout: number;
  /** Timeout for a stream that stops sending, in seconds. */
  stallTimeout: number;
}

export const DEFAULT_SETTINGS: IRunSettings = {
  baseUrl: 'http://localhost:28600',
  token: '',
  notebookId: '',
  maxExecutionSteps: 0,
  interactive: false,
  startMode: 'reflection',
  executionTimeout: 0,
  maxContextLength: 18600,
  maxHistoryItems: 50,
  effectTruncation: 16000,
  autoAcceptWorkflowUpdates: false,
  followNewCells: true,
  firstByteTimeout: 60,
  stallTimeout: 60
};
