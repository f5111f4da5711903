/**
 * HTTP failures: /planning failing (the fallback to /generating), /generating failing, resetting or
 * stalling (an error, then Retry), the failure's Show, 429 with Retry-After. The suite's fixture and
 * its four promises are in `promises.ts`.
 */
import {
  callProbe,
  cellInfos,
  cellsAt,
  clickControl,
  duplicates,
  expect,
  openNewNotebook,
  panel,
  requestLog,
  startRun,
  stateLine,
  test,
  warningList
} from '../helpers';
import { pauseAtFault } from './atFault';
import {
  expectCompleted,
  expectError,
  expectKept,
  expectMessage,
  expectSavedAtFault,
  NOTEBOOK,
  referenceSetup,
  TASK,
  useFaultCases
} from './promises';

test.describe('Faults during a run', () => {
  useFaultCases();

  test('planning answers 500 (fallback to generating)', async ({
    page,
    tmpPath
  }) => {
    // The client retries /planning 3 times: the third request fails 4 times in a currentRow().
    const flags = [3, 4, 5, 6].flatMap(n => [
      '--fault',
      `http-500@planning:${n}`
    ]);
    const { path, planner: p } = await referenceSetup(page, tmpPath, flags);
    const fallback = /\/planning failed.*500.*falling back to \/generating/;
    await pauseAtFault(page, path, { warning: fallback });
    await startRun(page, TASK, { path });
    const before = await cellsAt(
      page,
      path,
      m => m.event === 'warning' && fallback.test(m.detail ?? '')
    );
    await expectMessage(
      'warning',
      warningList(page),
      fallback,
      /falling back to \/generating/
    );
    await expectSavedAtFault(page, path, TASK, before, 'PAUSED');
    await clickControl(page, 'Resume');
    await expectCompleted(page, path, 'Resume');
    const after = await cellInfos(page, path);
    expectKept(before, after);
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
  });

  const errorFaults: Array<{
    title: string;
    fault: string;
    settings?: Record<string, number>;
    error: RegExp;
  }> = [
    {
      title: 'generating answers 500 (error, Retry recovers)',
      fault: 'http-500@generating:2',
      error: /\/generating failed.*500/
    },
    {
      title: 'the connection resets mid-stream',
      fault: 'reset@generating:2',
      error: /\/generating failed/
    },
    {
      title: 'the stream stalls',
      fault: 'stall@generating:2',
      settings: { stallTimeout: 2 },
      error: /stalled/
    }
  ];

  for (const { title, fault, settings, error } of errorFaults) {
    test(title, async ({ page, tmpPath }) => {
      const { path } = await referenceSetup(
        page,
        tmpPath,
        ['--fault', fault],
        settings
      );
      await startRun(page, TASK, { path });
      const before = await expectError(page, path, error);
      expect(before.length).toBeGreaterThan(1);
      const notifications = await page.evaluate(() =>
        window.galata.getNotifications()
      );
      expect(notifications.map(n => n.message).join('\n')).toMatch(
        /Workflow failed in .*fault\.ipynb/
      );
      await expectSavedAtFault(page, path, TASK, before, 'ERROR');
      await clickControl(page, 'Retry');
      await expectCompleted(page, path, 'Retry');
      // The failure's notification, and its Retry, went with the failure.
      const left = await page.evaluate(() => window.galata.getNotifications());
      expect(left.map(n => n.message).join('\n')).not.toMatch(
        /Workflow failed in/
      );
      const after = await cellInfos(page, path);
      expectKept(before, after);
      // A retry never applies an action of the failed behavior a second time.
      expect(duplicates(after)).toEqual([]);
    });
  }

  test("a failure's Show opens the failed notebook's run, not the current notebook's", async ({
    page,
    tmpPath
  }) => {
    const { path } = await referenceSetup(page, tmpPath, [
      '--fault',
      'http-500@generating:2'
    ]);
    await startRun(page, TASK, { path });
    const before = await expectError(page, path, /\/generating failed.*500/);
    await expectSavedAtFault(page, path, TASK, before, 'ERROR');
    // The user moves on to another notebook; the failure's notice stays up.
    await openNewNotebook(page, tmpPath, 'other.ipynb');
    await expect(panel(page).locator('.jp-bcc-notebook-name')).toHaveText(
      'other.ipynb'
    );
    const toast = page
      .locator('.Toastify__toast')
      .filter({ hasText: /Workflow failed in .*fault\.ipynb/ });
    await toast.getByRole('button', { name: 'Show' }).click();
    await expect(panel(page).locator('.jp-bcc-notebook-name')).toHaveText(
      NOTEBOOK
    );
    await expect(stateLine(page)).toHaveText(/^Stopped by an error/);
    await expect(page.locator('.jp-NotebookPanel:visible')).toHaveCount(1);
    expect(
      await page.evaluate(
        () =>
          (
            window as unknown as {
              jupyterapp: {
                shell: { currentWidget: { title: { label: string } } | null };
              };
            }
          ).jupyterapp.shell.currentWidget?.title.label
      )
    ).toBe(NOTEBOOK);
    // The panel Show opened is the failed run's: its Retry finishes that run.
    await clickControl(page, 'Retry');
    await expectCompleted(page, path, 'Retry');
    expectKept(before, await cellInfos(page, path));
  });

  test('429 with Retry-After', async ({ page, tmpPath }) => {
    const { path, planner: p } = await referenceSetup(page, tmpPath, [
      '--fault',
      'http-429=3@planning:2'
    ]);
    await pauseAtFault(page, path, { warning: /429/ });
    await startRun(page, TASK, { path });
    // The user is told why nothing happens for a while.
    const before = await cellsAt(
      page,
      path,
      m => m.event === 'warning' && /429/.test(m.detail ?? '')
    );
    await expectMessage('warning', warningList(page), /429/, /retrying in/);
    await expectSavedAtFault(page, path, TASK, before, 'PAUSED');
    await clickControl(page, 'Resume');
    await expectCompleted(page, path, 'Resume');
    const log = requestLog(p);
    const limited = log.findIndex(e => /^POST \/planning 429/.test(e.line));
    expect(limited).toBeGreaterThanOrEqual(0);
    const next = log
      .slice(limited + 1)
      .find(e => /^POST \/planning /.test(e.line));
    expect(next?.line).toMatch(/^POST \/planning 200/);
    // In the client's own clock, the next /planning waited out the 3 s of Retry-After (a timer
    // never fires early; the margin is for the clock's resolution).
    const planning = (await callProbe(page, 'exchanges', path)).filter(e =>
      e.endpoint.endsWith('/planning')
    );
    const met = planning.findIndex(e => e.status === 429);
    expect(met).toBeGreaterThanOrEqual(0);
    const retried = planning[met + 1];
    expect(
      retried.sentAt - (planning[met].answeredAt as number)
    ).toBeGreaterThanOrEqual(2950);
    const after = await cellInfos(page, path);
    expectKept(before, after);
  });
});
