/**
 * The fault suite: a misbehaving planner, kernel or user during a live run. For each case: the cells
 * made before the fault are still there, the run's progress is saved in the notebook file, the user sees
 * a clear message, and the run finishes, after a Retry or a Resume where one is needed. Each test starts
 * its own planner (the reference planner with fault flags, or a replayed script) on a free port and
 * points the extension at it through the settings. A table of outcomes is printed at the end and
 * written to test-results/faults-table.txt.
 */
import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import type { Page } from '@playwright/test';
import {
  callProbe,
  cells,
  configure,
  effectList,
  effects,
  HOUSING,
  ICellInfo,
  IFaultRow,
  installProbe,
  kept,
  openNewNotebook,
  openNotebook,
  planner,
  recordRow,
  requestLog,
  requests,
  runInfo,
  savedNotebook,
  savedRun,
  SIDEBAR,
  sidebar,
  startRun,
  stateLine,
  stopPlanners,
  waitForEnd,
  warningList,
  writeTable
} from './faults/harness';
import {
  deleteBeforeExecRun,
  focusRun,
  injectionRun,
  kernelDeathRun,
  largeOutputRun,
  MULTIBYTE,
  splitUtf8Run,
  twoStepTrace,
  VICTIM
} from './faults/scenarios';
import { command } from './helpers';

const TASK = 'What drives SalePrice? Use housing.csv.';
const NOTEBOOK = 'fault.ipynb';

let row: IFaultRow;

/** Notes for the table, set by each test as it learns them. */
function note(fields: Partial<IFaultRow>): void {
  row = { ...row, ...fields };
}

function keptText(before: ICellInfo[], after: ICellInfo[]): string {
  const k = kept(before, after);
  return `${k.kept}/${k.of}`;
}

/** The reference planner (no line delay unless given) with these extra flags, and a notebook. */
async function referenceSetup(
  page: IJupyterLabPageFixture,
  tmpPath: string,
  flags: string[],
  settings: Record<string, string | number | boolean> = {}
): Promise<{ path: string; planner: Awaited<ReturnType<typeof planner>> }> {
  const started = await planner(['--line-delay', '0', ...flags]);
  await page.contents.uploadFile(HOUSING, `${tmpPath}/housing.csv`);
  await configure(page, {
    baseUrl: started.url,
    autoAcceptWorkflowUpdates: true,
    ...settings
  });
  const path = await openNewNotebook(page, tmpPath, NOTEBOOK);
  return { path, planner: started };
}

/** The reference planner replaying a scripted run, and a notebook. */
async function replaySetup(
  page: IJupyterLabPageFixture,
  tmpPath: string,
  trace: string,
  flags: string[] = [],
  settings: Record<string, string | number | boolean> = {}
): Promise<{ path: string; planner: Awaited<ReturnType<typeof planner>> }> {
  const started = await planner(['--replay', trace, ...flags]);
  await configure(page, {
    baseUrl: started.url,
    autoAcceptWorkflowUpdates: true,
    ...settings
  });
  const path = await openNewNotebook(page, tmpPath, NOTEBOOK);
  return { path, planner: started };
}

/** The run completed, its state is saved as completed in the file, and the sidebar says so. */
async function expectCompleted(page: Page, path: string): Promise<void> {
  const info = await waitForEnd(page, path);
  expect(
    info.finished?.reason,
    info.finished?.message ?? info.error ?? ''
  ).toBe('completed');
  await expect(stateLine(page)).toHaveText('Completed');
  await expect
    .poll(async () => (await savedRun(page, path))?.state, { timeout: 20000 })
    .toBe('WORKFLOW_COMPLETED');
}

/** Waits for the run to stop on an error, shown in the sidebar with a Retry. */
async function expectError(
  page: Page,
  path: string,
  message: RegExp
): Promise<void> {
  const info = await waitForEnd(page, path);
  expect(info.finished?.reason).toBe('error');
  const error = page.locator(`${SIDEBAR} .jp-bcc-error`);
  await expect(error).toBeVisible();
  await expect(error).toContainText(message);
  await expect(stateLine(page)).toHaveText(/^Error: /);
  await expect
    .poll(async () => (await savedRun(page, path))?.state, { timeout: 20000 })
    .toBe('ERROR');
}

async function clickRetry(page: Page): Promise<void> {
  await page
    .locator(`${SIDEBAR} .jp-bcc-error`)
    .getByRole('button', { name: 'Retry' })
    .click();
}

