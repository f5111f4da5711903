/**
 * What the parts of the run loop share: the run's state, its controls and services, and the runner's
 * signals as plain calls. The runner makes one; `behaviorRun`, `contextUpdate` and `requests` use it.
 */
import { isRecord } from '../protocol';
import { redactedPatterns, redactionTest } from './variables';
import { closeThinkingCell, markThinkingPaused } from './actions';
import { closeInterruptedBehavior } from './behaviorRun';
import type { INotebookDriver } from './driver';
import type { IEffectsState } from './effects';
import { type IMessage, msg, reported, say } from './messages';
import { ActionRegistry, errorMessage } from './registry';
import { RunControl, RunStopped } from './runControl';
import type { RunState } from './runState';
import type { IRunSettings } from './settings';
import type { RunTrace } from './trace';
import type {
  IActionApplied,
  ICellAdded,
  IPauseReason,
  IPlannerService,
  IRunError,
  IRunFinished,
  IRunnerHooks,
  IRunWarning
} from './types';
import { limitSavedRunState } from './savedRunLimits';

/** The runner's signals, emitted on its behalf. */
export interface IRunEvents {
  progress(): void;
  effects(effects: IEffectsState): void;
  error(error: IRunError): void;
  warning(warning: IRunWarning): void;
  cellAdded(event: ICellAdded): void;
  actionApplied(event: IActionApplied): void;
}

export class RunCore {
  constructor(options: RunCore.IOptions) {
    this.state = options.state;
    this.driver = options.driver;
    this.client = options.client;
    this.hooks = options.hooks;
    this.registry = options.registry;
    this.settings = options.settings;
    this.now = options.now;
    this.events = options.events;
    this.trace = options.trace;
    this.trace.variableTypes = () => this.state.kernelVariableTypes;
  }

  readonly state: RunState;
  readonly control = new RunControl();
  readonly driver: INotebookDriver;
  readonly client: IPlannerService;
  readonly hooks: IRunnerHooks;
  readonly registry: ActionRegistry;
  /** Read at every use, so changed settings apply at once. */
  readonly settings: () => IRunSettings;
  readonly now: () => Date;
  readonly events: IRunEvents;
  readonly trace: RunTrace;

  warn(message: string | IMessage, source: IRunWarning['source']): void {
    this.events.warning({ ...reported(message), source });
  }

  /** An effect of the running behavior (the first one moves the previous behavior's to history). */
  addEffect(text: string): void {
    if (this.state.behavior) {
      this.rotateEffects();
    }
    this.state.effects.add(text);
    this.effectsChanged();
  }

  /** The first effect of a behavior moves the previous behavior's effects to history. */
  rotateEffects(): void {
    const behavior = this.state.behavior;
    if (behavior && !behavior.rotated) {
      behavior.rotated = true;
      this.state.effects.rotate();
      this.effectsChanged();
    }
  }

  effectsChanged(): void {
    this.events.effects(this.state.effects.toJSON());
  }

  emitProgress(): void {
    this.events.progress();
  }

  requestPause(reason: IPauseReason): void {
    this.control.requestPause(reason);
    this.emitProgress();
  }

  /**
   * An action boundary: a requested pause takes effect here. The save that records PAUSED comes
   * before anything shows the run paused: until it is written the run is "pausing", so the notebook
   * file says PAUSED whenever the panel does.
   */
  async pausePoint(): Promise<void> {
    const control = this.control;
    if (!control.pauseRequested || control.stopRequested) {
      return;
    }
    const fsm = this.state.fsm;
    fsm.dispatch('PAUSE');
    // The file and the screen say the same: the thinking cell says paused in the save that records it.
    await this.thinkingPaused(true);
    await this.saveState();
    let paused = false;
    await control.pausePoint({
      onPause: async () => {
        paused = true;
        this.emitProgress();
      },
      onResume: () => {
        // The user may have run cells, or restarted the kernel, while the run was paused.
        this.state.variablesDirty = true;
        this.state.variablesBeforePause = Object.keys(
          this.state.kernelVariableTypes
        );
        fsm.dispatch('RESUME');
        this.emitProgress();
      }
    });
    if (!paused) {
      // Stopped or resumed while the pause was being saved: the run never showed paused.
      control.throwIfStopped();
      fsm.dispatch('RESUME');
    }
    await this.thinkingPaused(false);
    this.emitProgress();
  }

  /** The notebook's live thinking cell says paused while the run is. */
  private async thinkingPaused(paused: boolean): Promise<void> {
    await markThinkingPaused(this.driver, this.state.cells, paused);
  }

  /**
   * Collects the kernel's variables when they may have changed. In interactive mode only code the user
   * approved is a reason to evaluate anything in the kernel (docs/protocol.md#the-loop).
   */
  async refreshVariables(): Promise<void> {
    const state = this.state;
    if (
      !state.variablesDirty ||
      (this.settings().interactive && !state.codeRanSinceCollection)
    ) {
      return;
    }
    try {
      state.setKernelVariables(
        await this.control.untilStopped(
          this.driver.collectVariables(redactedPatterns(this.settings()))
        )
      );
    } catch (error) {
      if (error instanceof RunStopped) {
        throw error;
      }
      this.warn(msg('variablesNotCollected', errorMessage(error)), 'driver');
    }
    state.variablesDirty = false;
    state.codeRanSinceCollection = false;
    const before = state.variablesBeforePause;
    state.variablesBeforePause = null;
    const gone = (before ?? []).filter(
      name => !(name in state.kernelVariableTypes)
    );
    if (gone.length > 0) {
      this.warn(msg('kernelVariablesGone', gone.join(', ')), 'engine');
    }
    if (state.progress.observeVariables(state.presentVariables())) {
      this.emitProgress();
    }
  }

