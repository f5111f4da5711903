/**
 * Faults of the /generating stream: lines the client cannot use, skipped with a warning while the run
 * goes on (one run meets six of them), a truncated last line, a character split across chunks. The
 * suite's fixture and its four promises are in `promises.ts`.
 */
import {
  cellInfos,
  cellsAt,
  clickControl,
  effects,
  expect,
  ICellContent,
  requests,
  runInfo,
  startRun,
  test,
  warningList
} from '../helpers';
import { MULTIBYTE, splitUtf8Run, twoStepTrace } from './scenarios';
import { pauseAtFault, forgetFault } from './atFault';
import {
  beginCases,
  currentRow,
  expectCompleted,
  expectKept,
  expectMessage,
  expectSavedAtFault,
  note,
  NOTHING_TO_DO,
  referenceSetup,
  replaySetup,
  selectCase,
  TASK,
  useFaultCases
} from './promises';

test.describe('Faults during a run', () => {
  useFaultCases();

  /** A line of the /generating stream the client skips with a warning, the run going on. */
  interface IStreamFault {
    title: string;
    fault: string;
    warning: RegExp;
    /** What the run did about it, as the warning says. */
    action: RegExp;
    /** A cell that would exist only if the faulty line had been applied. */
    absent?: (cell: ICellContent) => boolean;
    /** What the planner saw afterwards, in the run's effects. */
    effect?: RegExp;
  }

  /**
   * Met in one run, one per behavior from the second on, each paused at, read and resumed in turn: what
   * the client does with each line is proven case by case in jest (the protocol's actionStream and
   * client specs, the engine's runnerBounds and runnerControl specs); here each meets a real JupyterLab.
   * (A truncated last line warns as a malformed one does: it has a run of its own.)
   */
  const oneRunFaults: IStreamFault[] = [
    {
      title: '100,000 tiny actions',
      fault: 'many-actions',
      warning:
        /The planner sent more than 2,000 actions in one behavior; the rest of its answer was not read/,
      action: /was not read/,
      effect: /more than 2,000 actions in one behavior/
    },
    {
      title: 'a malformed NDJSON line',
      fault: 'malformed-line',
      warning: /malformed JSON line ignored/,
      action: /ignored/,
      // The line is `{"action": {"action": "add", ..., "content": "malformed`: salvaged or shown raw.
      absent: cell =>
        /^\s*malformed/.test(cell.source) || cell.source.includes('"shot_type"')
    },
    {
      title: 'an unknown action',
      fault: 'unknown-action',
      warning: /Unknown action type 'bcc_fault_unknown_action'/,
      action: /skipped/,
      absent: cell => cell.source.includes('injected fault')
    },
    {
      title: 'an action missing a required field',
      fault: 'missing-field',
      warning: /action ignored.*codecell_id/,
      action: /ignored/
    },
    {
      title: '5,000 stream warnings',
      fault: 'many-warnings',
      warning: /ignored line without action/,
      action: /ignored/
    },
    {
      title: 'a 16 MB line',
      fault: 'long-line',
      warning: /line of [\d,]+ characters dropped \(the limit is 4,194,304\)/,
      action: /dropped/
    }
  ];

  test(`${oneRunFaults.length} faults of the stream in one run, one per behavior`, async ({
    page,
    tmpPath
  }) => {
    test.setTimeout(oneRunFaults.length * 60000);
    beginCases(oneRunFaults.map(f => f.title));
    const { path } = await referenceSetup(
      page,
      tmpPath,
      oneRunFaults.flatMap((f, i) => ['--fault', `${f.fault}@${i + 2}`])
    );
    // The run goes on by itself: it is paused at each warning, to read its file there.
    await pauseAtFault(page, path, { warning: oneRunFaults[0].warning });
    await startRun(page, TASK, { path });
    const befores: ICellContent[][] = [];
    for (const [i, { warning, action }] of oneRunFaults.entries()) {
      selectCase(i);
      const before = await cellsAt(
        page,
        path,
        m => m.event === 'warning' && warning.test(m.detail ?? '')
      );
      await expectMessage('warning', warningList(page), warning, action);
      await expectSavedAtFault(page, path, TASK, before, 'PAUSED');
      befores.push(before);
      const next = oneRunFaults[i + 1];
      if (next) {
        await forgetFault(page, path);
        await pauseAtFault(page, path, { warning: next.warning });
      }
      await clickControl(page, 'Resume');
    }
    await expectCompleted(page, path, 'Resume');
    const { ended } = currentRow();
    const after = await cellInfos(page, path);
    const seen = (await effects(page, path)).join('\n');
    for (const [i, { absent, effect }] of oneRunFaults.entries()) {
      selectCase(i);
      note({ ended });
      expectKept(befores[i], after);
      if (absent) {
        expect(after.filter(absent)).toEqual([]);
      }
      if (effect) {
        expect(seen).toMatch(effect);
      }
    }
    // Every request stayed within the context limit however much came in.
    const sent = await requests(page, path);
    expect(Math.max(...sent.map(r => r.chars))).toBeLessThanOrEqual(18600);
  });

  test('a truncated last line', async ({ page, tmpPath }) => {
    const warning = /malformed JSON line ignored/;
    const { path } = await referenceSetup(page, tmpPath, [
      '--fault',
      'truncated-line@2'
    ]);
    // The run goes on by itself: it is paused at the warning, to read its file there.
    await pauseAtFault(page, path, { warning });
    await startRun(page, TASK, { path });
    const before = await cellsAt(
      page,
      path,
      m => m.event === 'warning' && warning.test(m.detail ?? '')
    );
    await expectMessage('warning', warningList(page), warning, /ignored/);
    await expectSavedAtFault(page, path, TASK, before, 'PAUSED');
    await clickControl(page, 'Resume');
    await expectCompleted(page, path, 'Resume');
    const after = await cellInfos(page, path);
    expectKept(before, after);
  });

  test('a UTF-8 character split across chunks', async ({ page, tmpPath }) => {
    const { path } = await replaySetup(
      page,
      tmpPath,
      twoStepTrace(splitUtf8Run()),
      ['--replay-speed', '0', '--fault', 'split-utf8']
    );
    // The split is in the first stream: the cells before it are the notebook's own. The run is
    // paused at the cell that holds the split character, to read the file with that cell in it.
    await pauseAtFault(page, path, { cell: new RegExp(MULTIBYTE) });
    const task = 'Split a character';
    await startRun(page, task, { path });
    const before = await cellsAt(page, path, m =>
      m.cells.some(c => c.source === MULTIBYTE)
    );
    await expectSavedAtFault(page, path, task, before, 'PAUSED');
    // Nothing failed that the user could see: the character arrives whole, and no warning says otherwise.
    await expectMessage(
      'cell',
      page.locator('.jp-NotebookPanel:visible .jp-Cell').filter({
        hasText: MULTIBYTE
      }),
      new RegExp(MULTIBYTE),
      NOTHING_TO_DO
    );
    expect((await runInfo(page, path)).warnings).toEqual([]);
    await clickControl(page, 'Resume');
    await expectCompleted(page, path, 'Resume');
    const after = await cellInfos(page, path);
    expect(after.map(c => c.source)).toContain(MULTIBYTE);
    expect(after.filter(c => c.source.includes('\uFFFD'))).toEqual([]);
    const info = await runInfo(page, path);
    expect(info.warnings).toEqual([]);
    expectKept(before, after);
  });
});
