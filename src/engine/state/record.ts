/**
 * The record of the transactions a runner applied in this session, newest last and bounded: what
 * changed the run, in order, and which part asked (docs/architecture.md#the-transaction).
 */
import type { IFsmTransition } from './fsm';
import type { IRunTransaction } from './transaction';

/** Transactions kept; the oldest go first. */
export const MAX_RECORDED_TRANSACTIONS = 500;

/** One applied transaction. */
export interface IRecordedTransaction extends IRunTransaction {
  /** Increasing over the runner's life. */
  readonly seq: number;
  /** The state machine's transitions it made. */
  readonly transitions: readonly IFsmTransition[];
}

export class TransactionRecord {
  /** The transactions kept, oldest first. */
  get entries(): readonly IRecordedTransaction[] {
    return this._entries;
  }

  add(
    transaction: IRunTransaction,
    transitions: readonly IFsmTransition[]
  ): IRecordedTransaction {
    const entry = { ...transaction, seq: this._nextSeq++, transitions };
    this._entries.push(entry);
    if (this._entries.length > MAX_RECORDED_TRANSACTIONS) {
      this._entries.splice(0, this._entries.length - MAX_RECORDED_TRANSACTIONS);
    }
    return entry;
  }

  private _entries: IRecordedTransaction[] = [];
  private _nextSeq = 1;
}
