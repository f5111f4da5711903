import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';
import type { IRewindRecord } from '../../engine/state/rewind';

/** What the panel says after a rewind. */
export function describeRewind(
  record: IRewindRecord,
  trans: TranslationBundle,
  stepName: string = record.stepId ?? ''
): string {
  const parts = [
    record.kind === 'undo_behavior'
      ? trans.__('Undid the last behavior of step %1.', stepName)
      : trans.__('Redone from step %1.', stepName),
    trans._n('%1 cell removed', '%1 cells removed', record.removed)
  ];
  if (record.kept > 0) {
    parts.push(
      trans._n('%1 edited cell kept', '%1 edited cells kept', record.kept)
    );
  }
  if (record.restored > 0) {
    parts.push(
      trans._n('%1 cell restored', '%1 cells restored', record.restored)
    );
  }
  if (record.kernelRestarted) {
    parts.push(
      trans._n(
        'kernel restarted, %1 cell re-run',
        'kernel restarted, %1 cells re-run',
        record.rerun
      )
    );
  }
  const text = `${parts[0]} ${parts.slice(1).join(', ')}.`;
  if (!record.rerunError) {
    return text;
  }
  // Without a restart, the error says why the kernel asked to restart was not.
  return record.kernelRestarted
    ? `${text} ${trans.__('Re-running stopped: %1', record.rerunError)}`
    : `${text} ${trans.__('The kernel was not restarted: %1', record.rerunError)}`;
}

/** The latest rewind, in plain words. */
export function RewindNote(props: {
  record: IRewindRecord;
  /** The step's name (the record keeps its id). */
  stepName?: string;
  trans: TranslationBundle;
}): JSX.Element {
  return (
    <div
      className="jp-bcc-rewind-note"
      role="status"
      data-kind={props.record.kind}
    >
      {describeRewind(props.record, props.trans, props.stepName)}
    </div>
  );
}
