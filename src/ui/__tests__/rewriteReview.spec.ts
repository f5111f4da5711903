/**
 * A rewrite in the approval dialog: the cell's code against the fix as a unified diff
 * (`@codemirror/merge`), accepted, rejected, or edited then accepted.
 */
import { dismissDialog, waitForDialog } from '@jupyterlab/testing';
import { nullTranslator } from '@jupyterlab/translation';
import { EditorView } from '@codemirror/view';
import type { IBehaviorApproval, IRewriteReview } from '../../engine/types';
import { showApprovalDialog } from '../approvalDialog';
import { RewriteReview } from '../rewriteReview';

const trans = nullTranslator.load('notebook_bcc');
const FAILING = 'totals = df.groupby("region").revenue.sum()\nprint(totals)';
const FIX = 'totals = df.groupby("Region").revenue.sum()\nprint(totals)';

const REWRITE: IRewriteReview = {
  index: 0,
  reference: 'totals',
  cellId: 'cell-7',
  position: 4,
  before: FAILING,
  after: FIX,
  inPlace: true
};

function request(extra: Partial<IBehaviorApproval> = {}): IBehaviorApproval {
  return {
    behaviorId: 'behavior_002',
    stageId: 's1',
    stepId: 'p1',
    codeCells: [],
    existingCells: [],
    rewrites: [REWRITE],
    actions: [],
    ...extra
  };
}

const context = { label: 'sales.ipynb', stepName: 'Totals', iteration: 2 };

function button(label: string): HTMLButtonElement {
  return [
    ...document.querySelectorAll<HTMLButtonElement>('.jp-Dialog button')
  ].find(b => b.textContent === label)!;
}

/** The editor of the first diff in the open dialog. */
function diffEditor(): EditorView {
  const host = document.querySelector<HTMLElement>(
    '.jp-Dialog .jp-bcc-rewrite-diff .cm-editor'
  )!;
  const view = EditorView.findFromDOM(host);
  if (!view) {
    throw new Error('no editor');
  }
  return view;
}

describe('RewriteReview', () => {
  it('shows the failed line removed and the fixed line added, and no edit until the user makes one', async () => {
    const review = await RewriteReview.create([REWRITE], trans);
    document.body.append(review.node);
    try {
      const diff = review.node.querySelector('.jp-bcc-rewrite-diff')!;
      expect(diff.getAttribute('data-cell-id')).toBe('cell-7');
      expect(diff.querySelector('.cm-deletedChunk')?.textContent).toContain(
        'groupby("region")'
      );
      expect(diff.querySelector('.cm-content')?.textContent).toContain(
        'groupby("Region")'
      );
      expect(review.node.textContent).toContain(
        'The fix replaces the code of cell 4 (“totals”)'
      );
      // The cell as the user finds it, never by its id.
      expect(review.node.textContent).not.toContain('cell-7');
      expect(diff.getAttribute('aria-label')).toBe(
        'The code of cell 4 (“totals”) (removed lines) and the fix (added lines); edit the fix before accepting it'
      );
      expect(review.edits()).toEqual({});
    } finally {
      review.dispose();
      review.node.remove();
    }
  });

  it('says when the fix goes below a cell the user edited, or at the end', async () => {
    const review = await RewriteReview.create(
      [
        { ...REWRITE, inPlace: false },
        {
          ...REWRITE,
          index: 2,
          cellId: null,
          position: null,
          before: '',
          inPlace: false
        }
      ],
      trans
    );
    try {
      const text = review.node.textContent ?? '';
      expect(text).toContain('Fix 1 of 2: You edited cell 4 (“totals”)');
      expect(text).toContain('Fix 2 of 2: The cell “totals” is gone');
    } finally {
      review.dispose();
    }
  });
});

describe('showApprovalDialog with a rewrite', () => {
  afterEach(async () => {
    await dismissDialog();
  });

  it('offers Accept and Reject; Reject keeps the code', async () => {
    const result = showApprovalDialog(request(), trans, context);
    await waitForDialog();
    const dialog = document.querySelector('.jp-Dialog')!;
    expect(dialog.querySelector('.cm-deletedChunk')).not.toBeNull();
    expect(dialog.textContent).toContain('wants to fix code that failed');
    // New code would be shown as code; here there is none.
    expect(dialog.querySelector('.jp-bcc-approval-code')).toBeNull();
    button('Reject').click();
    await expect(result).resolves.toBe('skip');
  });

  it('accepts the fix as it is', async () => {
    const result = showApprovalDialog(request(), trans, context);
    await waitForDialog();
    button('Accept').click();
    await expect(result).resolves.toBe('run');
  });

  it('accepts the fix the user edited, with the edit', async () => {
    const result = showApprovalDialog(request(), trans, context);
    await waitForDialog();
    const view = diffEditor();
    view.dispatch({
      changes: { from: 0, to: 'totals'.length, insert: 'region_totals' }
    });
    button('Accept').click();
    await expect(result).resolves.toEqual({
      decision: 'run',
      edits: { 0: FIX.replace(/^totals/, 'region_totals') }
    });
  });

  it('held because the fix reaches outside: its flags are listed under its diff', async () => {
    const result = showApprovalDialog(
      request({
        reason: 'flagged',
        rewrites: [
          {
            ...REWRITE,
            after: 'import os\ntotals = os.environ',
            flags: [{ risk: 'environment', line: 2, what: 'os.environ' }]
          }
        ]
      }),
      trans,
      context
    );
    await waitForDialog();
    const dialog = document.querySelector('.jp-Dialog')!;
    expect(dialog.querySelector('.jp-bcc-approval-held')?.textContent).toBe(
      'Interactive mode is off, but this code reaches outside the notebook: it runs only if you allow it.'
    );
    const flags = dialog.querySelector(
      '.jp-bcc-rewrite .jp-bcc-rewrite-diff + .jp-bcc-approval-flags'
    );
    expect(flags?.textContent).toBe('Line 2: Reads the environment os.environ');
    button('Reject').click();
    await expect(result).resolves.toBe('skip');
  });

  it('keeps Run and Skip when the behavior also adds new code, shown as code', async () => {
    const result = showApprovalDialog(
      request({ codeCells: ['summary = totals.describe()'] }),
      trans,
      context
    );
    await waitForDialog();
    const dialog = document.querySelector('.jp-Dialog')!;
    expect(dialog.querySelector('.jp-bcc-approval-code')?.textContent).toBe(
      'summary = totals.describe()'
    );
    expect(dialog.querySelector('.jp-bcc-rewrite-diff')).not.toBeNull();
    button('Skip').click();
    await expect(result).resolves.toBe('skip');
  });
});
