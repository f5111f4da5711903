import {
  acceptDialog,
  dismissDialog,
  waitForDialog
} from '@jupyterlab/testing';
import { nullTranslator } from '@jupyterlab/translation';
import type { IConnectionCheck } from '../../protocol';
import { showRunDialog } from '../dialogs';

const trans = nullTranslator.load('notebook_bcc');
const DOWN: IConnectionCheck = {
  ok: false,
  message:
    "The planner (the Jupyter server's relay) cannot be reached: connection refused. Start the planner, or set its URL in Settings > Notebook-BCC."
};

function open(checkPlanner: () => Promise<IConnectionCheck>) {
  return showRunDialog({
    notebookPath: 'work/analysis.ipynb',
    docManager: null,
    translator: nullTranslator,
    trans,
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
