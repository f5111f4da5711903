/**
 * The dialog of a note for the planner (on a cell or a step): one text area, bounded, with Save, and
 * Remove when the note exists. Enter makes a new line; Ctrl+Enter (⌘+Enter) saves.
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import { MAX_NOTE_CHARS } from '../notebook/notes';
import { element } from './element';

class NoteDialogBody extends Widget implements Dialog.IBodyWidget<string> {
  constructor(about: string, text: string, trans: TranslationBundle) {
    super();
    this.addClass('jp-bcc-note-dialog');
    const id = `jp-bcc-note-${++NoteDialogBody._count}`;
    const label = element('label', 'jp-bcc-field-label', about);
    label.htmlFor = id;
    this._input = element('textarea', 'jp-mod-styled jp-bcc-note-input');
    this._input.id = id;
    this._input.rows = 4;
    this._input.maxLength = MAX_NOTE_CHARS;
    this._input.value = text;
    this._input.placeholder = trans.__(
      'e.g. use the median, not the mean; ignore the 2019 rows'
    );
    const hint = element(
      'p',
      'jp-bcc-hint',
      trans.__(
        'The planner reads it with its next request, above the defaults of its own plan. Ctrl+Enter saves.'
      )
    );
    this._input.addEventListener('keydown', event => {
      if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        // The dialog accepts on Enter sent to its own node (its default button: Save).
        this._input
          .closest('.jp-Dialog')
          ?.dispatchEvent(
            new KeyboardEvent('keydown', { key: 'Enter', bubbles: true })
          );
      }
    });
    this.node.append(label, this._input, hint);
  }

  getValue(): string {
    return this._input.value;
  }

  private _input: HTMLTextAreaElement;
  private static _count = 0;
}

export interface INoteDialogOptions {
  title: string;
  /** What the note is on, as the label of its text area. */
  about: string;
  /** The note as it is; empty for a new one. */
  text: string;
  trans: TranslationBundle;
}

/**
 * The note as the user leaves it: its text (empty when removed), or null when cancelled or unchanged.
 */
export async function showNoteDialog(
  options: INoteDialogOptions
): Promise<string | null> {
  const { trans, text } = options;
  const buttons = [
    Dialog.cancelButton({ label: trans.__('Cancel') }),
    ...(text
      ? [
          Dialog.warnButton({
            label: trans.__('Remove Note'),
            actions: ['remove']
          })
        ]
      : []),
    Dialog.okButton({ label: trans.__('Save Note') })
  ];
  const result = await showDialog({
    title: options.title,
    body: new NoteDialogBody(options.about, text, trans),
    focusNodeSelector: '.jp-bcc-note-input',
    defaultButton: buttons.length - 1,
    buttons
  });
  if (result.button.actions.includes('remove')) {
    return '';
  }
  if (!result.button.accept || result.value === null) {
    return null;
  }
  const value = result.value.trim();
  return value === text.trim() ? null : value;
}
