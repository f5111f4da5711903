/**
 * The planner relay of the Jupyter server (docs/transport.md), with the default `server` transport:
 * a planner that sends no CORS headers, a notebook whose name is not Latin-1, a JupyterLab under a
 * JupyterHub-like base URL, and a /planning answer slower than the first-byte timeout. Each test starts
 * its own reference planner on a free port; the relay reads the planner URL from the user's settings
 * on the server (written by `configure`).
 */
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';
import type { Page } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';
import {
  capturePanel,
  cellSources,
  configure,
  expect,
  HOUSING,
  installProbe,
  IRecordedRequest,
  openNewNotebook,
  panel,
  planner,
  recordingProxy,
  requestLog,
  runInfo,
  savedNotebook,
  SCREENSHOTS,
  startRun,
  stateLine,
  stopPlanners,
  test,
  uploadHousing
} from './helpers';

// eslint-disable-next-line @typescript-eslint/no-var-requires
const { ALICE_URL, ALICE_BASE_PATH } = require('../servers');

const TASK = 'What drives the sale price of houses (SalePrice)?';
const RELAY = 'notebook-bcc/relay/';
const CHINESE_NOTEBOOK = '数据分析 📈.ipynb';

/** Every URL the page requested, from now on. */
function watchRequests(page: Page): string[] {
  const urls: string[] = [];
  page.on('request', request => urls.push(request.url()));
  return urls;
}

/** The reference planner as it is (no CORS headers, no line delay) and the user's settings pointing at it. */
async function plannerFor(
  page: IJupyterLabPageFixture,
  flags: string[] = [],
  settings: Record<string, unknown> = {}
): Promise<Awaited<ReturnType<typeof planner>>> {
  const started = await planner(['--line-delay', '0', ...flags]);
  await configure(page, { baseUrl: started.url, ...settings });
  return started;
}

/** Runs the demo task to its end and checks it reached the findings report. */
async function runDemoToCompletion(
  page: Page,
  notebook: string
): Promise<void> {
  await startRun(page, TASK, { path: notebook });
  await expect(stateLine(page)).toHaveText('Completed', { timeout: 240000 });
  const sources = await cellSources(page);
  expect(sources.some(source => source.startsWith('## Findings'))).toBe(true);
  await expect(
    panel(page).locator('.jp-bcc-output[data-status="produced"]', {
      hasText: 'findings_report'
    })
  ).toBeVisible();
}

/** What a `fetch` from the page to `url` gave: the status it read, or the error it threw. */
async function directFetch(
  page: Page,
  url: string,
  init: { method: string; headers?: Record<string, string>; body?: string }
): Promise<string> {
  return page.evaluate(
    async ({ url, init }) => {
      try {
        const response = await fetch(url, init);
        return `HTTP ${response.status}`;
      } catch (error) {
        return `error: ${String(error)}`;
      }
    },
    { url, init }
  );
}

function bodyOf(request: IRecordedRequest): Record<string, unknown> {
  return JSON.parse(request.body) as Record<string, unknown>;
}

