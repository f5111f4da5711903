/**
 * The notebook one keeps (issue 43): the user talks back with notes that reach the planner's next
 * request, and a run proves that it reproduces in a fresh kernel. A real JupyterLab, real kernels, the
 * reference planner service.
 */
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import type { Page } from '@playwright/test';
import {
  capturePanel,
  command,
  configure,
  expect,
  HOUSING,
  installProbe,
  IRecordedRequest,
  openNotebook,
  planner,
  recordingProxy,
  reloadPage,
  SCREENSHOTS,
  settingsFor,
  SIDEBAR,
  startHousingRun,
  stateLine,
  stopPlanners,
  test,
  unfoldStages
} from './helpers';

const TASK = 'What drives the sale price of houses (SalePrice)?';

interface ICellView {
  id: string;
  type: string;
  source: string;
  stepId: string | null;
  executionCount: number | null;
  note: string | null;
}

/** Every cell of the active notebook, from its model (virtual scrolling hides some from the DOM). */
async function cellViews(page: Page): Promise<ICellView[]> {
  return page.evaluate(() => {
    interface ISharedCell {
      getId(): string;
      cell_type: string;
      getSource(): string;
      getMetadata(key: string): unknown;
      execution_count?: number | null;
    }
    const widget = window.jupyterapp.shell.currentWidget as unknown as {
      content?: { model?: { sharedModel: { cells: ISharedCell[] } } };
    };
    return (widget?.content?.model?.sharedModel.cells ?? []).map(cell => {
      const meta = (cell.getMetadata('notebook_bcc') ?? null) as {
        step_id?: string;
        user_note?: { text?: string };
      } | null;
      return {
        id: cell.getId(),
        type: cell.cell_type,
        source: cell.getSource(),
        stepId: meta?.step_id ?? null,
        executionCount: cell.execution_count ?? null,
        note: meta?.user_note?.text ?? null
      };
    });
  });
}

/** The active notebook's `notebook_bcc` metadata. */
async function notebookMetadata(page: Page): Promise<Record<string, unknown>> {
  return page.evaluate(() => {
    const widget = window.jupyterapp.shell.currentWidget as unknown as {
      content: {
        model: { sharedModel: { getMetadata(key: string): unknown } };
      };
    };
    return (widget.content.model.sharedModel.getMetadata('notebook_bcc') ??
      {}) as Record<string, unknown>;
  });
}

function stepRow(page: Page, stepId: string) {
  return page.locator(
    `${SIDEBAR} .jp-bcc-step[data-id$="/${stepId}"] > .jp-bcc-tree-row`
  );
}

function bodyOf(request: IRecordedRequest): {
  observation?: { context?: { user_notes?: Array<Record<string, string>> } };
} {
  return JSON.parse(request.body);
}

