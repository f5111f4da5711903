/**
 * What the loop does at its boundaries (between actions, requests and phases): a requested pause takes
 * effect, the kernel's variables are collected again, the run is saved, the thinking cell is closed,
 * warnings and effects are told. It changes the run's fields only through the runner (`IRunHost`).
 */
import { type IMessage, msg, reported } from '../messages';
import { errorMessage } from '../actions/registry';
import { limitSavedRunState } from '../saved/savedRunLimits';
import type { IPauseReason, IRunWarning } from '../types';
import { redactedPatterns, redactionTest } from '../variables';
import type { IRunHost } from './host';
import { RunStopped } from './runControl';
import { withoutSecrets } from '../saved/secrets';
import { kernelVariableChanges } from '../state/runState';

/** What the boundaries read and tell: no action registry, no hooks, no clock. */
export type IBoundariesHost = Pick<
  IRunHost,
  | 'state'
  | 'change'
  | 'signals'
  | 'control'
  | 'notebook'
  | 'driver'
  | 'settings'
  | 'client'
  | 'trace'
>;

export class RunBoundaries {
  constructor(
    private readonly _host: IBoundariesHost,
    /** Brings the open behavior's counters into the state before it is saved. */
    private readonly _beforeSave: () => void
  ) {}

  warn(message: string | IMessage, source: IRunWarning['source']): void {
    this._host.signals.warning({ ...reported(message), source });
  }

  /** An effect of the running behavior (the first one moves the previous behavior's to history). */
  addEffect(text: string): void {
    const { state, signals } = this._host;
    if (state.behavior) {
      this.rotateEffects();
    }
    state.effects.add(text);
    signals.effects(state.effects.toJSON());
  }

  /** The first effect of a behavior moves the previous behavior's effects to history. */
  rotateEffects(): void {
    const { state, signals } = this._host;
    const behavior = state.behavior;
    if (behavior && !behavior.rotated) {
      this._host.change({ behavior: { ...behavior, rotated: true } });
      state.effects.rotate();
      signals.effects(state.effects.toJSON());
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
    const { control, state, notebook, signals } = this._host;
    if (!control.pauseRequested || control.stopRequested) {
      return;
    }
    const fsm = state.fsm;
    fsm.dispatch('PAUSE');
    // The file and the screen say the same: the thinking cell says paused in the save that records it.
    await notebook.markThinkingPaused(true);
    await this.saveState();
    let paused = false;
    await control.pausePoint({
      onPause: async () => {
        paused = true;
        signals.progress();
      },
      onResume: () => {
        // The user may have run cells, or restarted the kernel, while the run was paused.
        this._host.change({
          variablesDirty: true,
          variablesBeforePause: Object.keys(state.kernelVariableTypes)
        });
        fsm.dispatch('RESUME');
        signals.progress();
      }
    });
    if (!paused) {
      // Stopped or resumed while the pause was being saved: the run never showed paused.
      control.throwIfStopped();
      fsm.dispatch('RESUME');
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
    try {
      const collected = await control.untilStopped(
        driver.collectVariables(redactedPatterns(settings()))
      );
      this._host.change(kernelVariableChanges(collected));
    } catch (error) {
      if (error instanceof RunStopped) {
        throw error;
      }
      this.warn(msg('variablesNotCollected', errorMessage(error)), 'driver');
    }
    const before = state.variablesBeforePause;
    this._host.change({
      variablesDirty: false,
      codeRanSinceCollection: false,
      variablesBeforePause: null
    });
    const gone = (before ?? []).filter(
      name => !(name in state.kernelVariableTypes)
    );
    if (gone.length > 0) {
      this.warn(msg('kernelVariablesGone', gone.join(', ')), 'engine');
    }
    if (state.progress.observeVariables(state.presentVariables())) {
      this._host.signals.progress();
    }
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
    const { client, state, trace, signals } = this._host;
    const dialect = client.dialect ?? null;
    if (dialect === null || dialect === state.plannerDialect) {
      return;
    }
    this._host.change({ plannerDialect: dialect });
    trace.dialect(dialect);
    signals.progress();
  }

  /** The run state as it is saved, the planner service's state included, secrets left out. */
  captureState(): unknown {
    const { client, state, settings } = this._host;
    if (client.saveState) {
      try {
        this._host.change({ planner: client.saveState() });
      } catch (error) {
        this.warn(msg('plannerStateNotSaved', errorMessage(error)), 'planner');
      }
    }
    this._beforeSave();
    return limitSavedRunState(
      withoutSecrets(state.toJSON(), redactionTest(settings()))
    );
  }

  /** A `checkpoint` (the run goes on) may be written to disk later; other saves are written now. */
  async saveState(options: { checkpoint?: boolean } = {}): Promise<void> {
    const saved = this.captureState();
    try {
      await this._host.driver.saveRunState(saved, options);
    } catch (error) {
      this.warn(msg('runStateNotSaved', errorMessage(error)), 'driver');
    }
  }
}
