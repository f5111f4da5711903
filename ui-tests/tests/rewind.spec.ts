import * as fs from 'fs';
import * as path from 'path';
import type { Page } from '@playwright/test';
import {
  behaviorsRun,
  clickControl,
  expect,
  SCREENSHOTS,
  settingsFor,
  SIDEBAR,
  startHousingRun,
  stateLine,
  test,
  unfoldStages
} from './helpers';

const TASK = 'What drives the sale price of houses (SalePrice)?';

interface ICellView {
  id: string;
  type: string;
  source: string;
  stepId: string | null;
  behaviorId: string | null;
  errors: number;
  executionCount: number | null;
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
      getOutputs?(): { output_type: string }[];
    }
    const widget = window.jupyterapp.shell.currentWidget as unknown as {
      content?: { model?: { sharedModel: { cells: ISharedCell[] } } };
    };
    return (widget?.content?.model?.sharedModel.cells ?? []).map(cell => {
      const meta = (cell.getMetadata('notebook_bcc') ?? null) as {
        step_id?: string | null;
        behavior_id?: string | null;
      } | null;
      return {
        id: cell.getId(),
        type: cell.cell_type,
        source: cell.getSource(),
        stepId: meta?.step_id ?? null,
        behaviorId: meta?.behavior_id ?? null,
        errors: (cell.getOutputs?.() ?? []).filter(
          o => o.output_type === 'error'
        ).length,
        executionCount: cell.execution_count ?? null
      };
    });
  });
}

/** Resumes every pause (step mode) until the run completes. */
async function resumeUntilCompleted(page: Page): Promise<void> {
  const state = stateLine(page);
  await expect
    .poll(
      async () => {
        const text = (await state.textContent()) ?? '';
        if (text.startsWith('Paused')) {
          await clickControl(page, 'Resume');
        }
        return text;
      },
      { timeout: 300000, intervals: [1000] }
    )
    .toBe('Completed');
}

async function dialogIds(page: Page, list: string): Promise<string[]> {
  return page
    .locator(`.jp-Dialog .jp-bcc-rewind-${list} li`)
    .evaluateAll(items =>
      items.map(item => (item as HTMLElement).dataset.cellId ?? '')
    );
}

