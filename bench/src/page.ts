/**
 * The browser side of the benchmarks: Debian's Chromium driven by Playwright with ui-tests' launch
 * options, a JupyterLab page, notebooks with their runners, and the run command. Everything that runs
 * in the page is written against the page's own objects (`window.jupyterapp`, galata's in-page
 * helpers, the extension's runner registry), never against a copy of the extension's code.
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { NotebookPanel } from '@jupyterlab/notebook';
import type { ISettingRegistry } from '@jupyterlab/settingregistry';
import {
  Browser,
  CDPSession,
  chromium,
  LaunchOptions,
  Page
} from '@playwright/test';
import * as path from 'path';
import type { IRunFinished, IWorkflowRunner } from '../../src/engine/types';
import type { IWorkflowRunnerRegistry } from '../../src/tokens';
import { REPO_ROOT } from './processes';

export const PLUGIN_ID = 'jupyterlab-notebook-bcc:plugin';

/** One notebook the page holds for the benchmark. */
export interface IPageNotebook {
  panel: NotebookPanel;
  runner: IWorkflowRunner;
  finished: Promise<IRunFinished> | null;
}

/** What the page offers to the functions evaluated in it. */
export interface IBenchWindow {
  jupyterapp: JupyterFrontEnd;
  /** Galata's in-page helpers; reading `app` binds them to the application. */
  galata: { readonly app: unknown; getPlugin(id: string): Promise<unknown> };
  bench: { notebooks: Record<string, IPageNotebook> };
}

/** `window` as the benchmark sees it; only for use inside `page.evaluate`. */
export function benchWindow(): IBenchWindow {
  return window as unknown as IBenchWindow;
}

/** ui-tests' Chromium launch options (the system browser, no download). */
export function launchOptions(): LaunchOptions {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const config = require(path.join(REPO_ROOT, 'ui-tests/playwright.config.js'));
  return config.use.launchOptions as LaunchOptions;
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ ...launchOptions(), headless: true });
}

/** Opens JupyterLab (fresh workspace) and waits until it is restored. */
export async function openLab(page: Page, labUrl: string): Promise<void> {
  await page.goto(`${labUrl}/lab?reset`);
  await page.waitForFunction(
    () => {
      const w = window as unknown as Partial<IBenchWindow>;
      return !!w.jupyterapp && typeof w.galata?.app === 'object';
    },
    undefined,
    { timeout: 120000 }
  );
  await page.evaluate(async () => {
    const w = window as unknown as IBenchWindow;
    await w.jupyterapp.started;
    await w.jupyterapp.restored;
    w.bench = { notebooks: {} };
  });
}

/** Sets the extension's settings through the settings registry, as the settings editor would. */
export async function setSettings(
  page: Page,
  values: Record<string, string | number | boolean>
): Promise<void> {
  await page.evaluate(
    async ({ plugin, values }) => {
      const w = window as unknown as IBenchWindow;
      const registry = (await w.galata.getPlugin(
        '@jupyterlab/apputils-extension:settings'
      )) as ISettingRegistry;
      for (const [key, value] of Object.entries(values)) {
        await registry.set(plugin, key, value);
      }
    },
    { plugin: PLUGIN_ID, values }
  );
}

/** A new notebook with a started, idle Python kernel and its runner, kept in the page as `key`. */
export async function newNotebook(page: Page, key: string): Promise<void> {
  await page.evaluate(
    async ({ key, plugin }) => {
      const w = window as unknown as IBenchWindow;
      const panel = (await w.jupyterapp.commands.execute(
        'notebook:create-new',
        { kernelName: 'python3' }
      )) as unknown as NotebookPanel;
      await panel.context.ready;
      await panel.sessionContext.ready;
      const runners = (await w.galata.getPlugin(
        plugin
      )) as IWorkflowRunnerRegistry;
      const runner = await runners.whenReady(panel);
      const kernel = panel.sessionContext.session?.kernel;
      if (!kernel) {
        throw new Error('the notebook has no kernel');
      }
      await kernel.info;
      w.bench.notebooks[key] = { panel, runner, finished: null };
    },
    { key, plugin: PLUGIN_ID }
  );
  await page.waitForFunction(
    key =>
      (window as unknown as IBenchWindow).bench.notebooks[key].panel
        .sessionContext.session?.kernel?.status === 'idle',
    key,
    { timeout: 120000 }
  );
}

/** Starts a run through the extension's command (no dialog); `waitFinished` awaits its end. */
export async function startRun(
  page: Page,
  key: string,
  task: string
): Promise<void> {
  await page.evaluate(
    async ({ key, task }) => {
      const w = window as unknown as IBenchWindow;
      const notebook = w.bench.notebooks[key];
      notebook.finished = new Promise(resolve => {
        const onFinished = (_: IWorkflowRunner, finished: IRunFinished) => {
          notebook.runner.finished.disconnect(onFinished);
          resolve(finished);
        };
        notebook.runner.finished.connect(onFinished);
      });
      await w.jupyterapp.commands.execute('notebook-bcc:run', {
        notebook: notebook.panel.id,
        task
      });
    },
    { key, task }
  );
}

export async function waitFinished(
  page: Page,
  key: string
): Promise<IRunFinished> {
  return page.evaluate(async key => {
    const w = window as unknown as IBenchWindow;
    const finished = w.bench.notebooks[key].finished;
    if (!finished) {
      throw new Error(`no run was started in ${key}`);
    }
    return finished;
  }, key);
}

/** Shuts the notebook's kernel down and closes it without saving. */
export async function closeNotebook(page: Page, key: string): Promise<void> {
  await page.evaluate(async key => {
    const w = window as unknown as IBenchWindow;
    const { panel } = w.bench.notebooks[key];
    await panel.sessionContext.shutdown();
    panel.dispose();
    delete w.bench.notebooks[key];
  }, key);
}

/** Runs code in the notebook's kernel directly (not in a cell); rejects on a Python error. */
export async function runInKernel(
  page: Page,
  key: string,
  code: string
): Promise<void> {
  await page.evaluate(
    async ({ key, code }) => {
      const w = window as unknown as IBenchWindow;
      const kernel =
        w.bench.notebooks[key].panel.sessionContext.session?.kernel;
      if (!kernel) {
        throw new Error('no kernel');
      }
      const reply = await kernel.requestExecute({ code, store_history: false })
        .done;
      if (reply.content.status !== 'ok') {
        const content = reply.content as { ename?: string; evalue?: string };
        throw new Error(`${content.ename}: ${content.evalue}`);
      }
    },
    { key, code }
  );
}

/** Collects garbage in the page (twice: the first pass frees what finalizers release). */
export async function collectGarbage(cdp: CDPSession): Promise<void> {
  await cdp.send('HeapProfiler.collectGarbage');
  await cdp.send('HeapProfiler.collectGarbage');
}

/**
 * Lets the page settle before a measured side: garbage collected (the previous side's notebook would
 * otherwise be collected during this one) and the page idle (JupyterLab renders on idle callbacks).
 */
export async function settle(page: Page): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  try {
    await collectGarbage(cdp);
  } finally {
    await cdp.detach();
  }
  await page.evaluate(
    () =>
      new Promise(resolve => requestIdleCallback(resolve, { timeout: 2000 }))
  );
}