test.describe('The planner relay', () => {
  test.setTimeout(300 * 1000);
  test.use({ viewport: { width: 1400, height: 900 } });

  test.beforeEach(async ({ page }) => {
    await installProbe(page);
  });

  test.afterEach(async () => {
    await stopPlanners();
  });

  test('a run completes through the relay against a planner the browser cannot call', async ({
    page,
    tmpPath,
    baseURL
  }) => {
    const started = await plannerFor(page);
    const urls = watchRequests(page);
    await uploadHousing(page, tmpPath);
    const notebook = await openNewNotebook(page, tmpPath, 'relay.ipynb');

    await runDemoToCompletion(page, notebook);

    // Every planner request went to the Jupyter server's relay, none to the planner itself.
    const relay = `${baseURL}/${RELAY}`;
    expect(urls).toContain(`${relay}planning`);
    expect(urls).toContain(`${relay}generating`);
    expect(urls.filter(url => url.startsWith(started.url))).toEqual([]);

    // The browser cannot reach this planner itself: without CORS headers the page may not read its
    // answers, with or without a preflight.
    const withHeader = await directFetch(page, `${started.url}/planning`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Notebook-Id': 'relay.ipynb'
      },
      body: '{}'
    });
    expect(withHeader).toMatch(/^error: TypeError: Failed to fetch/);
    const simple = await directFetch(page, `${started.url}/health`, {
      method: 'GET'
    });
    expect(simple).toMatch(/^error: TypeError: Failed to fetch/);
    // ... although the planner was up and answered both. Chromium sends the preflight, which the
    // planner answers without CORS headers; with galata's routes set, Playwright answers the preflight
    // itself and the POST (its `{}` body refused with 400) reaches the planner.
    const log = () => requestLog(started).map(entry => entry.line);
    await expect
      .poll(log)
      .toContainEqual(
        expect.stringMatching(/^(OPTIONS \/planning 204|POST \/planning 400)/)
      );
    await expect
      .poll(log)
      .toContainEqual(expect.stringMatching(/^GET \/health 200/));
    const health = await fetch(`${started.url}/health`);
    expect(health.status).toBe(200);
    expect(health.headers.get('access-control-allow-origin')).toBeNull();
  });

  test(`a run completes in a notebook named ${CHINESE_NOTEBOOK}; the planner receives its id`, async ({
    page,
    tmpPath
  }, testInfo) => {
    const started = await planner(['--line-delay', '0']);
    const proxy = await recordingProxy(started.url);
    await configure(page, { baseUrl: proxy.url });
    await uploadHousing(page, tmpPath);
    const notebook = await openNewNotebook(page, tmpPath, CHINESE_NOTEBOOK);
    await expect(panel(page).locator('.jp-bcc-notebook-name')).toContainText(
      CHINESE_NOTEBOOK
    );

    await runDemoToCompletion(page, notebook);
    await capturePanel(page, testInfo, 'relay-chinese-notebook-panel');
    const shot = path.join(SCREENSHOTS, 'relay-chinese-notebook.png');
    await testInfo.attach('relay-chinese-notebook', {
      body: await page.screenshot({ path: shot }),
      contentType: 'image/png'
    });

    // Every request reached the planner with the notebook's path: in the body as it is, in the header
    // percent-encoded (header values must be ASCII).
    const api = proxy.requests.filter(r => r.method === 'POST');
    expect(api.map(r => r.url)).toEqual(
      expect.arrayContaining(['/planning', '/generating'])
    );
    for (const request of api) {
      expect(bodyOf(request).notebook_id).toBe(notebook);
      const header = request.headers['x-notebook-id'];
      expect(typeof header).toBe('string');
      expect(header as string).toMatch(/^[\x21-\x7e]+$/);
      expect(decodeURIComponent(header as string)).toBe(notebook);
    }
    // The relay, not the browser, made the requests.
    expect(api[0].headers['user-agent']).toMatch(
      /^jupyterlab-notebook-bcc-relay\//
    );

    // The notebook file under that name holds the run's cells.
    const saved = await savedNotebook(page, notebook);
    expect(
      saved.cells.some(cell =>
        (Array.isArray(cell.source)
          ? cell.source.join('')
          : cell.source
        ).startsWith('## Findings')
      )
    ).toBe(true);
  });

  test('a /planning answer slower than the first-byte timeout is retried; the step runs with its plan', async ({
    page,
    tmpPath
  }) => {
    // The first /planning starts answering after 8 s; the client gives up after 3 s and asks again.
    const started = await plannerFor(
      page,
      ['--fault', 'slow-first-byte=8000@planning:1'],
      { firstByteTimeout: 3 }
    );
    await uploadHousing(page, tmpPath);
    const notebook = await openNewNotebook(page, tmpPath, 'slow.ipynb');

    await startRun(page, TASK, { path: notebook, stepMode: true });

    // The step's plan is applied: its focus is shown and its first behavior's cells appear.
    await expect(panel(page).locator('.jp-bcc-focus')).not.toBeEmpty({
      timeout: 60000
    });
    await expect
      .poll(async () => (await runInfo(page, notebook)).behaviorsRun, {
        timeout: 60000
      })
      .toBeGreaterThanOrEqual(1);
    const sources = await cellSources(page);
    expect(
      sources.filter(source => source.trim() !== '').length
    ).toBeGreaterThan(0);

    // The retry is shown as a warning, and the step did not fall back to /generating without a plan.
    const info = await runInfo(page, notebook);
    expect(info.warnings).toContainEqual(
      expect.stringMatching(
        /planning timed out: no data from the planner for 3 s .*; retrying in 1 s \(retry 1 of 3\)/
      )
    );
    expect(info.warnings.filter(w => /falling back/.test(w))).toEqual([]);
    expect(info.error).toBeNull();
    await expect(panel(page).locator('.jp-bcc-warning-list')).toContainText(
      'retrying in 1 s'
    );

    // The planner saw the first /planning closed before its answer (the relay closed it when the
    // browser gave up), then the retry answered, then the behavior's /generating.
    const log = requestLog(started).map(entry => entry.line);
    const api = log.filter(line => /^POST \//.test(line));
    expect(api[0]).toMatch(/^POST \/planning .*\(closed early\)/);
    expect(api[1]).toMatch(/^POST \/planning 200 \d+ms$/);
    expect(api[2]).toMatch(/^POST \/generating 200 \d+ms$/);
  });
});

