/**
 * Two edges of the first hour (issue 34): Test connection where the planner URL is set (the Settings
 * Editor), and the "Export the run trace" link after a reload (the trace kept in the browser's
 * IndexedDB). Screenshot: ui-tests/screenshots/settings-test-connection.png.
 */
import type { Page } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';
import {
  expect,
  newNotebook,
  panel,
  PLUGIN,
  reloadPage,
  SCREENSHOTS,
  settingsFor,
  startHousingRun,
  stateLine,
  test
} from './helpers';

const TASK = 'What drives the sale price of houses (SalePrice)?';

/** The Settings Editor on this extension's settings; the planner URL's field. */
async function openPluginSettings(page: Page) {
  await page.evaluate(async () => {
    await window.jupyterapp.commands.execute('settingeditor:open', {
      query: 'Notebook-BCC'
    });
  });
  await page.locator(`.jp-PluginList-entry[data-id="${PLUGIN}"]`).click();
  const field = page.locator('.jp-SettingsPanel .jp-bcc-settings-url');
  await expect(field).toBeVisible();
  return field;
}

/** The setting as the page's setting registry holds it (what the form saved). */
async function savedSetting(page: Page, key: string): Promise<unknown> {
  return page.evaluate(
    async ({ plugin, key }) => {
      const registry = (await window.galata.getPlugin(
        '@jupyterlab/apputils-extension:settings'
      )) as unknown as {
        get(plugin: string, key: string): Promise<{ composite: unknown }>;
      };
      return (await registry.get(plugin, key)).composite;
    },
    { plugin: PLUGIN, key }
  );
}

function toasts(page: Page, kind: 'error' | 'success') {
  return page.locator(
    `.jp-Notification-Toast-${kind}, .Toastify__toast--${kind}`
  );
}

test.describe('Test connection in the Settings Editor', () => {
  test.describe('a planner that does not answer', () => {
    // Nothing listens on port 9: the relay cannot reach the planner.
    test.use({
      mockSettings: settingsFor('normal', { baseUrl: 'http://127.0.0.1:9' }),
      viewport: { width: 1400, height: 900 }
    });

    test('the button under the planner URL says the planner cannot be reached; the URL still edits', async ({
      page
    }) => {
      await newNotebook(page, 'settings-test.ipynb');
      const field = await openPluginSettings(page);
      const input = field.locator('input');
      await expect(input).toHaveValue('http://127.0.0.1:9');
      // The label, the URL, then the button, above the URL's description.
      await expect(
        field.locator('.jp-FormGroup-fieldLabel').first()
      ).toHaveText('Planner URL');
      const button = field.getByRole('button', { name: 'Test connection' });
      const inputBox = (await input.boundingBox())!;
      const buttonBox = (await button.boundingBox())!;
      expect(buttonBox.y).toBeGreaterThanOrEqual(
        inputBox.y + inputBox.height - 1
      );

      await button.click();
      await expect(toasts(page, 'error')).toContainText(
        /Test connection: Notebook-BCC could not reach the planner at http:\/\/127\.0\.0\.1:9: /,
        { timeout: 30000 }
      );
      await expect(field.locator('.jp-bcc-settings-test-result')).toHaveText(
        'The planner did not answer: see the notification.'
      );
      fs.mkdirSync(SCREENSHOTS, { recursive: true });
      await page.screenshot({
        path: path.join(SCREENSHOTS, 'settings-test-connection.png')
      });

      // The URL is the form's own field: what is typed is saved as before.
      await input.fill('http://127.0.0.1:9/other');
      await expect
        .poll(() => savedSetting(page, 'baseUrl'), { timeout: 10000 })
        .toBe('http://127.0.0.1:9/other');
    });
  });

  test.describe('the built-in demo planner', () => {
    // An empty URL: the demo planner, in the page.
    test.use({
      mockSettings: settingsFor('normal', { baseUrl: '' }),
      viewport: { width: 1400, height: 900 }
    });

    test('the button says the planner answers', async ({ page }) => {
      await newNotebook(page, 'settings-demo.ipynb');
      const field = await openPluginSettings(page);
      await expect(field.locator('input')).toHaveValue('');
      await field.getByRole('button', { name: 'Test connection' }).click();
      await expect(toasts(page, 'success')).toContainText(
        /Test connection: The planner .+ answers/,
        { timeout: 30000 }
      );
      await expect(field.locator('.jp-bcc-settings-test-result')).toHaveText(
        'The planner answered.'
      );
    });
  });

  test('without a notebook the button says what it needs', async ({ page }) => {
    const field = await openPluginSettings(page);
    await expect(
      field.getByRole('button', { name: 'Test connection' })
    ).toBeDisabled();
    await expect(field.locator('.jp-bcc-settings-test-result')).toHaveText(
      'Open a notebook to test the planner its runs use.'
    );
  });
});