  /** Closes the open thinking cell, if any; a failure is a warning, never the end of the run. */
  async closeThinking(): Promise<void> {
    if (!this.state.cells.openThinkingCellId) {
      return;
    }
    try {
      await closeThinkingCell(this.driver, this.state.cells, this.now());
    } catch (error) {
      this.warn(msg('thinkingNotClosed', errorMessage(error)), 'driver');
    }
  }

  /** Records the planner's dialect once it is known (in the state, the snapshot and the trace). */
  observeDialect(): void {
    const dialect = this.client.dialect ?? null;
    if (dialect === null || dialect === this.state.plannerDialect) {
      return;
    }
    this.state.plannerDialect = dialect;
    this.trace.dialect(dialect);
    this.emitProgress();
  }

  /** The run state as it is saved, the planner service's state included. */
  captureState(): unknown {
    if (this.client.saveState) {
      try {
        this.state.planner = this.client.saveState();
      } catch (error) {
        this.warn(msg('plannerStateNotSaved', errorMessage(error)), 'planner');
      }
    }
    const saved = this.state.toJSON();
    // A secret-looking value (one the user typed for the planner, say) is not written into the notebook,
    // nor any copy of it a rewind checkpoint keeps: on resume the planner asks for it again.
    const secret = redactionTest(this.settings());
    const withoutSecrets = (variables: Record<string, unknown>) =>
      Object.fromEntries(
        Object.entries(variables).filter(([name]) => !secret(name))
      );
    // The planner service's state is its own, but a dialect may keep the server's echo of the variables
    // there (v1 echoes its whole `state`): every `variables` map in it is filtered the same way.
    const withoutSecretMaps = (value: unknown): unknown =>
      Array.isArray(value)
        ? value.map(withoutSecretMaps)
        : isRecord(value)
          ? Object.fromEntries(
              Object.entries(value).map(([key, item]) => [
                key,
                key === 'variables' && isRecord(item)
                  ? withoutSecrets(item)
                  : withoutSecretMaps(item)
              ])
            )
          : value;
    saved.contextVariables = withoutSecrets(saved.contextVariables);
    if (saved.planner !== undefined) {
      saved.planner = withoutSecretMaps(saved.planner);
    }
    if (saved.rewind) {
      saved.rewind.checkpoints = saved.rewind.checkpoints.map(checkpoint => ({
        ...checkpoint,
        contextVariables: withoutSecrets(checkpoint.contextVariables),
        ...(checkpoint.planner !== undefined
          ? { planner: withoutSecretMaps(checkpoint.planner) }
          : {})
      }));
    }
    return limitSavedRunState(saved);
  }

  /** A `checkpoint` (the run goes on) may be written to disk later; other saves are written now. */
  async saveState(options: { checkpoint?: boolean } = {}): Promise<void> {
    const state = this.captureState();
    try {
      await this.driver.saveRunState(state, options);
    } catch (error) {
      this.warn(msg('runStateNotSaved', errorMessage(error)), 'driver');
    }
  }

  // Ends of a loop

  stopForMaxSteps(max: number): Promise<IRunFinished> {
    const text = msg('maxSteps', this.state.behaviorsRun, max);
    this.warn(text, 'engine');
    return this.settle({
      reason: 'max_steps',
      ...say(text.id, ...text.params)
    });
  }

  settleStopped(): Promise<IRunFinished> {
    return this.settle({
      reason: 'stopped',
      ...say('runStopped')
    });
  }

  /** Leaves a consistent, saved, resumable state: the current step is planned again on resume. */
  async settle(finished: IRunFinished): Promise<IRunFinished> {
    const state = this.state;
    const leaving = this.control.leavingNotebook;
    if (leaving) {
      this.driver.holdSaves(true);
    } else {
      await this.closeThinking();
    }
    if (state.behavior) {
      closeInterruptedBehavior(
        this,
        finished.reason === 'stopped' ? 'stopped' : 'interrupted'
      );
    }
    if (state.phase !== 'done') {
      state.phase = 'plan';
    }
    state.retry = null;
    state.error = null;
    this.control.clearPause();
    if (state.fsm.can('CANCEL')) {
      state.fsm.dispatch('CANCEL');
    }
    if (!leaving) {
      await this.saveState();
    }
    return finished;
  }

  async fail(error: IRunError): Promise<IRunFinished> {
    await this.closeThinking();
    this.state.error = error;
    if (this.state.fsm.can('FAIL')) {
      this.state.fsm.dispatch('FAIL');
    }
    this.events.error({ ...error });
    await this.saveState();
    return { reason: 'error', message: error.message, text: error.text };
  }

  async complete(): Promise<IRunFinished> {
    await this.closeThinking();
    await this.saveState();
    return {
      reason: 'completed',
      ...say('workflowComplete')
    };
  }
}

export namespace RunCore {
  export interface IOptions {
    state: RunState;
    driver: INotebookDriver;
    client: IPlannerService;
    hooks: IRunnerHooks;
    registry: ActionRegistry;
    settings: () => IRunSettings;
    now: () => Date;
    events: IRunEvents;
    trace: RunTrace;
  }
}
