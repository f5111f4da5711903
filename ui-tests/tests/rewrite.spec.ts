/**
 * A retry fixes its own cell (issue 43), in a real JupyterLab and kernel: a scripted planner (the
 * reference planner replaying a trace) whose first code fails and whose fix, a `rewrite_cell`, then
 * works. The notebook ends with one cell for the step, the failed attempt kept with it and restorable
 * from the cell and from the panel; in interactive mode the fix is shown as a diff of the cell, and
 * Reject keeps the failed code. Undo, a pause with a reload, and Redo from the step keep working with
 * the rewritten cell.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { Page, TestInfo } from '@playwright/test';
import {
  achievedAnswer,
  continueAnswer,
  ReplayTraceBuilder,
  startAnswer,
  workflow
} from '../../src/protocol/testing/replayTrace';
import {
  cellInfos,
  clickControl,
  command,
  configure,
  expect,
  installProbe,
  openNewNotebook,
  panel,
  planner,
  reloadPage,
  savedNotebook,
  SCREENSHOTS,
  startRun,
  stateLine,
  stopPlanners,
  test,
  unfoldStages,
  waitForEnd
} from './helpers';

const FAILING = 'totals = {"north": 3, "south": 5}\nprint(totals["North"])';
const FIX = 'totals = {"north": 3, "south": 5}\nprint(totals["north"])';
const TASK = 'Print the north total';

/**
 * One step: a first code that fails, then its fix as the rewrite of that cell. After the run, the
 * planner's answers to a run rewound to before the fix (`undo`: it fixes the cell again) or to the
 * step's start (`redo`: the step's cell was removed, and the planner writes the fix as a new cell).
 */
function rewriteTrace(after: 'undo' | 'redo' = 'undo'): string {
  const trace = new ReplayTraceBuilder()
    .planning(
      startAnswer(workflow('Totals', [{ id: 'totals', name: 'North total' }]))
    )
    .actions([
      {
        action: 'add',
        shot_type: 'action',
        content: FAILING,
        store_id: 'totals'
      },
      { action: 'exec', codecell_id: 'totals', need_output: true }
    ])
    .planning(continueAnswer())
    .actions([
      { action: 'rewrite_cell', codecell_id: 'totals', content: FIX },
      { action: 'exec', codecell_id: 'totals', need_output: true },
      { action: 'end_phase', step_id: 'totals' }
    ])
    .planning(achievedAnswer())
    .planning(continueAnswer())
    .actions([
      after === 'undo'
        ? { action: 'rewrite_cell', codecell_id: 'totals', content: FIX }
        : {
            action: 'add',
            shot_type: 'action',
            content: FIX,
            store_id: 'totals'
          },
      { action: 'exec', codecell_id: 'totals', need_output: true },
      { action: 'end_phase', step_id: 'totals' }
    ])
    .planning(achievedAnswer());
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bcc-rewrite-'));
  return trace.write(path.join(dir, 'rewrite.trace.jsonl'), fs.writeFileSync);
}

async function setup(
  page: Parameters<typeof openNewNotebook>[0],
  tmpPath: string,
  name: string,
  settings: Record<string, unknown> = {},
  after: 'undo' | 'redo' = 'undo'
): Promise<string> {
  const started = await planner([
    '--replay',
    rewriteTrace(after),
    '--replay-speed',
    '0'
  ]);
  await configure(page, {
    baseUrl: started.url,
    autoAcceptWorkflowUpdates: true,
    ...settings
  });
  return openNewNotebook(page, tmpPath, name);
}

async function capture(
  page: Page,
  testInfo: TestInfo,
  selector: string,
  name: string
): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  const body = await page.locator(selector).screenshot({ path: file });
  await testInfo.attach(name, { body, contentType: 'image/png' });
}

async function darkTheme(page: Page): Promise<void> {
  await page.evaluate(() =>
    window.jupyterapp.commands.execute('apputils:change-theme', {
      theme: 'JupyterLab Dark'
    })
  );
  await expect(page.locator('body')).toHaveAttribute(
    'data-jp-theme-light',
    'false'
  );
}

/** The attempts kept with the notebook's first code cell, in the file on disk. */
async function savedAttempts(page: Page, nb: string): Promise<string[][]> {
  const file = await savedNotebook(page, nb);
  const code = file.cells.find(
    c => c.cell_type === 'code' && c.metadata?.notebook_bcc
  );
  const own = code?.metadata?.notebook_bcc as Record<string, unknown>;
  const attempts = own?.attempts as { code: string; error: string }[];
  return attempts?.map(a => [a.code, a.error]) ?? [];
}

/** The run's code cells (a new notebook's empty starter cell stays when the cursor is in it). */
function runCode(
  cells: Awaited<ReturnType<typeof cellInfos>>
): Awaited<ReturnType<typeof cellInfos>> {
  return cells.filter(c => c.type === 'code' && c.madeBy !== null);
}

function codeSources(cells: Awaited<ReturnType<typeof cellInfos>>): string[] {
  return runCode(cells).map(c => c.source);
}