test.describe('Rewind', () => {
  test.use({
    mockSettings: settingsFor('normal'),
    viewport: { width: 1400, height: 900 }
  });

  test('undo the last behavior: its cells go, the run waits paused, Resume completes it', async ({
    page,
    tmpPath
  }) => {
    test.setTimeout(420000);
    await startHousingRun(page, tmpPath, 'undo.ipynb', TASK, {
      stepMode: true
    });
    await expect(stateLine(page)).toHaveText('Paused (step mode)', {
      timeout: 60000
    });
    await clickControl(page, 'Step');
    await expect.poll(() => behaviorsRun(page), { timeout: 60000 }).toBe(2);
    await expect(stateLine(page)).toHaveText('Paused (step mode)');
    const before = await cellViews(page);
    const last = [...before].reverse().find(c => c.behaviorId !== null)!;

    await clickControl(page, 'Undo');
    const dialog = page.locator('.jp-Dialog');
    await expect(dialog).toContainText('Undo the last behavior');
    await expect(
      dialog.getByLabel('Restart the kernel and re-run the kept cells first')
    ).not.toBeChecked();
    const removed = await dialogIds(page, 'remove');
    // The dialog lists exactly the last behavior's cells.
    expect(removed).toEqual(
      before
        .filter(
          c => c.stepId === last.stepId && c.behaviorId === last.behaviorId
        )
        .map(c => c.id)
    );
    expect(removed.length).toBeGreaterThan(0);
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await dialog
      .locator('.jp-Dialog-content')
      .screenshot({ path: path.join(SCREENSHOTS, 'rewind-confirm.png') });
    await dialog.getByRole('button', { name: 'Undo' }).click();

    await expect(stateLine(page)).toHaveText('Paused');
    await expect(page.locator(`${SIDEBAR} .jp-bcc-rewind-note`)).toContainText(
      'Undid the last behavior'
    );
    const after = await cellViews(page);
    expect(after.map(c => c.id)).toEqual(
      before.filter(c => !removed.includes(c.id)).map(c => c.id)
    );

    await resumeUntilCompleted(page);
    const done = await cellViews(page);
    expect(done.length).toBeGreaterThan(after.length);
    // What was kept is still there, in order, before the new cells.
    expect(done.slice(0, after.length).map(c => c.id)).toEqual(
      after.map(c => c.id)
    );
  });

  test('redo from the second step with a kernel restart: later cells replaced, earlier ones and a user cell kept', async ({
    page,
    tmpPath
  }) => {
    test.setTimeout(480000);
    await startHousingRun(page, tmpPath, 'redo.ipynb', TASK);
    await expect(stateLine(page)).toHaveText('Completed', { timeout: 240000 });

    // Completed stages are folded: open them all to see their steps.
    await unfoldStages(page);
    const steps = page.locator(`${SIDEBAR} .jp-bcc-step`);
    const second = (await steps.nth(1).getAttribute('data-id'))!;
    const secondStep = second.split('/').pop()!;
    const firstStep = (await steps.nth(0).getAttribute('data-id'))!
      .split('/')
      .pop()!;
    const finished = await cellViews(page);
    const firstCells = finished.filter(c => c.stepId === firstStep);
    expect(firstCells.length).toBeGreaterThan(0);
    // The user writes a cell of their own between the first step's cells.
    const userIndex = finished.indexOf(firstCells[0]) + 1;
    await page.evaluate(index => {
      const widget = window.jupyterapp.shell.currentWidget as unknown as {
        content: {
          model: {
            sharedModel: {
              insertCell(
                at: number,
                cell: { cell_type: string; source: string }
              ): unknown;
            };
          };
        };
      };
      widget.content.model.sharedModel.insertCell(index, {
        cell_type: 'code',
        source: 'my_note = "kept by the rewind"\nprint(my_note)'
      });
    }, userIndex);
    const before = await cellViews(page);
    const keptBefore = before.slice(0, before.indexOf(firstCells[0]) + 1);
    const laterIds = before
      .filter(c => c.stepId !== null && c.stepId !== firstStep)
      .map(c => c.id);

    const row = page.locator(
      `${SIDEBAR} .jp-bcc-step[data-id="${second}"] > .jp-bcc-tree-row`
    );
    // The note names the step as the tree does, not by its id.
    const secondName = await row
      .locator('.jp-bcc-tree-name')
      .first()
      .innerText();
    await row.hover();
    await row.getByRole('button', { name: 'Redo from here' }).click();
    const dialog = page.locator('.jp-Dialog');
    await expect(dialog).toContainText('Redo from step');
    const restart = dialog.getByLabel(
      'Restart the kernel and re-run the kept cells first'
    );
    await expect(restart).toBeChecked();
    const removed = await dialogIds(page, 'remove');
    expect(new Set(removed)).toEqual(new Set(laterIds));
    expect(removed.length).toBeGreaterThan(0);
    expect(removed).not.toContain(
      before.find(c => c.source.startsWith('my_note'))!.id
    );
    await dialog.getByRole('button', { name: 'Redo from here' }).click();

    // The kernel restarts and the kept cells run again before the note appears.
    await expect(page.locator(`${SIDEBAR} .jp-bcc-rewind-note`)).toContainText(
      `Redone from step ${secondName}`,
      { timeout: 180000 }
    );
    await expect(page.locator(`${SIDEBAR} .jp-bcc-rewind-note`)).toContainText(
      'kernel restarted'
    );
    await expect(stateLine(page)).toHaveText('Completed', { timeout: 300000 });

    const redone = await cellViews(page);
    const ids = redone.map(c => c.id);
    // Earlier cells and the user's cell untouched; every removed cell replaced by new ones.
    for (const cell of before) {
      if (removed.includes(cell.id)) {
        expect(ids).not.toContain(cell.id);
      } else {
        const now = redone.find(c => c.id === cell.id);
        expect(now?.source).toBe(cell.source);
      }
    }
    expect(redone.slice(0, keptBefore.length).map(c => c.id)).toEqual(
      keptBefore.map(c => c.id)
    );
    expect(
      redone.filter(c => c.stepId === secondStep && !removed.includes(c.id))
        .length
    ).toBeGreaterThan(0);
    // The picture: the kept cells and the user's one at the top, the panel's note beside them.
    await page.evaluate(index => {
      const widget = window.jupyterapp.shell.currentWidget as unknown as {
        content: { activeCellIndex: number; scrollToItem(i: number): unknown };
      };
      widget.content.activeCellIndex = index;
      void widget.content.scrollToItem(Math.max(0, index - 2));
      const sidebar = document.querySelector('#jp-bcc-sidebar');
      sidebar?.scrollTo(0, 0);
      sidebar?.querySelectorAll('*').forEach(node => (node.scrollTop = 0));
    }, userIndex);
    await page.waitForTimeout(500);
    await page.screenshot({
      path: path.join(SCREENSHOTS, 'rewind-after-redo.png')
    });

    // The finished notebook runs top to bottom without an error.
    await page.evaluate(async () => {
      const widget = window.jupyterapp.shell.currentWidget as unknown as {
        sessionContext: {
          session: { kernel: { restart(): Promise<void> } } | null;
        };
      };
      await window.jupyterapp.commands.execute(
        'notebook:clear-all-cell-outputs'
      );
      await widget.sessionContext.session?.kernel.restart();
      await window.jupyterapp.commands.execute('notebook:run-all-cells');
    });
    await expect
      .poll(
        async () =>
          (await cellViews(page)).filter(
            c =>
              c.type === 'code' &&
              c.source.trim() !== '' &&
              c.executionCount === null
          ).length,
        { timeout: 180000 }
      )
      .toBe(0);
    await expect(
      page.locator('.jp-Notebook-ExecutionIndicator')
    ).toHaveAttribute('data-status', 'idle', { timeout: 180000 });
    const ran = await cellViews(page);
    expect(ran.filter(c => c.errors > 0).map(c => c.source)).toEqual([]);
  });
});
