/**
 * One run per notebook (docs/architecture.md#one-run-per-notebook): a second window sees the live run
 * and cannot start one; after the owner's window is gone it takes the run over. Every close path saves
 * the run first, and a malformed saved run can be discarded.
 */
import type { Browser, Page } from '@playwright/test';
import {
  capturePanel,
  command,
  configure,
  expect,
  installProbe,
  ISavedNotebook,
  modelCellCount,
  openNotebook,
  panel,
  RUN_STATE_KEY,
  runInfo,
  runStateIn,
  savedNotebook,
  settingsFor,
  startRun,
  stateLine,
  test,
  uploadHousing
} from './helpers';

// eslint-disable-next-line @typescript-eslint/no-var-requires
const { plannerUrl } = require('../planners');

const TASK = 'What drives the sale price of houses (SalePrice)?';
/** Where a tab keeps its run-lock owner id (src/lab/tabOwner.ts). */
const TAB_OWNER_STORAGE_KEY = 'notebook-bcc:run-lock-owner';

function emptyNotebook(
  cells: string[] = [],
  metadata: Record<string, unknown> = {}
) {
  return {
    type: 'notebook',
    content: {
      nbformat: 4,
      nbformat_minor: 5,
      metadata: {
        kernelspec: {
          name: 'python3',
          display_name: 'Python 3 (ipykernel)',
          language: 'python'
        },
        ...metadata
      },
      cells: cells.map((source, index) => ({
        id: `user-cell-${index}`,
        cell_type: 'markdown',
        source,
        metadata: {}
      }))
    }
  };
}

async function putNotebook(
  page: Page,
  path: string,
  notebook = emptyNotebook()
): Promise<void> {
  const response = await page.request.put(`api/contents/${encodeURI(path)}`, {
    data: notebook
  });
  expect(response.ok()).toBe(true);
}

/** A second browser window (its own context: no shared storage) with JupyterLab loaded. */
async function otherWindow(browser: Browser, baseURL: string): Promise<Page> {
  const context = await browser.newContext({
    baseURL,
    viewport: { width: 1400, height: 900 }
  });
  const page = await context.newPage();
  await page.goto('lab');
  await page.locator('#jupyterlab-splash').waitFor({ state: 'detached' });
  await page.waitForFunction(() => !!window.jupyterapp?.commands);
  await page.evaluate(() => window.jupyterapp.restored);
  return page;
}

/** Opens a notebook in a window without galata's helpers and waits until its workflow panel shows it. */
async function openInWindow(page: Page, path: string): Promise<void> {
  await page.evaluate(
    path => window.jupyterapp.commands.execute('docmanager:open', { path }),
    path
  );
  await command(page, 'notebook-bcc:open');
  await expect(stateLine(page)).toHaveText('Not started', { timeout: 60000 });
}

function control(page: Page, id: string) {
  return panel(page).locator(`.jp-bcc-controls [data-command="${id}"]`);
}

function isEnabled(page: Page, id: string): Promise<boolean> {
  return page.evaluate(id => window.jupyterapp.commands.isEnabled(id), id);
}

function headings(file: ISavedNotebook): string[] {
  return file.cells
    .map(cell =>
      Array.isArray(cell.source) ? cell.source.join('') : cell.source
    )
    .filter(source => source.startsWith('### '));
}