test.describe('The user talks back', () => {
  test.use({
    mockSettings: settingsFor('normal'),
    viewport: { width: 1400, height: 900 }
  });

  test.afterEach(async () => {
    await stopPlanners();
  });

  test('notes on a cell and on a step reach the next request; the planner’s cell quotes them after Redo with the note', async ({
    page,
    tmpPath
  }, testInfo) => {
    test.setTimeout(600000);
    const started = await planner(['--line-delay', '0']);
    const proxy = await recordingProxy(started.url);
    await configure(page, { baseUrl: proxy.url });
    await startHousingRun(page, tmpPath, 'notes.ipynb', TASK);
    await expect(stateLine(page)).toHaveText('Completed', { timeout: 240000 });

    // A note on the first code cell, from its context menu.
    const before = await cellViews(page);
    const loadCell = before.find(c => c.type === 'code' && c.stepId !== null)!;
    await page.evaluate(index => {
      const widget = window.jupyterapp.shell.currentWidget as unknown as {
        content: { activeCellIndex: number; scrollToItem(i: number): unknown };
      };
      widget.content.activeCellIndex = index;
      void widget.content.scrollToItem(index);
    }, before.indexOf(loadCell));
    const cell = page.locator(
      '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell.jp-mod-active'
    );
    await cell.locator('.jp-InputArea-prompt').click({ button: 'right' });
    await page
      .locator('.lm-Menu-itemLabel', { hasText: /^Note for the Planner…$/ })
      .click();
    const dialog = page.locator('.jp-Dialog');
    await expect(dialog).toContainText('Your note on cell');
    await dialog.locator('textarea').fill('ignore the 2019 rows');
    await dialog.getByRole('button', { name: 'Save Note' }).click();
    const marker = cell.locator('.jp-bcc-cell-note');
    await expect(marker).toHaveAttribute('role', 'note');
    await expect(marker.locator('.jp-bcc-cell-note-text')).toHaveText(
      'ignore the 2019 rows'
    );
    await expect(marker.getByRole('button', { name: 'Edit' })).toBeVisible();
    expect((await cellViews(page)).find(c => c.id === loadCell.id)?.note).toBe(
      'ignore the 2019 rows'
    );

    // A note on the distributions step, from the step's menu, by keyboard.
    await unfoldStages(page);
    const row = stepRow(page, 'distributions');
    const menuButton = row.getByRole('button', { name: /^Step actions: / });
    await menuButton.focus();
    await menuButton.press('Enter');
    const menu = page.locator('.jp-bcc-step-menu-items');
    await expect(menu).toBeVisible();
    await expect(menu.locator('.lm-Menu-item.lm-mod-active')).toContainText(
      'Note for the Planner…'
    );
    await page.keyboard.press('Enter');
    await expect(dialog).toContainText('Your note on the step');
    await page.keyboard.type('use the median, not the mean');
    await page.keyboard.press('Control+Enter');
    await expect(dialog).toHaveCount(0);
    await expect(row.locator('.jp-bcc-step-note-mark')).toHaveAttribute(
      'title',
      'Your note: use the median, not the mean'
    );
    const shot = path.join(SCREENSHOTS, 'notes-before-redo.png');
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await testInfo.attach('notes-before-redo', {
      body: await page.screenshot({ path: shot }),
      contentType: 'image/png'
    });

    // Redo this step with the note: the rewind's confirmation, then the run goes on from the step.
    const sent = proxy.requests.length;
    await menuButton.click();
    await page
      .locator('.lm-Menu-itemLabel', {
        hasText: /^Redo This Step with the Note…$/
      })
      .click();
    await expect(dialog).toContainText('Redo from step');
    await dialog.getByRole('button', { name: 'Redo from here' }).click();
    // The state line said "Completed" before the Redo too: first the redone run's request, then its end.
    const plannedAfter = () =>
      proxy.requests
        .slice(sent)
        .find(r => r.method === 'POST' && r.url === '/planning');
    await expect.poll(plannedAfter, { timeout: 60000 }).toBeDefined();
    await expect(stateLine(page)).toHaveAttribute('data-running', 'false', {
      timeout: 300000
    });
    await expect(stateLine(page)).toHaveText('Completed', { timeout: 300000 });

    // The first request after the rewind carried both notes, the step's with its ids.
    const next = plannedAfter();
    expect(next).toBeDefined();
    expect(bodyOf(next!).observation?.context?.user_notes).toEqual([
      expect.objectContaining({
        text: 'use the median, not the mean',
        step_id: 'distributions'
      }),
      expect.objectContaining({
        text: 'ignore the 2019 rows',
        cell_id: loadCell.id,
        // With the step that wrote the cell, when the run knew it then.
        ...(loadCell.stepId ? { step_id: loadCell.stepId } : {})
      })
    ]);
    // The reference planner's next Markdown cell, in the redone step, quotes them.
    const after = await cellViews(page);
    const quote = after.find(
      c =>
        c.type === 'markdown' && c.source.includes('Your note for the planner')
    );
    expect(quote?.stepId).toBe('distributions');
    expect(quote?.source).toContain(
      '(on step `distributions`):\n\n> use the median, not the mean'
    );
    expect(quote?.source).toContain(
      `(on cell \`${loadCell.id}\`):\n\n> ignore the 2019 rows`
    );
    // Both notes are still there, and still shown.
    await expect(row.locator('.jp-bcc-step-note-mark')).toBeVisible();
    expect(after.find(c => c.id === loadCell.id)?.note).toBe(
      'ignore the 2019 rows'
    );
    await capturePanel(page, testInfo, 'notes-after-redo-panel');

    // Kept in the notebook: after a reload, both notes are back, and shown.
    await reloadPage(page);
    await installProbe(page);
    await openNotebook(page, `${tmpPath}/notes.ipynb`);
    await command(page, 'notebook-bcc:open');
    const reloaded = await cellViews(page);
    expect(reloaded.find(c => c.id === loadCell.id)?.note).toBe(
      'ignore the 2019 rows'
    );
    await unfoldStages(page);
    await expect(row.locator('.jp-bcc-step-note-mark')).toHaveAttribute(
      'title',
      'Your note: use the median, not the mean'
    );
    await page.evaluate(
      index => {
        const widget = window.jupyterapp.shell.currentWidget as unknown as {
          content: {
            activeCellIndex: number;
            scrollToItem(i: number): unknown;
          };
        };
        widget.content.activeCellIndex = index;
        void widget.content.scrollToItem(index);
      },
      reloaded.findIndex(c => c.id === loadCell.id)
    );
    await expect(
      cell.locator('.jp-bcc-cell-note .jp-bcc-cell-note-text')
    ).toHaveText('ignore the 2019 rows');
  });
});

