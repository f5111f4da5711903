/**
 * The user's settings as the engine reads them. JupyterLab's composite settings are mapped onto
 * `IRunSettings` on every change, and runners read `current` through a getter, so a change applies to
 * the next request without a reload.
 */
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import { ISignal, Signal } from '@lumino/signaling';
import {
  DEFAULT_SETTINGS,
  IRunSettings,
  toRunSettings
} from '../engine/settings';

export { toRunSettings };

/** The current run settings, replaced whenever the user changes a setting. */
export class RunSettingsModel {
  get current(): IRunSettings {
    return this._current;
  }

  get changed(): ISignal<this, IRunSettings> {
    return this._changed;
  }

  update(composite: ReadonlyPartialJSONObject): void {
    this._current = toRunSettings(composite);
    this._changed.emit(this._current);
  }

  private _current: IRunSettings = { ...DEFAULT_SETTINGS };
  private _changed = new Signal<this, IRunSettings>(this);
}
