/**
 * Remote kernels (the `gateway` project): a JupyterLab started with `--gateway-url`, whose kernels live in
 * a Jupyter Kernel Gateway reached through a proxy that holds every REST request for a while
 * (slow_gateway.py). The run's code executes in the gateway's kernel, its variables are collected from
 * there, and Stop's interrupt reaches the remote kernel. After a Kernel > Restart between behaviors, and
 * after the restart of a Redo, the run completes in the new kernel process. The lab proxies kernel
 * websockets with the package's class (jupyterlab_notebook_bcc.gateway), without which a restart often
 * leaves JupyterLab's connection deaf (see docs/gateways.md#restarts-through-a-gateway).
 */
import type { Page, TestInfo } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';
import {
  callProbe,
  cellSources,
  clickControl,
  command,
  executeSilently,
  expect,
  installProbe,
  newNotebook,
  panel,
  RUN_STATE_KEY,
  runInfo,
  savedNotebook,
  savedRun,
  SCREENSHOTS,
  settingsFor,
  SIDEBAR,
  startRun,
  stateLine,
  test,
  unfoldStages,
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

/**
 * Waits until the kernel of the notebook at `path` (the active one) answers this page, and returns its
 * id. The first connection through a gateway is sometimes deaf without the package's websocket class
 * (the status then stays "unknown"): the user's remedy, Kernel > Reconnect to Kernel, is applied until
 * the kernel answers a kernel_info request.
 */
async function answeringKernel(page: Page, path: string): Promise<string> {
  await installProbe(page);
  const kernel = await remoteKernel(page);
  for (let attempt = 0; ; attempt++) {
    if (await callProbe(page, 'kernelAnswers', path)) {
      return kernel;
    }
    expect(attempt, 'the kernel never answered').toBeLessThan(3);
    await command(page, 'kernelmenu:reconnect-to-kernel');
  }
}

/** The id of the active notebook's kernel, once it has one (whether or not it answers yet). */
async function remoteKernel(page: Page): Promise<string> {
  await expect
    .poll(async () => (await kernelOf(page))?.id, { timeout: 90000 })
    .toBeTruthy();
  return (await kernelOf(page))!.id;
}

/** The kernels the Kernel Gateway itself runs (asked directly, not through JupyterLab). */
async function gatewayKernels(page: Page): Promise<string[]> {
  const response = await page.request.get(`${KERNEL_GATEWAY_URL}/api/kernels`);
  expect(response.ok()).toBe(true);
  return ((await response.json()) as { id: string }[]).map(k => k.id);
}

/** The variable types the run saved in the notebook's metadata at `path` (its last collection). */
async function collectedTypes(
  page: Page,
  path: string
): Promise<Record<string, string>> {
  const saved = (await savedNotebook(page, path)).metadata[RUN_STATE_KEY] as
    { kernelVariableTypes?: Record<string, string> } | undefined;
  return saved?.kernelVariableTypes ?? {};
}

/** A variable in the kernel process as it is now: after a restart, the new process does not have it. */
const MARK = '_bcc_first_process';

/**
 * After the run: the notebook's kernel is the same remote kernel (a restart keeps its id), the gateway
 * lists it, it is a new process (the mark is gone), it runs code for this page, and the run collected
 * the variables it made there.
 */
async function expectNewRemoteProcess(
  page: Page,
  path: string,
  kernel: string
): Promise<void> {
  expect((await kernelOf(page))?.id).toBe(kernel);
  expect(await gatewayKernels(page)).toContain(kernel);
  expect(
    await executeSilently(
      page,
      `import os; print(os.environ.get("KERNEL_GATEWAY"), "${MARK}" in globals())`
    )
  ).toBe('1 False\n');
  await expect
    .poll(async () => Object.keys(await collectedTypes(page, path)), {
      timeout: 30000
    })
    .toEqual(expect.arrayContaining(['df', 'df_clean', 'findings_report']));
}

/** A screenshot of the active notebook scrolled to its last cell, beside the panel. */
async function screenshotEnd(
  page: Page,
  testInfo: TestInfo,
  name: string
): Promise<void> {
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
    path: path.join(SCREENSHOTS, `${name}.png`)
  });
  await testInfo.attach(name, { body: shot, contentType: 'image/png' });
}

/**
 * Counts, from now on, the times the run reconnected to a kernel that did not answer (its console
 * warning), and notes the count in the test's annotations when it ends: how often the gateway left the
 * connection deaf.
 */
function noteReconnections(page: Page): void {
  let count = 0;
  page.on('console', message => {
    if (message.text().includes('did not answer within')) {
      count++;
    }
  });
  test.info().annotations.push({
    type: 'reconnections',
    get description() {
      return String(count);
    }
  });
}

/** Kernel > Restart Kernel…, confirmed in JupyterLab's dialog, as the user does it. */
async function restartFromKernelMenu(page: Page): Promise<void> {
  // The command resolves once the dialog is answered: not awaited here.
  await page.evaluate(() => {
    void window.jupyterapp.commands.execute('kernelmenu:restart');
  });
  const dialog = page.locator('.jp-Dialog', { hasText: 'Restart Kernel?' });
  await dialog.locator('.jp-Dialog-button.jp-mod-accept').click();
  await expect(dialog).toHaveCount(0);
}

