/**
 * The approval of a behavior's code (docs/using.md#approval): in interactive mode, or because its code
 * reaches outside the notebook (the flags of `engine/codeRisk.ts`, shown in words under each code
 * block). Untrusted text (code, what was flagged) is only ever set as text content.
 */
import { Dialog } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import type { CodeRisk, ICodeFlag } from '../engine/codeRisk';
import type { BehaviorDecision, IBehaviorApproval } from '../engine/types';
import { launchUntil } from './dialogs';
import { element } from './element';
import type { RewriteReview } from './rewriteReview';

/** What a flag means, in the user's language. */
export function riskText(risk: CodeRisk, trans: TranslationBundle): string {
  switch (risk) {
    case 'environment':
      return trans.__('Reads the environment');
    case 'files':
      return trans.__('Reads or writes files outside the working folder');
    case 'install':
      return trans.__('Installs packages');
    case 'shell':
      return trans.__('Runs shell commands');
    case 'process':
      return trans.__('Starts processes');
    case 'network':
      return trans.__('Opens network connections');
    case 'dynamic':
      return trans.__(
        'Runs code built at run time, or shows HTML or JavaScript in the page'
      );
  }
}

/** The flags of one code block, one item each: "Line 2: Reads the environment (os.environ)". */
function flagList(
  flags: readonly ICodeFlag[],
  trans: TranslationBundle
): HTMLUListElement | null {
  if (flags.length === 0) {
    return null;
  }
  const list = element('ul', 'jp-bcc-approval-flags');
  list.setAttribute('aria-label', trans.__('What this code reaches outside'));
  for (const flag of flags) {
    const item = element(
      'li',
      'jp-bcc-approval-flag',
      trans.__('Line %1: %2', flag.line, riskText(flag.risk, trans))
    );
    item.dataset.risk = flag.risk;
    item.append(' ', element('code', '', flag.what));
    list.append(item);
  }
  return list;
}

function codeBlock(code: string, label: string): HTMLPreElement {
  const pre = element('pre', 'jp-bcc-approval-code');
  pre.setAttribute('aria-label', label);
  pre.tabIndex = 0;
  pre.append(element('code', '', code));
  return pre;
}

function intro(text: string): HTMLParagraphElement {
  return element('p', 'jp-bcc-approval-intro', text);
}

/** The dialog's text and code blocks, in order; `review` the diffs of the cells it rewrites. */
function approvalBody(
  request: IBehaviorApproval,
  trans: TranslationBundle,
  context: { stepName: string | null; iteration: number },
  review: RewriteReview | null
): Widget {
  const body = new Widget();
  body.addClass('jp-bcc-approval');
  const step = context.stepName ?? request.stepId ?? '?';
  const { codeCells, existingCells } = request;
  const flagged = request.reason === 'flagged';
  if (flagged) {
    body.node.append(
      element(
        'p',
        'jp-bcc-approval-held',
        trans.__(
          'Interactive mode is off, but this code reaches outside the notebook: it runs only if you allow it.'
        )
      )
    );
  }
  if (codeCells.length > 0) {
    body.node.append(
      intro(
        trans.__(
          'Behavior %1 of step "%2" wants to add and run this code:',
          context.iteration,
          step
        )
      )
    );
    codeCells.forEach((code, index) => {
      body.node.append(
        codeBlock(
          code,
          trans.__('Code cell %1 of %2', index + 1, codeCells.length)
        )
      );
      const flags = flagList(request.codeFlags?.[index] ?? [], trans);
      if (flags) {
        body.node.append(flags);
      }
    });
  }
  if (existingCells.length > 0) {
    body.node.append(
      intro(
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
        cell.position === null
          ? trans.__('An existing cell')
          : trans.__('Existing cell %1', cell.position)
      );
      pre.classList.add('jp-bcc-approval-existing');
      pre.dataset.cellId = cell.cellId;
      body.node.append(pre);
      const flags = flagList(cell.flags ?? [], trans);
      if (flags) {
        body.node.append(flags);
      }
    }
  }
  if (review) {
    body.node.append(
      intro(
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
      intro(
        trans.__(
          'Behavior %1 of step "%2" asks to run cells that are gone or not the planner\'s to run: nothing of it will run.',
          context.iteration,
          step
        )
      )
    );
  }
  return body;
}

/**
 * Shows a behavior's new code and the existing cells it runs, with what each reaches outside the
 * notebook; the user runs it, skips the behavior, or stops. Run is neither the default button nor
 * focused: an Enter or a Space meant for a cell never approves code. Closed (as skipped) when `signal`
 * aborts.
 */
export async function showApprovalDialog(
  request: IBehaviorApproval,
  trans: TranslationBundle,
  context: { label: string; stepName: string | null; iteration: number },
  signal?: AbortSignal
): Promise<BehaviorDecision> {
  const { codeCells } = request;
  const flagged = request.reason === 'flagged';
  // A rewrite is shown as a diff of the cell, the fix editable, with what the fix reaches outside (a
  // chunk of its own, loaded when needed).
  const review = request.rewrites?.length
    ? await (
        await import('./rewriteReview')
      ).RewriteReview.create(request.rewrites, trans, rewrite =>
        flagList(rewrite.flags ?? [], trans)
      )
    : null;
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
    title: flagged
      ? trans.__(
          'Allow behavior %1 in %2 to reach outside the notebook?',
          context.iteration,
          context.label
        )
      : trans.__('Approve behavior %1 in %2', context.iteration, context.label),
    body: approvalBody(request, trans, context, review),
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
