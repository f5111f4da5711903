/** Shared steps of the workflow UI tests. */
import {
  expect,
  galata,
  IJupyterLabPageFixture,
  test as base
} from '@jupyterlab/galata';
import type { Page, TestInfo } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';

// eslint-disable-next-line @typescript-eslint/no-var-requires
const { plannerUrl } = require('../planners');

export const SIDEBAR = '#jp-bcc-sidebar';
export const PLUGIN = 'jupyterlab-notebook-bcc:plugin';
export const HOUSING = path.resolve(__dirname, '../../demo/data/housing.csv');
export const SCREENSHOTS = path.resolve(__dirname, '../screenshots');

/**
 * Galata's test, with the kernels API left alone: galata's kernel mock fails on the empty (204) answer
 * of an interrupt, which Stop sends. Kernels started during a test are shut down after it.
 */
export const test = base.extend<{ kernelCleanup: void }>({
  kernels: async ({}, use) => {
    await use(null);
  },
  kernelCleanup: [
    async ({ request }, use) => {
      const list = async (): Promise<string[]> => {
        const response = await request.get('/api/kernels');
        return response.ok()
          ? ((await response.json()) as { id: string }[]).map(k => k.id)
          : [];
      };
      const before = new Set(await list());
      await use();
      for (const id of await list()) {
        if (!before.has(id)) {
          await request.delete(`/api/kernels/${id}`);
        }
      }
    },
    { auto: true }
  ]
});

export { expect };

export type PlannerName = 'normal' | 'failing' | 'slow';

/** Galata's default settings plus ours: which planner, and any other run setting. */
export function settingsFor(
  planner: PlannerName,
  extra: Record<string, unknown> = {}
): Record<string, unknown> {
  return {
    ...galata.DEFAULT_SETTINGS,
    [PLUGIN]: { baseUrl: plannerUrl(planner), ...extra }
  };
}

/** Puts the sample data beside the test's notebooks, where the kernel runs. */
export async function uploadHousing(
  page: IJupyterLabPageFixture,
  tmpPath: string
): Promise<void> {
  await page.contents.uploadFile(HOUSING, `${tmpPath}/housing.csv`);
}

/** A new notebook in tmpPath, open, with the workflow panel shown. */
export async function newNotebook(
  page: IJupyterLabPageFixture,
  name: string
): Promise<void> {
  await page.notebook.createNew(name);
  await page.evaluate(() =>
    window.jupyterapp.commands.execute('notebook-bcc:open')
  );
  await expect(page.locator(SIDEBAR)).toBeVisible();
  await expect(page.locator(`${SIDEBAR} .jp-bcc-state`)).toHaveText(
    'Not started'
  );
}

export function panel(page: Page) {
  return page.locator(SIDEBAR);
}

export function stateLine(page: Page) {
  return page.locator(`${SIDEBAR} .jp-bcc-state`);
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

/** Starts a run through the command (no dialog): for tests about something else than the dialog. */
export async function startRun(
  page: Page,
  task: string,
  options: { dataFiles?: string[]; stepMode?: boolean } = {}
): Promise<void> {
  await page.evaluate(
    ({ task, dataFiles, stepMode }) =>
      window.jupyterapp.commands.execute('notebook-bcc:run', {
        task,
        dataFiles,
        stepMode
      }),
    {
      task,
      dataFiles: options.dataFiles ?? ['housing.csv'],
      stepMode: options.stepMode ?? false
    }
  );
}

export async function command(
  page: Page,
  id: string,
  args: Record<string, unknown> = {}
): Promise<void> {
  await page.evaluate(
    ({ id, args }) => window.jupyterapp.commands.execute(id, args),
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

/** Changes one of our settings through JupyterLab's setting registry, as the settings editor does. */
export async function setSetting(
  page: Page,
  key: string,
  value: unknown
): Promise<void> {
  await page.evaluate(
    async ({ plugin, key, value }) => {
      const registry = (await window.galata.getPlugin(
        '@jupyterlab/apputils-extension:settings'
      )) as unknown as {
        set(plugin: string, key: string, value: unknown): Promise<void>;
      };
      await registry.set(plugin, key, value);
    },
    { plugin: PLUGIN, key, value }
  );
}