async function clickResume(page: Page): Promise<void> {
  await page
    .locator(`${SIDEBAR} .jp-bcc-controls`)
    .getByRole('button', { name: 'Resume' })
    .click();
}

/** Cells whose source appears more than once (a retried behavior adds its cells again). */
function repeated(all: ICellInfo[]): number {
  const counts = new Map<string, number>();
  for (const cell of all) {
    if (cell.source.trim()) {
      counts.set(cell.source, (counts.get(cell.source) ?? 0) + 1);
    }
  }
  return [...counts.values()].filter(n => n > 1).length;
}

/** Waits until the run is in its second behavior and that behavior has added a cell. */
async function midSecondBehavior(page: Page, path: string): Promise<void> {
  await expect
    .poll(async () => (await runInfo(page, path)).behaviorsRun, {
      timeout: 60000,
      intervals: [100]
    })
    .toBeGreaterThanOrEqual(1);
  const atFirst = (await cells(page, path)).length;
  await expect
    .poll(async () => (await cells(page, path)).length, {
      timeout: 60000,
      intervals: [100]
    })
    .toBeGreaterThanOrEqual(atFirst + 2);
  const info = await runInfo(page, path);
  expect(info.running, 'the run should still be going').toBe(true);
  expect(info.behaviorsRun).toBe(1);
}

/** A run of the reference planner streaming slowly (250 ms a line), caught in its second behavior. */
async function slowRunMidSecondBehavior(
  page: IJupyterLabPageFixture,
  tmpPath: string
): Promise<{ path: string; before: ICellInfo[] }> {
  const { path } = await referenceSetup(page, tmpPath, ['--line-delay', '250']);
  await startRun(page, path, TASK);
  await midSecondBehavior(page, path);
  return { path, before: await cells(page, path) };
}

/**
 * The notebook, opened again, says where the stopped run stands and keeps the cells of `before`;
 * Resume then completes the run. Returns the cells found on reopening and at the end.
 */
async function resumeReopened(
  page: Page,
  path: string,
  before: ICellInfo[]
): Promise<{ reopened: ICellInfo[]; after: ICellInfo[] }> {
  await expect(stateLine(page)).toHaveText(/^Stopped at step /, {
    timeout: 30000
  });
  const reopened = await cells(page, path);
  expect(kept(before, reopened).missing).toEqual([]);
  await clickResume(page);
  await expectCompleted(page, path);
  const after = await cells(page, path);
  expect(kept(before, after).missing).toEqual([]);
  return { reopened, after };
}

/*
 * Galata's tracking of /api/kernels answers a kernel restart with 201 where JupyterLab expects 200,
 * which leaves a restarted kernel "starting" for ever; sessions stay tracked, so each test's kernels
 * are still shut down when it ends.
 */
test.use({ kernels: null });

