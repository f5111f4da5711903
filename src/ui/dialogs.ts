/**
 * The dialogs of a run besides the Run dialog (`runDialog.ts`) and the approval of a behavior's code
 * (`approvalDialog.ts`): stop (interrupt the kernel?), variables the planner lacks, and confirm a
 * workflow update.
 * Untrusted text (code, names from the planner) is only ever set as text content.
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import type { WorkflowTemplate } from '../protocol';
import { element } from './element';

/** Asks to confirm Stop; resolves null when cancelled. */
export async function showStopDialog(
  trans: TranslationBundle,
  label: string
): Promise<{ interruptKernel: boolean } | null> {
  const result = await showDialog({
    title: trans.__('Stop the workflow in %1?', label),
    body: trans.__(
      'The run stops after saving its progress; Resume continues it from the current step.'
    ),
    checkbox: {
      label: trans.__('Also interrupt the kernel (stops the running cell)'),
      checked: false
    },
    buttons: [
      Dialog.cancelButton({ label: trans.__('Cancel') }),
      Dialog.warnButton({ label: trans.__('Stop') })
    ]
  });
  if (!result.button.accept) {
    return null;
  }
  return { interruptKernel: result.isChecked === true };
}

/** The body of the Set Variables dialog: one text field per name the planner lacks. */
class VariablesDialogBody
  extends Widget
  implements Dialog.IBodyWidget<Record<string, string>>
{
  constructor(names: readonly string[], trans: TranslationBundle) {
    super();
    this.addClass('jp-bcc-variables-dialog');
    this.node.append(
      element(
        'p',
        'jp-bcc-hint',
        trans.__(
          'The planner needs these variables to go on. They are added to the run, and the failed step is asked again.'
        )
      )
    );
    for (const name of names) {
      const id = `jp-bcc-variable-${++VariablesDialogBody._count}`;
      const label = element('label', 'jp-bcc-field-label', name);
      label.htmlFor = id;
      const input = element('input', 'jp-mod-styled jp-bcc-variable-input');
      input.id = id;
      input.type = 'text';
      input.dataset.variable = name;
      this._inputs.push(input);
      this.node.append(label, input);
    }
  }

  /** The names given a value (the others stay unset). */
  getValue(): Record<string, string> {
    return Object.fromEntries(
      this._inputs
        .map(input => [input.dataset.variable ?? '', input.value.trim()])
        .filter(([name, value]) => name && value)
    );
  }

  protected onAfterAttach(): void {
    this._inputs[0]?.focus();
  }

  private _inputs: HTMLInputElement[] = [];
  private static _count = 0;
}

/** Asks for values of the variables the planner lacks; null when cancelled or none was given. */
export async function showVariablesDialog(
  names: readonly string[],
  trans: TranslationBundle,
  label: string
): Promise<Record<string, string> | null> {
  const result = await showDialog({
    title: trans.__('Variables for the planner in %1', label),
    body: new VariablesDialogBody(names, trans),
    focusNodeSelector: '.jp-bcc-variable-input',
    buttons: [
      Dialog.cancelButton({ label: trans.__('Cancel') }),
      Dialog.okButton({ label: trans.__('Set and Retry') })
    ]
  });
  if (!result.button.accept || !result.value) {
    return null;
  }
  return Object.keys(result.value).length > 0 ? result.value : null;
}

/**
 * Shows `dialog` until it is answered or `signal` aborts (the run stopped, its notebook closed): then it
 * is closed and resolves as dismissed.
 */
export async function launchUntil<T>(
  dialog: Dialog<T>,
  signal: AbortSignal | undefined
): Promise<Dialog.IResult<T>> {
  const dismiss = () => dialog.reject();
  if (signal?.aborted) {
    dialog.dispose();
    return { button: Dialog.cancelButton(), isChecked: null, value: null };
  }
  signal?.addEventListener('abort', dismiss, { once: true });
  try {
    return await dialog.launch();
  } finally {
    signal?.removeEventListener('abort', dismiss);
    dialog.dispose();
  }
}

/** A major workflow update from the planner: apply it, or keep the current workflow. */
export async function showWorkflowUpdateDialog(
  template: WorkflowTemplate,
  current: WorkflowTemplate | null,
  trans: TranslationBundle,
  label: string,
  signal?: AbortSignal
): Promise<boolean> {
  const body = new Widget();
  body.addClass('jp-bcc-workflow-update');
  const describe = (title: string, workflow: WorkflowTemplate | null) => {
    const section = element('section', 'jp-bcc-workflow-update-part');
    section.append(element('h3', 'jp-bcc-workflow-update-title', title));
    const list = element('ol', 'jp-bcc-workflow-update-stages');
    for (const stage of workflow?.stages ?? []) {
      const item = element('li', '', stage.name);
      const steps = element('ul', '');
      for (const step of stage.steps) {
        steps.append(element('li', '', step.name));
      }
      item.append(steps);
      list.append(item);
    }
    section.append(list);
    return section;
  };
  const intro = element(
    'p',
    'jp-bcc-workflow-update-intro',
    trans.__('The planner proposes a different workflow for this run.')
  );
  // It opens mid-run, maybe while the user types: the focus starts here, not on a button.
  intro.tabIndex = 0;
  body.node.append(
    intro,
    describe(trans.__('Proposed'), template),
    describe(trans.__('Current'), current)
  );
  const dialog = new Dialog<unknown>({
    title: trans.__('Update the workflow of %1?', label),
    body,
    buttons: [
      Dialog.cancelButton({ label: trans.__('Keep current') }),
      Dialog.okButton({ label: trans.__('Apply update') })
    ],
    // Enter keeps the current workflow; Escape (leaving a cell's edit mode) decides nothing.
    defaultButton: 0,
    focusNodeSelector: '.jp-bcc-workflow-update-intro',
    hasClose: false
  });
  return (await launchUntil(dialog, signal)).button.accept;
}