test.describe('A run proves it reproduces', () => {
  test.use({
    mockSettings: settingsFor('normal'),
    viewport: { width: 1400, height: 900 }
  });

  test('a clean run reproduces N of N; once a cell it depended on is deleted, the check names where it diverges', async ({
    page,
    tmpPath
  }, testInfo) => {
    test.setTimeout(600000);
    await startHousingRun(page, tmpPath, 'repro.ipynb', TASK);
    await expect(stateLine(page)).toHaveText('Completed', { timeout: 240000 });
    const section = page.locator(`${SIDEBAR} .jp-bcc-reproducibility`);
    const status = section.locator('.jp-bcc-reproducibility-status');
    const sessionsBefore = await sessionCount(page);

    await section
      .getByRole('button', { name: 'Check that it reproduces' })
      .click();
    await expect(status).toHaveText(/^✓ Reproduced: (\d+) of \1 values$/, {
      timeout: 240000
    });
    const compared = Number(/of (\d+)/.exec((await status.innerText())!)![1]);
    expect(compared).toBeGreaterThanOrEqual(8);
    const record = (await notebookMetadata(page)).reproducibility as {
      reproduced: boolean;
      kernel: { name: string };
      python: string;
      packages: Record<string, string>;
      data_files: { path: string; sha256: string }[];
      reference: string;
    };
    expect(record).toMatchObject({
      reproduced: true,
      reference: 'end_of_run',
      kernel: { name: 'python3' }
    });
    expect(record.python).toMatch(/^3\./);
    expect(Object.keys(record.packages)).toEqual(
      expect.arrayContaining(['pandas', 'matplotlib'])
    );
    expect(record.data_files).toEqual([
      {
        path: 'housing.csv',
        size: fs.statSync(HOUSING).size,
        sha256: createHash('sha256')
          .update(fs.readFileSync(HOUSING))
          .digest('hex')
      }
    ]);
    // The fresh kernel is gone.
    await expect.poll(() => sessionCount(page)).toBe(sessionsBefore);
    // The record was saved with the notebook: a reload shows it.
    await reloadPage(page);
    await installProbe(page);
    await openNotebook(page, `${tmpPath}/repro.ipynb`);
    await command(page, 'notebook-bcc:open');
    await expect(status).toHaveText(
      `✓ Reproduced: ${compared} of ${compared} values`
    );

    // The user deletes the cell that made `df_clean`, which later cells use.
    const cells = await cellViews(page);
    const impute = cells.find(
      c => c.type === 'code' && /^df_clean[\w, ]* = /m.test(c.source)
    )!;
    expect(impute).toBeDefined();
    await page.evaluate(id => {
      const widget = window.jupyterapp.shell.currentWidget as unknown as {
        content: {
          model: {
            sharedModel: {
              cells: { getId(): string }[];
              deleteCell(index: number): void;
            };
          };
        };
      };
      const shared = widget.content.model.sharedModel;
      shared.deleteCell(shared.cells.findIndex(c => c.getId() === id));
    }, impute.id);
    const kept = await cellViews(page);
    const from = cells.indexOf(impute);
    const user = kept.findIndex(
      (c, i) =>
        i >= from &&
        c.type === 'code' &&
        c.stepId !== null &&
        c.source.includes('df_clean')
    );
    expect(user).toBeGreaterThan(0);

    await section.getByRole('button', { name: 'Check again' }).click();
    await expect(status).toContainText('✗ Not reproduced:', {
      timeout: 240000
    });
    const first = section.locator('.jp-bcc-reproducibility-first');
    await expect(first).toContainText(`First difference at cell ${user + 1} (`);
    await expect(first).toContainText(
      "it raised NameError: name 'df_clean' is not defined"
    );
    await expect(
      section.locator('.jp-bcc-reproducibility-values li[data-name="df_clean"]')
    ).toContainText('`df_clean` is missing in the fresh kernel');
    await expect.poll(() => sessionCount(page)).toBe(sessionsBefore);
    const again = (await notebookMetadata(page)).reproducibility as {
      reproduced: boolean;
      first_difference: { cell_id: string; cell_index: number };
    };
    expect(again.reproduced).toBe(false);
    expect(again.first_difference).toMatchObject({
      cell_id: kept[user].id,
      cell_index: user + 1
    });

    // Show the cell: the notebook selects it.
    await first.getByRole('button', { name: 'Show the cell' }).click();
    await expect
      .poll(() =>
        page.evaluate(
          () =>
            (
              window.jupyterapp.shell.currentWidget as unknown as {
                content: { activeCellIndex: number };
              }
            ).content.activeCellIndex
        )
      )
      .toBe(user);
    await capturePanel(page, testInfo, 'reproducibility-diverged-panel');
  });
});

/** How many sessions the server has (the fresh kernel's comes and goes). */
async function sessionCount(page: Page): Promise<number> {
  const response = await page.request.get('api/sessions');
  expect(response.ok()).toBe(true);
  return ((await response.json()) as unknown[]).length;
}
