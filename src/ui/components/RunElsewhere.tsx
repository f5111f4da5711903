import type { TranslationBundle } from '@jupyterlab/translation';
import { runIcon } from '@jupyterlab/ui-components';
import type { CommandRegistry } from '@lumino/commands';
import * as React from 'react';
import { CommandIDs, RunLockState, RunLockStatus } from '../../tokens';
import { CommandButton } from './CommandButton';

export interface IRunElsewhereProps {
  lock: RunLockState;
  /** The holder's lock expired (or it let go) since this copy was loaded. */
  canTakeOver: boolean;
  commands: CommandRegistry;
  trans: TranslationBundle;
}

/** The holder's run state in plain words. */
function describeHeld(
  status: RunLockStatus,
  trans: TranslationBundle
): string | null {
  if (!status.state) {
    return null;
  }
  if (status.paused) {
    return trans.__('Paused');
  }
  switch (status.state) {
    case 'WORKFLOW_COMPLETED':
      return trans.__('Completed');
    case 'ERROR':
      return trans.__('Stopped with an error');
    default:
      return trans.__('Running');
  }
}

/**
 * Another window runs this notebook: where its run stands (from the holder's heartbeat); once its lock
 * expired, Take over reloads the notebook and continues the run here.
 */
export function RunElsewhere(props: IRunElsewhereProps): JSX.Element | null {
  const { lock, commands, trans } = props;
  if (lock.kind === 'other') {
    const { state, stage, step, task } = lock.status;
    const described = describeHeld(lock.status, trans);
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
        {described ? (
          <div className="jp-bcc-elsewhere-state" data-state={state}>
            {described}
          </div>
        ) : null}
        {task ? (
          <div className="jp-bcc-elsewhere-task" title={task}>
            <span className="jp-bcc-label">{trans.__('Task:')}</span> {task}
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