/** The lines of the trace the browser keeps for `notebookPath`; null when there is none. */
async function keptTraceLines(
  page: Page,
  notebookPath: string
): Promise<number | null> {
  return page.evaluate(
    notebookPath =>
      new Promise<number | null>(resolve => {
        const open = indexedDB.open('jupyterlab-notebook-bcc');
        // Never create the database here: the extension creates it with its store.
        open.onupgradeneeded = () => open.transaction?.abort();
        open.onerror = () => resolve(null);
        open.onsuccess = () => {
          const db = open.result;
          const store = db
            .transaction('run-traces', 'readonly')
            .objectStore('run-traces');
          const keys = store.getAllKeys();
          keys.onsuccess = () => {
            const key = keys.result.find(
              k => typeof k === 'string' && k.endsWith(`/${notebookPath}`)
            );
            if (key === undefined) {
              db.close();
              resolve(null);
              return;
            }
            const value = store.get(key);
            value.onsuccess = () => {
              db.close();
              const text = value.result as string;
              resolve(text.split('\n').filter(line => line).length);
            };
          };
        };
      }),
    notebookPath
  );
}

async function exportedTrace(page: Page, file: string): Promise<string> {
  const url = `api/contents/${file}?content=1&type=file&format=text`;
  await expect
    .poll(async () => (await page.request.get(url)).status(), {
      timeout: 30000
    })
    .toBe(200);
  return ((await (await page.request.get(url)).json()) as { content: string })
    .content;
}

test.describe('The run trace after a reload', () => {
  test.use({
    mockSettings: settingsFor('normal'),
    viewport: { width: 1400, height: 900 }
  });

  test('the link is back and exports the same file; discarding the run drops it for good', async ({
    page,
    tmpPath
  }) => {
    test.setTimeout(360 * 1000);
    const notebook = `${tmpPath}/trace-reload.ipynb`;
    const file = `${tmpPath}/trace-reload.bcc-trace.jsonl`;
    await startHousingRun(page, tmpPath, 'trace-reload.ipynb', TASK);
    await expect(stateLine(page)).toHaveText('Completed', { timeout: 280000 });
    const link = panel(page).getByRole('button', {
      name: 'Export the run trace'
    });
    await link.click();
    const before = await exportedTrace(page, file);
    const lines = before.split('\n').filter(line => line).length;
    expect(lines).toBeGreaterThan(10);
    expect(await page.contents.deleteFile(file)).toBe(true);
    // Kept in the browser once the run finished.
    await expect
      .poll(() => keptTraceLines(page, notebook), { timeout: 15000 })
      .toBe(lines);
    await page.keyboard.press('Control+s');
    await page.waitForTimeout(1000);

    await reloadPage(page);
    await expect(stateLine(page)).toHaveText('Completed', { timeout: 60000 });
    await expect(link).toBeVisible();
    await link.click();
    const after = await exportedTrace(page, file);
    expect(after.split('\n').filter(line => line).length).toBe(lines);
    expect(after).toBe(before);

    // Discarding the saved run drops its trace too: the link goes, and stays gone after a reload.
    // Not awaited: the command waits for its confirmation dialog.
    await page.evaluate(() => {
      void window.jupyterapp.commands.execute('notebook-bcc:discard-saved-run');
    });
    await page
      .locator('.jp-Dialog')
      .getByRole('button', { name: 'Discard' })
      .click();
    await expect(link).toHaveCount(0);
    await expect
      .poll(() => keptTraceLines(page, notebook), { timeout: 15000 })
      .toBeNull();
    await reloadPage(page);
    await expect(stateLine(page)).toHaveText('Not started', {
      timeout: 60000
    });
    await expect(link).toHaveCount(0);
  });
});
