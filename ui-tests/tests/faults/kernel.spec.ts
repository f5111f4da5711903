/**
 * The kernel: it dies mid-exec; it is restarted between behaviors. The suite's fixture and its four
 * promises are in `promises.ts`.
 */
import {
  callProbe,
  cellInfos,
  cellsAt,
  clickControl,
  effectList,
  expect,
  ICellInfo,
  startRun,
  stateLine,
  test,
  warningList
} from '../helpers';
import { kernelDeathRun, twoStepTrace } from './scenarios';
import {
  clip,
  currentRow,
  expectCompleted,
  expectKept,
  expectMessage,
  expectSavedAtFault,
  note,
  referenceSetup,
  replaySetup,
  TASK,
  useFaultCases
} from './promises';

test.describe('Faults during a run', () => {
  useFaultCases();

  test('the kernel dies mid-exec', async ({ page, tmpPath }) => {
    const { path } = await replaySetup(
      page,
      tmpPath,
      twoStepTrace(kernelDeathRun()),
      ['--replay-speed', '0']
    );
    const task = 'Kernel death';
    await startRun(page, task, { path });
    await expectMessage(
      'state',
      stateLine(page),
      /^Paused: The kernel is not usable/,
      // JupyterLab restarts a dead kernel itself: the message says so, or asks for a restart.
      /Run the cells that define them again|[Rr]estart it, then resume/
    );
    const before = await cellsAt(page, path, m => m.paused);
    await expectSavedAtFault(page, path, task, before, 'PAUSED');
    // JupyterLab itself says that the kernel died and restarts it; the user acknowledges.
    const restarting = page.locator('.jp-Dialog', {
      hasText: 'appears to have died'
    });
    await expect(restarting).toBeVisible({ timeout: 30000 });
    await restarting.locator('.jp-Dialog-button.jp-mod-accept').click();
    await expect(await effectList(page)).toContainText('No usable kernel');
    // Resume at once, as a user would: the run itself waits until the restarted kernel answers its
    // reopened connection on shell and on iopub (which jupyter_server may have bound to the dead kernel).
    await clickControl(page, 'Resume');
    await expectCompleted(page, path, 'Resume');
    const after = await cellInfos(page, path);
    expectKept(before, after);
    expect(after.map(c => c.source)).toContain('After the kernel came back.');
  });

  test('the kernel is restarted between behaviors', async ({
    page,
    tmpPath
  }) => {
    const { path } = await referenceSetup(page, tmpPath, []);
    await callProbe(page, 'pauseAfter', path, 2);
    await startRun(page, TASK, { path });
    const before = await cellsAt(page, path, m => m.paused);
    await expectSavedAtFault(page, path, TASK, before, 'PAUSED');
    await callProbe(page, 'restartKernel', path);
    await expect
      .poll(() => callProbe(page, 'kernelAnswers', path), { timeout: 60000 })
      .toBe(true);
    await clickControl(page, 'Resume');
    // The planner sees the inputs gone from the kernel and rebuilds them first: a cell says so.
    const restarted = /was it restarted\?/;
    let said: ICellInfo | undefined;
    await expect
      .poll(
        async () => {
          said = (await cellInfos(page, path)).find(c =>
            restarted.test(c.source)
          );
          return said !== undefined;
        },
        { timeout: 60000 }
      )
      .toBe(true);
    // The run itself tells the user what the restart lost, and what happens about it.
    await expectMessage(
      'warning',
      warningList(page),
      /no longer in the kernel since the run paused \(was it restarted\?\)/,
      /run the cells that define them again/
    );
    note({
      message: `${currentRow().message}; cell: ${clip(said?.source.split('\n').find(l => restarted.test(l)) ?? '', 40)}`
    });
    await expectCompleted(page, path, 'Resume');
    const after = await cellInfos(page, path);
    expectKept(before, after);
  });
});
