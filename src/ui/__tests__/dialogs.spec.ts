import {
  acceptDialog,
  dismissDialog,
  waitForDialog
} from '@jupyterlab/testing';
import { Notification } from '@jupyterlab/apputils';
import { nullTranslator } from '@jupyterlab/translation';
import type { IConnectionCheck } from '../../protocol';
import { msg, say } from '../../protocol/messages';
import { showVariablesDialog, showWorkflowUpdateDialog } from '../dialogs';
import { showRunDialog } from '../runDialog';
import { markingTrans } from './markingTranslator';

const trans = nullTranslator.load('notebook_bcc');
const DOWN: IConnectionCheck = {
  ok: false,
  message:
    "The planner (the Jupyter server's relay) cannot be reached: connection refused. Start the planner, or set its URL in Settings > Notebook-BCC."
};

function open(checkPlanner: () => Promise<IConnectionCheck>, bundle = trans) {
  return showRunDialog({
    notebookPath: 'work/analysis.ipynb',
    docManager: null,
    translator: nullTranslator,
    trans: bundle,
    label: 'analysis.ipynb',
    checkPlanner
  });
}

async function typeTask(text: string): Promise<void> {
  await waitForDialog();
  const task = document.querySelector<HTMLTextAreaElement>(
    '.jp-Dialog .jp-bcc-task-input'
  )!;
  task.value = text;
  task.dispatchEvent(new Event('input'));
}

function okButton(): HTMLButtonElement {
  return document.querySelector<HTMLButtonElement>(
    '.jp-Dialog .jp-mod-accept'
  )!;
}

describe('showRunDialog: the planner check', () => {
  it('runs at once when the planner answers', async () => {
    const check = jest.fn(async () => ({ ok: true, message: 'answers' }));
    const result = open(check);
    await typeTask('What drives prices?');
    await acceptDialog();
    expect(await result).toEqual({
      task: 'What drives prices?',
      dataFiles: [],
      stepMode: false
    });
    expect(check).toHaveBeenCalledTimes(1);
  });

  it('says that it checks the planner while the check runs (up to 10 s), and not after', async () => {
    let answer: (check: IConnectionCheck) => void = () => undefined;
    const check = jest.fn(
      () => new Promise<IConnectionCheck>(resolve => (answer = resolve))
    );
    const result = open(check);
    await typeTask('What drives prices?');
    await acceptDialog();
    await new Promise(resolve => setTimeout(resolve, 0));
    const checking = () =>
      Notification.manager.notifications.filter(
        n => n.message === 'Checking the planner for analysis.ipynb…'
      );
    expect(checking()).toHaveLength(1);
    expect(checking()[0].type).toBe('in-progress');
    answer({ ok: true, message: 'answers' });
    await result;
    expect(checking()).toHaveLength(0);
  });

  it('keeps the task and says what to do while the planner is down, then retries', async () => {
    const check = jest
      .fn<Promise<IConnectionCheck>, []>()
      .mockResolvedValueOnce(DOWN)
      .mockResolvedValueOnce({ ok: true, message: 'answers' });
    const result = open(check);
    await typeTask('What drives prices?');
    await acceptDialog();
    await waitForDialog();
    await new Promise(resolve => setTimeout(resolve, 0));
    const alert = document.querySelector('.jp-Dialog .jp-bcc-planner-error');
    expect(alert?.textContent).toContain(
      'Start the planner, or set its URL in Settings > Notebook-BCC.'
    );
    expect(
      document.querySelector<HTMLTextAreaElement>(
        '.jp-Dialog .jp-bcc-task-input'
      )?.value
    ).toBe('What drives prices?');
    expect(okButton().textContent).toBe('Retry');
    await acceptDialog();
    expect((await result)?.task).toBe('What drives prices?');
    expect(check).toHaveBeenCalledTimes(2);
  });

  it("says why in the user's language: the check's sentences translated, the cause as it is", async () => {
    const relay = 'http://lab.test/notebook-bcc/relay';
    const result = open(
      async () => ({
        ok: false,
        ...say(
          'connectionUnreachable',
          msg('relayLabel', relay),
          msg('relayUnreachable', `GET ${relay}/`, 'Connection refused')
        )
      }),
      markingTrans
    );
    await typeTask('What drives prices?');
    await acceptDialog();
    await waitForDialog();
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(
      document.querySelector('.jp-Dialog .jp-bcc-planner-error')?.textContent
    ).toBe(
      `⟦The planner is not ready. ⟦The planner (⟦the Jupyter server's relay (${relay})⟧) cannot be reached: ⟦GET ${relay}/ failed: the Jupyter server could not reach the planner: Connection refused⟧. Start the planner, or set its URL in Settings > Notebook-BCC.⟧⟧`
    );
    await dismissDialog();
    expect(await result).toBeNull();
  });

  it('can be cancelled while the planner is down', async () => {
    const result = open(async () => DOWN);
    await typeTask('What drives prices?');
    await acceptDialog();
    await waitForDialog();
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(
      document.querySelector('.jp-Dialog .jp-bcc-planner-error')
    ).not.toBeNull();
    await dismissDialog();
    expect(await result).toBeNull();
  });
});