test.describe('Faults during a run', () => {
  test.beforeEach(async ({ page }, testInfo) => {
    row = {
      case: testInfo.title,
      outcome: '',
      cellsKept: '-',
      resumed: '-'
    };
    await installProbe(page);
  });

  test.afterEach(async ({}, testInfo) => {
    await stopPlanners();
    const failure = testInfo.errors[0]?.message?.split('\n')[0] ?? '';
    recordRow(testInfo.project.outputDir, {
      ...row,
      outcome:
        testInfo.status === testInfo.expectedStatus
          ? row.outcome
          : `FAILED (${testInfo.status}): ${failure.replace(/\u001b\[[0-9;]*m/g, '').slice(0, 160)}${row.outcome ? `; ${row.outcome}` : ''}`
    });
  });

  test.afterAll(({}, testInfo) => {
    console.log(`\nFault suite\n${writeTable(testInfo.project.outputDir)}\n`);
  });

  // -------------------------------------------------------------------------------------------
  // The stream: lines the client cannot use
  // -------------------------------------------------------------------------------------------

  const lineFaults: Array<{
    title: string;
    fault: string;
    warning: RegExp;
    absent?: (cell: ICellInfo) => boolean;
  }> = [
    {
      title: 'a malformed NDJSON line',
      fault: 'malformed-line@2',
      warning: /malformed JSON line ignored/,
      absent: cell => cell.source === 'malformed'
    },
    {
      title: 'a truncated last line',
      fault: 'truncated-line@2',
      warning: /malformed JSON line ignored/
    },
    {
      title: 'an unknown action',
      fault: 'unknown-action@2',
      warning: /Unknown action type 'bcc_fault_unknown_action'/,
      absent: cell => cell.source.includes('injected fault')
    },
    {
      title: 'an action missing a required field',
      fault: 'missing-field@2',
      warning: /action ignored.*codecell_id/
    }
  ];

  for (const { title, fault, warning, absent } of lineFaults) {
    test(title, async ({ page, tmpPath }) => {
      const { path } = await referenceSetup(page, tmpPath, ['--fault', fault]);
      await startRun(page, path, TASK);
      await expect(warningList(page)).toContainText(warning, {
        timeout: 60000
      });
      const before = await cells(page, path);
      note({ outcome: `warning shown: ${warning.source}` });
      await expectCompleted(page, path);
      const after = await cells(page, path);
      expect(kept(before, after).missing).toEqual([]);
      if (absent) {
        expect(after.filter(absent)).toEqual([]);
      }
      note({
        outcome: `warning "${warning.source.replace(/\\/g, '')}"; the line is skipped, the run goes on`,
        cellsKept: keptText(before, after),
        resumed: 'not needed: completed'
      });
    });
  }

  test('a UTF-8 character split across chunks', async ({ page, tmpPath }) => {
    const { path } = await replaySetup(
      page,
      tmpPath,
      twoStepTrace(splitUtf8Run()),
      ['--replay-speed', '0', '--fault', 'split-utf8']
    );
    await startRun(page, path, 'Split a character');
    await expectCompleted(page, path);
    const after = await cells(page, path);
    expect(after.map(c => c.source)).toContain(MULTIBYTE);
    expect(after.filter(c => c.source.includes('\uFFFD'))).toEqual([]);
    const info = await runInfo(page, path);
    expect(info.warnings).toEqual([]);
    note({
      outcome: 'text intact (no U+FFFD), no warning needed',
      cellsKept: `${after.length}/${after.length}`,
      resumed: 'not needed: completed'
    });
  });

  // -------------------------------------------------------------------------------------------
  // HTTP failures
  // -------------------------------------------------------------------------------------------

  test('planning answers 500 (fallback to generating)', async ({
    page,
    tmpPath
  }) => {
    // The client retries /planning 3 times: the third request fails 4 times in a row.
    const flags = [3, 4, 5, 6].flatMap(n => [
      '--fault',
      `http-500@planning:${n}`
    ]);
    const { path, planner: p } = await referenceSetup(page, tmpPath, flags);
    await startRun(page, path, TASK);
    await expect(warningList(page)).toContainText(
      /\/planning failed.*500.*falling back to \/generating/,
      { timeout: 60000 }
    );
    const before = await cells(page, path);
    await expectCompleted(page, path);
    const after = await cells(page, path);
    expect(kept(before, after).missing).toEqual([]);
    const log = requestLog(p).map(e => e.line);
    const failed = log.findIndex(line => /^POST \/planning 500/.test(line));
    expect(
      log
        .slice(failed, failed + 5)
        .map(line => line.split(' ').slice(0, 3).join(' '))
    ).toEqual([
      'POST /planning 500',
      'POST /planning 500',
      'POST /planning 500',
      'POST /planning 500',
      'POST /generating 200'
    ]);
    note({
      outcome:
        'warning "/planning failed ... falling back to /generating"; step generated without a plan',
      cellsKept: keptText(before, after),
      resumed: 'not needed: completed'
    });
  });

  test('generating answers 500 (error, Retry recovers)', async ({
    page,
    tmpPath
  }) => {
    const { path } = await referenceSetup(page, tmpPath, [
      '--fault',
      'http-500@generating:2'
    ]);
    await startRun(page, path, TASK);
    await expectError(page, path, /\/generating failed.*500/);
    const notifications = await page.evaluate(() =>
      (
        window as unknown as {
          galata: { getNotifications(): Promise<Array<{ message: string }>> };
        }
      ).galata.getNotifications()
    );
    expect(notifications.map(n => n.message).join('\n')).toMatch(
      /Workflow failed in .*fault\.ipynb/
    );
    const before = await cells(page, path);
    expect(before.length).toBeGreaterThan(1);
    await clickRetry(page);
    await expectCompleted(page, path);
    const after = await cells(page, path);
    expect(kept(before, after).missing).toEqual([]);
    note({
      outcome:
        'error with Retry in the panel and a notification; state ERROR saved',
      cellsKept: keptText(before, after),
      resumed: 'Retry → completed'
    });
  });

  test('429 with Retry-After', async ({ page, tmpPath }) => {
    const { path, planner: p } = await referenceSetup(page, tmpPath, [
      '--fault',
      'http-429=3@planning:2'
    ]);
    await startRun(page, path, TASK);
    await expect
      .poll(
        () => requestLog(p).some(e => /^POST \/planning 429/.test(e.line)),
        { timeout: 60000 }
      )
      .toBe(true);
    const before = await cells(page, path);
    // The user is told why nothing happens for a while.
    await expect
      .soft(warningList(page))
      .toContainText(/429/, { timeout: 10000 });
    await expectCompleted(page, path);
    const log = requestLog(p);
    const limited = log.findIndex(e => /^POST \/planning 429/.test(e.line));
    const next = log
      .slice(limited + 1)
      .find(e => /^POST \/planning /.test(e.line));
    expect(next?.line).toMatch(/^POST \/planning 200/);
    expect((next?.at ?? 0) - log[limited].at).toBeGreaterThanOrEqual(2900);
    const after = await cells(page, path);
    expect(kept(before, after).missing).toEqual([]);
    note({
      outcome: '/planning retried after the 3 s Retry-After; warning shown',
      cellsKept: keptText(before, after),
      resumed: 'not needed: completed'
    });
  });

  test('the connection resets mid-stream', async ({ page, tmpPath }) => {
    const { path } = await referenceSetup(page, tmpPath, [
      '--fault',
      'reset@generating:2'
    ]);
    await startRun(page, path, TASK);
    await expectError(page, path, /\/generating failed/);
    const before = await cells(page, path);
    await clickRetry(page);
    await expectCompleted(page, path);
    const after = await cells(page, path);
    expect(kept(before, after).missing).toEqual([]);
    note({
      outcome: `error with Retry; after the retry ${repeated(after)} cell sources appear twice`,
      cellsKept: keptText(before, after),
      resumed: 'Retry → completed'
    });
  });

  test('the stream stalls', async ({ page, tmpPath }) => {
    const { path } = await referenceSetup(
      page,
      tmpPath,
      ['--fault', 'stall@generating:2'],
      {
        stallTimeout: 2
      }
    );
    await startRun(page, path, TASK);
    await expectError(page, path, /stalled/);
    const before = await cells(page, path);
    await clickRetry(page);
    await expectCompleted(page, path);
    const after = await cells(page, path);
    expect(kept(before, after).missing).toEqual([]);
    note({
      outcome: 'error "stream stalled" after the 2 s stall timeout, with Retry',
      cellsKept: keptText(before, after),
      resumed: 'Retry → completed'
    });
  });

  // -------------------------------------------------------------------------------------------
  // The kernel
  // -------------------------------------------------------------------------------------------

  test('the kernel dies mid-exec', async ({ page, tmpPath }) => {
    const { path } = await replaySetup(
      page,
      tmpPath,
      twoStepTrace(kernelDeathRun()),
      ['--replay-speed', '0']
    );
    await startRun(page, path, 'Kernel death');
    await expect(stateLine(page)).toHaveText(
      /^Paused: The kernel is not usable/,
      { timeout: 60000 }
    );
    const before = await cells(page, path);
    await expect
      .poll(async () => (await savedRun(page, path))?.state, { timeout: 20000 })
      .toBe('PAUSED');
    // JupyterLab itself says that the kernel died and restarts it; the user acknowledges.
    const restarting = page.locator('.jp-Dialog', {
      hasText: 'appears to have died'
    });
    await expect(restarting).toBeVisible({ timeout: 30000 });
    await restarting.locator('.jp-Dialog-button.jp-mod-accept').click();
    await expect(await effectList(page)).toContainText('No usable kernel');
    await expect
      .poll(() => callProbe(page, 'kernelAnswers', path), { timeout: 60000 })
      .toBe(true);
    await clickResume(page);
    await expectCompleted(page, path);
    const after = await cells(page, path);
    expect(kept(before, after).missing).toEqual([]);
    expect(after.map(c => c.source)).toContain('After the kernel came back.');
    note({
      outcome:
        'paused with "The kernel is not usable: ..." and an effect; state PAUSED saved',
      cellsKept: keptText(before, after),
      resumed: 'Resume → completed'
    });
  });

  test('the kernel is restarted between behaviors', async ({
    page,
    tmpPath
  }) => {
    const { path } = await referenceSetup(page, tmpPath, []);
    await callProbe(page, 'pauseAfter', path, 2);
    await startRun(page, path, TASK);
    await expect
      .poll(async () => (await runInfo(page, path)).paused, { timeout: 60000 })
      .toBe(true);
    const before = await cells(page, path);
    await callProbe(page, 'restartKernel', path);
    await expect
      .poll(() => callProbe(page, 'kernelAnswers', path), { timeout: 60000 })
      .toBe(true);
    await clickResume(page);
    // The planner sees the inputs gone from the kernel and rebuilds them first.
    await expect
      .poll(
        async () =>
          (await cells(page, path)).some(c =>
            /was it restarted\?/.test(c.source)
          ),
        {
          timeout: 60000
        }
      )
      .toBe(true);
    await expectCompleted(page, path);
    const after = await cells(page, path);
    expect(kept(before, after).missing).toEqual([]);
    note({
      outcome:
        'the next plan sees the variables gone; a cell says so and rebuilds them',
      cellsKept: keptText(before, after),
      resumed: 'Resume → completed'
    });
  });

  // -------------------------------------------------------------------------------------------
  // The user
  // -------------------------------------------------------------------------------------------

  test('the notebook is closed mid-run', async ({ page, tmpPath }) => {
    const { path, before } = await slowRunMidSecondBehavior(page, tmpPath);
    await page
      .locator('.lm-DockPanel-tabBar .lm-TabBar-tab', { hasText: NOTEBOOK })
      .locator('.lm-TabBar-tabCloseIcon')
      .click();
    await expect(
      page.locator('.lm-DockPanel-tabBar .lm-TabBar-tab', { hasText: NOTEBOOK })
    ).toHaveCount(0, {
      timeout: 30000
    });
    await expect(page.locator('.jp-Dialog')).toHaveCount(0);
    const saved = await savedRun(page, path);
    expect(saved?.phase).toBe('plan');
    const file = await savedNotebook(page, path);
    expect(file.cells.length).toBeGreaterThanOrEqual(before.length);
    await openNotebook(page, path);
    const { after } = await resumeReopened(page, path, before);
    note({
      outcome:
        'the run is stopped and saved before the notebook closes; "Stopped at step ..." on reopening',
      cellsKept: keptText(before, after),
      resumed: 'Resume → completed'
    });
  });

  test('the page reloads mid-run, then resume', async ({ page, tmpPath }) => {
    const { path, before } = await slowRunMidSecondBehavior(page, tmpPath);
    // The run goes on streaming; cells are saved about a second after they appear.
    await page.waitForTimeout(2000);
    const atReload = await cells(page, path);
    expect((await runInfo(page, path)).running).toBe(true);
    await page.reload({ waitForIsReady: false });
    await page.locator('#jupyterlab-splash').waitFor({ state: 'detached' });
    await openNotebook(page, path);
    await command(page, 'notebook-bcc:open');
    const { reopened, after } = await resumeReopened(page, path, before);
    note({
      outcome: `"Stopped at step ..." after the reload; ${keptText(atReload, reopened)} of the cells at the reload moment were in the saved file`,
      cellsKept: keptText(before, after),
      resumed: 'Resume → completed'
    });
  });

  test('cells stream in while the user types in another cell', async ({
    page,
    tmpPath
  }, testInfo) => {
    const { path } = await replaySetup(page, tmpPath, twoStepTrace(focusRun()));
    const typed =
      'user_notes = "typed by hand while the planner writes its cells"';
    // The new notebook's only cell is the user's: click into it to edit.
    const userCell = page.locator('.jp-NotebookPanel .jp-Cell').first();
    await userCell.locator('.jp-InputArea-editor').click();
    await expect
      .poll(() => callProbe(page, 'focus', path))
      .toEqual({ activeCellIndex: 0, mode: 'edit' });
    const userCellId = (await cells(page, path))[0].id;
    await startRun(page, path, 'Stream while the user types');
    await expect
      .poll(async () => (await cells(page, path)).length, { timeout: 30000 })
      .toBeGreaterThan(2);
    // About 6 s of typing while cells keep arriving every 300 ms.
    await page.keyboard.type(typed, { delay: 90 });
    await page.screenshot({
      path: testInfo.outputPath('typing-while-streaming.png')
    });
    const during = await cells(page, path);
    expect(during.length, 'cells arrived while typing').toBeGreaterThan(6);
    expect(await callProbe(page, 'focus', path)).toEqual({
      activeCellIndex: 0,
      mode: 'edit'
    });
    await expectCompleted(page, path);
    const after = await cells(page, path);
    expect(after[0]).toMatchObject({ id: userCellId, source: typed });
    expect(after.slice(1).filter(c => c.source.includes('user_notes'))).toEqual(
      []
    );
    expect(await callProbe(page, 'focus', path)).toEqual({
      activeCellIndex: 0,
      mode: 'edit'
    });
    expect(kept(during, after).missing).toEqual([]);
    note({
      outcome: `all ${typed.length} typed characters in the user's cell, which stayed active in edit mode`,
      cellsKept: keptText(during, after),
      resumed: 'not needed: completed'
    });
  });

  test('script injection in focus text and in markdown content (nothing runs)', async ({
    page,
    tmpPath
  }) => {
    const { path } = await replaySetup(
      page,
      tmpPath,
      twoStepTrace(injectionRun())
    );
    const dialogs: string[] = [];
    page.on('dialog', dialog => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await startRun(page, path, 'Markup everywhere');
    const focus = page.locator(`${SIDEBAR} .jp-bcc-focus`);
    await expect(focus).toContainText('Focus with markup', { timeout: 30000 });
    await expect(focus).toContainText('a link');
    // Names and warnings are text: the markup shows as typed.
    await expect(sidebar(page).locator('.jp-bcc-tree')).toContainText(
      `Step <img src=x onerror="window.__bccInjected='step name'">`
    );
    await expectCompleted(page, path);
    const after = await cells(page, path);
    expect(
      after.some(c => c.source.includes('Markdown cell with markup'))
    ).toBe(true);
    // Every rendered markdown cell and the panel are on screen; give onerror/onload a moment.
    await page.waitForTimeout(1000);
    const injected = await page.evaluate(
      () => (window as unknown as { __bccInjected?: string }).__bccInjected
    );
    expect(injected, 'no injected handler or script ran').toBeUndefined();
    expect(dialogs).toEqual([]);
    // What reaches the DOM is inert: no script, no inline handler, no javascript: link.
    const active = await page.evaluate(() => {
      const found: string[] = [];
      for (const el of Array.from(
        document.querySelectorAll('#jp-bcc-sidebar *, .jp-RenderedMarkdown *')
      )) {
        if (el.tagName === 'SCRIPT' || el.tagName === 'IFRAME') {
          found.push(el.tagName);
        }
        for (const attr of Array.from(el.attributes)) {
          if (/^on/i.test(attr.name) || /^\s*javascript:/i.test(attr.value)) {
            found.push(`${el.tagName} ${attr.name}`);
          }
        }
      }
      return found;
    });
    expect(active).toEqual([]);
    note({
      outcome:
        'focus, step name, title, chapter and markdown shown as inert text; no handler ran, no dialog',
      cellsKept: `${after.length}/${after.length}`,
      resumed: 'not needed: completed'
    });
  });

  test('the user deletes the last added cell before its exec', async ({
    page,
    tmpPath
  }) => {
    const { path } = await replaySetup(
      page,
      tmpPath,
      twoStepTrace(deleteBeforeExecRun())
    );
    await startRun(page, path, 'Delete a cell');
    await expect
      .poll(
        async () => (await cells(page, path)).some(c => c.source === VICTIM),
        {
          timeout: 60000,
          intervals: [100]
        }
      )
      .toBe(true);
    const all = await cells(page, path);
    const victim = all.find(c => c.source === VICTIM) as ICellInfo;
    await callProbe(page, 'deleteCell', path, victim.id);
    const before = all.filter(c => c.id !== victim.id);
    await expect(await effectList(page)).toContainText(/was not found/, {
      timeout: 30000
    });
    await expectCompleted(page, path);
    const after = await cells(page, path);
    expect(after.map(c => c.source)).not.toContain(VICTIM);
    expect(kept(before, after).missing).toEqual([]);
    expect((await effects(page, path)).join('\n')).toMatch(
      /Cell '.*' \(codecell_id 'lastAddedCellId'\) was not found/
    );
    note({
      outcome:
        'effect "Cell ... was not found ..." for the exec; nothing re-created',
      cellsKept: keptText(before, after),
      resumed: 'not needed: completed'
    });
  });

  // -------------------------------------------------------------------------------------------
  // Content
  // -------------------------------------------------------------------------------------------

  test('a 10 MB output in one cell', async ({ page, tmpPath }) => {
    const { path } = await replaySetup(
      page,
      tmpPath,
      twoStepTrace(largeOutputRun()),
      ['--replay-speed', '0']
    );
    await startRun(page, path, 'Print 10 MB');
    await expectCompleted(page, path);
    const after = await cells(page, path);
    const big = after.find(c => c.source.includes('os.urandom'));
    expect(big?.outputChars ?? 0).toBeGreaterThanOrEqual(10_000_000);
    const truncated = (await effects(page, path)).find(e =>
      e.includes('[TRUNCATED:')
    );
    expect(truncated, 'the output reaches the planner truncated').toBeDefined();
    expect((truncated as string).length).toBeLessThanOrEqual(16000 + 200);
    // The panel clips long effects; "Show more" shows the whole text the planner got.
    const items = (await effectList(page)).locator('.jp-bcc-effect');
    const texts = await items.allTextContents();
    const clipped = items.nth(
      texts.findIndex(text => text.endsWith('Show more'))
    );
    await clipped.getByRole('button', { name: 'Show more' }).click();
    await expect(clipped).toContainText('[TRUNCATED:');
    const sent = await requests(page, path);
    expect(sent.length).toBeGreaterThanOrEqual(5);
    expect(Math.max(...sent.map(r => r.chars))).toBeLessThanOrEqual(18600);
    note({
      outcome: `output kept in the notebook (${big?.outputChars} chars); effect truncated to ${(truncated as string).length}; largest request ${Math.max(...sent.map(r => r.chars))} chars`,
      cellsKept: `${after.length}/${after.length}`,
      resumed: 'not needed: completed'
    });
  });

  test('two notebooks running at once', async ({ page, tmpPath }) => {
    const started = await planner(['--line-delay', '0']);
    await page.contents.uploadFile(HOUSING, `${tmpPath}/housing.csv`);
    await page.contents.uploadFile(HOUSING, `${tmpPath}/homes.csv`);
    await configure(page, {
      baseUrl: started.url,
      autoAcceptWorkflowUpdates: true
    });
    const a = await openNewNotebook(page, tmpPath, 'first.ipynb');
    const b = await openNewNotebook(page, tmpPath, 'second.ipynb');
    await startRun(page, a, 'What drives SalePrice? Use housing.csv.', [
      'housing.csv'
    ]);
    await startRun(page, b, 'What drives SalePrice? Use homes.csv.', [
      'homes.csv'
    ]);
    await expect
      .poll(
        async () =>
          (await runInfo(page, a)).running && (await runInfo(page, b)).running,
        { timeout: 30000 }
      )
      .toBe(true);
    const [midA, midB] = [await cells(page, a), await cells(page, b)];
    const [endA, endB] = [
      await waitForEnd(page, a, 120000),
      await waitForEnd(page, b, 120000)
    ];
    expect(endA.finished?.reason).toBe('completed');
    expect(endB.finished?.reason).toBe('completed');
    const [afterA, afterB] = [await cells(page, a), await cells(page, b)];
    expect(kept(midA, afterA).missing).toEqual([]);
    expect(kept(midB, afterB).missing).toEqual([]);
    expect((await savedNotebook(page, a)).cells.length).toBe(afterA.length);
    expect((await savedNotebook(page, b)).cells.length).toBe(afterB.length);
    const cellsA = afterA.map(c => c.source).join('\n');
    const cellsB = afterB.map(c => c.source).join('\n');
    expect(cellsA).toContain('housing.csv');
    expect(cellsA).not.toContain('homes.csv');
    expect(cellsB).toContain('homes.csv');
    expect(cellsB).not.toContain('housing.csv');
    const [savedA, savedB] = [await savedRun(page, a), await savedRun(page, b)];
    expect(savedA).toMatchObject({
      state: 'WORKFLOW_COMPLETED',
      task: expect.stringContaining('housing.csv')
    });
    expect(savedB).toMatchObject({
      state: 'WORKFLOW_COMPLETED',
      task: expect.stringContaining('homes.csv')
    });
    note({
      outcome:
        'both ran concurrently and completed; each notebook holds only its own data file',
      cellsKept: `${keptText(midA, afterA)} + ${keptText(midB, afterB)}`,
      resumed: 'not needed: completed'
    });
  });
});