/** Resume, after a reload: the run completes with the fix in cell `id`, the failed code its attempt. */
async function resumeEndsWithTheFix(
  page: Page,
  nb: string,
  id: string
): Promise<void> {
  await clickControl(page, 'Resume');
  // The saved run loads before it runs: the run is not under way at once.
  await expect(stateLine(page)).toHaveText('Completed', { timeout: 60000 });
  expect((await waitForEnd(page, nb)).state).toBe('WORKFLOW_COMPLETED');
  expect(runCode(await cellInfos(page, nb)).map(c => [c.id, c.source])).toEqual(
    [[id, FIX]]
  );
  await expect
    .poll(() => savedAttempts(page, nb))
    .toEqual([[FAILING, "KeyError: 'North'"]]);
}

test.use({ viewport: { width: 1400, height: 900 } });

test.describe('A retry fixes its own cell', () => {
  test.beforeEach(async ({ page }) => {
    await installProbe(page);
  });

  test.afterEach(async () => {
    await stopPlanners();
  });

  test('the fix replaces the failed cell, which keeps the failed attempt; restoring it works', async ({
    page,
    tmpPath
  }, testInfo) => {
    const nb = await setup(page, tmpPath, 'rewrite.ipynb');
    await startRun(page, TASK, { path: nb, dataFiles: [] });
    expect((await waitForEnd(page, nb)).state).toBe('WORKFLOW_COMPLETED');
    await expect(stateLine(page)).toHaveText('Completed');

    // One code cell for the step: the fix, which ran and printed the total.
    expect(codeSources(await cellInfos(page, nb))).toEqual([FIX]);
    const cell = page.locator('.jp-Notebook .jp-CodeCell', {
      hasText: 'totals["north"]'
    });
    await expect(cell.locator('.jp-OutputArea-output')).toHaveText('3');
    await expect
      .poll(() => savedAttempts(page, nb))
      .toEqual([[FAILING, "KeyError: 'North'"]]);

    // From the panel: the step offers its attempts (its completed stage folded, opened first).
    await unfoldStages(page);
    await expect(
      panel(page).locator('.jp-bcc-step-attempts', { hasText: 'Attempts…' })
    ).toBeVisible();
    await capture(page, testInfo, '#jp-bcc-sidebar', 'attempts-panel');

    // From the cell: its context menu names how many attempts it keeps.
    await cell.locator('.jp-InputArea-editor').click({ button: 'right' });
    const item = page.locator('.lm-Menu-item', { hasText: 'Attempts (1)…' });
    await expect(item).toBeVisible();
    await item.click();
    const dialog = page.locator('.jp-Dialog', { hasText: 'Attempt 1' });
    await expect(dialog).toBeVisible();
    await expect(dialog.locator('.jp-bcc-attempt-error')).toHaveText(
      "KeyError: 'North'"
    );
    // The cell's code now, then its attempt.
    await expect(
      dialog.locator('.jp-bcc-attempts-cell > .jp-bcc-attempt-code')
    ).toHaveText(FIX);
    await expect(
      dialog.locator('.jp-bcc-attempt .jp-bcc-attempt-code')
    ).toHaveText(FAILING);
    await capture(page, testInfo, '.jp-Dialog-content', 'attempts-light');
    await darkTheme(page);
    await capture(page, testInfo, '.jp-Dialog-content', 'attempts-dark');

    await dialog.getByRole('button', { name: 'Restore' }).click();
    await expect(dialog).toHaveCount(0);
    // The failed code is back; the fix is now the cell's attempt.
    expect(codeSources(await cellInfos(page, nb))).toEqual([FAILING]);
    await page.locator('.jp-bcc-step-attempts').click();
    const again = page.locator('.jp-Dialog', { hasText: 'Attempt 1' });
    await expect(
      again.locator('.jp-bcc-attempt .jp-bcc-attempt-code')
    ).toHaveText(FIX);
    await again.getByRole('button', { name: 'Close' }).click();
  });

  test('in interactive mode the fix is a diff of the cell; Reject keeps the failed code', async ({
    page,
    tmpPath
  }, testInfo) => {
    const nb = await setup(page, tmpPath, 'rewrite-review.ipynb', {
      interactive: true
    });
    await startRun(page, TASK, { path: nb, dataFiles: [] });
    const first = page.locator('.jp-Dialog', {
      hasText: 'wants to add and run this code'
    });
    await expect(first).toBeVisible({ timeout: 60000 });
    await first.getByRole('button', { name: 'Run', exact: true }).click();

    const review = page.locator('.jp-Dialog', {
      hasText: 'wants to fix code that failed'
    });
    await expect(review).toBeVisible({ timeout: 60000 });
    const diff = review.locator('.jp-bcc-rewrite-diff');
    await expect(diff.locator('.cm-deletedChunk')).toContainText(
      'totals["North"]'
    );
    await expect(diff.locator('.cm-changedLine')).toContainText(
      'totals["north"]'
    );
    await capture(page, testInfo, '.jp-Dialog-content', 'rewrite-diff-light');
    await darkTheme(page);
    await capture(page, testInfo, '.jp-Dialog-content', 'rewrite-diff-dark');

    await review.getByRole('button', { name: 'Reject', exact: true }).click();
    expect((await waitForEnd(page, nb)).state).toBe('WORKFLOW_COMPLETED');
    expect(codeSources(await cellInfos(page, nb))).toEqual([FAILING]);
    await expect(panel(page).locator('.jp-bcc-effects')).toContainText(
      "The user rejected the rewrite of 'totals'"
    );
    await expect(panel(page).locator('.jp-bcc-step-attempts')).toHaveCount(0);
  });

  test('Undo of the fix puts the failed code back; after a reload, Resume fixes the cell again', async ({
    page,
    tmpPath
  }) => {
    const nb = await setup(page, tmpPath, 'rewrite-undo.ipynb');
    await startRun(page, TASK, { path: nb, dataFiles: [] });
    expect((await waitForEnd(page, nb)).state).toBe('WORKFLOW_COMPLETED');
    const [id] = runCode(await cellInfos(page, nb)).map(c => c.id);

    await command(page, 'notebook-bcc:undo-behavior', { confirm: false });
    await expect(stateLine(page)).toHaveText('Paused');
    // The same cell, its failed code back, and no attempt: the fix is undone.
    expect(
      runCode(await cellInfos(page, nb)).map(c => [c.id, c.source])
    ).toEqual([[id, FAILING]]);
    await expect.poll(() => savedAttempts(page, nb)).toEqual([]);

    await reloadPage(page);
    // The run saved paused, as a reloaded page shows it.
    await expect(stateLine(page)).toHaveText('Stopped at step North total', {
      timeout: 60000
    });
    await resumeEndsWithTheFix(page, nb, id);
  });

  test('paused after the fix (step mode), the run reloads with the rewritten cell and its attempt; Resume ends it', async ({
    page,
    tmpPath
  }) => {
    const nb = await setup(page, tmpPath, 'rewrite-pause.ipynb');
    await startRun(page, TASK, { path: nb, dataFiles: [], stepMode: true });
    await expect(stateLine(page)).toHaveText('Paused (step mode)', {
      timeout: 60000
    });
    // The first behavior: the failing code, run.
    expect(codeSources(await cellInfos(page, nb))).toEqual([FAILING]);
    await clickControl(page, 'Step');
    // The second: the fix rewrites that cell, which runs, and the run pauses again.
    await expect
      .poll(async () => codeSources(await cellInfos(page, nb)), {
        timeout: 60000
      })
      .toEqual([FIX]);
    await expect(stateLine(page)).toHaveText('Paused (step mode)');
    await expect
      .poll(() => savedAttempts(page, nb))
      .toEqual([[FAILING, "KeyError: 'North'"]]);
    const [id] = runCode(await cellInfos(page, nb)).map(c => c.id);

    await reloadPage(page);
    await expect(stateLine(page)).toHaveText(/^Stopped at step /, {
      timeout: 60000
    });
    // The reloaded notebook has the fix in the same cell, its attempt kept.
    expect(
      runCode(await cellInfos(page, nb)).map(c => [c.id, c.source])
    ).toEqual([[id, FIX]]);
    await resumeEndsWithTheFix(page, nb, id);
  });

  test('Redo from the step removes the rewritten cell with its attempts; the redone step writes its cell anew', async ({
    page,
    tmpPath
  }) => {
    const nb = await setup(page, tmpPath, 'rewrite-redo.ipynb', {}, 'redo');
    await startRun(page, TASK, { path: nb, dataFiles: [] });
    expect((await waitForEnd(page, nb)).state).toBe('WORKFLOW_COMPLETED');
    const [fixed] = runCode(await cellInfos(page, nb)).map(c => c.id);
    await expect
      .poll(() => savedAttempts(page, nb))
      .toEqual([[FAILING, "KeyError: 'North'"]]);

    await command(page, 'notebook-bcc:redo-from-step', {
      stageId: 'main',
      stepId: 'totals',
      confirm: false
    });
    await expect(panel(page).locator('.jp-bcc-rewind-note')).toContainText(
      'Redone from step North total',
      { timeout: 60000 }
    );
    await expect(stateLine(page)).toHaveText('Completed', { timeout: 60000 });
    expect((await waitForEnd(page, nb)).state).toBe('WORKFLOW_COMPLETED');
    const cells = runCode(await cellInfos(page, nb));
    expect(cells.map(c => c.source)).toEqual([FIX]);
    expect(cells[0].id).not.toBe(fixed);
    const cell = page.locator('.jp-Notebook .jp-CodeCell', {
      hasText: 'totals["north"]'
    });
    await expect(cell.locator('.jp-OutputArea-output')).toHaveText('3');
    // The new cell has no attempts: the failed one went with the removed cell.
    await expect.poll(() => savedAttempts(page, nb)).toEqual([]);
    await expect(panel(page).locator('.jp-bcc-step-attempts')).toHaveCount(0);
  });
});