describe('showWorkflowUpdateDialog', () => {
  const template = (name: string) => ({
    stages: [{ id: 's1', name, steps: [{ id: 'p1', name: 'Load' }] }]
  });

  function button(label: string): HTMLButtonElement {
    return [
      ...document.querySelectorAll<HTMLButtonElement>('.jp-Dialog button')
    ].find(b => b.textContent === label)!;
  }

  it('opens (mid-run, maybe while the user types) focused on the proposal, not on Apply; Enter keeps the current workflow', async () => {
    const result = showWorkflowUpdateDialog(
      template('Proposed stage') as never,
      template('Current stage') as never,
      trans,
      'analysis.ipynb'
    );
    await waitForDialog();
    await new Promise(resolve => setTimeout(resolve, 0));
    const focused = document.activeElement as HTMLElement;
    expect(focused.tagName).not.toBe('BUTTON');
    expect(focused.closest('.jp-Dialog')).not.toBeNull();
    const dialog = document.querySelector<HTMLElement>('.jp-Dialog')!;
    dialog.dispatchEvent(
      new KeyboardEvent('keydown', { key: 'Escape', bubbles: true })
    );
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(document.querySelector('.jp-Dialog')).not.toBeNull();
    dialog.dispatchEvent(
      new KeyboardEvent('keydown', { key: 'Enter', bubbles: true })
    );
    expect(await result).toBe(false);
  });

  it('applies the update only on its button', async () => {
    const result = showWorkflowUpdateDialog(
      template('Proposed stage') as never,
      null,
      trans,
      'analysis.ipynb'
    );
    await waitForDialog();
    button('Apply update').click();
    expect(await result).toBe(true);
  });
});

describe('showVariablesDialog', () => {
  it('asks a value for each variable the planner lacks, focused on the first, and gives the filled ones', async () => {
    const result = showVariablesDialog(
      ['target_variable', 'problem_name'],
      trans,
      'analysis.ipynb'
    );
    await waitForDialog();
    const inputs = [
      ...document.querySelectorAll<HTMLInputElement>(
        '.jp-Dialog .jp-bcc-variable-input'
      )
    ];
    expect(inputs.map(input => input.dataset.variable)).toEqual([
      'target_variable',
      'problem_name'
    ]);
    expect(document.activeElement).toBe(inputs[0]);
    inputs[0].value = ' revenue ';
    await acceptDialog();
    expect(await result).toEqual({ target_variable: 'revenue' });
  });

  it('gives nothing when cancelled or left empty', async () => {
    const cancelled = showVariablesDialog(
      ['target_variable'],
      trans,
      'a.ipynb'
    );
    await dismissDialog();
    expect(await cancelled).toBeNull();
    const empty = showVariablesDialog(['target_variable'], trans, 'a.ipynb');
    await acceptDialog();
    expect(await empty).toBeNull();
  });
});
