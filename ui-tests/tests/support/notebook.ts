/**
 * Notebooks and runs as a user drives them: a new notebook, the workflow panel and its controls, the
 * Run dialog, commands, and what the page shows of the cells a run adds.
 */
import { expect, IJupyterLabPageFixture } from '@jupyterlab/galata';
import type { Page, TestInfo } from '@playwright/test';
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import type { NotebookPanel } from '@jupyterlab/notebook';
import * as fs from 'fs';
import * as path from 'path';
import type { IWorkflowRunnerRegistry } from '../../../src/tokens';

import { HOUSING, PLUGIN, SCREENSHOTS, SIDEBAR } from './fixture';

/** Puts the sample data beside the test's notebooks, where the kernel runs. */
export async function uploadHousing(
  page: IJupyterLabPageFixture,
  tmpPath: string
): Promise<void> {
  await page.contents.uploadFile(HOUSING, `${tmpPath}/housing.csv`);
}

/**
 * A new notebook in tmpPath, open, with the workflow panel shown: File > New > Notebook, the kernel
 * dialog accepted, then renamed to `name` once its session has started. JupyterLab starts a session
 * under a temporary path, moves it to the notebook's and only then takes it as the notebook's session;
 * a rename in between (galata's `createNew(name)` renames at once) leaves the kernel's session at
 * `Untitled.ipynb`, and the next new notebook, given that free name again, joins that kernel without a
 * kernel dialog.
 */
export async function newNotebook(
  page: IJupyterLabPageFixture,
  name: string
): Promise<void> {
  const assigned = await page.notebook.createNew();
  expect(assigned).toMatch(/\.ipynb$/);
  const dir = await page.filebrowser.getCurrentDirectory();
  await expect
    .poll(() => currentSessionPath(page), { timeout: 60000 })
    .toBe(`${dir}/${assigned}`);
  expect(
    await page.contents.renameFile(`${dir}/${assigned}`, `${dir}/${name}`)
  ).toBe(true);
  await expect(page.activity.getTabLocator(name)).toBeVisible();
  await expect
    .poll(() => serverSessionPaths(page), { timeout: 30000 })
    .toContain(`${dir}/${name}`);
  await command(page, 'notebook-bcc:open');
  await expect(page.locator(SIDEBAR)).toBeVisible();
  await expect(page.locator(`${SIDEBAR} .jp-bcc-state`)).toHaveText(
    'Not started'
  );
}

/** The path of the active notebook's session, once JupyterLab has taken it as the notebook's. */
async function currentSessionPath(page: Page): Promise<string | null> {
  return page.evaluate(() => {
    const widget = window.jupyterapp.shell.currentWidget as unknown as {
      sessionContext?: { session?: { path: string } | null };
    };
    return widget?.sessionContext?.session?.path ?? null;
  });
}

/** The paths of the server's sessions. */
async function serverSessionPaths(page: Page): Promise<string[]> {
  const response = await page.request.get('api/sessions');
  expect(response.ok()).toBe(true);
  return ((await response.json()) as { path: string }[]).map(s => s.path);
}

export function panel(page: Page) {
  return page.locator(SIDEBAR);
}

export function stateLine(page: Page) {
  return page.locator(`${SIDEBAR} .jp-bcc-state`);
}

/**
 * Opens every folded stage of the panel's progress tree (a finished run's stages are folded), once the
 * tree shows: after a reload the panel restores the run's tree a moment after it opens.
 */
export async function unfoldStages(page: Page): Promise<void> {
  await expect(page.locator(`${SIDEBAR} .jp-bcc-stage`).first()).toBeVisible();
  const folded = page.locator(
    `${SIDEBAR} .jp-bcc-stage[aria-expanded="false"] > .jp-bcc-tree-row`
  );
  while ((await folded.count()) > 0) {
    await folded.first().click();
  }
}

/** Cells of the active notebook. */
export function cells(page: Page) {
  return page.locator(
    '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell'
  );
}

export async function cellCount(page: Page): Promise<number> {
  return cells(page).count();
}

/** The cells' sources, as the notebook model holds them (virtual scrolling hides some from the DOM). */
export async function cellSources(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const widget = window.jupyterapp.shell.currentWidget as unknown as {
      content?: {
        model?: { sharedModel: { cells: { getSource(): string }[] } };
      };
    };
    return (
      widget?.content?.model?.sharedModel.cells.map(c => c.getSource()) ?? []
    );
  });
}

export async function modelCellCount(page: Page): Promise<number> {
  return (await cellSources(page)).length;
}

/**
 * Reloads the page and waits for JupyterLab, not for the launcher galata's `reload` waits for (a
 * restored layout shows a notebook instead). Galata's option is missing from its types.
 */
export async function reloadPage(page: IJupyterLabPageFixture): Promise<void> {
  const reload = page.reload as (options: {
    waitForIsReady: boolean;
  }) => Promise<unknown>;
  await reload.call(page, { waitForIsReady: false });
  await page.locator('#jupyterlab-splash').waitFor({ state: 'detached' });
}