test.describe('One run per notebook', () => {
  test.use({
    mockSettings: settingsFor('slow'),
    viewport: { width: 1400, height: 900 }
  });

  test('a second window sees the live run, cannot start one, and takes it over after the owner is gone', async ({
    page,
    browser,
    tmpPath,
    baseURL
  }, testInfo) => {
    test.setTimeout(300000);
    const path = `${tmpPath}/lock.ipynb`;
    await uploadHousing(page, tmpPath);
    await putNotebook(page, path);

    // Window 1 runs the notebook with the slow planner.
    const owner = await otherWindow(browser, baseURL!);
    await openInWindow(owner, path);
    await startRun(owner, TASK, { path });
    await expect
      .poll(() => modelCellCount(owner), { timeout: 90000 })
      .toBeGreaterThan(3);

    // Window 2 (galata's page) opens the same notebook.
    await installProbe(page);
    await openNotebook(page, path);
    await command(page, 'notebook-bcc:open');
    const elsewhere = panel(page).locator(
      '.jp-bcc-elsewhere[data-lock="other"]'
    );
    await expect(elsewhere).toContainText('Running in another window', {
      timeout: 15000
    });
    // The live state comes with the owner's heartbeat: where its run stands.
    await expect(elsewhere.locator('.jp-bcc-elsewhere-where')).not.toBeEmpty();
    await expect(control(page, 'notebook-bcc:run')).toBeDisabled();
    expect(await isEnabled(page, 'notebook-bcc:run')).toBe(false);
    expect(await isEnabled(page, 'notebook-bcc:resume')).toBe(false);
    expect(await isEnabled(page, 'notebook-bcc:take-over')).toBe(false);
    const resume = control(page, 'notebook-bcc:resume');
    if ((await resume.count()) > 0) {
      await expect(resume).toBeDisabled();
    }
    await capturePanel(page, testInfo, 'lock-other-window');
    // A Run forced through the command is refused: no second runner writes to the notebook.
    await page.evaluate(
      ({ task }) =>
        window.jupyterapp.commands.execute('notebook-bcc:run', {
          task,
          dataFiles: ['housing.csv']
        }),
      { task: TASK }
    );
    expect((await runInfo(page, path)).running).toBe(false);

    // Window 1 pauses (the run and its cells are then saved together, at an action boundary) and goes
    // away without stopping; its lock expires after about three missed heartbeats. A window that dies
    // in the middle of a behavior is another case: that behavior is run again on resume.
    await owner
      .locator('.jp-bcc-control[data-command="notebook-bcc:pause"]')
      .click();
    await expect
      .poll(async () => runStateIn(await savedNotebook(page, path))?.state, {
        timeout: 60000
      })
      .toBe('PAUSED');
    await owner.context().close();
    const closedAt = Date.now();
    const takeOver = panel(page).getByRole('button', { name: 'Take over' });
    await expect(takeOver).toBeVisible({ timeout: 30000 });
    // Not before the lock's time to live (10 s) minus the page's polling slack.
    expect(Date.now() - closedAt).toBeGreaterThan(5000);
    await expect(control(page, 'notebook-bcc:run')).toBeDisabled();

    // The rest of the run needs no slow stream: the planner that answers fast finishes it.
    await configure(page, { baseUrl: plannerUrl('normal') });
    const atTakeOver = await savedNotebook(page, path);
    expect(atTakeOver.metadata[RUN_STATE_KEY]).toBeTruthy();
    await takeOver.click();
    await expect(stateLine(page)).not.toHaveText(/^Stopped/, {
      timeout: 30000
    });
    // The take-over starts the run once it holds the lock, a moment after the click: wait for this
    // page's run to end, not for the moment before it starts (this page has run nothing before).
    await expect
      .poll(async () => (await runInfo(page, path)).finished?.reason ?? null, {
        timeout: 240000,
        intervals: [250]
      })
      .not.toBeNull();
    const end = await runInfo(page, path);
    expect(end.finished?.reason).toBe('completed');

    const file = await savedNotebook(page, path);
    const ids = file.cells.map(cell => cell.id);
    expect(new Set(ids).size).toBe(ids.length);
    // The cells window 1 made are kept as they were, and none is made twice.
    expect(ids.slice(0, atTakeOver.cells.length)).toEqual(
      atTakeOver.cells.map(cell => cell.id)
    );
    const titles = headings(file);
    expect(new Set(titles).size).toBe(titles.length);
  });

  test('a duplicated tab (a copy of its session storage) is another window: it cannot run the notebook the first tab runs', async ({
    page,
    browser,
    tmpPath,
    baseURL
  }) => {
    test.setTimeout(180000);
    const path = `${tmpPath}/duplicate.ipynb`;
    await uploadHousing(page, tmpPath);
    await putNotebook(page, path);
    const first = await otherWindow(browser, baseURL!);
    await openInWindow(first, path);
    await startRun(first, TASK, { path });
    await expect
      .poll(() => modelCellCount(first), { timeout: 90000 })
      .toBeGreaterThan(1);
    const ownerOf = (tab: Page) =>
      tab.evaluate(
        key => window.sessionStorage.getItem(key),
        TAB_OWNER_STORAGE_KEY
      );
    const firstOwner = await ownerOf(first);
    expect(firstOwner).toBeTruthy();

    // "Duplicate tab": a tab of the same browser that starts with a copy of the first one's session storage.
    const duplicate = await first.context().newPage();
    await duplicate.addInitScript(
      ([key, id]) => window.sessionStorage.setItem(key, id),
      [TAB_OWNER_STORAGE_KEY, firstOwner!] as const
    );
    // Its own workspace, as JupyterLab gives a second window of one workspace: opened at `lab`, the
    // page would be redirected there mid-test once JupyterLab saw the first tab use the workspace.
    await duplicate.goto('lab/workspaces/duplicate-tab');
    await duplicate.waitForFunction(() => !!window.jupyterapp?.commands);
    await duplicate.evaluate(() => window.jupyterapp.restored);
    await duplicate.evaluate(
      path => window.jupyterapp.commands.execute('docmanager:open', { path }),
      path
    );
    await command(duplicate, 'notebook-bcc:open');
    await expect(
      panel(duplicate).locator('.jp-bcc-elsewhere[data-lock="other"]')
    ).toContainText('Running in another window', { timeout: 30000 });
    await expect(control(duplicate, 'notebook-bcc:run')).toBeDisabled();
    expect(await ownerOf(duplicate)).not.toBe(firstOwner);
    expect(await isEnabled(duplicate, 'notebook-bcc:run')).toBe(false);
    // The first tab still runs, and still holds the notebook.
    await expect(panel(first).locator('.jp-bcc-elsewhere')).toHaveCount(0);
    await expect(control(first, 'notebook-bcc:stop')).toBeEnabled();
    await first.context().close();
  });

  test('"Close and Shut Down" mid-run saves the run where it stands', async ({
    page,
    tmpPath
  }) => {
    test.setTimeout(180000);
    const path = `${tmpPath}/close.ipynb`;
    await uploadHousing(page, tmpPath);
    await putNotebook(page, path);
    await installProbe(page);
    await openNotebook(page, path);
    await command(page, 'notebook-bcc:open');
    await startRun(page, TASK, { path });
    await expect
      .poll(() => modelCellCount(page), { timeout: 90000 })
      .toBeGreaterThan(3);
    const before = await savedNotebook(page, path);
    const savedBefore = (before.metadata[RUN_STATE_KEY] ?? null) as {
      savedAt: string;
    } | null;

    const closedAt = Date.now();
    await page.evaluate(() => {
      void window.jupyterapp.commands.execute('notebook:close-and-shutdown');
    });
    await page
      .locator('.jp-Dialog')
      .getByRole('button', { name: 'Ok' })
      .click();
    await expect(
      page.getByRole('main').getByRole('tab', { name: 'close.ipynb' })
    ).toHaveCount(0);

    await expect
      .poll(
        async () => {
          const state = (await savedNotebook(page, path)).metadata[
            RUN_STATE_KEY
          ] as { savedAt: string } | undefined;
          return Date.parse(state?.savedAt ?? '') || 0;
        },
        { timeout: 15000 }
      )
      .toBeGreaterThanOrEqual(closedAt);
    const file = await savedNotebook(page, path);
    const state = file.metadata[RUN_STATE_KEY] as {
      savedAt: string;
      cells: { created?: string[] };
    };
    expect(state.savedAt).not.toBe(savedBefore?.savedAt);
    // The saved state and the saved cells agree: every cell the run says it made is in the file.
    const created = state.cells.created ?? [];
    expect(created.length).toBeGreaterThan(0);
    const ids = file.cells.map(cell => cell.id);
    expect(created.filter(id => !ids.includes(id))).toEqual([]);
    expect(file.cells.length).toBeGreaterThanOrEqual(before.cells.length);
  });

  test('a malformed saved run says what is wrong and can be discarded; the cells stay', async ({
    page,
    tmpPath
  }) => {
    const path = `${tmpPath}/broken.ipynb`;
    const broken = {
      format: 'notebook-bcc-run',
      version: 1,
      savedAt: '2024-01-01T00:00:00.000Z',
      task: 'A hand-edited run',
      phase: 'plan',
      progress: 'truncated'
    };
    await putNotebook(
      page,
      path,
      emptyNotebook(['# My notes', 'Keep this'], { [RUN_STATE_KEY]: broken })
    );
    await installProbe(page);
    await openNotebook(page, path);
    await command(page, 'notebook-bcc:open');

    const problem = panel(page).locator('.jp-bcc-saved-problem');
    await expect(problem).toContainText('cannot be resumed');
    await expect(problem.locator('li').first()).toBeVisible();
    await expect(problem.locator('li').first()).toHaveText(/^dataFiles: /);
    await expect(panel(page)).not.toContainText('Loading');
    await expect(control(page, 'notebook-bcc:run')).toBeEnabled();
    expect(await isEnabled(page, 'notebook-bcc:resume')).toBe(false);
    expect(await isEnabled(page, 'notebook-bcc:discard-saved-run')).toBe(true);

    await problem
      .getByRole('button', { name: 'Discard the saved run' })
      .click();
    await expect(problem).toHaveCount(0);
    await expect
      .poll(
        async () => RUN_STATE_KEY in (await savedNotebook(page, path)).metadata
      )
      .toBe(false);
    const file = await savedNotebook(page, path);
    expect(
      file.cells.map(cell =>
        Array.isArray(cell.source) ? cell.source.join('') : cell.source
      )
    ).toEqual(['# My notes', 'Keep this']);
    await expect(control(page, 'notebook-bcc:run')).toBeEnabled();
  });
});
