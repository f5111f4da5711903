/** The question before the LLM planner's first run: two answers, Enter takes the safe one. */
import {
  acceptDialog,
  dismissDialog,
  waitForDialog
} from '@jupyterlab/testing';
import { nullTranslator } from '@jupyterlab/translation';
import { askLlmCodeApproval } from '../llmApprovalQuestion';

const trans = nullTranslator.load('notebook_bcc');

/** The dialog, attached and filled in. */
async function shown(): Promise<Element> {
  await waitForDialog();
  await new Promise(resolve => setTimeout(resolve, 0));
  return document.querySelector('.jp-Dialog')!;
}

function button(label: string): HTMLButtonElement {
  return [
    ...document.querySelectorAll<HTMLButtonElement>('.jp-Dialog button')
  ].find(b => b.textContent === label)!;
}

describe('askLlmCodeApproval', () => {
  it('says what the model can reach, and Enter means asking before each step', async () => {
    const answer = askLlmCodeApproval(trans);
    const dialog = await shown();
    expect(dialog.querySelector('.jp-Dialog-header')?.textContent).toBe(
      "Should the model's code run without asking?"
    );
    expect(dialog.textContent).toContain(
      'waits for your approval whatever you answer'
    );
    await acceptDialog();
    expect(await answer).toBe('ask');
  });

  it('runs without asking when the user says so', async () => {
    const answer = askLlmCodeApproval(trans);
    await shown();
    button("Run the model's code without asking").click();
    expect(await answer).toBe('run');
  });

  it('answers nothing when closed', async () => {
    const answer = askLlmCodeApproval(trans);
    await shown();
    await dismissDialog();
    expect(await answer).toBeNull();
  });
});
