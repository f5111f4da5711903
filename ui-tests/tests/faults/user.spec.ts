/**
 * The user: closes the notebook or reloads the page mid-run, types while cells stream in, meets markup
 * the planner sent, deletes a cell the run is about to run, runs two notebooks at once. The suite's
 * fixture and its four promises are in `promises.ts`.
 */
import {
  callProbe,
  cellInfos,
  clickControl,
  command,
  configure,
  effectList,
  effects,
  expect,
  HOUSING,
  ICellInfo,
  kept,
  openNewNotebook,
  openNotebook,
  panel,
  planner,
  reloadPage,
  runInfo,
  savedCells,
  savedNotebook,
  savedRun,
  startRun,
  stateLine,
  test,
  waitForEnd
} from '../helpers';
import {
  deleteBeforeExecRun,
  focusRun,
  injectionRun,
  twoStepTrace,
  VICTIM
} from './scenarios';
import {
  control,
  endedAt,
  ILiveRun,
  liveRun,
  recordEnd,
  pauseAtFault,
  savedPlace
} from './atFault';

import {
  currentRow,
  expectCompleted,
  expectKept,
  expectMessage,
  expectSavedAfterLoss,
  expectSavedAtFault,
  note,
  NOTEBOOK,
  NOTHING_TO_DO,
  replaySetup,
  resumeReopened,
  slowRunMidSecondBehavior,
  TASK,
  useFaultCases
} from './promises';

