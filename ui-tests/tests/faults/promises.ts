/**
 * The fault suite (`faults/*.spec.ts`): a misbehaving planner, kernel or user during a live run. Here
 * are its fixture and its four promises: every case asserts that the cells made before the fault are
 * kept (same id and content), that the run's progress at the fault is in the notebook file, that the
 * user sees a clear message, and that the run finishes, after a Retry or a Resume where one is needed.
 * The file is read while the run is stopped at the fault (ERROR, or PAUSED: a fault the run handles by
 * itself is paused at, `pauseAtFault`), before anything later is saved, and must hold that state, the
 * step and behavior and the cells; the message must name what failed and the way on. `useFaultCases`'s
 * `afterEach` fails a case that checked less. Each test starts its own planner (the reference planner
 * with fault flags, or a replayed script) on a free port and points the extension at it through the
 * settings. A table of what each case measured is printed after each spec and written to
 * test-results/faults-table.txt.
 */
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';
import type { Locator, Page } from '@playwright/test';
import {
  cellInfos,
  cellsAt,
  clickControl,
  configure,
  expect,
  HOUSING,
  ICellContent,
  ICellInfo,
  installProbe,
  kept,
  openNewNotebook,
  panel,
  planner,
  runInfo,
  savedCells,
  savedNotebook,
  savedRun,
  startRun,
  stateLine,
  stopPlanners,
  test,
  waitForEnd
} from '../helpers';
import { IFaultRow, recordRow, writeTable } from './table';
import { ILiveRun, liveRun, savedPlace, triggered } from './atFault';

export const TASK = 'What drives SalePrice? Use housing.csv.';
export const NOTEBOOK = 'fault.ipynb';
const NOT_MEASURED = '-';

interface ICase {
  row: IFaultRow;
  /** The case measured the message and the saved state in the strict forms above. */
  strict: { message: boolean; saved: boolean };
}

/** The cases of the running test: one, or one per fault of a run that meets several (`beginCases`). */
let cases: ICase[] = [];
/** The current case's row and strict marks. */
let row: IFaultRow;
let strict: ICase['strict'];

/** Starts the test's cases afresh, one row per title; the first is the current one. */
export function beginCases(titles: string[]): void {
  cases = titles.map(title => ({
    row: {
      case: title,
      message: NOT_MEASURED,
      saved: NOT_MEASURED,
      cellsKept: NOT_MEASURED,
      ended: NOT_MEASURED
    },
    strict: { message: false, saved: false }
  }));
  selectCase(0);
}

/** Makes case `index` the one the checks below note in. */
export function selectCase(index: number): void {
  ({ row, strict } = cases[index]);
}

/** Sets cells of this case's row, each as the test measures it. */
export function note(fields: Partial<IFaultRow>): void {
  Object.assign(row, fields);
}

export function clip(text: string, length = 90): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > length ? `${flat.slice(0, length - 1)}…` : flat;
}

