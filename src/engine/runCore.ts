/**
 * What the parts of the run loop share: the run's state, its controls and services, and the runner's
 * signals as plain calls. The runner makes one; `behaviorRun`, `contextUpdate` and `requests` use it.
 */
import type { INotebookDriver } from './driver';
import type { IEffectsState } from './effects';
import { ActionRegistry, errorMessage } from './registry';
import { RunControl, RunStopped } from './runControl';
import type { RunState } from './runState';
import type { IRunSettings } from './settings';
import type {
  IActionApplied,
  ICellAdded,
  IPauseReason,
  IPlannerService,
  IRunnerHooks,
  IRunWarning
} from './types';

/** The runner's signals, emitted on its behalf. */
export interface IRunEvents {
  progress(): void;
  effects(effects: IEffectsState): void;
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

  warn(message: string, source: IRunWarning['source']): void {
    this.events.warning({ message, source });
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

  /** An action boundary: a requested pause takes effect here; the state is saved while paused. */
  pausePoint(): Promise<void> {
    const fsm = this.state.fsm;
    return this.control.pausePoint({
      onPause: async () => {
        fsm.dispatch('PAUSE');
        this.emitProgress();
        await this.saveState();
      },
      onResume: () => {
        // The user may have run cells while the run was paused.
        this.state.variablesDirty = true;
        fsm.dispatch('RESUME');
        this.emitProgress();
      }
    });
  }

  /** Collects the kernel's variables when they may have changed. */
  async refreshVariables(): Promise<void> {
    const state = this.state;
    if (!state.variablesDirty) {
      return;
    }
    try {
      state.kernelVariables = await this.control.untilStopped(
        this.driver.collectVariables()
      );
    } catch (error) {
      if (error instanceof RunStopped) {
        throw error;
      }
      this.warn(
        `Kernel variables could not be collected: ${errorMessage(error)}`,
        'driver'
      );
    }
    state.variablesDirty = false;
    if (state.progress.observeVariables(state.presentVariables())) {
      this.emitProgress();
    }
  }

  async saveState(): Promise<void> {
    try {
      await this.driver.saveRunState(this.state.toJSON());
    } catch (error) {
      this.warn(
        `The run state could not be saved in the notebook: ${errorMessage(error)}`,
        'driver'
      );
    }
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
  }
}
