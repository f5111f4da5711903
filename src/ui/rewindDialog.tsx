/**
 * The confirmation of a rewind (docs/architecture.md#rewind): which cells go, which stay because the
 * user edited them, which get their earlier text back, and whether the kernel restarts first.
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';
import type {
  IRewindCell,
  IRewindOptions,
  IRewindPlan
} from '../engine/state/rewind';

function CellList(props: {
  cells: IRewindCell[];
  className: string;
  trans: TranslationBundle;
}): JSX.Element {
  const { cells, trans } = props;
  return (
    <ul className={`jp-bcc-rewind-cells ${props.className}`}>
      {cells.map(cell => (
        <li key={cell.cellId} data-cell-id={cell.cellId}>
          <span className="jp-bcc-rewind-kind">
            {cell.kind === 'code' ? trans.__('code') : trans.__('text')}
          </span>
          <code className="jp-bcc-rewind-summary">
            {cell.summary || trans.__('(empty)')}
          </code>
          {cell.stepId ? (
            <span className="jp-bcc-rewind-step">{cell.stepId}</span>
          ) : null}
        </li>
      ))}
    </ul>
  );
}

export function RewindSummary(props: {
  plan: IRewindPlan;
  stepName: string;
  trans: TranslationBundle;
}): JSX.Element {
  const { plan, stepName, trans } = props;
  const intro =
    plan.target.kind === 'behavior'
      ? trans.__(
          'The run goes back to step “%1”, before its last behavior, and waits there, paused. Resume asks the planner again.',
          stepName
        )
      : trans.__(
          'The run goes back to the start of step “%1” and runs again from there.',
          stepName
        );
  return (
    <div className="jp-bcc-rewind">
      <p>{intro}</p>
      <h3 className="jp-bcc-rewind-heading">
        {trans._n(
          '%1 cell will be removed',
          '%1 cells will be removed',
          plan.remove.length
        )}
      </h3>
      {plan.remove.length > 0 ? (
        <CellList
          cells={plan.remove}
          className="jp-bcc-rewind-remove"
          trans={trans}
        />
      ) : null}
      {plan.keep.length > 0 ? (
        <>
          <h3 className="jp-bcc-rewind-heading">
            {trans._n(
              '%1 cell you edited is kept',
              '%1 cells you edited are kept',
              plan.keep.length
            )}
          </h3>
          <CellList
            cells={plan.keep}
            className="jp-bcc-rewind-keep"
            trans={trans}
          />
        </>
      ) : null}
      {plan.restore.length > 0 ? (
        <>
          <h3 className="jp-bcc-rewind-heading">
            {trans._n(
              '%1 cell gets its earlier text back',
              '%1 cells get their earlier text back',
              plan.restore.length
            )}
          </h3>
          <CellList
            cells={plan.restore}
            className="jp-bcc-rewind-restore"
            trans={trans}
          />
        </>
      ) : null}
      <p className="jp-bcc-rewind-untouched">
        {trans._n(
          'Every other cell stays as it is (%1 cell, yours included).',
          'Every other cell stays as it is (%1 cells, yours included).',
          plan.untouched
        )}
      </p>
    </div>
  );
}

/** Asks to confirm a rewind; resolves null when cancelled. */
export async function showRewindDialog(
  plan: IRewindPlan,
  trans: TranslationBundle,
  context: { label: string; stepName: string }
): Promise<IRewindOptions | null> {
  const undo = plan.target.kind === 'behavior';
  const result = await showDialog({
    title: undo
      ? trans.__('Undo the last behavior in %1?', context.label)
      : trans.__('Redo from step “%1”?', context.stepName),
    body: (
      <RewindSummary plan={plan} stepName={context.stepName} trans={trans} />
    ),
    checkbox: {
      label: trans.__('Restart the kernel and re-run the kept cells first'),
      caption: trans.__(
        'The kernel still holds what the removed cells made; a restart makes it match the notebook.'
      ),
      checked: !undo
    },
    buttons: [
      Dialog.cancelButton({ label: trans.__('Cancel') }),
      Dialog.warnButton({
        label: undo ? trans.__('Undo') : trans.__('Redo from here')
      })
    ]
  });
  if (!result.button.accept) {
    return null;
  }
  return { restartKernel: result.isChecked === true };
}