test.describe('Faults during a run', () => {
  useFaultCases();

  test('the notebook is closed mid-run', async ({ page, tmpPath }) => {
    const { path, before } = await slowRunMidSecondBehavior(page, tmpPath);
    // Where the run stands when closing the notebook has stopped it.
    await recordEnd(page, path);
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
    // Closing the notebook stops its run (IDLE), saved where it stood: the step is planned again.
    const at = await endedAt(page, path);
    expect(at, 'the run ended when its notebook closed').not.toBeNull();
    await expectSavedAfterLoss(
      page,
      path,
      TASK,
      before,
      at as ILiveRun,
      'IDLE'
    );
    expect((await savedRun(page, path))?.phase).toBe('plan');
    await openNotebook(page, path);
    await resumeReopened(page, path, before);
  });

  test('the page reloads mid-run, then resume', async ({ page, tmpPath }) => {
    const { path, before } = await slowRunMidSecondBehavior(page, tmpPath);
    // The run goes on streaming; the reload comes once its cells so far and its current step are in
    // the file (the run state is written at checkpoints, at most once per save interval).
    let at: ILiveRun | null = null;
    await expect
      .poll(
        async () => {
          const file = await savedNotebook(page, path);
          const now = await liveRun(page, path);
          at = now;
          return (
            now.running &&
            savedPlace(file)?.stepId === now.stepId &&
            kept(before, savedCells(file)).missing.length === 0
          );
        },
        { timeout: 30000, intervals: [250] }
      )
      .toBe(true);
    await reloadPage(page);
    // Read before anything runs again: the page that ran the run is gone.
    await expectSavedAfterLoss(
      page,
      path,
      TASK,
      before,
      at as unknown as ILiveRun,
      undefined,
      true
    );
    await openNotebook(page, path);
    await command(page, 'notebook-bcc:open');
    await resumeReopened(page, path, before);
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
    const userCellId = (await cellInfos(page, path))[0].id;
    const task = 'Stream while the user types';
    // Paused at the stream's last cell (about 7 s in, as the typing ends), through the runner as the
    // panel's commands do: a click would take the focus.
    await pauseAtFault(page, path, { cell: /^streamed_23 = 23$/ });
    await startRun(page, task, { path });
    await expect
      .poll(async () => (await cellInfos(page, path)).length, {
        timeout: 30000
      })
      .toBeGreaterThan(2);
    // The run's cells so far; the user's cell changes by typing, so it is checked on its own below.
    const before = (await cellInfos(page, path)).filter(
      c => c.id !== userCellId
    );
    // About 6 s of typing while cells keep arriving every 300 ms.
    await page.keyboard.type(typed, { delay: 90 });
    await page.screenshot({
      path: testInfo.outputPath('typing-while-streaming.png')
    });
    const during = await cellInfos(page, path);
    expect(during.length, 'cells arrived while typing').toBeGreaterThan(6);
    expect(await callProbe(page, 'focus', path)).toEqual({
      activeCellIndex: 0,
      mode: 'edit'
    });
    await expectSavedAtFault(page, path, task, before, 'PAUSED');
    // What the user sees of it: their text, whole, in their cell.
    await expectMessage(
      'cell',
      userCell,
      /typed by hand while the planner writes its cells/,
      NOTHING_TO_DO
    );
    await control(page, path, 'resume');
    await expectCompleted(page, path, 'Resume');
    const after = await cellInfos(page, path);
    expect(after[0]).toMatchObject({ id: userCellId, source: typed });
    expect(after.slice(1).filter(c => c.source.includes('user_notes'))).toEqual(
      []
    );
    expect(await callProbe(page, 'focus', path)).toEqual({
      activeCellIndex: 0,
      mode: 'edit'
    });
    expect(kept(during, after).missing).toEqual([]);
    expectKept(before, after);
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
    const task = 'Markup everywhere';
    await pauseAtFault(page, path, { cell: /Markdown cell with markup/ });
    await startRun(page, task, { path });
    const focus = panel(page).locator('.jp-bcc-focus');
    await expect(focus).toContainText('Focus with markup', { timeout: 30000 });
    await expect(focus).toContainText('a link');
    // The markup's cells are in while the step stays current: they are kept with their markup.
    const before = await cellInfos(page, path);
    expect(
      before.some(c => c.source.includes('Markdown cell with markup'))
    ).toBe(true);
    // Names and warnings are text: the markup shows as typed.
    await expectMessage(
      'tree',
      panel(page).locator('.jp-bcc-tree'),
      /Step <img src=x onerror="window\.__bccInjected='step name'">/,
      NOTHING_TO_DO
    );
    await expectSavedAtFault(page, path, task, before, 'PAUSED');
    await clickControl(page, 'Resume');
    await expectCompleted(page, path, 'Resume');
    const after = await cellInfos(page, path);
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
    expectKept(before, after);
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
    const task = 'Delete a cell';
    await pauseAtFault(page, path, { effect: /was not found/ });
    await startRun(page, task, { path });
    await expect
      .poll(
        async () =>
          (await cellInfos(page, path)).some(c => c.source === VICTIM),
        {
          timeout: 60000,
          intervals: [100]
        }
      )
      .toBe(true);
    const all = await cellInfos(page, path);
    const victim = all.find(c => c.source === VICTIM) as ICellInfo;
    await callProbe(page, 'deleteCell', path, victim.id);
    const before = all.filter(c => c.id !== victim.id);
    // The user deleted the cell: the run says what it could not do, and nothing is asked of the user.
    await expectMessage(
      'effect',
      await effectList(page),
      /was not found/,
      NOTHING_TO_DO,
      30000
    );
    await expectSavedAtFault(page, path, task, before, 'PAUSED');
    await clickControl(page, 'Resume');
    await expectCompleted(page, path, 'Resume');
    const after = await cellInfos(page, path);
    expect(after.map(c => c.source)).not.toContain(VICTIM);
    expectKept(before, after);
    expect((await effects(page, path)).join('\n')).toMatch(
      /Cell '.*' \(codecell_id 'lastAddedCellId'\) was not found/
    );
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
    const taskA = 'What drives SalePrice? Use housing.csv.';
    const taskB = 'What drives SalePrice? Use homes.csv.';
    // Each run is paused once it has run a behavior while the other runs too.
    await pauseAtFault(page, a, { behaviors: 1 });
    await pauseAtFault(page, b, { behaviors: 1 });
    await startRun(page, taskA, { path: a, dataFiles: ['housing.csv'] });
    await startRun(page, taskB, { path: b, dataFiles: ['homes.csv'] });
    await expect
      .poll(
        async () =>
          (await runInfo(page, a)).paused && (await runInfo(page, b)).paused,
        { timeout: 60000 }
      )
      .toBe(true);
    const [midA, midB] = [await cellInfos(page, a), await cellInfos(page, b)];
    await expectSavedAtFault(page, a, taskA, midA, 'PAUSED');
    const savedA = currentRow().saved;
    await expectSavedAtFault(page, b, taskB, midB, 'PAUSED');
    note({ saved: `${savedA} + ${currentRow().saved}` });
    await control(page, a, 'resume');
    await control(page, b, 'resume');
    const [endA, endB] = [
      await waitForEnd(page, a, 120000),
      await waitForEnd(page, b, 120000)
    ];
    note({
      ended: `nothing → ${endA.finished?.reason} + ${endB.finished?.reason}`
    });
    expect(endA.finished?.reason).toBe('completed');
    expect(endB.finished?.reason).toBe('completed');
    // The active notebook is the second one: its panel says how it ended; nothing failed.
    await expectMessage('state', stateLine(page), /^Completed$/, NOTHING_TO_DO);
    const [afterA, afterB] = [
      await cellInfos(page, a),
      await cellInfos(page, b)
    ];
    const [keptA, keptB] = [kept(midA, afterA), kept(midB, afterB)];
    note({
      cellsKept: `${keptA.kept}/${keptA.of} + ${keptB.kept}/${keptB.of}`
    });
    expect(keptA.missing).toEqual([]);
    expect(keptB.missing).toEqual([]);
    expect((await savedNotebook(page, a)).cells.length).toBe(afterA.length);
    expect((await savedNotebook(page, b)).cells.length).toBe(afterB.length);
    const cellsA = afterA.map(c => c.source).join('\n');
    const cellsB = afterB.map(c => c.source).join('\n');
    expect(cellsA).toContain('housing.csv');
    expect(cellsA).not.toContain('homes.csv');
    expect(cellsB).toContain('homes.csv');
    expect(cellsB).not.toContain('housing.csv');
    const [runA, runB] = [await savedRun(page, a), await savedRun(page, b)];
    expect(runA).toMatchObject({
      state: 'WORKFLOW_COMPLETED',
      task: expect.stringContaining('housing.csv')
    });
    expect(runB).toMatchObject({
      state: 'WORKFLOW_COMPLETED',
      task: expect.stringContaining('homes.csv')
    });
  });
});
