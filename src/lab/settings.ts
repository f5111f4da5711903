/**
 * The user's settings as the engine reads them. JupyterLab's composite settings are mapped onto
 * `IRunSettings` on every change, and runners read `current` through a getter, so a change applies to
 * the next request without a reload.
 */
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import { ISignal, Signal } from '@lumino/signaling';
import { DEFAULT_SETTINGS, IRunSettings } from '../engine/settings';

function text(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback;
}

function count(value: unknown, fallback: number, min = 0): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= min
    ? value
    : fallback;
}

function flag(value: unknown, fallback: boolean): boolean {
  return typeof value === 'boolean' ? value : fallback;
}

/** Composite settings (schema/plugin.json) -> engine settings; anything invalid keeps its default. */
export function toRunSettings(
  composite: ReadonlyPartialJSONObject
): IRunSettings {
  const d = DEFAULT_SETTINGS;
  const baseUrl = text(composite.baseUrl, d.baseUrl).trim().replace(/\/+$/, '');
  return {
    baseUrl: baseUrl || d.baseUrl,
    token: text(composite.token, d.token).trim(),
    notebookId: text(composite.notebookId, d.notebookId).trim(),
    maxExecutionSteps: Math.floor(
      count(composite.maxExecutionSteps, d.maxExecutionSteps)
    ),
    interactive: flag(composite.interactive, d.interactive),
    startMode:
      composite.startMode === 'generation' ||
      composite.startMode === 'reflection'
        ? composite.startMode
        : d.startMode,
    executionTimeout: count(composite.executionTimeout, d.executionTimeout),
    maxContextLength: count(composite.maxContextLength, d.maxContextLength, 1),
    maxHistoryItems: count(composite.maxHistoryItems, d.maxHistoryItems, 1),
    effectTruncation: count(composite.effectTruncation, d.effectTruncation, 1),
    autoAcceptWorkflowUpdates: flag(
      composite.autoAcceptWorkflowUpdates,
      d.autoAcceptWorkflowUpdates
    ),
    followNewCells: flag(composite.followNewCells, d.followNewCells),
    firstByteTimeout: count(composite.firstByteTimeout, d.firstByteTimeout, 1),
    stallTimeout: count(composite.stallTimeout, d.stallTimeout, 1)
  };
}

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
