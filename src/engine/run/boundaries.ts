/**
 * What the loop does at its boundaries (between actions, requests and phases): a requested pause takes
 * effect, the kernel's variables are collected again, the thinking cell is closed, warnings and effects
 * are told. What each changes in the run state is decided by the functions below, as transactions.
 */
import { type IMessage, msg, reported } from '../messages';
import { errorMessage } from '../actions/registry';
import type { IKernelVariables } from '../ports/driver';
import { kernelVariableChanges, type RunStateView } from '../state/runState';
import { op, type RunOp, transaction } from '../state/transaction';
import type { IPauseReason, IRunWarning } from '../types';
import { redactedPatterns } from '../variables';
import type { IRunHost } from './host';
import { RunStopped } from './runControl';

/** The first effect of a behavior moves the previous behavior's effects to history. */
export function rotateEffects(state: RunStateView): RunOp[] {
  const behavior = state.behavior;
  return behavior && !behavior.rotated
    ? [
        op.set({ behavior: { ...behavior, rotated: true } }),
        op.effects('rotate')
      ]
    : [];
}

/** An effect of the running behavior (the first one moves the previous behavior's to history). */
export function addEffect(state: RunStateView, text: string): RunOp[] {
  return [...rotateEffects(state), op.effects('add', text)];
}

/** The loop resumes after a pause: the user may have run cells, or restarted the kernel, meanwhile. */
export function resumed(state: RunStateView): RunOp[] {
  return [
    op.set({
      variablesDirty: true,
      variablesBeforePause: Object.keys(state.kernelVariableTypes)
    }),
    op.fsm('RESUME')
  ];
}

/**
 * The kernel's variables were collected (`collected`; null when asking failed): the values kept, the
 * flags cleared, outputs tracking told; and the names a pause lost, for a warning.
 */
export function variablesCollected(
  state: RunStateView,
  collected: IKernelVariables | null
): { ops: RunOp[]; show: boolean; gone: string[] } {
  const kernel = collected ? kernelVariableChanges(collected) : null;
  const types = kernel?.kernelVariableTypes ?? state.kernelVariableTypes;
  const present = Object.keys(types);
  const gone = (state.variablesBeforePause ?? []).filter(
    name => !(name in types)
  );
  const show = state.progress.observes(present);
  return {
    ops: [
      ...(kernel ? [op.set(kernel)] : []),
      op.set({
        variablesDirty: false,
        codeRanSinceCollection: false,
        variablesBeforePause: null
      }),
      ...(show ? [op.progress('observeVariables', present)] : [])
    ],
    show,
    gone
  };
}

/** What the boundaries read and tell: no action registry, no hooks, no clock. */
export type IBoundariesHost = Pick<
  IRunHost,
  | 'state'
  | 'dispatch'
  | 'signals'
  | 'control'
  | 'notebook'
  | 'driver'
  | 'settings'
  | 'client'
  | 'trace'
>;

export class RunBoundaries {
  constructor(private readonly _host: IBoundariesHost) {}

  warn(message: string | IMessage, source: IRunWarning['source']): void {
    this._host.signals.warning({ ...reported(message), source });
  }

  /** An effect of the running behavior (the first one moves the previous behavior's to history). */
  addEffect(text: string): void {
    const { state, dispatch } = this._host;
    void dispatch(transaction('boundaries.effect', addEffect(state, text)));
  }

  /** The first effect of a behavior moves the previous behavior's effects to history. */
  rotateEffects(): void {
    const ops = rotateEffects(this._host.state);
    if (ops.length > 0) {
      void this._host.dispatch(transaction('boundaries.rotateEffects', ops));
    }
  }

  requestPause(reason: IPauseReason): void {
    this._host.control.requestPause(reason);
    this._host.signals.progress();
  }

  /**
   * An action boundary: a requested pause takes effect here. The save that records PAUSED comes
   * before anything shows the run paused: until it is written the run is "pausing", so the notebook
   * file says PAUSED whenever the panel does.
   */
  async pausePoint(): Promise<void> {
    const { control, state, notebook, signals, dispatch } = this._host;
    if (!control.pauseRequested || control.stopRequested) {
      return;
    }
    await dispatch(transaction('boundaries.pause', [op.fsm('PAUSE')]));
    // The file and the screen say the same: the thinking cell says paused in the save that records it.
    await notebook.markThinkingPaused(true);
    await dispatch(transaction('boundaries.paused', [], { save: 'now' }));
    let paused = false;
    await control.pausePoint({
      onPause: async () => {
        paused = true;
        signals.progress();
      },
      onResume: () => {
        void dispatch(
          transaction('boundaries.resume', resumed(state), { show: true })
        );
      }
    });
    if (!paused) {
      // Stopped or resumed while the pause was being saved: the run never showed paused.
      control.throwIfStopped();
      await dispatch(transaction('boundaries.resume', [op.fsm('RESUME')]));
    }
    await notebook.markThinkingPaused(false);
    signals.progress();
  }

  /**
   * Collects the kernel's variables when they may have changed. In interactive mode only code the user
   * approved is a reason to evaluate anything in the kernel (docs/protocol.md#the-loop).
   */
  async refreshVariables(): Promise<void> {
    const { state, control, driver, settings } = this._host;
    if (
      !state.variablesDirty ||
      (settings().interactive && !state.codeRanSinceCollection)
    ) {
      return;
    }
    let collected: IKernelVariables | null = null;
    try {
      collected = await control.untilStopped(
        driver.collectVariables(redactedPatterns(settings()))
      );
    } catch (error) {
      if (error instanceof RunStopped) {
        throw error;
      }
      this.warn(msg('variablesNotCollected', errorMessage(error)), 'driver');
    }
    const { ops, show, gone } = variablesCollected(state, collected);
    if (gone.length > 0) {
      this.warn(msg('kernelVariablesGone', gone.join(', ')), 'engine');
    }
    await this._host.dispatch(
      transaction('boundaries.variablesCollected', ops, { show })
    );
  }

  /** Closes the open thinking cell, if any; a failure is a warning, never the end of the run. */
  async closeThinking(): Promise<void> {
    try {
      await this._host.notebook.closeThinking();
    } catch (error) {
      this.warn(msg('thinkingNotClosed', errorMessage(error)), 'driver');
    }
  }

  /** Records the planner's dialect once it is known (in the state, the snapshot and the trace). */
  observeDialect(): void {
    const { client, state, trace, dispatch } = this._host;
    const dialect = client.dialect ?? null;
    if (dialect === null || dialect === state.plannerDialect) {
      return;
    }
    trace.dialect(dialect);
    void dispatch(
      transaction('boundaries.dialect', [op.set({ plannerDialect: dialect })], {
        show: true
      })
    );
  }
}
