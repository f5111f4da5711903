/**
 * A real JupyterHub (ui-tests/hub/jupyterhub_config.py): alice and bob log in through the Hub's proxy, each
 * in their own browser, and run a workflow at the same time, each in their own notebook on their own
 * single-user server. Both relays reach one shared LLM planner, a managed Hub service on Gemma 3 270M, as
 * their own Hub user (c.NotebookBCC.planner_auth = "hub"). bob's day budget runs out and stops his run with
 * the planner's message; alice's goes on. jupyterhub-idle-culler (20 s timeout) culls bob's server once he
 * left it, and not alice's while her run is live. The planner's run log names both users.
 */
import { expect, test } from '@playwright/test';
import type { Browser, Page } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';

// eslint-disable-next-line @typescript-eslint/no-var-requires
const HUB = require('../hub-servers');

const SCREENSHOTS = path.resolve(__dirname, '../screenshots');
const TASK =
  'Which region has the highest total revenue? Store the region name in a variable named answer.';
const SALES = [
  'region,quarter,revenue',
  'North,1,120.5',
  'South,1,98.0',
  'East,1,143.2',
  'North,2,130.0',
  'South,2,101.5',
  'East,2,150.9'
].join('\n');
const SIDEBAR = '#jp-bcc-sidebar';

interface IHubServer {
  ready: boolean;
  last_activity: string | null;
}

/** The user's servers as the Hub knows them (a test service's token: list and read only). */
async function servers(
  page: Page,
  user: string
): Promise<Record<string, IHubServer>> {
  const response = await page.request.get(
    `${HUB.HUB_URL}/hub/api/users/${user}`,
    { headers: { Authorization: `token ${HUB.HUB_TEST_TOKEN}` } }
  );
  expect(response.ok()).toBe(true);
  return ((await response.json()) as { servers: Record<string, IHubServer> })
    .servers;
}

/** Logs `user` in through the Hub's login page; the Hub spawns their server and opens their JupyterLab. */
async function logIn(browser: Browser, user: string): Promise<Page> {
  const context = await browser.newContext({
    viewport: { width: 1400, height: 900 }
  });
  const page = await context.newPage();
  await page.goto(`${HUB.HUB_URL}/hub/login`);
  await page.locator('#username_input').fill(user);
  await page.locator('#password_input').fill(HUB.HUB_PASSWORD);
  await page.locator('#login_submit').click();
  await page.waitForURL(new RegExp(`/user/${user}/lab`), { timeout: 180000 });
  await page.waitForFunction(
    () => {
      const w = window as unknown as {
        jupyterapp?: { restored: Promise<void> };
        bccRestored?: boolean;
      };
      void w.jupyterapp?.restored.then(() => (w.bccRestored = true));
      return w.bccRestored === true;
    },
    undefined,
    { timeout: 180000 }
  );
  return page;
}

/** A folder of the user's own with the data and an empty notebook, opened with the workflow panel. */
async function prepare(page: Page, dir: string): Promise<string> {
  const notebook = `${dir}/analysis.ipynb`;
  await page.evaluate(
    async ({ dir, notebook, sales }) => {
      const app = (window as any).jupyterapp;
      const contents = app.serviceManager.contents;
      await contents.save(dir, { type: 'directory' });
      await contents.save(`${dir}/sales.csv`, {
        type: 'file',
        format: 'text',
        content: sales
      });
      await contents.save(notebook, {
        type: 'notebook',
        format: 'json',
        content: {
          nbformat: 4,
          nbformat_minor: 5,
          metadata: {
            kernelspec: {
              name: 'python3',
              display_name: 'Python 3',
              language: 'python'
            }
          },
          cells: []
        }
      });
      await app.commands.execute('docmanager:open', { path: notebook });
    },
    { dir, notebook, sales: SALES }
  );
  await page.evaluate(() =>
    (window as any).jupyterapp.commands.execute('notebook-bcc:open')
  );
  await expect(page.locator(`${SIDEBAR} .jp-bcc-state`)).toHaveText(
    'Not started',
    { timeout: 60000 }
  );
  // The kernel is up before the run starts.
  await expect(
    page.locator(
      '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator'
    )
  ).toHaveAttribute('data-status', 'idle', { timeout: 120000 });
  return notebook;
}

async function startRun(page: Page): Promise<void> {
  await page.evaluate(
    task =>
      (window as any).jupyterapp.commands.execute('notebook-bcc:run', {
        task,
        dataFiles: ['sales.csv']
      }),
    TASK
  );
  await expect(
    page.locator(`${SIDEBAR} .jp-bcc-state[data-running="true"]`)
  ).toBeVisible({ timeout: 30000 });
}

function running(page: Page): Promise<boolean> {
  return page
    .locator(`${SIDEBAR} .jp-bcc-state`)
    .getAttribute('data-running')
    .then(value => value === 'true');
}