test.describe('Kernels in a Kernel Gateway', () => {
  test('the demo run completes in the gateway kernel; its variables are collected from there', async ({
    page,
    tmpPath
  }, testInfo) => {
    test.setTimeout(300 * 1000);
    await uploadHousing(page, tmpPath);
    await newNotebook(page, 'gateway.ipynb');
    const kernel = await answeringKernel(page, `${tmpPath}/gateway.ipynb`);
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
    const saved = `${tmpPath}/gateway.ipynb`;
    await expect
      .poll(async () => Object.keys(await collectedTypes(page, saved)), {
        timeout: 30000
      })
      .toEqual(expect.arrayContaining(['df', 'df_clean', 'findings_report']));
    expect((await collectedTypes(page, saved)).df_clean).toMatch(/DataFrame/);
    // Still the same remote kernel at the end of the run.
    expect((await kernelOf(page))?.id).toBe(kernel);
    expect(await gatewayKernels(page)).toContain(kernel);

    // The screenshot shows the end of the run: the findings in the notebook, the panel completed.
    await screenshotEnd(page, testInfo, 'gateway-run');
  });

  test('Stop interrupts a cell running in the gateway kernel', async ({
    page,
    tmpPath
  }) => {
    test.setTimeout(240 * 1000);
    await uploadHousing(page, tmpPath);
    await newNotebook(page, 'interrupt.ipynb');
    const kernel = await answeringKernel(page, `${tmpPath}/interrupt.ipynb`);

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

  test('Kernel > Restart between behaviors: the run resumes and completes in the new remote kernel', async ({
    page,
    tmpPath
  }) => {
    test.setTimeout(360 * 1000);
    await uploadHousing(page, tmpPath);
    await newNotebook(page, 'restart.ipynb');
    const path = `${tmpPath}/restart.ipynb`;
    noteReconnections(page);
    await installProbe(page);
    // Nothing waits for the kernel to answer the page: the run does.
    const kernel = await remoteKernel(page);
    await callProbe(page, 'pauseAfter', path, 2);
    await startRun(page, TASK);
    await expect
      .poll(async () => (await runInfo(page, path)).paused, {
        timeout: 120000
      })
      .toBe(true);
    expect(await executeSilently(page, `${MARK} = 1; print("marked")`)).toBe(
      'marked\n'
    );

    await restartFromKernelMenu(page);
    // The user resumes at once: the run waits for the restarted kernel itself.
    await clickControl(page, 'Resume');
    await expect(stateLine(page)).toHaveText('Completed', { timeout: 240000 });
    await expect
      .poll(async () => (await savedRun(page, path))?.state, { timeout: 20000 })
      .toBe('WORKFLOW_COMPLETED');
    await expectNewRemoteProcess(page, path, kernel);
  });

  test('Redo from here with a kernel restart: the kept cells run again in the new remote kernel', async ({
    page,
    tmpPath
  }, testInfo) => {
    test.setTimeout(540 * 1000);
    await uploadHousing(page, tmpPath);
    await newNotebook(page, 'redo.ipynb');
    const path = `${tmpPath}/redo.ipynb`;
    noteReconnections(page);
    const kernel = await remoteKernel(page);
    await startRun(page, TASK);
    await expect(stateLine(page)).toHaveText('Completed', { timeout: 240000 });
    expect(await executeSilently(page, `${MARK} = 1; print("marked")`)).toBe(
      'marked\n'
    );

    // Completed stages are folded: open them all to see their steps.
    await unfoldStages(page);
    const second = (await page
      .locator(`${SIDEBAR} .jp-bcc-step`)
      .nth(1)
      .getAttribute('data-id'))!;
    const row = page.locator(
      `${SIDEBAR} .jp-bcc-step[data-id="${second}"] > .jp-bcc-tree-row`
    );
    await row.hover();
    await row.getByRole('button', { name: 'Redo from here' }).click();
    const dialog = page.locator('.jp-Dialog');
    await expect(
      dialog.getByLabel('Restart the kernel and re-run the kept cells first')
    ).toBeChecked();
    await dialog.getByRole('button', { name: 'Redo from here' }).click();

    // The engine restarts the remote kernel and runs the kept cells again, without an error.
    const note = page.locator(`${SIDEBAR} .jp-bcc-rewind-note`);
    await expect(note).toContainText('kernel restarted', { timeout: 180000 });
    await expect(note).not.toContainText('stopped');
    await expect(stateLine(page)).toHaveText('Completed', { timeout: 300000 });
    await expectNewRemoteProcess(page, path, kernel);
    // The picture: the redone run's end in the notebook, the panel's note on the restart beside it.
    await note.scrollIntoViewIfNeeded();
    await screenshotEnd(page, testInfo, 'gateway-restart');
  });
});
