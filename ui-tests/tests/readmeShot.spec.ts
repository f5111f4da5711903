/**
 * The README's picture, `docs/images/run.png`: the demo notebook (`demo/demo.ipynb`) while the built-in
 * demo planner writes it, beside the workflow panel, at 1280x800. The UI tests take it, so the README
 * shows the product as it is today. README.md and its test (jupyterlab_notebook_bcc/tests/test_readme.py)
 * refer to the file by this path.
 */
import { galata } from '@jupyterlab/galata';
import type { Page } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';
import {
  command,
  expect,
  HOUSING,
  installProbe,
  openNotebook,
  panel,
  PLUGIN,
  startRun,
  test
} from './helpers';

const DEMO_NOTEBOOK = path.resolve(__dirname, '../../demo/demo.ipynb');
const IMAGE = path.resolve(__dirname, '../../docs/images/run.png');
// The task the demo notebook tells a new user to type.
const TASK = 'Explore housing.csv and report what drives SalePrice';
const WIDTH = 1280;
const HEIGHT = 800;
// The panel's width in the picture: wide enough for the stage and step names on one line each.
const PANEL_WIDTH = 360;

test.use({
  // No planner configured: the built-in demo planner answers. The view stays where the test puts it.
  mockSettings: {
    ...galata.DEFAULT_SETTINGS,
    [PLUGIN]: { followNewCells: false }
  },
  viewport: { width: WIDTH, height: HEIGHT }
});

/** Nothing but the notebook and the panel: the file browser closed, the launcher tab gone. */
async function frame(page: Page): Promise<void> {
  await page.evaluate(() => {
    const shell = window.jupyterapp.shell as unknown as {
      collapseLeft(): void;
      widgets(area: string): Iterable<{ id: string; close(): void }>;
    };
    shell.collapseLeft();
    for (const widget of [...shell.widgets('main')]) {
      if (widget.id.startsWith('launcher')) {
        widget.close();
      }
    }
  });
  // The panel is as wide as the handle between it and the notebook lets it be: drag that handle.
  const sidebar = panel(page);
  const box = await sidebar.boundingBox();
  expect(box).not.toBeNull();
  const handle = page
    .locator('#jp-main-split-panel > .lm-SplitPanel-handle:not(.lm-mod-hidden)')
    .last();
  const grip = await handle.boundingBox();
  expect(grip).not.toBeNull();
  const x = grip!.x + grip!.width / 2;
  const y = grip!.y + grip!.height / 2;
  await page.mouse.move(x, y);
  await page.mouse.down();
  await page.mouse.move(x - (PANEL_WIDTH - box!.width), y, { steps: 5 });
  await page.mouse.up();
  await expect
    .poll(async () => Math.round((await sidebar.boundingBox())?.width ?? 0))
    .toBeGreaterThanOrEqual(PANEL_WIDTH - 40);
}

/**
 * Scrolls the notebook, as a reader would, to a code cell and its figure with no thinking cell in view
 * (their title starts with an emoji, which a machine without an emoji font draws as an empty box).
 * Whether it found such a view; the run goes on below it (`followNewCells` is off).
 */
async function showFigure(page: Page): Promise<boolean> {
  return page.evaluate(
    async ({ top, bottom }) => {
      const notebook = document.querySelector(
        '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook'
      );
      const scroller = notebook?.querySelector('.jp-WindowedPanel-outer');
      if (!notebook || !scroller) {
        return false;
      }
      const frames = () =>
        new Promise(resolve =>
          requestAnimationFrame(() => requestAnimationFrame(resolve))
        );
      const thinkingInView = () =>
        [...notebook.querySelectorAll('.jp-Cell')].some(cell => {
          const box = cell.getBoundingClientRect();
          return (
            box.bottom > top &&
            box.top < bottom &&
            /[\u{1F914}\u{1F4AD}]/u.test(cell.textContent ?? '')
          );
        });
      // A view worth a picture: some code and a good part of a figure. The figures' code is longer
      // than the view: its last lines, the printed output, and the figure below them.
      const visible = (element: Element) => {
        const box = element.getBoundingClientRect();
        return Math.min(box.bottom, bottom) - Math.max(box.top, top);
      };
      const worthIt = () =>
        [...notebook.querySelectorAll('.jp-OutputArea-output img')].some(
          img => visible(img) >= 300
        ) &&
        [...notebook.querySelectorAll('.jp-CodeCell .jp-InputArea')].some(
          input => visible(input) >= 100
        );
      // Where to look: each figure 260 px below the top of the view, the latest first.
      const offsets = [
        ...notebook.querySelectorAll('.jp-OutputArea-output img')
      ]
        .map(img => img.getBoundingClientRect().top - (top + 260))
        .reverse();
      const start = scroller.scrollTop;
      for (const offset of offsets) {
        scroller.scrollTop = start + offset;
        await frames();
        if (worthIt() && !thinkingInView()) {
          return true;
        }
      }
      return false;
    },
    { top: 90, bottom: HEIGHT - 30 }
  );
}

test.describe('README picture', () => {
  test.setTimeout(300 * 1000);

  test('the demo notebook writing itself beside the workflow panel, saved as docs/images/run.png', async ({
    page,
    tmpPath
  }, testInfo) => {
    await page.contents.uploadFile(DEMO_NOTEBOOK, `${tmpPath}/demo.ipynb`);
    await page.contents.createDirectory(`${tmpPath}/data`);
    await page.contents.uploadFile(HOUSING, `${tmpPath}/data/housing.csv`);
    await installProbe(page);
    const notebook = `${tmpPath}/demo.ipynb`;
    await openNotebook(page, notebook);
    await command(page, 'notebook-bcc:open');
    await expect(panel(page)).toBeVisible();
    await frame(page);

    await startRun(page, TASK, {
      path: notebook,
      dataFiles: ['data/housing.csv']
    });

    // Mid-run: the exploratory analysis under way, its first step done.
    const exploring = panel(page).locator('.jp-bcc-stage.jp-bcc-mod-current', {
      hasText: 'Exploratory analysis'
    });
    await expect(
      exploring.locator('.jp-bcc-step.jp-bcc-mod-completed').first()
    ).toBeVisible({ timeout: 240000 });
    // Notifications (a saved trace, a completed run) would cover the notebook's corner.
    await page.evaluate(async () => {
      await window.jupyterapp.commands.execute(
        'apputils:dismiss-notification',
        {}
      );
    });
    await page.mouse.move(WIDTH / 2, HEIGHT - 5);
    // Scrolled back to a figure, as a reader would.
    await expect
      .poll(async () => (await showFigure(page)) && exploring.isVisible(), {
        timeout: 120000,
        intervals: [250]
      })
      .toBe(true);

    // The step's focus text, open as the step starts, folded as a reader would: the whole plan shows.
    const focus = panel(page).locator('details.jp-bcc-focus[open] > summary');
    for (let open = await focus.count(); open > 0; open--) {
      await focus.first().click();
    }
    fs.mkdirSync(path.dirname(IMAGE), { recursive: true });
    const body = await page.screenshot({ path: IMAGE });
    await testInfo.attach('run', { body, contentType: 'image/png' });
    // A PNG of the whole viewport: the README shows it as it is.
    expect(body.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(body.readUInt32BE(16)).toBe(WIDTH);
    expect(body.readUInt32BE(20)).toBe(HEIGHT);
  });
});
