/**
 * Jupyter Notebook 7 (the `notebook7` project): its notebook page has a toolbar, a command palette and a
 * right side panel, but no status bar. Galata's fixtures assume JupyterLab, so these tests use plain
 * Playwright pages and the contents API of the Notebook server.
 */
import { expect, Page, test } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';
import { addDataFile } from './helpers';

// eslint-disable-next-line @typescript-eslint/no-var-requires
const { waitForServers } = require('../ecosystem');

const SIDEBAR = '#jp-bcc-sidebar';
const HOUSING = path.resolve(__dirname, '../../demo/data/housing.csv');
const SCREENSHOTS = path.resolve(__dirname, '../screenshots');

/**
 * Notebook 7.6's keyboard shortcuts plugin throws on a settings change of a plugin it has no schema of:
 * raised on every page of a plain `jupyter notebook` with no extension loaded at all, so not ours.
 */
const UPSTREAM_ERRORS = [
  /Cannot read properties of undefined \(reading 'schema'\)/
];

/** Console errors and uncaught exceptions of the page, but Notebook 7's own known one. */
function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  const keep = (text: string) => {
    if (!UPSTREAM_ERRORS.some(known => known.test(text))) {
      errors.push(text);
    }
  };
  page.on('console', message => {
    if (message.type() === 'error') {
      keep(message.text());
    }
  });
  page.on('pageerror', error => keep(`${error.message}\n${error.stack}`));
  return errors;
}

/** A folder of its own for the test, with the sample data and an empty Python notebook. */
async function prepare(page: Page, name: string): Promise<string> {
  const folder = `nb7-${Date.now()}`;
  const put = async (file: string, data: Record<string, unknown>) => {
    const response = await page.request.put(`api/contents/${file}`, { data });
    expect(response.ok()).toBe(true);
  };
  await put(folder, { type: 'directory' });
  await put(`${folder}/housing.csv`, {
    type: 'file',
    format: 'base64',
    content: fs.readFileSync(HOUSING).toString('base64')
  });
  await put(`${folder}/${name}`, {
    type: 'notebook',
    format: 'json',
    content: {
      cells: [],
      metadata: {
        kernelspec: {
          name: 'python3',
          display_name: 'Python 3 (ipykernel)',
          language: 'python'
        }
      },
      nbformat: 4,
      nbformat_minor: 5
    }
  });
  return `${folder}/${name}`;
}

/** Opens the notebook page and waits until its kernel is idle. */
async function openNotebook(page: Page, notebook: string): Promise<void> {
  await page.goto(`notebooks/${notebook}`);
  await expect(page.locator('.jp-NotebookPanel')).toBeVisible({
    timeout: 60000
  });
  await expect
    .poll(
      () =>
        page.evaluate(() => {
          const widget = window.jupyterapp.shell.currentWidget as unknown as {
            sessionContext?: { session?: { kernel?: { status: string } } };
          } | null;
          return widget?.sessionContext?.session?.kernel?.status ?? 'none';
        }),
      { timeout: 60000 }
    )
    .toBe('idle');
}

async function cellSources(page: Page): Promise<string[]> {
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

test.use({ viewport: { width: 1400, height: 900 } });

test.beforeAll(async () => {
  test.setTimeout(200 * 1000);
  await waitForServers('notebook7');
});

test.describe('Jupyter Notebook 7', () => {
  test('the file browser page loads without a console error', async ({
    page
  }) => {
    const errors = watchErrors(page);
    await page.goto('tree');
    await expect(page.locator('.jp-DirListing-content')).toBeVisible({
      timeout: 60000
    });
    // The extension's plugins are there, and nothing failed while they started.
    await expect
      .poll(() =>
        page.evaluate(() =>
          window.jupyterapp.commands.hasCommand('notebook-bcc:run')
        )
      )
      .toBe(true);
    await page.waitForLoadState('networkidle');
    expect(errors).toEqual([]);
  });

  test('the notebook page: toolbar button, palette, right panel; the demo run reaches its end', async ({
    page
  }, testInfo) => {
    test.setTimeout(300 * 1000);
    const errors = watchErrors(page);
    const notebook = await prepare(page, 'demo.ipynb');
    await openNotebook(page, notebook);

    // Notebook 7 has no status bar: the status item is not shown, and that is no error.
    await expect(page.locator('.jp-StatusBar-Widget')).toHaveCount(0);
    await expect(page.locator('.jp-bcc-status-button')).toHaveCount(0);

    // The commands in the command palette.
    await page.evaluate(() =>
      window.jupyterapp.commands.execute('apputils:activate-command-palette')
    );
    await page.locator('.lm-CommandPalette-input').fill('Workflow');
    const items = page.locator('.lm-CommandPalette-item');
    await expect(
      items.filter({ hasText: 'Open Workflow Panel' })
    ).toBeVisible();
    await expect(items.filter({ hasText: 'Run Workflow' })).toBeVisible();
    await page.keyboard.press('Escape');

    // The panel is in the right area, listed in the View menu's Right Sidebar submenu.
    await expect(page.locator(SIDEBAR)).toBeHidden();
    await page.getByRole('menuitem', { name: 'View', exact: true }).click();
    await page
      .locator('.lm-Menu-item', { hasText: 'Right Sidebar' })
      .first()
      .hover();
    await page
      .locator('.lm-Menu-item', { hasText: 'Show Notebook-BCC Workflow' })
      .click();
    const sidebar = page.locator(SIDEBAR);
    await expect(sidebar).toBeVisible();
    await expect(sidebar.locator('.jp-bcc-state')).toHaveText('Not started');

    // Run Workflow from the notebook's toolbar, with the data file picked in the dialog.
    await page
      .locator('.jp-NotebookPanel-toolbar [data-command="notebook-bcc:run"]')
      .click();
    const dialog = page.locator('.jp-Dialog');
    await expect(dialog).toBeVisible();
    await dialog
      .locator('textarea')
      .fill('What drives the sale price of houses (SalePrice)?');
    await addDataFile(page, 'housing.csv');
    await page
      .locator('.jp-Dialog')
      .getByRole('button', { name: 'Run' })
      .click();

    // Mid-run: the panel follows the run.
    await expect(
      sidebar.locator('.jp-bcc-stage.jp-bcc-mod-current', {
        hasText: 'Data cleaning'
      })
    ).toBeVisible({ timeout: 120000 });
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    const shot = await page.screenshot({
      path: path.join(SCREENSHOTS, 'notebook7-panel.png')
    });
    await testInfo.attach('notebook7-panel', {
      body: shot,
      contentType: 'image/png'
    });

    await expect(sidebar.locator('.jp-bcc-state')).toHaveText('Completed', {
      timeout: 240000
    });
    const sources = await cellSources(page);
    expect(sources.some(source => source.startsWith('## Findings'))).toBe(true);
    expect(sources.join('\n')).toContain('housing.csv');
    await expect(
      sidebar.locator('.jp-bcc-stage.jp-bcc-mod-completed')
    ).toHaveCount(4);
    await expect(
      sidebar.locator('.jp-bcc-output[data-status="produced"]', {
        hasText: 'findings_report'
      })
    ).toBeVisible();

    // The run saves its cells in the notebook file, in Notebook 7 too.
    await expect
      .poll(async () => {
        const response = await page.request.get(`api/contents/${notebook}`);
        const model = (await response.json()) as {
          content: { cells: { source: string }[] };
        };
        return model.content.cells.some(cell =>
          cell.source.startsWith('## Findings')
        );
      })
      .toBe(true);
    expect(errors).toEqual([]);
  });
});
