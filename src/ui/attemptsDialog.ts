/**
 * The attempts of rewritten cells (`rewrite_cell`): each cell's code now, then its earlier attempts,
 * newest first, each with its error, when it was replaced and its traceback folded; one of them can be
 * put back. Code and errors are planner and kernel text: only ever set as text content.
 */
import { Dialog } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import type { ICellAttempt } from '../engine/ports/attempts';
import type { ICellAttemptsView } from '../notebook/attempts';
import { element } from './element';

/** The attempt the user chose to put back into its cell. */
export interface IRestoreChoice {
  cellId: string;
  /** Its index in the cell's attempts, oldest first. */
  index: number;
}

function codeBlock(code: string, label: string): HTMLPreElement {
  const pre = element('pre', 'jp-bcc-attempt-code');
  pre.setAttribute('aria-label', label);
  pre.tabIndex = 0;
  pre.append(element('code', '', code));
  return pre;
}

function when(at: string): string {
  const date = new Date(at);
  return Number.isNaN(date.getTime()) ? '' : date.toLocaleString();
}

class AttemptsBody
  extends Widget
  implements Dialog.IBodyWidget<IRestoreChoice | null>
{
  constructor(
    cells: readonly ICellAttemptsView[],
    private readonly _trans: TranslationBundle,
    private readonly _chosen: () => void
  ) {
    super();
    this.addClass('jp-bcc-attempts');
    const trans = _trans;
    for (const cell of cells) {
      const section = element('section', 'jp-bcc-attempts-cell');
      section.dataset.cellId = cell.cellId;
      section.append(
        element(
          'h3',
          'jp-bcc-attempts-title',
          trans.__(
            'Cell %1 of the notebook: the code it holds now',
            cell.position
          )
        ),
        codeBlock(cell.code, trans.__('The code of cell %1 now', cell.position))
      );
      const list = element('ol', 'jp-bcc-attempts-list');
      list.reversed = true;
      cell.attempts
        .map((attempt, index) => ({ attempt, index }))
        .reverse()
        .forEach(({ attempt, index }) =>
          list.append(this._attempt(cell, attempt, index))
        );
      section.append(list);
      this.node.append(section);
    }
  }

  getValue(): IRestoreChoice | null {
    return this._choice;
  }

  private _attempt(
    cell: ICellAttemptsView,
    attempt: ICellAttempt,
    index: number
  ): HTMLLIElement {
    const trans = this._trans;
    const item = element('li', 'jp-bcc-attempt');
    item.dataset.index = String(index);
    const by =
      attempt.by === 'user'
        ? trans.__('replaced when you restored another attempt')
        : trans.__("replaced by the planner's fix");
    const heading = element('div', 'jp-bcc-attempt-heading');
    heading.append(
      element('span', 'jp-bcc-attempt-name', trans.__('Attempt %1', index + 1)),
      element(
        'span',
        'jp-bcc-attempt-when',
        [when(attempt.at), by].filter(Boolean).join(' · ')
      )
    );
    const restore = element('button', 'jp-mod-styled jp-bcc-attempt-restore');
    restore.type = 'button';
    restore.textContent = trans.__('Restore');
    restore.title = trans.__(
      'Put this code back into the cell; the code it holds now becomes an attempt'
    );
    restore.addEventListener('click', () => {
      this._choice = { cellId: cell.cellId, index };
      this._chosen();
    });
    heading.append(restore);
    item.append(heading);
    item.append(
      element(
        'div',
        attempt.error ? 'jp-bcc-attempt-error' : 'jp-bcc-attempt-ok',
        attempt.error ?? trans.__('It raised no error.')
      )
    );
    item.append(
      codeBlock(attempt.code, trans.__('The code of attempt %1', index + 1))
    );
    if (attempt.traceback) {
      const details = element('details', 'jp-bcc-attempt-traceback');
      details.append(
        element('summary', '', trans.__('Traceback')),
        element('pre', '', attempt.traceback)
      );
      item.append(details);
    }
    return item;
  }

  private _choice: IRestoreChoice | null = null;
}

/** Shows the attempts of `cells`; resolves with the attempt to restore, or null when closed. */
export async function showAttemptsDialog(
  cells: readonly ICellAttemptsView[],
  trans: TranslationBundle,
  title: string
): Promise<IRestoreChoice | null> {
  let dialog: Dialog<IRestoreChoice | null> | null = null;
  const body = new AttemptsBody(cells, trans, () => dialog?.resolve(0));
  dialog = new Dialog<IRestoreChoice | null>({
    title,
    body,
    buttons: [Dialog.cancelButton({ label: trans.__('Close') })],
    focusNodeSelector: '.jp-bcc-attempt-code'
  });
  dialog.addClass('jp-bcc-attempts-dialog');
  try {
    await dialog.launch();
    // Closed by a Restore button (a dialog's value is read only for an accepting button).
    return body.getValue();
  } finally {
    dialog.dispose();
  }
}