async function cellCount(page: Page): Promise<number> {
  return page.evaluate(() => {
    const widget = (window as any).jupyterapp.shell.currentWidget;
    return widget?.content?.model?.sharedModel.cells.length ?? 0;
  });
}

test.describe('JupyterHub: one shared planner, two users', () => {
  test('two users run at once, a spent budget stops only its user, and the idle server is culled', async ({
    browser
  }) => {
    test.setTimeout(15 * 60 * 1000);
    const started = Date.now();
    const dir = `hub-${started}`;
    const [alice, bob] = await Promise.all([
      logIn(browser, 'alice'),
      logIn(browser, 'bob')
    ]);
    const [aliceNotebook, bobNotebook] = await Promise.all([
      prepare(alice, dir),
      prepare(bob, dir)
    ]);
    expect(aliceNotebook).toBe(bobNotebook); // the same path, on two servers

    await Promise.all([startRun(alice), startRun(bob)]);
    // Both runs under way: each window shows its own notebook filling.
    await expect
      .poll(() => cellCount(alice), { timeout: 120000 })
      .toBeGreaterThan(1);
    await expect
      .poll(() => cellCount(bob), { timeout: 120000 })
      .toBeGreaterThan(1);
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await alice.screenshot({ path: path.join(SCREENSHOTS, 'hub-alice.png') });
    await bob.screenshot({ path: path.join(SCREENSHOTS, 'hub-bob.png') });

    // bob's day budget (1 token) is spent by the model's plan: his run stops with the planner's message.
    const error = bob.locator(`${SIDEBAR} .jp-bcc-error`);
    await expect(error).toBeVisible({ timeout: 6 * 60000 });
    await expect(error).toContainText('token budget');
    await expect.poll(() => running(bob), { timeout: 30000 }).toBe(false);
    await bob.screenshot({
      path: path.join(SCREENSHOTS, 'hub-bob-budget.png')
    });
    await expect(bob.locator(SIDEBAR)).toContainText('today');
    // Each sees only their own run: alice's server has none of bob's notebook state, and hers still runs.
    expect(await running(alice)).toBe(true);

    // bob leaves: his server, with the extension loaded, is idle and culled; alice's, with a live run, is not.
    await bob.context().close();
    const left = Date.now();
    await expect
      .poll(async () => Object.keys(await servers(alice, 'bob')).length, {
        timeout: (HUB.HUB_CULL_TIMEOUT + 90) * 1000,
        intervals: [2000]
      })
      .toBe(0);
    const culledAfter = (Date.now() - left) / 1000;
    console.log(
      `runs started to bob culled: ${((Date.now() - started) / 1000).toFixed(0)} s`
    );
    const aliceLive = await running(alice);
    expect(Object.keys(await servers(alice, 'alice'))).toEqual(['']);
    console.log(
      `bob's server culled ${culledAfter.toFixed(0)} s after he left; alice's run live then: ${aliceLive}`
    );

    // alice's run ends on its own (completed, or stopped with a reason), her server still there.
    await expect
      .poll(() => running(alice), { timeout: 8 * 60000, intervals: [1000] })
      .toBe(false);
    const state = await alice
      .locator(`${SIDEBAR} .jp-bcc-state`)
      .getAttribute('data-state');
    expect(['WORKFLOW_COMPLETED', 'ERROR']).toContain(state);
    const aliceErrors = await alice
      .locator(`${SIDEBAR} .jp-bcc-error`)
      .allTextContents();
    expect(aliceErrors.join('\n')).not.toContain('token budget');
    expect(Object.keys(await servers(alice, 'alice'))).toEqual(['']);
    await alice.screenshot({
      path: path.join(SCREENSHOTS, 'hub-alice-end.png')
    });

    // The planner's run log names each user, the notebook, the model and the tokens.
    const records = fs
      .readFileSync(HUB.HUB_RUN_LOG, 'utf-8')
      .split('\n')
      .filter(line => line.trim())
      .map(line => JSON.parse(line));
    console.log(records.map(r => JSON.stringify(r)).join('\n'));
    const bobs = records.filter(r => r.user === 'bob');
    expect(bobs.map(r => r.outcome)).toContain('budget');
    expect(bobs[0].notebook).toBe(bobNotebook);
    expect(bobs[0].tokens).toBeGreaterThan(0);
    if (state === 'WORKFLOW_COMPLETED') {
      const alices = records.filter(r => r.user === 'alice');
      expect(alices.map(r => r.outcome)).toEqual(['completed']);
      expect(alices[0].model).toBe('gemma-3-270m');
    }
    console.log(`hub spec: ${((Date.now() - started) / 1000).toFixed(0)} s`);
    await alice.context().close();
  });
});