/**
 * Starts a run through the command (no dialog): for tests about something else than the dialog. The
 * notebook is the one at `options.path`, or the active one.
 */
/**
 * Puts the visible notebook in command mode, as a user does before a notebook shortcut (a click on a
 * cell's prompt): the extension's shortcuts are not bound where the user types.
 */
export async function commandMode(page: Page): Promise<void> {
  await page
    .locator('.jp-NotebookPanel:visible .jp-Cell .jp-InputPrompt')
    .first()
    .click();
  await expect(
    page.locator('.jp-NotebookPanel:visible .jp-Notebook.jp-mod-commandMode')
  ).toBeVisible();
}

/**
 * In the open Run dialog, as a user adds a data file: "Add data files…", `name` picked in the file dialog,
 * Select; the Run dialog then lists the file.
 */
export async function addDataFile(page: Page, name: string): Promise<void> {
  await page
    .locator('.jp-Dialog')
    .getByRole('button', { name: 'Add data files…' })
    .click();
  const picker = page
    .locator('.jp-Dialog')
    .filter({ has: page.locator('.jp-DirListing') });
  await picker.locator('.jp-DirListing-item', { hasText: name }).click();
  await picker.getByRole('button', { name: 'Select' }).click();
  await expect(page.locator('.jp-bcc-file-name')).toHaveText(name);
}

export async function startRun(
  page: Page,
  task: string,
  options: { path?: string; dataFiles?: string[]; stepMode?: boolean } = {}
): Promise<void> {
  await page.evaluate(
    async ({ path, task, dataFiles, stepMode, plugin }) => {
      let notebook: string | undefined;
      for (const widget of window.jupyterapp.shell.widgets('main')) {
        const candidate = widget as unknown as { context?: { path: string } };
        if (path !== null && candidate.context?.path === path) {
          notebook = widget.id;
        }
      }
      if (path !== null && notebook === undefined) {
        throw new Error(`no open notebook ${path}`);
      }
      const panel =
        notebook !== undefined
          ? [...window.jupyterapp.shell.widgets('main')].find(
              widget => widget.id === notebook
            )
          : window.jupyterapp.shell.currentWidget;
      // A page galata does not drive (a second window opened by the test) has no plugin lookup: it
      // starts without waiting, as before.
      const runner = await (async () => {
        try {
          const registry = (await (
            window as unknown as {
              galata: { getPlugin(id: string): Promise<unknown> };
            }
          ).galata.getPlugin(plugin)) as IWorkflowRunnerRegistry;
          return panel
            ? await registry.whenReady(panel as NotebookPanel)
            : null;
        } catch {
          return null;
        }
      })();
      const before = runner?.snapshot.lastTransitionAt ?? null;
      await window.jupyterapp.commands.execute('notebook-bcc:run', {
        ...(notebook !== undefined ? { notebook } : {}),
        task,
        dataFiles,
        stepMode
      });
      // The command starts the run after taking the run lock, without waiting for it: wait (up to 5 s)
      // until the run's first transition, so a test that then waits for the run's end does not find
      // the notebook idle before its run began.
      const end = Date.now() + 5000;
      while (
        runner &&
        !runner.isRunning &&
        runner.snapshot.lastTransitionAt === before &&
        Date.now() < end
      ) {
        await new Promise(resolve => setTimeout(resolve, 25));
      }
    },
    {
      path: options.path ?? null,
      task,
      dataFiles: options.dataFiles ?? ['housing.csv'],
      stepMode: options.stepMode ?? false,
      plugin: PLUGIN
    }
  );
}

export async function command(
  page: Page,
  id: string,
  args: ReadonlyPartialJSONObject = {}
): Promise<void> {
  // A command may resolve with a widget, which Playwright cannot send back: return nothing.
  await page.evaluate(
    async ({ id, args }) => {
      await window.jupyterapp.commands.execute(id, args);
    },
    { id, args }
  );
}

/** A screenshot of the panel, attached to the report and saved under ui-tests/screenshots/. */
export async function capturePanel(
  page: Page,
  testInfo: TestInfo,
  name: string
): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  const body = await page.locator(SIDEBAR).screenshot({ path: file });
  await testInfo.attach(name, { body, contentType: 'image/png' });
}

/** Records, in the page, every insertion of cells into the active notebook: time and how many. */
export async function recordInsertions(page: Page): Promise<void> {
  await page.evaluate(() => {
    type Change = { type: string; newValues: unknown[] };
    const widget = window.jupyterapp.shell.currentWidget as unknown as {
      content: {
        model: {
          cells: {
            changed: {
              connect(slot: (sender: unknown, change: Change) => void): void;
            };
          };
        };
      };
    };
    const log: { t: number; n: number }[] = [];
    (window as unknown as { bccInsertions: typeof log }).bccInsertions = log;
    widget.content.model.cells.changed.connect((_, change) => {
      if (change.type === 'add') {
        log.push({ t: performance.now(), n: change.newValues.length });
      }
    });
  });
}

