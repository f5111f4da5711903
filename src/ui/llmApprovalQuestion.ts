/**
 * The question before the LLM planner's first run (docs/using.md#approval): should the model's code run
 * without asking, or wait for approval of each step's code? Loaded at startup: small, no zod.
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import { element } from './element';

/** `ask` or `run`; null when the user closed the question (the run does not start). */
export async function askLlmCodeApproval(
  trans: TranslationBundle
): Promise<'ask' | 'run' | null> {
  const body = new Widget();
  body.addClass('jp-bcc-llm-approval');
  body.node.append(
    element(
      'p',
      '',
      trans.__(
        "The LLM planner writes code from your task and your data, and that code runs in this notebook's kernel with your rights: it can read your files and reach whatever the kernel reaches. A data file can carry instructions the model may follow."
      )
    ),
    element(
      'p',
      '',
      trans.__(
        'Code that reaches outside the notebook (the environment, files outside its folder, package installs, shell commands, processes, the network) waits for your approval whatever you answer.'
      )
    ),
    element(
      'p',
      'jp-bcc-hint',
      trans.__(
        "Change it later in Settings > Notebook-BCC (LLM planner: approve the model's code)."
      )
    )
  );
  const ask = Dialog.okButton({
    label: trans.__("Ask me before each step's code runs"),
    actions: ['ask']
  });
  const run = Dialog.warnButton({
    label: trans.__("Run the model's code without asking"),
    actions: ['run']
  });
  const result = await showDialog({
    title: trans.__("Should the model's code run without asking?"),
    body,
    buttons: [run, ask],
    defaultButton: 1
  });
  const { actions } = result.button;
  return actions.includes('ask')
    ? 'ask'
    : actions.includes('run')
      ? 'run'
      : null;
}
