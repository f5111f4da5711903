/** The status bar item: the active notebook's run state in plain words; a click opens the panel. */
import { TranslationBundle } from '@jupyterlab/translation';
import { ReactWidget } from '@jupyterlab/ui-components';
import { ISignal, Signal } from '@lumino/signaling';
import * as React from 'react';
import { bccIcon } from './icons';
import type { IRunModelRegistry } from '../tokens';
import { describeRun } from './present';

export class RunStatusItem extends ReactWidget {
  constructor(
    private _models: IRunModelRegistry,
    private _trans: TranslationBundle,
    private _open: () => void
  ) {
    super();
    this.addClass('jp-bcc-status-item');
    _models.currentChanged.connect(this._onChanged, this);
  }

  /** Shown only for a notebook with a run (live or saved). */
  get isActive(): boolean {
    const model = this._models.current?.model ?? null;
    return model !== null && model.source !== 'none';
  }

  get activeChanged(): ISignal<this, void> {
    return this._activeChanged;
  }

  protected render(): JSX.Element | null {
    const model = this._models.current?.model ?? null;
    if (!model) {
      return null;
    }
    // This copy's state is stale while another window runs the notebook (the panel says so too).
    const text =
      model.lockState.kind === 'other'
        ? this._trans.__('Running in another window')
        : describeRun(model.snapshot, this._trans, {
            awaitingApproval: model.awaitingApproval,
            finished: model.finished
          });
    const title = this._trans.__(
      'Workflow: %1 (click to open the panel)',
      text
    );
    return (
      <button
        type="button"
        className="jp-bcc-status-button"
        title={title}
        aria-label={title}
        onClick={this._open}
      >
        <bccIcon.react tag="span" elementSize="small" />
        <span className="jp-bcc-status-text">{text}</span>
      </button>
    );
  }

  private _onChanged(): void {
    const active = this.isActive;
    if (active !== this._wasActive) {
      this._wasActive = active;
      this._activeChanged.emit();
    }
    this.update();
  }

  private _wasActive = false;
  private _activeChanged = new Signal<this, void>(this);
}
