/**
 * The one place the run state changes (docs/architecture.md#the-transaction): each transaction the
 * parts of the loop dispatch is applied (`RunState.apply`), recorded, told through the runner's signals
 * and, when it asks, saved. `WorkflowRunner` owns one and hands its `dispatch` to every part.
 */
import { errorMessage } from '../actions/registry';
import { type IMessage, msg } from '../messages';
import type { INotebookDriver } from '../ports/driver';
import { limitSavedRunState } from '../saved/savedRunLimits';
import { withoutSecrets } from '../saved/secrets';
import type { IRunSettings } from '../settings';
import type { IEffectsState } from '../state/effects';
import type { IFsmTransition } from '../state/fsm';
import { type IRecordedTransaction, TransactionRecord } from '../state/record';
import type { IAppliedTransaction, RunState } from '../state/runState';
import {
  type IRunTransaction,
  op,
  type RunOp,
  transaction
} from '../state/transaction';
import type { IPlannerService, IRunWarning } from '../types';
import { redactionTest } from '../variables';
import type { IBehaviorCounters } from './behavior';
import { countersKept } from './behaviorChanges';

export class TransactionDispatcher {
  constructor(options: TransactionDispatcher.IOptions) {
    this._options = options;
  }

  /** The transactions applied, oldest first (bounded). */
  get record(): readonly IRecordedTransaction[] {
    return this._record.entries;
  }

  /**
   * Applies `tx` at once and records it; tells its transitions and (once) its effects; saves when it
   * asks, and then (`show`, once) tells the new snapshot. Settles once the save is handed to the notebook.
   */
  dispatch(tx: IRunTransaction): Promise<void> {
    const { signals, state } = this._options;
    const applied = this._apply(tx);
    for (const transition of applied.transitions) {
      signals.transition(transition);
    }
    if (applied.effectsChanged) {
      signals.effects(state.effects.toJSON());
    }
    if (!tx.save) {
      if (tx.show) {
        signals.progress();
      }
      return Promise.resolve();
    }
    return this._save(tx.save).then(() => {
      if (tx.show) {
        signals.progress();
      }
    });
  }

  /**
   * The run state as it is saved, secrets left out. What changes outside transactions goes in first:
   * the planner service's state, and the counters of the behavior under way.
   */
  capture(): unknown {
    const { state, client, settings, behavior } = this._options;
    const ops: RunOp[] = [];
    if (client.saveState) {
      try {
        ops.push(op.set({ planner: client.saveState() }));
      } catch (error) {
        this._options.signals.warning(
          msg('plannerStateNotSaved', errorMessage(error)),
          'planner'
        );
      }
    }
    const open = behavior();
    if (open) {
      ops.push(...countersKept(state, open));
    }
    if (ops.length > 0) {
      this._apply(transaction('runner.capture', ops));
    }
    return limitSavedRunState(
      withoutSecrets(state.toJSON(), redactionTest(settings()))
    );
  }

  private _apply(tx: IRunTransaction): IAppliedTransaction {
    const applied = this._options.state.apply(tx);
    this._record.add(tx, applied.transitions);
    return applied;
  }

  /** A `checkpoint` (the run goes on) may be written to disk later; other saves are written now. */
  private async _save(when: 'checkpoint' | 'now'): Promise<void> {
    const saved = this.capture();
    try {
      await this._options.driver.saveRunState(
        saved,
        when === 'checkpoint' ? { checkpoint: true } : {}
      );
    } catch (error) {
      this._options.signals.warning(
        msg('runStateNotSaved', errorMessage(error)),
        'driver'
      );
    }
  }

  private readonly _options: TransactionDispatcher.IOptions;
  private readonly _record = new TransactionRecord();
}

export namespace TransactionDispatcher {
  export interface IOptions {
    state: RunState;
    driver: INotebookDriver;
    client: IPlannerService;
    settings: () => IRunSettings;
    /** The behavior under way, whose counters are saved with the run. */
    behavior: () => { id: string; counters: IBehaviorCounters } | null;
    /** The runner's signals. */
    signals: {
      transition(transition: IFsmTransition): void;
      effects(effects: IEffectsState): void;
      progress(): void;
      warning(message: IMessage, source: IRunWarning['source']): void;
    };
  }
}
