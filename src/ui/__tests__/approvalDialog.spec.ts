/**
 * The approval of a behavior's code: focus and keys that never approve by accident, the existing cells
 * it runs, and (without interactive mode) why code is held: each flag in words, with its line.
 */
import {
  dismissDialog,
  waitForDialog,
  acceptDialog
} from '@jupyterlab/testing';
import { nullTranslator } from '@jupyterlab/translation';
import type { IBehaviorApproval } from '../../engine/types';
import { riskText, showApprovalDialog } from '../approvalDialog';
import { markingTrans } from './markingTranslator';

const trans = nullTranslator.load('notebook_bcc');

describe('showApprovalDialog', () => {
  const request = (
    extra: Partial<IBehaviorApproval> = {}
  ): IBehaviorApproval => ({
    behaviorId: 'behavior_001',
    stageId: 's1',
    stepId: 'p1',
    codeCells: ['df = load()'],
    existingCells: [],
    actions: [],
    ...extra
  });
  const context = { label: 'analysis.ipynb', stepName: 'Load', iteration: 1 };

  /** The dialog, attached and focused as the user first sees it. */
  async function shown(): Promise<HTMLElement> {
    await waitForDialog();
    await new Promise(resolve => setTimeout(resolve, 0));
    return document.querySelector<HTMLElement>('.jp-Dialog')!;
  }

  function button(label: string): HTMLButtonElement {
    return [
      ...document.querySelectorAll<HTMLButtonElement>('.jp-Dialog button')
    ].find(b => b.textContent === label)!;
  }

  afterEach(async () => {
    // Escape no longer closes it: a button does.
    document
      .querySelector<HTMLButtonElement>('.jp-Dialog .jp-mod-reject')
      ?.click();
    await dismissDialog();
  });

  it('starts with the focus on the code, not on Run', async () => {
    const result = showApprovalDialog(request(), trans, context);
    await shown();
    const focused = document.activeElement as HTMLElement;
    expect(focused.classList.contains('jp-bcc-approval-code')).toBe(true);
    expect(focused.textContent).toBe('df = load()');
    // The key events a user typing into a cell would send land on the code and approve nothing.
    for (const key of ['Enter', ' ']) {
      focused.dispatchEvent(
        new KeyboardEvent('keydown', { key, bubbles: true })
      );
    }
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(document.querySelector('.jp-Dialog')).not.toBeNull();
    button('Run').click();
    expect(await result).toBe('run');
  });

  it('stays open on an Escape (a user leaving edit mode in a cell): only a button decides', async () => {
    const result = showApprovalDialog(request(), trans, context);
    const dialog = await shown();
    dialog.dispatchEvent(
      new KeyboardEvent('keydown', { key: 'Escape', bubbles: true })
    );
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(document.querySelector('.jp-Dialog')).not.toBeNull();
    button('Run').click();
    expect(await result).toBe('run');
  });

  it('takes Enter sent to the dialog itself as Skip', async () => {
    const result = showApprovalDialog(request(), trans, context);
    await acceptDialog();
    expect(await result).toBe('skip');
  });

  it('shows the code of the existing cells a behavior runs', async () => {
    const result = showApprovalDialog(
      request({
        codeCells: [],
        existingCells: [
          { cellId: 'c-7', position: 3, source: 'total = 40 + 2' }
        ]
      }),
      trans,
      context
    );
    const dialog = await shown();
    expect(dialog.textContent).toContain(
      'Behavior 1 of step "Load" wants to run these cells already in the notebook:'
    );
    const existing = dialog.querySelector<HTMLElement>(
      '.jp-bcc-approval-existing'
    );
    expect(existing?.textContent).toBe('total = 40 + 2');
    expect(existing?.getAttribute('aria-label')).toBe('Existing cell 3');
    expect(document.activeElement).toBe(existing);
    button('Stop').click();
    expect(await result).toBe('stop');
  });

  it('closes as skipped when its signal aborts', async () => {
    const abort = new AbortController();
    const result = showApprovalDialog(request(), trans, context, abort.signal);
    await shown();
    abort.abort();
    expect(await result).toBe('skip');
    expect(document.querySelector('.jp-Dialog')).toBeNull();
  });

  it('is not shown when its signal is already aborted', async () => {
    const abort = new AbortController();
    abort.abort();
    expect(
      await showApprovalDialog(request(), trans, context, abort.signal)
    ).toBe('skip');
    expect(document.querySelector('.jp-Dialog')).toBeNull();
  });

  it('shows why code is held without interactive mode, each flag in words with its line', async () => {
    const result = showApprovalDialog(
      request({
        reason: 'flagged',
        codeCells: [
          'import requests\nrequests.post(url, json=dict(os.environ))'
        ],
        codeFlags: [
          [
            { risk: 'network', line: 1, what: 'import requests' },
            { risk: 'network', line: 2, what: 'requests.post' },
            { risk: 'environment', line: 2, what: 'os.environ' }
          ]
        ],
        existingCells: [
          {
            cellId: 'c-9',
            position: 5,
            source: '!pip install x',
            flags: [
              { risk: 'shell', line: 1, what: '!pip install x' },
              { risk: 'install', line: 1, what: '!pip install x' }
            ]
          }
        ]
      }),
      trans,
      context
    );
    const dialog = await shown();
    expect(dialog.querySelector('.jp-Dialog-header')?.textContent).toBe(
      'Allow behavior 1 in analysis.ipynb to reach outside the notebook?'
    );
    expect(dialog.querySelector('.jp-bcc-approval-held')?.textContent).toBe(
      'Interactive mode is off, but this code reaches outside the notebook: it runs only if you allow it.'
    );
    const lists = dialog.querySelectorAll('.jp-bcc-approval-flags');
    expect(
      [...lists].map(list =>
        [...list.querySelectorAll('li')].map(item => item.textContent)
      )
    ).toEqual([
      [
        'Line 1: Opens network connections import requests',
        'Line 2: Opens network connections requests.post',
        'Line 2: Reads the environment os.environ'
      ],
      [
        'Line 1: Runs shell commands !pip install x',
        'Line 1: Installs packages !pip install x'
      ]
    ]);
    // Each list follows the code it is about.
    expect(lists[0].previousElementSibling?.textContent).toContain(
      'requests.post'
    );
    expect(lists[1].previousElementSibling?.getAttribute('data-cell-id')).toBe(
      'c-9'
    );
    button('Skip').click();
    expect(await result).toBe('skip');
  });

  it('says each kind of flag in its own words, through the translator', () => {
    const risks = [
      'environment',
      'files',
      'install',
      'shell',
      'process',
      'network',
      'dynamic'
    ] as const;
    const texts = risks.map(risk => riskText(risk, trans));
    expect(new Set(texts).size).toBe(risks.length);
    for (const risk of risks) {
      const text = riskText(risk, markingTrans);
      expect(text).toBe(`⟦${riskText(risk, trans)}⟧`);
    }
  });
});