/** The reference planner (no line delay unless given) with these extra flags, and a notebook. */
export async function referenceSetup(
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
export async function replaySetup(
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

// ---------------------------------------------------------------------------------------------
// The four promises
// ---------------------------------------------------------------------------------------------

/** A fault the user never sees fail (a split character, typing, markup, a deleted cell handled): nothing to do. */
export const NOTHING_TO_DO = null;

/**
 * The user sees a clear message: the text shown in `where` names what failed (`names`, the failing
 * thing of the case) and what the user can do, or, for a fault the run handles by itself, what it did
 * about it (`action`: a Retry or Resume it offers, a line ignored, a fallback taken). Both are read
 * from the same shown element (an error box holds its Retry button). `NOTHING_TO_DO` is for a fault the
 * run absorbs without anything failing: `names` is then what the user sees of it. The table gets the
 * line that names the fault and the action found.
 */
export async function expectMessage(
  where: string,
  locator: Locator,
  names: RegExp,
  action: RegExp | typeof NOTHING_TO_DO,
  timeout = 60000
): Promise<void> {
  await expect(locator).toContainText(names, { timeout });
  if (action) {
    await expect(
      locator,
      'the message says what the user can do'
    ).toContainText(action);
  }
  const shown = await locator.innerText();
  const line =
    shown
      .split('\n')
      .map(l => l.trim())
      .find(l => names.test(l)) ?? shown;
  const does = action ? (action.exec(shown)?.[0] ?? '') : 'nothing to do';
  note({ message: `${where}: ${clip(line)} [${clip(does, 30)}]` });
  strict.message = true;
}

/** How the run's place reads in the table. */
function placeOf(p: {
  state: string;
  stepId: string | null;
  behaviorId: string | null;
}): string {
  return `${p.state} at ${p.stepId ?? '-'}/${p.behaviorId ?? '-'}`;
}

/**
 * The run's progress at the fault is in the notebook file, read while the run is stopped there: the
 * run is in ERROR or PAUSED (`state` when given), and the file, read from the server's disk while the
 * runner still says so (nothing later can have saved: a run stopped at its fault saves again only once
 * the user retries or resumes), holds that same state, this task, the step and the behavior where the
 * run stopped, and every cell of `before`, same id and content.
 */
export async function expectSavedAtFault(
  page: Page,
  path: string,
  task: string,
  before: ICellContent[],
  state?: 'ERROR' | 'PAUSED'
): Promise<void> {
  // A pause takes effect at the next action boundary: wait for the run to be stopped at the fault.
  await expect
    .poll(
      async () => {
        const now = await liveRun(page, path);
        return (now.state === 'ERROR' && !now.running) ||
          (now.state === 'PAUSED' && now.paused)
          ? now.state
          : `not stopped: ${placeOf(now)}`;
      },
      { timeout: 60000, intervals: [100, 250] }
    )
    .toBe(state ?? expect.stringMatching(/^(ERROR|PAUSED)$/));
  const live = await liveRun(page, path);
  let found = '';
  let moved = '';
  const saved = expect
    .poll(
      async () => {
        const file = await savedNotebook(page, path);
        const now = await liveRun(page, path);
        if (JSON.stringify(now) !== JSON.stringify(live)) {
          moved = `${placeOf(live)} -> ${placeOf(now)}`;
          return true;
        }
        const run = savedPlace(file);
        const inFile = kept(before, savedCells(file));
        found = `${run ? placeOf(run) : 'no run state'} (task ${run?.task === task ? 'ours' : 'other'}), ${inFile.kept}/${inFile.of} cells`;
        return (
          run !== null &&
          run.task === task &&
          run.state === live.state &&
          run.stepId === live.stepId &&
          run.behaviorId === live.behaviorId &&
          inFile.missing.length === 0
        );
      },
      { timeout: 30000, intervals: [250, 500] }
    )
    .toBe(true);
  await saved.catch((error: Error) => {
    throw new Error(
      `saved at the fault (the run is ${placeOf(live)}): the file says ${found}\n${error.message}`
    );
  });
  if (moved) {
    throw new Error(
      `the run moved on before its file held the fault (${moved}); the file said ${found}`
    );
  }
  const fault = await triggered(page, path);
  note({
    saved: `${found}, read while ${live.state}${fault ? ` (fault in ${fault.stepId}/${fault.behaviorId})` : ''}`
  });
  strict.saved = true;
}

/**
 * For a fault that ends the page's hold on the run (the notebook closed, the page reloaded): the run
 * cannot be paused there, so the file is read right after the fault, before anything runs again. It
 * holds this task, `state` when given (closing the notebook stops the run), the step and behavior the
 * run was at (`at`: where closing stopped it, or where it was just before the reload), and every cell
 * of `before`. A reload finds the run's last checkpoint (`checkpoint`): the state is written at a
 * step's start, a behavior's end, a pause, an error and a stop, not with each cell, so the file holds
 * the step and either the open behavior, or none, or a closed one with the step to plan next.
 */
export async function expectSavedAfterLoss(
  page: Page,
  path: string,
  task: string,
  before: ICellContent[],
  at: ILiveRun,
  state?: string,
  checkpoint = false
): Promise<void> {
  let found = '';
  const saved = expect
    .poll(
      async () => {
        const file = await savedNotebook(page, path);
        const run = savedPlace(file);
        const inFile = kept(before, savedCells(file));
        found = `${run ? placeOf(run) : 'no run state'} (task ${run?.task === task ? 'ours' : 'other'}), ${inFile.kept}/${inFile.of} cells`;
        return (
          run !== null &&
          run.task === task &&
          (state === undefined || run.state === state) &&
          run.state !== 'WORKFLOW_COMPLETED' &&
          run.stepId === at.stepId &&
          (run.behaviorId === at.behaviorId ||
            (checkpoint &&
              (run.behaviorId === null || run.phase === 'plan'))) &&
          inFile.missing.length === 0
        );
      },
      { timeout: 30000, intervals: [250, 500] }
    )
    .toBe(true);
  await saved.catch((error: Error) => {
    throw new Error(
      `saved at the fault (the run was ${placeOf(at)}): the file says ${found}\n${error.message}`
    );
  });
  note({ saved: `${found}, read after the fault` });
  strict.saved = true;
}

/** The cells made before the fault are still there, same id and content. */
export function expectKept(
  before: ICellContent[],
  after: ICellContent[]
): void {
  const k = kept(before, after);
  note({ cellsKept: `${k.kept}/${k.of}` });
  expect(k.missing).toEqual([]);
}

/** The run completed, its state is saved as completed in the file, and the sidebar says so. */
export async function expectCompleted(
  page: Page,
  path: string,
  after: 'nothing' | 'Retry' | 'Resume' | 'reopen, Resume'
): Promise<void> {
  // Run, Retry and Resume take the run lock first (a request to the server): the run starts a moment
  // after the command, and until then the page reports the last run's end, if any.
  await expect
    .poll(
      async () => {
        const now = await runInfo(page, path);
        return now.running || now.finished?.reason === 'completed';
      },
      { timeout: 30000, intervals: [100] }
    )
    .toBe(true);
  const info = await waitForEnd(page, path);
  note({ ended: `${after} → ${info.finished?.reason ?? 'not finished'}` });
  expect(
    info.finished?.reason,
    info.finished?.message ?? info.error ?? ''
  ).toBe('completed');
  await expect(stateLine(page)).toHaveText('Completed');
  await expect
    .poll(async () => (await savedRun(page, path))?.state, { timeout: 20000 })
    .toBe('WORKFLOW_COMPLETED');
}

/** The run stopped on an error, shown in the sidebar with a Retry; returns the cells at the error. */
export async function expectError(
  page: Page,
  path: string,
  message: RegExp
): Promise<ICellContent[]> {
  // The run starts a moment after the Run command (it takes the run lock first): wait for an end.
  await expect
    .poll(
      async () => {
        const now = await runInfo(page, path);
        return !now.running && !!now.finished;
      },
      { timeout: 90000, intervals: [250] }
    )
    .toBe(true);
  const info = await runInfo(page, path);
  expect(info.finished?.reason).toBe('error');
  // The error box names the failure and holds the way on: Retry (or Set Variables…).
  await expectMessage(
    'error',
    panel(page).locator('.jp-bcc-error'),
    message,
    /Retry|Set Variables/
  );
  // The state line says in words that an error stopped the run; the box above holds the detail.
  await expect(stateLine(page)).toHaveText(/^Stopped by an error/);
  return cellsAt(
    page,
    path,
    m => m.event === 'finished' && m.detail === 'error'
  );
}

/** Waits until the run is in its second behavior and that behavior has added a cell. */
export async function midSecondBehavior(
  page: Page,
  path: string
): Promise<void> {
  await expect
    .poll(async () => (await runInfo(page, path)).behaviorsRun, {
      timeout: 60000,
      intervals: [100]
    })
    .toBeGreaterThanOrEqual(1);
  const atFirst = (await cellInfos(page, path)).length;
  await expect
    .poll(async () => (await cellInfos(page, path)).length, {
      timeout: 60000,
      intervals: [100]
    })
    .toBeGreaterThanOrEqual(atFirst + 2);
  const info = await runInfo(page, path);
  expect(info.running, 'the run should still be going').toBe(true);
  expect(info.behaviorsRun).toBe(1);
}

/** A run of the reference planner streaming slowly (250 ms a line), caught in its second behavior. */
export async function slowRunMidSecondBehavior(
  page: IJupyterLabPageFixture,
  tmpPath: string
): Promise<{ path: string; before: ICellInfo[] }> {
  const { path } = await referenceSetup(page, tmpPath, ['--line-delay', '250']);
  await startRun(page, TASK, { path });
  await midSecondBehavior(page, path);
  // An open thinking cell is rewritten when the planner finishes thinking (by design, not a loss):
  // the promise is about the cells as made, so it is left out.
  const before = (await cellInfos(page, path)).filter(
    c => !/is thinking/.test(c.source)
  );
  return { path, before };
}

/**
 * The notebook, opened again, says where the stopped run stands and keeps the cells of `before`;
 * Resume then completes the run. Returns the cells found on reopening and at the end.
 */
export async function resumeReopened(
  page: Page,
  path: string,
  before: ICellContent[]
): Promise<{ reopened: ICellInfo[]; after: ICellInfo[] }> {
  await expect(stateLine(page)).toHaveText(/^Stopped at step /, {
    timeout: 30000
  });
  // The panel says where the run stopped and offers Resume.
  await expectMessage(
    'state',
    panel(page),
    /Stopped at step /,
    /Resume/,
    30000
  );
  const reopened = await cellInfos(page, path);
  expect(kept(before, reopened).missing).toEqual([]);
  await clickControl(page, 'Resume');
  await expectCompleted(page, path, 'reopen, Resume');
  const after = await cellInfos(page, path);
  expectKept(before, after);
  return { reopened, after };
}

/** The current case's row, as the checks above have filled it so far. */
export function currentRow(): IFaultRow {
  return row;
}

/**
 * The fault suite's fixture, called first in each spec's describe: a case per test (or per fault of a
 * run that meets several, `beginCases`), the probe in the page, and after each test its row in the table
 * and the check that it asserted the four promises in their strict form; after each spec the table of
 * the cases run so far (test-results/faults-table.txt).
 */
export function useFaultCases(): void {
  test.beforeEach(async ({ page }, testInfo) => {
    beginCases([testInfo.title]);
    await installProbe(page);
  });

  test.afterEach(async ({}, testInfo) => {
    await stopPlanners();
    const failure = testInfo.errors[0]?.message?.split('\n')[0] ?? '';
    for (const { row, strict } of cases) {
      const unmeasured = (['message', 'saved', 'cellsKept', 'ended'] as const)
        .filter(key => row[key] === NOT_MEASURED)
        .join(', ');
      recordRow(testInfo.project.outputDir, {
        ...row,
        case:
          testInfo.status === testInfo.expectedStatus
            ? row.case
            : `FAILED (${testInfo.status}): ${row.case}: ${clip(failure.replace(/\u001b\[[0-9;]*m/g, ''), 160)}`
      });
      // Every case asserts the four promises: a passing case that measured fewer is itself a failure.
      if (testInfo.status === 'passed') {
        expect(unmeasured, `promises "${row.case}" did not assert`).toBe('');
        // ...and in their strict form: the file read while the run was stopped at the fault, and a
        // message that names the fault and the way on.
        expect(
          strict,
          `the saved state and the message of "${row.case}", checked in their strict form`
        ).toEqual({ message: true, saved: true });
      }
    }
  });

  test.afterAll(({}, testInfo) => {
    console.log(
      `\nFault suite (the cases run so far)\n${writeTable(testInfo.project.outputDir)}\n`
    );
  });
}
