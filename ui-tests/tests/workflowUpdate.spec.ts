/**
 * A planner that changes the workflow in the middle of a run (an `update_workflow` action): with
 * "auto-accept workflow updates" off, the user is asked, sees the proposed and the current workflow
 * side by side, and decides. The planner is the reference planner replaying a scripted run.
 */
import type { Page } from '@playwright/test';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import {
  achievedAnswer,
  continueAnswer,
  ReplayTraceBuilder,
  startAnswer,
  workflow
} from '../../src/protocol/testing/replayTrace';
import {
  cellInfos,
  configure,
  effects,
  expect,
  installProbe,
  openNewNotebook,
  panel,
  planner,
  startRun,
  stopPlanners,
  test,
  waitForEnd
} from './helpers';

const CURRENT = workflow('Cleaning run', [
  { id: 'prepare', name: 'Prepare the data' },
  { id: 'report', name: 'Write the report' }
]);
/** A major update: the second step is another one (a new id), not the same step renamed. */
const PROPOSED = workflow('Cleaning run, revised', [
  { id: 'prepare', name: 'Prepare the data' },
  { id: 'compare_models', name: 'Report with a model comparison' }
]);

/** Step 1 proposes the revised workflow halfway through; step 2 (whichever it is) writes one cell and ends. */
function updateTrace(): string {
  const trace = new ReplayTraceBuilder()
    .planning(startAnswer(CURRENT))
    .actions([
      { action: 'add', shot_type: 'dialogue', content: 'Before the update.' },
      { action: 'update_workflow', updated_workflow: PROPOSED },
      { action: 'add', shot_type: 'dialogue', content: 'After the update.' }
    ])
    .planning(achievedAnswer())
    .planning(continueAnswer())
    .actions([
      { action: 'add', shot_type: 'dialogue', content: 'The report step.' },
      { action: 'end_phase' }
    ]);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bcc-update-'));
  return trace.write(path.join(dir, 'update.trace.jsonl'), fs.writeFileSync);
}

function updateDialog(page: Page) {
  return page.locator('.jp-Dialog', { hasText: 'Update the workflow of' });
}

test.describe('The planner proposes a different workflow mid-run', () => {
  test.beforeEach(async ({ page }) => {
    await installProbe(page);
  });

  test.afterEach(async () => {
    await stopPlanners();
  });

  for (const choice of ['Apply update', 'Keep current'] as const) {
    test(`the user is asked, sees both workflows, and chooses "${choice}"`, async ({
      page,
      tmpPath
    }, testInfo) => {
      const started = await planner([
        '--replay',
        updateTrace(),
        '--replay-speed',
        '0'
      ]);
      await configure(page, {
        baseUrl: started.url,
        autoAcceptWorkflowUpdates: false
      });
      const notebook = await openNewNotebook(page, tmpPath, 'update.ipynb');
      await startRun(page, 'Clean, then report', { path: notebook });

      const dialog = updateDialog(page);
      await expect(dialog).toBeVisible({ timeout: 30000 });
      await expect(dialog).toContainText(
        /Update the workflow of \S*update\.ipynb\?/
      );
      await expect(
        dialog.locator('.jp-bcc-workflow-update-part', { hasText: 'Proposed' })
      ).toContainText('Report with a model comparison');
      await expect(
        dialog.locator('.jp-bcc-workflow-update-part', { hasText: 'Current' })
      ).toContainText('Write the report');
      await dialog.screenshot({
        path: testInfo.outputPath('workflow-update-dialog.png')
      });
      // The run waits for the answer: the cell after the update is not there yet.
      const waiting = (await cellInfos(page, notebook)).map(c => c.source);
      expect(waiting).toContain('Before the update.');
      expect(waiting).not.toContain('After the update.');

      await dialog.getByRole('button', { name: choice }).click();
      await expect(dialog).toHaveCount(0);
      const info = await waitForEnd(page, notebook);
      expect(info.finished?.reason).toBe('completed');
      const sources = (await cellInfos(page, notebook)).map(c => c.source);
      expect(sources).toEqual(
        expect.arrayContaining([
          'Before the update.',
          'After the update.',
          'The report step.'
        ])
      );
      const tree = panel(page).locator('.jp-bcc-tree');
      const rejected = (await effects(page, notebook)).some(e =>
        e.includes('The workflow update was rejected by the user')
      );
      if (choice === 'Apply update') {
        await expect(tree).toContainText('Cleaning run, revised');
        expect(rejected).toBe(false);
      } else {
        await expect(tree).toContainText('Cleaning run');
        await expect(tree).not.toContainText('revised');
        expect(rejected).toBe(true);
      }
    });
  }
});