/**
 * The opening the run specs share: housing.csv in tmpPath, a new notebook `name` open with the panel,
 * its cell insertions recorded (`insertions`), and a run of `task` on it, answered by the planner of
 * the spec's settings. `commandMode`: no cell in edit mode when the run starts. With `cells`, returns
 * once the run has inserted that many cells.
 */
export async function startHousingRun(
  page: IJupyterLabPageFixture,
  tmpPath: string,
  name: string,
  task: string,
  options: { cells?: number; stepMode?: boolean; commandMode?: boolean } = {}
): Promise<void> {
  await uploadHousing(page, tmpPath);
  await newNotebook(page, name);
  await recordInsertions(page);
  if (options.commandMode) {
    await commandMode(page);
  }
  await startRun(page, task, { stepMode: options.stepMode });
  if (options.cells !== undefined) {
    const cells = options.cells;
    await expect
      .poll(async () => (await insertions(page)).length, { timeout: 60000 })
      .toBeGreaterThanOrEqual(cells);
  }
}

export async function insertions(
  page: Page
): Promise<{ t: number; n: number }[]> {
  return page.evaluate(
    () =>
      (window as unknown as { bccInsertions: { t: number; n: number }[] })
        .bccInsertions
  );
}

export interface ICellProvenance {
  stage_id: string | null;
  step_id: string | null;
  behavior_id: string | null;
  action_index: number;
  action: string;
  role?: string;
}

/** The run's provenance of each cell of the active notebook (null for cells the run did not add). */
export async function provenances(
  page: Page
): Promise<(ICellProvenance | null)[]> {
  return page.evaluate(() => {
    const widget = window.jupyterapp.shell.currentWidget as unknown as {
      content?: {
        model?: {
          sharedModel: { cells: { getMetadata(key: string): unknown }[] };
        };
      };
    };
    return (widget?.content?.model?.sharedModel.cells ?? []).map(
      cell => (cell.getMetadata('notebook_bcc') as ICellProvenance) ?? null
    );
  });
}

/**
 * The run's cells are in stream order: within each behavior the action indexes increase, and a
 * behavior's cells are not interleaved with another's.
 */
export function expectStreamOrder(cells: (ICellProvenance | null)[]): void {
  const seen = new Set<string>();
  let current: string | null = null;
  let lastIndex = -1;
  for (const cell of cells) {
    if (!cell || cell.behavior_id === null || cell.role === 'title') {
      continue;
    }
    const key = `${cell.stage_id}/${cell.step_id}/${cell.behavior_id}`;
    if (key !== current) {
      expect(seen.has(key)).toBe(false);
      seen.add(key);
      current = key;
      lastIndex = -1;
    }
    expect(cell.action_index).toBeGreaterThan(lastIndex);
    lastIndex = cell.action_index;
  }
}

/** The behaviors the current run has completed, as the panel shows them. */
export async function behaviorsRun(page: Page): Promise<number> {
  const node = page.locator(`${SIDEBAR} .jp-bcc-budget`);
  if ((await node.count()) === 0) {
    return 0;
  }
  return Number(await node.getAttribute('data-behaviors-run'));
}

/** Clicks a control of the workflow panel (Run, Pause, Resume, Step, Stop, Retry). */
export async function clickControl(page: Page, name: string): Promise<void> {
  await page
    .locator(`${SIDEBAR} .jp-bcc-controls, ${SIDEBAR} .jp-bcc-error`)
    .getByRole('button', { name, exact: true })
    .click();
}

/** How many cells the open notebook at `path` has (whether or not it is the active one). */
export async function cellCountOf(page: Page, path: string): Promise<number> {
  return page.evaluate(notebookPath => {
    for (const widget of window.jupyterapp.shell.widgets('main')) {
      const panel = widget as unknown as {
        context?: { path: string };
        content?: { model?: { sharedModel: { cells: unknown[] } } };
      };
      if (panel.context?.path === notebookPath) {
        return panel.content?.model?.sharedModel.cells.length ?? -1;
      }
    }
    return -1;
  }, path);
}

/** Runs code in the active notebook's kernel, outside any cell, and returns what it printed. */
export async function executeSilently(
  page: Page,
  code: string
): Promise<string> {
  return page.evaluate(async source => {
    const widget = window.jupyterapp.shell.currentWidget as unknown as {
      sessionContext: {
        session: {
          kernel: {
            requestExecute(content: { code: string; store_history: boolean }): {
              onIOPub: (message: {
                header: { msg_type: string };
                content: { text?: string };
              }) => void;
              done: Promise<unknown>;
            };
          };
        };
      };
    };
    const future = widget.sessionContext.session.kernel.requestExecute({
      code: source,
      store_history: false
    });
    let printed = '';
    future.onIOPub = message => {
      if (message.header.msg_type === 'stream') {
        printed += message.content.text ?? '';
      }
    };
    await future.done;
    return printed;
  }, code);
}