/**
 * galata's own `tmpPath` creates the test's folder at `/api/contents`, outside a base URL: this one
 * creates it under the test's baseURL.
 */
const aliceTest = test.extend({
  tmpPath: async ({ request }, use, testInfo) => {
    const folder = path.basename(testInfo.outputDir).replace(/-retry\d+$/i, '');
    const created = await request.put(
      `api/contents/${encodeURIComponent(folder)}`,
      { data: { type: 'directory' } }
    );
    expect(created.ok()).toBe(true);
    await use(folder);
  }
});

aliceTest.describe(`The planner relay under ${ALICE_BASE_PATH}`, () => {
  aliceTest.setTimeout(300 * 1000);
  // A trailing slash, so that relative request paths stay under the base URL; galata appends appPath.
  aliceTest.use({
    baseURL: ALICE_URL,
    appPath: 'lab',
    viewport: { width: 1400, height: 900 }
  });

  aliceTest.beforeEach(async ({ page }) => {
    await installProbe(page);
  });

  aliceTest.afterEach(async () => {
    await stopPlanners();
  });

  aliceTest(
    'a run completes through the relay of a JupyterLab served under a base URL',
    async ({ page, tmpPath }) => {
      expect(page.url()).toContain(`${ALICE_BASE_PATH}lab`);
      const started = await plannerFor(page);
      const urls = watchRequests(page);
      // Through the contents API under the base URL (galata's upload helper does not reach it).
      const uploaded = await page.request.put(
        `api/contents/${encodeURIComponent(tmpPath)}/housing.csv`,
        {
          data: {
            type: 'file',
            format: 'base64',
            content: fs.readFileSync(HOUSING).toString('base64')
          }
        }
      );
      expect(uploaded.status()).toBe(201);
      const notebook = await openNewNotebook(page, tmpPath, 'alice.ipynb');

      await runDemoToCompletion(page, notebook);

      const relay = `${ALICE_URL}${RELAY}`;
      expect(urls).toContain(`${relay}planning`);
      expect(urls).toContain(`${relay}generating`);
      expect(urls.filter(url => url.startsWith(started.url))).toEqual([]);
      expect(requestLog(started).map(entry => entry.line)).toContainEqual(
        expect.stringMatching(/^POST \/generating 200/)
      );
    }
  );
});
