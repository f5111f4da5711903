/**
 * Content and bad input, bounded (docs/protocol.md#limits): a 10 MB output, a pathological pattern,
 * a paused run whose stream floods it. The suite's fixture and its four promises are in `promises.ts`.
 */
import {
  cellInfos,
  cellsAt,
  clickControl,
  effectList,
  effects,
  expect,
  panel,
  requests,
  startRun,
  stateLine,
  test,
  warningList
} from '../helpers';
import { largeOutputRun, twoStepTrace } from './scenarios';
import { pauseAtFault } from './atFault';
import {
  expectCompleted,
  expectKept,
  expectMessage,
  expectSavedAtFault,
  referenceSetup,
  replaySetup,
  TASK,
  useFaultCases
} from './promises';

test.describe('Faults during a run', () => {
  useFaultCases();

  test('a 10 MB output in one cell', async ({ page, tmpPath }) => {
    const { path } = await replaySetup(
      page,
      tmpPath,
      twoStepTrace(largeOutputRun()),
      ['--replay-speed', '0']
    );
    const task = 'Print 10 MB';
    // Paused once the 10 MB output has reached the run (its effect, cut for the planner).
    await pauseAtFault(page, path, { effect: /\[TRUNCATED:/ });
    await startRun(page, task, { path });
    // The cells when the cell that prints 10 MB was added, before it ran.
    const before = await cellsAt(page, path, m =>
      m.cells.some(c => c.source.includes('os.urandom'))
    );
    await expectSavedAtFault(page, path, task, before, 'PAUSED');
    await clickControl(page, 'Resume');
    await expectCompleted(page, path, 'Resume');
    const after = await cellInfos(page, path);
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
    await expectMessage(
      'effect',
      clipped,
      /\[TRUNCATED:/,
      /characters omitted to prevent context overflow/
    );
    const sent = await requests(page, path);
    expect(sent.length).toBeGreaterThanOrEqual(5);
    expect(Math.max(...sent.map(r => r.chars))).toBeLessThanOrEqual(18600);
    expectKept(before, after);
  });

  // -------------------------------------------------------------------------------------------
  // Bad input, bounded (docs/protocol.md#limits): cut with a message, the run goes on
  // -------------------------------------------------------------------------------------------

  // (A 16 MB line, 5,000 warnings and 100,000 actions of the stream are met in the one run above.)
  const boundedFaults: Array<{
    title: string;
    fault: string;
    message: RegExp;
    /** What the run did about it, as the warning says. */
    action: RegExp;
    /** What the planner saw afterwards, in the run's effects. */
    effect?: RegExp;
  }> = [
    {
      title: 'a pathological regex pattern in effects_config',
      // On every /planning answer of the run's first behaviors: one of them comes before a /generating.
      fault: 'bad-pattern@2 bad-pattern@3 bad-pattern@4',
      message:
        /Effects include pattern '\(a\+\)\+\$' refused: nested quantifier/,
      action: /refused/
    }
  ];

  for (const { title, fault, message, action, effect } of boundedFaults) {
    test(title, async ({ page, tmpPath }) => {
      const { path } = await referenceSetup(
        page,
        tmpPath,
        fault.split(' ').flatMap(f => ['--fault', f])
      );
      await pauseAtFault(page, path, { warning: message });
      await startRun(page, TASK, { path });
      const before = await cellsAt(
        page,
        path,
        m => m.event === 'warning' && message.test(m.detail ?? '')
      );
      await expectMessage('warning', warningList(page), message, action);
      await expectSavedAtFault(page, path, TASK, before, 'PAUSED');
      await clickControl(page, 'Resume');
      await expectCompleted(page, path, 'Resume');
      const after = await cellInfos(page, path);
      expectKept(before, after);
      if (effect) {
        expect((await effects(page, path)).join('\n')).toMatch(effect);
      }
      // Every request stayed within the context limit however much came in.
      const sent = await requests(page, path);
      expect(Math.max(...sent.map(r => r.chars))).toBeLessThanOrEqual(18600);
    });
  }

  test('a paused run whose stream sends 10 MB more', async ({
    page,
    tmpPath
  }) => {
    const { path } = await referenceSetup(page, tmpPath, [
      '--fault',
      'paused-flood@2'
    ]);
    // The flood comes 4 s after the cell that announces it: the run is paused by then, stream open.
    await startRun(page, TASK, { path });
    await expect
      .poll(
        async () =>
          (await cellInfos(page, path)).some(c =>
            c.source.includes('A flood of actions follows')
          ),
        { timeout: 60000, intervals: [100] }
      )
      .toBe(true);
    await clickControl(page, 'Pause');
    await expect(stateLine(page)).toHaveText(/^Paused/, { timeout: 30000 });
    const before = await cellsAt(page, path, m => m.paused);
    await expectSavedAtFault(page, path, TASK, before, 'PAUSED');
    const waiting = /([\d,]+) cells from the planner wait until you resume/;
    await expectMessage(
      'panel',
      panel(page),
      waiting,
      /wait until you resume/,
      30000
    );
    // The stream is not read while the queue is full: what is held stays bounded.
    await page.waitForTimeout(3000);
    const held = Number(
      (waiting.exec(await panel(page).innerText())?.[1] ?? '0').replace(
        /,/g,
        ''
      )
    );
    expect(held).toBeGreaterThan(0);
    expect(held).toBeLessThanOrEqual(500);
    await clickControl(page, 'Resume');
    await expectCompleted(page, path, 'Resume');
    const after = await cellInfos(page, path);
    expectKept(before, after);
    // The held actions were applied after the resume: their effects reached the planner.
    expect((await effects(page, path)).join('\n')).toMatch(/bcc_fault_flood/);
  });
});
