/**
 * Interactive mode asks before code runs, and only a deliberate click approves it: an Enter or a Space
 * when the dialog opens does not; a run of a cell already in the notebook shows that cell's code; the
 * dialog closes when the run stops or its notebook closes. The planner replays a scripted run.
 */
import type { Page } from '@playwright/test';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import {
  achievedAnswer,
  ReplayTraceBuilder,
  startAnswer,
  workflow
} from '../../src/protocol/testing/replayTrace';
import {
  cellInfos,
  command,
  configure,
  expect,
  installProbe,
  openNewNotebook,
  openNotebook,
  planner,
  savedCells,
  savedNotebook,
  SCREENSHOTS,
  startRun,
  stateLine,
  stopPlanners,
  test,
  waitForEnd
} from './helpers';

test.use({ viewport: { width: 1400, height: 900 } });

const CODE = 'consent_probe = 6 * 7\nprint("ran", consent_probe)';
const USER_CELL_ID = 'users-own-cell';
const USER_CODE = 'marked = 40 + 2\nprint("marked", marked)';

/** One step whose one behavior sends `actions`, then the step is done. */
function trace(actions: Record<string, unknown>[]): string {
  const built = new ReplayTraceBuilder()
    .planning(startAnswer(workflow('Consent', [{ id: 'only', name: 'Only' }])))
    .actions(actions)
    .planning(achievedAnswer());
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bcc-consent-'));
  return built.write(path.join(dir, 'consent.trace.jsonl'), fs.writeFileSync);
}

const NEW_CODE = [
  { action: 'add', shot_type: 'action', content: CODE },
  { action: 'exec', codecell_id: 'lastAddedCellId' }
];

async function interactivePlanner(
  page: Page,
  actions: Record<string, unknown>[]
): Promise<void> {
  const started = await planner([
    '--replay',
    trace(actions),
    '--replay-speed',
    '0'
  ]);
  await configure(page, {
    baseUrl: started.url,
    interactive: true,
    autoAcceptWorkflowUpdates: true
  });
}

function approval(page: Page) {
  return page.locator('.jp-Dialog', { hasText: 'Approve behavior' });
}

async function sources(page: Page, notebook: string): Promise<string[]> {
  return (await cellInfos(page, notebook)).map(c => c.source);
}

test.describe('Consent in interactive mode', () => {
  test.beforeEach(async ({ page }) => {
    await installProbe(page);
  });

  test.afterEach(async () => {
    await stopPlanners();
  });

  test('an Enter or a Space when the dialog opens does not run the code', async ({
    page,
    tmpPath
  }) => {
    await interactivePlanner(page, NEW_CODE);
    const notebook = await openNewNotebook(page, tmpPath, 'keys.ipynb');
    await startRun(page, 'Compute the answer', { path: notebook });

    const dialog = approval(page);
    await expect(dialog).toBeVisible({ timeout: 30000 });
    await expect(dialog.locator('.jp-bcc-approval-code')).toHaveText(CODE);
    // The focus is on the code, not on a button.
    await expect(dialog.locator('.jp-bcc-approval-code')).toBeFocused();
    await expect(
      dialog.getByRole('button', { name: 'Run', exact: true })
    ).not.toBeFocused();
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await dialog.screenshot({
      path: path.join(SCREENSHOTS, 'consent-dialog.png')
    });

    for (const key of ['Enter', 'Space', 'Enter']) {
      await page.keyboard.press(key);
    }
    // Still asking; nothing was added or run.
    await expect(dialog).toBeVisible();
    expect(await sources(page, notebook)).not.toContain(CODE);

    await dialog.getByRole('button', { name: 'Skip', exact: true }).click();
    await expect(dialog).toHaveCount(0);
    const info = await waitForEnd(page, notebook);
    expect(info.finished?.reason).toBe('completed');
    expect(await sources(page, notebook)).not.toContain(CODE);
  });

  test("an exec of the user's own cell is asked, with that cell's code", async ({
    page,
    tmpPath
  }) => {
    await interactivePlanner(page, [
      { action: 'exec', codecell_id: USER_CELL_ID }
    ]);
    const notebook = `${tmpPath}/marked.ipynb`;
    await page.contents.uploadContent(
      JSON.stringify({
        nbformat: 4,
        nbformat_minor: 5,
        metadata: {
          kernelspec: {
            name: 'python3',
            display_name: 'Python 3',
            language: 'python'
          }
        },
        cells: [
          {
            id: USER_CELL_ID,
            cell_type: 'code',
            source: USER_CODE,
            metadata: { notebook_bcc: { planner_may_run: true } },
            outputs: [],
            execution_count: null
          }
        ]
      }),
      'text',
      notebook
    );
    await openNotebook(page, notebook);
    await command(page, 'notebook-bcc:open');
    await startRun(page, 'Run my cell', { path: notebook });

    const dialog = approval(page);
    await expect(dialog).toBeVisible({ timeout: 30000 });
    await expect(dialog).toContainText(
      'wants to run these cells already in the notebook'
    );
    await expect(dialog.locator('.jp-bcc-approval-existing')).toHaveText(
      USER_CODE
    );
    const cell = page.locator('.jp-Notebook .jp-Cell').first();
    await expect(cell.locator('.jp-OutputArea-output')).toHaveCount(0);

    await dialog.getByRole('button', { name: 'Run', exact: true }).click();
    await expect(dialog).toHaveCount(0);
    const info = await waitForEnd(page, notebook);
    expect(info.finished?.reason).toBe('completed');
    await expect(cell.locator('.jp-OutputArea-output')).toContainText(
      'marked 42'
    );
  });

  test('Stop while the dialog is open closes it, and nothing runs', async ({
    page,
    tmpPath
  }) => {
    await interactivePlanner(page, NEW_CODE);
    const notebook = await openNewNotebook(page, tmpPath, 'stopped.ipynb');
    await startRun(page, 'Compute the answer', { path: notebook });
    const dialog = approval(page);
    await expect(dialog).toBeVisible({ timeout: 30000 });

    // A stop that does not come from the dialog (the command without its confirmation).
    await command(page, 'notebook-bcc:stop', { interruptKernel: false });
    await expect(dialog).toHaveCount(0);
    const info = await waitForEnd(page, notebook);
    expect(info.finished?.reason).toBe('stopped');
    await expect(stateLine(page)).toHaveText(/^Stopped at step /);
    expect(await sources(page, notebook)).not.toContain(CODE);
    await expect(page.locator('.jp-Dialog')).toHaveCount(0);
  });

  test('closing the notebook with the dialog open closes the dialog', async ({
    page,
    tmpPath
  }) => {
    await interactivePlanner(page, NEW_CODE);
    const notebook = await openNewNotebook(page, tmpPath, 'closed.ipynb');
    await startRun(page, 'Compute the answer', { path: notebook });
    const dialog = approval(page);
    await expect(dialog).toBeVisible({ timeout: 30000 });

    await page.evaluate(path => {
      for (const widget of window.jupyterapp.shell.widgets('main')) {
        const candidate = widget as unknown as { context?: { path: string } };
        if (candidate.context?.path === path) {
          widget.close();
        }
      }
    }, notebook);
    await expect(dialog).toHaveCount(0);
    await expect(
      page.locator('.lm-DockPanel-tabBar .lm-TabBar-tab', {
        hasText: 'closed.ipynb'
      })
    ).toHaveCount(0);
    await expect(page.locator('.jp-Dialog')).toHaveCount(0);
    const saved = savedCells(await savedNotebook(page, notebook));
    expect(saved.map(c => c.source)).not.toContain(CODE);
  });
});
