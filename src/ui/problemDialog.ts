/**
 * The dialog of a run that could not start because of its planner: what failed and why in one sentence,
 * the actions that may fix it as buttons, and the technical chain folded under "Details". Untrusted text
 * (a cause from the network, a URL) is only ever set as text content.
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import {
  IPlannerProblem,
  PlannerProblemAction,
  problemActionLabel
} from './problem';

/** The summary and the folded details, as the dialog and the panel show them. */
export function problemNodes(
  problem: IPlannerProblem,
  trans: TranslationBundle
): HTMLElement[] {
  const summary = document.createElement('p');
  summary.className = 'jp-bcc-problem-summary';
  summary.textContent = problem.summary;
  if (problem.details === problem.summary) {
    return [summary];
  }
  const details = document.createElement('details');
  details.className = 'jp-bcc-problem-details';
  const label = document.createElement('summary');
  label.textContent = trans.__('Details');
  const text = document.createElement('pre');
  text.textContent = problem.details;
  details.append(label, text);
  return [summary, details];
}

/** Resolves with the action the user picked, or null when they closed the dialog. */
export async function showPlannerProblemDialog(
  problem: IPlannerProblem,
  trans: TranslationBundle,
  options: {
    title: string;
    /** The actions offered (a subset of `problem.actions`, in its order). */
    actions?: readonly PlannerProblemAction[];
  }
): Promise<PlannerProblemAction | null> {
  const body = new Widget();
  body.addClass('jp-bcc-problem');
  body.node.append(...problemNodes(problem, trans));
  const actions = options.actions ?? problem.actions;
  const buttons = [
    Dialog.cancelButton({ label: trans.__('Close') }),
    ...actions.map(action =>
      action === 'retry'
        ? Dialog.okButton({
            label: problemActionLabel(action, trans),
            actions: [action]
          })
        : // Secondary: only Retry is drawn as the main action.
          Dialog.createButton({
            label: problemActionLabel(action, trans),
            accept: false,
            actions: [action]
          })
    )
  ];
  const result = await showDialog({
    title: options.title,
    body,
    buttons,
    defaultButton: buttons.length - 1
  });
  const picked = actions.find(action => result.button.actions.includes(action));
  return picked ?? null;
}
