/**
 * The dialogs of a run besides the Run dialog (`runDialog.ts`): stop (interrupt the kernel?), variables
 * the planner lacks, approve a behavior's code (interactive mode) and confirm a workflow update.
 * Untrusted text (code, names from the planner) is only ever set as text content.
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import type { WorkflowTemplate } from '../protocol';
import type { BehaviorDecision, IBehaviorApproval } from '../engine/types';
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
async function launchUntil<T>(
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

function codeBlock(code: string, label: string): HTMLPreElement {
  const pre = element('pre', 'jp-bcc-approval-code');
  pre.setAttribute('aria-label', label);
  pre.tabIndex = 0;
  pre.append(element('code', '', code));
  return pre;
}

/**
 * Interactive mode: shows a behavior's new code and the existing cells it runs; the user runs it, skips
 * the behavior, or stops. Run is neither the default button nor focused: an Enter or a Space meant for
 * a cell never approves code. Closed (as skipped) when `signal` aborts.
 */
export async function showApprovalDialog(
  request: IBehaviorApproval,
  trans: TranslationBundle,
  context: { label: string; stepName: string | null; iteration: number },
  signal?: AbortSignal
): Promise<BehaviorDecision> {
  const body = new Widget();
  body.addClass('jp-bcc-approval');
  const step = context.stepName ?? request.stepId ?? '?';
  const { codeCells, existingCells } = request;
  if (codeCells.length > 0) {
    body.node.append(
      element(
        'p',
        'jp-bcc-approval-intro',
        trans.__(
          'Behavior %1 of step "%2" wants to add and run this code:',
          context.iteration,
          step
        )
      )
    );
    codeCells.forEach((code, index) =>
      body.node.append(
        codeBlock(
          code,
          trans.__('Code cell %1 of %2', index + 1, codeCells.length)
        )
      )
    );
  }
  if (existingCells.length > 0) {
    body.node.append(
      element(
        'p',
        'jp-bcc-approval-intro',
        codeCells.length > 0
          ? trans.__('It also runs these cells already in the notebook:')
          : trans.__(
              'Behavior %1 of step "%2" wants to run these cells already in the notebook:',
              context.iteration,
              step
            )
      )
    );
    for (const cell of existingCells) {
      const pre = codeBlock(
        cell.source,
        trans.__('Existing cell %1', cell.cellId)
      );
      pre.classList.add('jp-bcc-approval-existing');
      pre.dataset.cellId = cell.cellId;
      body.node.append(pre);
    }
  }
  // A rewrite is shown as a diff of the cell, the fix editable (a chunk of its own, loaded when needed).
  const review = request.rewrites?.length
    ? await (
        await import('./rewriteReview')
      ).RewriteReview.create(request.rewrites, trans)
    : null;
  if (review) {
    body.node.append(
      element(
        'p',
        'jp-bcc-approval-intro',
        trans.__(
          'Behavior %1 of step "%2" wants to fix code that failed. Accept the fix as it is or after editing it, or reject it to keep the code as it is:',
          context.iteration,
          step
        )
      ),
      review.node
    );
  }
  if (codeCells.length === 0 && existingCells.length === 0 && !review) {
    body.node.append(
      element(
        'p',
        'jp-bcc-approval-intro',
        trans.__(
          'Behavior %1 of step "%2" asks to run cells that are gone or not the planner\'s to run: nothing of it will run.',
          context.iteration,
          step
        )
      )
    );
  }
  const stop = Dialog.warnButton({
    label: trans.__('Stop'),
    caption: trans.__('Stop the run'),
    actions: ['stop']
  });
  // Only fixes to review: accept or reject them.
  const fixesOnly = review !== null && codeCells.length === 0;
  const skip = Dialog.cancelButton({
    label: fixesOnly ? trans.__('Reject') : trans.__('Skip'),
    caption: fixesOnly
      ? trans.__(
          'Reject the fix: the cell keeps its code, and the planner is told'
        )
      : trans.__('Skip this behavior: nothing is added or run'),
    actions: ['skip']
  });
  const run = Dialog.okButton({
    label: fixesOnly ? trans.__('Accept') : trans.__('Run'),
    caption: fixesOnly
      ? trans.__('Accept the fix, with your edits, and run it')
      : codeCells.length
        ? trans.__('Add and run this code')
        : trans.__('Run these cells'),
    actions: ['run']
  });
  const dialog = new Dialog<unknown>({
    title: trans.__(
      'Approve behavior %1 in %2',
      context.iteration,
      context.label
    ),
    body,
    buttons: [stop, skip, run],
    // Enter sent to the dialog itself means Skip; the focus starts on the code, not on a button.
    defaultButton: 1,
    focusNodeSelector:
      '.jp-bcc-approval-code, .jp-bcc-rewrite-diff .cm-content',
    // It opens mid-run: an Escape meant to leave a cell's edit mode must not decide for the user.
    hasClose: false
  });
  const result = await launchUntil(dialog, signal);
  const edits = review?.edits() ?? {};
  review?.dispose();
  if (result.button.actions.includes('stop')) {
    return 'stop';
  }
  if (!result.button.accept || !result.button.actions.includes('run')) {
    return 'skip';
  }
  return Object.keys(edits).length > 0 ? { decision: 'run', edits } : 'run';
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
