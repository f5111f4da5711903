/**
 * Building transactions: what a part of the loop wants changed in the run state, as data (CodeMirror
 * 6's discipline). The types are declared beside `RunState.apply`, the one writer (runState.ts); the
 * parts build transactions with `op` from what they read, and `WorkflowRunner` dispatches them.
 */
import type { CellsWrite } from './cells';
import type { EffectsWrite } from './effects';
import type { WorkflowEvent } from './fsm';
import {
  type ProgressReader,
  type ProgressWrite,
  WorkflowProgress
} from './progress';
import type { RewindWrite } from './rewind';
import type {
  Call,
  CellsArgs,
  EffectsArgs,
  IRunTransaction,
  ISavedRunState,
  JournalArgs,
  ProgressArgs,
  ProgressOp,
  RunChanges,
  RunOp
} from './runState';

export type {
  CellsOp,
  EffectsOp,
  IFsmOp,
  IRunTransaction,
  JournalOp,
  ProgressOp,
  RunFieldsOp,
  RunOp
} from './runState';

/** The operations of a transaction, by model: each builder returns one op. */
export const op = {
  set(fields: RunChanges): RunOp {
    return { model: 'run', op: 'set', fields };
  },
  reset(): RunOp {
    return { model: 'run', op: 'reset' };
  },
  restore(saved: ISavedRunState): RunOp {
    return { model: 'run', op: 'restore', saved };
  },
  fsm(event: WorkflowEvent, options: { ifAllowed?: boolean } = {}): RunOp {
    return options.ifAllowed
      ? { model: 'fsm', event, ifAllowed: true }
      : { model: 'fsm', event };
  },
  progress<K extends ProgressWrite>(
    name: K,
    ...args: ProgressArgs[K]
  ): Call<'progress', ProgressArgs, K> {
    return { model: 'progress', op: name, args };
  },
  effects<K extends EffectsWrite>(
    name: K,
    ...args: EffectsArgs[K]
  ): Call<'effects', EffectsArgs, K> {
    return { model: 'effects', op: name, args };
  },
  cells<K extends CellsWrite>(
    name: K,
    ...args: CellsArgs[K]
  ): Call<'cells', CellsArgs, K> {
    return { model: 'cells', op: name, args };
  },
  journal<K extends RewindWrite>(
    name: K,
    ...args: JournalArgs[K]
  ): Call<'journal', JournalArgs, K> {
    return { model: 'journal', op: name, args };
  }
};

/** A transaction of `ops` from `origin`. */
export function transaction(
  origin: string,
  ops: readonly RunOp[],
  options: Pick<IRunTransaction, 'show' | 'save'> = {}
): IRunTransaction {
  return { origin, ops, ...options };
}

/**
 * Progress operations gathered against a copy of the progress, so that each decision can read what the
 * operations before it did; the run state itself changes only when the transaction is applied.
 */
export class ProgressDraft {
  constructor(progress: ProgressReader) {
    this._copy = WorkflowProgress.fromJSON(progress.toJSON());
  }

  /** The operations so far, progress and others, in order. */
  readonly ops: RunOp[] = [];

  /** The progress as the operations so far leave it. */
  get progress(): ProgressReader {
    return this._copy;
  }

  /** A progress operation (`op.progress`): gathered, and applied to the copy. */
  apply(change: ProgressOp): void {
    this.ops.push(change);
    Reflect.apply(
      this._copy[change.op] as () => unknown,
      this._copy,
      change.args
    );
  }

  /** Operations of the other models, which the progress does not read. */
  push(...ops: RunOp[]): void {
    this.ops.push(...ops);
  }

  private readonly _copy: WorkflowProgress;
}
