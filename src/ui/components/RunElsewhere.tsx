import type { TranslationBundle } from '@jupyterlab/translation';
import { runIcon } from '@jupyterlab/ui-components';
import type { CommandRegistry } from '@lumino/commands';
import * as React from 'react';
import type { RunLockState } from '../../lab/runLock';
import { CommandIDs } from '../../tokens';
import { CommandButton } from './CommandButton';

export interface IRunElsewhereProps {
  lock: RunLockState;
  /** The holder's lock expired (or it let go) since this copy was loaded. */
  canTakeOver: boolean;
  commands: CommandRegistry;
  trans: TranslationBundle;
}

/**
 * Another window runs this notebook: where its run stands (from the holder's heartbeat); once its lock
 * expired, Take over reloads the notebook and continues the run here.
 */
export function RunElsewhere(props: IRunElsewhereProps): JSX.Element | null {
  const { lock, commands, trans } = props;
  if (lock.kind === 'other') {
    const { state, stage, step } = lock.status;
    return (
      <div
        className="jp-bcc-elsewhere"
        role="status"
        aria-live="polite"
        data-lock="other"
      >
        <div className="jp-bcc-elsewhere-title">
          {trans.__('Running in another window')}
        </div>
        {stage || step ? (
          <div className="jp-bcc-elsewhere-where">
            {[stage, step].filter(Boolean).join(' › ')}
          </div>
        ) : null}
        {state ? (
          <div className="jp-bcc-elsewhere-state" data-state={state}>
            {state}
          </div>
        ) : null}
        <div className="jp-bcc-hint">
          {lock.samePage
            ? trans.__(
                'Another view of this notebook runs the workflow; control it there.'
              )
            : trans.__(
                'Run and Resume are off here while that window runs. If it closes without stopping, you can take the run over once it stops answering.'
              )}
        </div>
      </div>
    );
  }
  if (!props.canTakeOver) {
    return null;
  }
  return (
    <div className="jp-bcc-elsewhere" role="status" data-lock="stale">
      <div className="jp-bcc-elsewhere-title">
        {trans.__('The run in another window ended or stopped answering')}
      </div>
      <div className="jp-bcc-hint">
        {trans.__(
          'Take over reloads this notebook from disk (with that run’s cells and progress) and continues the run here.'
        )}
      </div>
      <CommandButton
        commands={commands}
        id={CommandIDs.takeOver}
        label={trans.__('Take over')}
        icon={runIcon}
        enabled
        primary
      />
    </div>
  );
}
