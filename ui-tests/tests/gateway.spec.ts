/**
 * Remote kernels (the `gateway` project): a JupyterLab started with `--gateway-url`, whose kernels live in
 * a Jupyter Kernel Gateway reached through a proxy that holds every REST request for a while
 * (slow_gateway.py). The run's code executes in the gateway's kernel, its variables are collected from
 * there, and Stop's interrupt reaches the remote kernel. A restart is not tested: JupyterLab's own
 * connection to a kernel restarted through a gateway is unreliable (see the README).
 */
import type { Page } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';
import {
  cellSources,
  command,
  expect,
  newNotebook,
  panel,
  RUN_STATE_KEY,
  savedNotebook,
  SCREENSHOTS,
  settingsFor,
  startRun,
  stateLine,
  test,
  uploadHousing
} from './helpers';

// eslint-disable-next-line @typescript-eslint/no-var-requires
const { KERNEL_GATEWAY_URL, waitForServers } = require('../ecosystem');

test.use({
  mockSettings: settingsFor('normal'),
  viewport: { width: 1400, height: 900 }
});

test.beforeAll(async () => {
  test.setTimeout(200 * 1000);
  await waitForServers('gateway');
});

const TASK = 'What drives the sale price of houses (SalePrice)?';

/** The active notebook's kernel, as JupyterLab knows it: id and status. */
async function kernelOf(
  page: Page
): Promise<{ id: string; status: string } | null> {
  return page.evaluate(() => {
    const widget = window.jupyterapp.shell.currentWidget as unknown as {
      sessionContext?: {
        session?: { kernel?: { id: string; status: string } | null } | null;
      };
    } | null;
    const kernel = widget?.sessionContext?.session?.kernel;
    return kernel ? { id: kernel.id, status: kernel.status } : null;
  });
}

/** Waits for the active notebook's kernel to be idle and returns its id. */
async function idleKernel(page: Page): Promise<string> {
  await expect
    .poll(async () => (await kernelOf(page))?.status, { timeout: 90000 })
    .toBe('idle');
  return (await kernelOf(page))!.id;
}

/** The kernels the Kernel Gateway itself runs (asked directly, not through JupyterLab). */
async function gatewayKernels(page: Page): Promise<string[]> {
  const response = await page.request.get(`${KERNEL_GATEWAY_URL}/api/kernels`);
  expect(response.ok()).toBe(true);
  return ((await response.json()) as { id: string }[]).map(k => k.id);
}

/** Runs code in the active notebook's kernel, outside any cell, and returns what it printed. */
async function executeSilently(page: Page, code: string): Promise<string> {
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

test.describe('Kernels in a Kernel Gateway', () => {
  test('the demo run completes in the gateway kernel; its variables are collected from there', async ({
    page,
    tmpPath
  }, testInfo) => {
    test.setTimeout(300 * 1000);
    await uploadHousing(page, tmpPath);
    await newNotebook(page, 'gateway.ipynb');
    const kernel = await idleKernel(page);
    expect(await gatewayKernels(page)).toContain(kernel);
    // The kernel process is the gateway's (it sets KERNEL_GATEWAY), started in the notebook's folder.
    expect(
      await executeSilently(
        page,
        'import os; print(os.environ.get("KERNEL_GATEWAY"), os.path.exists("housing.csv"))'
      )
    ).toBe('1 True\n');

    await startRun(page, TASK);
    await expect(stateLine(page)).toHaveText('Completed', { timeout: 240000 });

    const sources = await cellSources(page);
    expect(sources.some(source => source.startsWith('## Findings'))).toBe(true);
    await expect(
      panel(page).locator('.jp-bcc-stage.jp-bcc-mod-completed')
    ).toHaveCount(4);
    await expect(
      panel(page).locator('.jp-bcc-output[data-status="produced"]', {
        hasText: 'findings_report'
      })
    ).toBeVisible();
    // The run collected the variables of the gateway kernel: their types are in the run state the run
    // saves (no save of the test's own: it could overlap the run's and raise a conflict dialog).
    const collectedTypes = async () => {
      const saved = (await savedNotebook(page, `${tmpPath}/gateway.ipynb`))
        .metadata[RUN_STATE_KEY] as
        { kernelVariableTypes?: Record<string, string> } | undefined;
      return saved?.kernelVariableTypes ?? {};
    };
    await expect
      .poll(async () => Object.keys(await collectedTypes()), { timeout: 30000 })
      .toEqual(expect.arrayContaining(['df', 'df_clean', 'findings_report']));
    const collected = await collectedTypes();
    expect(collected.df_clean).toMatch(/DataFrame/);
    // Still the same remote kernel at the end of the run.
    expect((await kernelOf(page))?.id).toBe(kernel);
    expect(await gatewayKernels(page)).toContain(kernel);

    // The screenshot shows the end of the run: the findings in the notebook, the panel completed.
    await page.evaluate(async () => {
      const widget = window.jupyterapp.shell.currentWidget as unknown as {
        content: {
          widgets: unknown[];
          mode: string;
          activeCellIndex: number;
          scrollToItem(index: number): Promise<void>;
        };
      };
      const last = widget.content.widgets.length - 1;
      widget.content.mode = 'command';
      widget.content.activeCellIndex = last;
      await widget.content.scrollToItem(last);
    });
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    const shot = await page.screenshot({
      path: path.join(SCREENSHOTS, 'gateway-run.png')
    });
    await testInfo.attach('gateway-run', {
      body: shot,
      contentType: 'image/png'
    });
  });

  test('Stop interrupts a cell running in the gateway kernel', async ({
    page,
    tmpPath
  }) => {
    test.setTimeout(240 * 1000);
    await uploadHousing(page, tmpPath);
    await newNotebook(page, 'interrupt.ipynb');
    const kernel = await idleKernel(page);

    // Reading the data takes ten minutes in this kernel: the run's first code cell is still running
    // when Stop interrupts it.
    const slowRead =
      'import time, pandas as pd\n' +
      '_read_csv = pd.read_csv\n' +
      'pd.read_csv = lambda *a, **k: (time.sleep(600), _read_csv(*a, **k))[1]\n' +
      'print("slow")';
    expect(await executeSilently(page, slowRead)).toBe('slow\n');
    await startRun(page, TASK);
    await expect
      .poll(
        async () =>
          (await cellSources(page)).some(source =>
            source.includes('pd.read_csv(')
          ),
        { timeout: 90000 }
      )
      .toBe(true);
    // The cell that reads the data is running (busy for longer than any of the run's own requests).
    await expect
      .poll(async () => (await kernelOf(page))?.status, { timeout: 30000 })
      .toBe('busy');
    await page.waitForTimeout(3000);
    expect((await kernelOf(page))?.status).toBe('busy');
    await expect(stateLine(page)).toHaveAttribute('data-running', 'true');
    const stopping = Date.now();
    await command(page, 'notebook-bcc:stop', { interruptKernel: true });
    await expect(stateLine(page)).toHaveText(/^Stopped/, { timeout: 60000 });
    await expect
      .poll(async () => (await kernelOf(page))?.status, { timeout: 60000 })
      .toBe('idle');
    expect(Date.now() - stopping).toBeLessThan(60000);
    await expect(
      page.locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea', {
        hasText: 'KeyboardInterrupt'
      })
    ).toBeVisible();
    expect((await kernelOf(page))?.id).toBe(kernel);
  });
});
