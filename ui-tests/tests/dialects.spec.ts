/**
 * The planner dialects (docs/dialects.md): full runs on the sales data against the reference planner's
 * `v1` and `bcc` test doubles with the `protocol` setting fixed, and runs in `auto` against each double
 * (and the reference planner itself) that must find the right dialect. Each test starts its own planner
 * on a free port; requests go through the Jupyter server's relay. What the client sent is read from the
 * double's `GET /__requests`.
 */
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';
import type { Page, TestInfo } from '@playwright/test';
import * as path from 'path';
import {
  capturePanel,
  cellInfos,
  configure,
  expect,
  installProbe,
  openNewNotebook,
  panel,
  planner,
  runInfo,
  startRun,
  stateLine,
  stopPlanners,
  test,
  timeline,
  uploadHousing
} from './helpers';

const SALES = path.resolve(__dirname, '../../demo/data/sales.csv');
const TASK =
  'Which region brings the most revenue, and how does it change month to month?';
const HOUSING_TASK = 'What drives the sale price of houses (SalePrice)?';

/** One request as a double recorded it (`GET /__requests`). */
interface IReceived {
  seq: number;
  method: string;
  path: string;
  contentType: string | null;
  body: unknown;
  status: number;
}

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `value.a.b.c`, or undefined where a level is missing. */
function dig(value: unknown, ...keys: Array<string | number>): unknown {
  let current = value;
  for (const key of keys) {
    if (Array.isArray(current) && typeof key === 'number') {
      current = current[key];
    } else if (isRecord(current)) {
      current = current[String(key)];
    } else {
      return undefined;
    }
  }
  return current;
}

async function received(url: string): Promise<IReceived[]> {
  const response = await fetch(`${url}/__requests`);
  expect(response.status).toBe(200);
  return (await response.json()) as IReceived[];
}

/** One line per request, for the report: `#3 POST /v1/actions 200 chapter_0_planning …`. */
function summary(requests: IReceived[]): string {
  return requests
    .map(r => {
      const detail = [
        dig(r.body, 'stage_id'),
        dig(r.body, 'step_index'),
        dig(r.body, 'state', 'FSM', 'state')
      ]
        .filter(v => v !== undefined && v !== null)
        .join(' ');
      return `#${r.seq} ${r.method} ${r.path} ${r.status} ${detail}`;
    })
    .join('\n');
}

/** A double (or the reference planner) of this test's own, the settings pointing at it, the data and a notebook. */
async function prepare(
  page: IJupyterLabPageFixture,
  tmpPath: string,
  args: string[],
  settings: Record<string, unknown>,
  name: string
): Promise<{ url: string; notebook: string }> {
  const started = await planner(args);
  await configure(page, { baseUrl: started.url, ...settings });
  await page.contents.uploadFile(SALES, `${tmpPath}/sales.csv`);
  const notebook = await openNewNotebook(page, tmpPath, name);
  return { url: started.url, notebook };
}

/**
 * Starts the run and waits until it completes or stops on an error (then fails at once, with the
 * run's error and what the planner received attached).
 */
async function runToCompletion(
  page: Page,
  notebook: string,
  url: string,
  testInfo: TestInfo,
  task = TASK,
  dataFiles = ['sales.csv']
): Promise<void> {
  await startRun(page, task, { path: notebook, dataFiles });
  await expect
    .poll(
      async () =>
        (await stateLine(page).textContent()) === 'Completed' ||
        (await stateLine(page).getAttribute('data-state')) === 'ERROR',
      { timeout: 240000, intervals: [500] }
    )
    .toBe(true);
  const info = await runInfo(page, notebook);
  if (info.error !== null) {
    // The reference planner has no request list: only the doubles' is attached.
    const log = await received(url).catch(() => null);
    if (log) {
      await attachLog(testInfo, 'requests-until-error', log);
    }
  }
  // Soft: the checks of the cells, the panel and the requests still run and report.
  expect.soft(info.error).toBeNull();
  await expect.soft(stateLine(page)).toHaveText('Completed');
  // A finished run offers Run again and nothing that acts on a live one.
  const control = (id: string) =>
    panel(page).locator(`.jp-bcc-control[data-command="${id}"]`);
  await expect.soft(control('notebook-bcc:run')).toBeEnabled();
  for (const id of [
    'notebook-bcc:pause',
    'notebook-bcc:step',
    'notebook-bcc:stop'
  ]) {
    await expect.soft(control(id)).toBeDisabled();
  }
}

function dialectLine(page: Page) {
  return panel(page).locator('.jp-bcc-planner-dialect');
}

/** Expands every stage of the progress tree and returns stage name → its step names. */
async function plannedTree(page: Page): Promise<Record<string, string[]>> {
  const stages = panel(page).locator('.jp-bcc-stage');
  const tree: Record<string, string[]> = {};
  for (let i = 0; i < (await stages.count()); i++) {
    const stage = stages.nth(i);
    if ((await stage.getAttribute('aria-expanded')) === 'false') {
      // Dispatched: the run's toast may cover the row.
      await stage.locator('.jp-bcc-tree-row').first().dispatchEvent('click');
      await expect(stage).toHaveAttribute('aria-expanded', 'true');
    }
    const name = (await stage.getAttribute('aria-label')) ?? '';
    tree[name] = await stage
      .locator('.jp-bcc-step')
      .evaluateAll(items => items.map(i => i.getAttribute('aria-label') ?? ''));
  }
  return tree;
}

/** Cells the run added: headings, markdown, and code cells with outputs from the kernel. */
async function expectRunCells(
  page: Page,
  notebook: string,
  headings: string[]
): Promise<void> {
  const all = await cellInfos(page, notebook);
  const sources = all.map(c => c.source);
  for (const heading of headings) {
    expect
      .soft(sources)
      .toContainEqual(expect.stringMatching(new RegExp(`^#+ ${heading}`)));
  }
  const prose = all.filter(
    c => c.type === 'markdown' && !c.source.startsWith('#')
  );
  expect.soft(prose.length).toBeGreaterThan(0);
  const code = all.filter(c => c.type === 'code' && c.madeBy !== null);
  expect.soft(code.length).toBeGreaterThan(0);
  expect.soft(code.filter(c => c.outputChars > 0).length).toBeGreaterThan(0);
  // No thinking cell is left open.
  expect.soft(sources.filter(s => /is thinking/.test(s))).toEqual([]);
}

async function attachLog(
  testInfo: TestInfo,
  name: string,
  requests: IReceived[]
): Promise<void> {
  await testInfo.attach(name, {
    body: summary(requests),
    contentType: 'text/plain'
  });
  await testInfo.attach(`${name}.json`, {
    body: JSON.stringify(requests, null, 1),
    contentType: 'application/json'
  });
}

test.describe('Planner dialects', () => {
  test.setTimeout(300 * 1000);
  test.use({ viewport: { width: 1400, height: 900 } });

  test.beforeEach(async ({ page }) => {
    await installProbe(page);
  });

  test.afterEach(async () => {
    await stopPlanners();
  });

  test('v1: a full run against the v1 double', async ({
    page,
    tmpPath
  }, testInfo) => {
    const { url, notebook } = await prepare(
      page,
      tmpPath,
      ['--dialect', 'v1'],
      // The question the first update_workflow wrongly raises is tested below.
      { protocol: 'v1', autoAcceptWorkflowUpdates: true },
      'v1.ipynb'
    );
    await runToCompletion(page, notebook, url, testInfo);
    await capturePanel(page, testInfo, 'dialect-v1-panel');

    await expect(dialectLine(page)).toHaveText('Planner: v1 dialect');
    const requests = await received(url);
    await attachLog(testInfo, 'v1-requests', requests);
    const actions = requests.filter(r => r.path === '/v1/actions');
    expect(actions.length).toBeGreaterThan(3);
    for (const request of actions) {
      const stage = dig(request.body, 'stage_id');
      expect(typeof stage).toBe('string');
      // The full step id `<stage_id>_<section_id>`.
      expect(dig(request.body, 'step_index')).toEqual(
        expect.stringMatching(new RegExp(`^${stage as string}_section_\\d+_`))
      );
      expect(dig(request.body, 'stream')).toBe(true);
      expect(dig(request.body, 'state', 'variables', 'user_goal')).toBe(TASK);
      expect.soft(request.status).toBe(200);
      expect(dig(request.body, 'observation')).toBeUndefined();
    }
    // The run starts at the server's planning chapter.
    expect(dig(actions[0].body, 'stage_id')).toBe('chapter_0_planning');
    // Chapter 2 needs the data described (the double requires it, like the published server): the
    // client makes context_description from the data file and, once loaded, the frame's shape.
    const chapter2 = actions.filter(
      r => dig(r.body, 'stage_id') === 'chapter_2_revenue_exploration'
    );
    expect(chapter2.length).toBeGreaterThan(0);
    expect(
      dig(chapter2[0].body, 'state', 'variables', 'context_description')
    ).toEqual(expect.stringMatching(/^sales\.csv/));
    // A later request carries a real exec output: the sales data's column names as the kernel printed them.
    const outputs = actions
      .map(r => dig(r.body, 'state', 'effect', 'current', 0))
      .filter((v): v is string => typeof v === 'string');
    expect(outputs).toContainEqual(expect.stringMatching(/month.*region/s));
    // Every behavior is followed by its reflection, for the same step.
    const api = requests.filter(r => r.path.startsWith('/v1/'));
    api.forEach((request, i) => {
      if (request.path === '/v1/actions') {
        const next = api[i + 1];
        expect.soft(next?.path).toBe('/v1/reflection');
        expect
          .soft(dig(next?.body, 'step_index'))
          .toBe(dig(request.body, 'step_index'));
      }
    });
    // Every step of the applied plan is run: the first section of each chapter (which sends its
    // update_stage_steps) included.
    expect
      .soft(actions.map(r => dig(r.body, 'step_index')))
      .toEqual(
        expect.arrayContaining([
          'chapter_1_data_existence_establishment_section_1_workflow_initialization',
          'chapter_2_revenue_exploration_section_1_workflow_initialization',
          'chapter_2_revenue_exploration_section_3_monthly_trend'
        ])
      );
    await expectRunCells(page, notebook, [
      'Data existence establishment',
      'Revenue exploration'
    ]);
    const tree = await plannedTree(page);
    expect.soft(tree).toMatchObject({
      'Data existence establishment': expect.arrayContaining([
        'Data structure discovery'
      ]),
      'Revenue exploration': expect.arrayContaining([
        'Revenue by region',
        'Monthly trend'
      ])
    });

    // With `protocol: v1`, no detection.
    expect(requests.filter(r => r.path === '/planning')).toEqual([]);
  });

  test('bcc: a full run against the bcc double (recorded scenario)', async ({
    page,
    tmpPath
  }, testInfo) => {
    const { url, notebook } = await prepare(
      page,
      tmpPath,
      ['--dialect', 'bcc', '--scenario', 'recorded'],
      { protocol: 'bcc' },
      'bcc.ipynb'
    );
    await runToCompletion(page, notebook, url, testInfo);
    await capturePanel(page, testInfo, 'dialect-bcc-panel');

    await expect(dialectLine(page)).toHaveText('Planner: bcc dialect');
    await expectRunCells(page, notebook, [
      'Sales Data Check',
      'Load Sales Data',
      'Revenue Summary',
      'Monthly Trend'
    ]);
    const tree = await plannedTree(page);
    expect(Object.keys(tree)).toEqual([
      'Sales Data Check',
      expect.stringMatching(/^Revenue Summary/)
    ]);
    expect(Object.values(tree)).toEqual([
      ['Load Sales Data', 'Check Data Quality'],
      ['Revenue by Region', 'Monthly Trend']
    ]);
    // §3.7: the reflections' progress percentage and reasoning are shown in the panel, on the
    // stage and the step they are about, after the run as during it.
    const item = (name: string) =>
      panel(page).locator(`li[role="treeitem"][aria-label="${name}"]`);
    await expect(
      item('Sales Data Check').locator(
        ':scope > .jp-bcc-tree-row .jp-bcc-percent'
      )
    ).toHaveText('100%');
    const loadStep = item('Load Sales Data');
    if ((await loadStep.getAttribute('aria-expanded')) !== 'true') {
      await loadStep.locator(':scope > .jp-bcc-tree-row').click();
    }
    await expect(
      loadStep.locator(':scope > .jp-bcc-tree-details > .jp-bcc-assessment')
    ).toContainText('step done');
    await capturePanel(page, testInfo, 'dialect-bcc-assessment');

    const requests = await received(url);
    await attachLog(testInfo, 'bcc-requests', requests);
    const fsm = (r: IReceived) => dig(r.body, 'state', 'FSM', 'state');
    const at = (p: string, state: string) =>
      requests.filter(r => r.path === p && fsm(r) === state);
    for (const state of ['IDLE', 'STAGE_RUNNING', 'STEP_RUNNING']) {
      expect(at('/planning', state).length).toBeGreaterThan(0);
    }
    expect(at('/planning', 'IDLE')).toHaveLength(1);
    expect(at('/planning', 'STAGE_RUNNING')).toHaveLength(2);
    expect(at('/generating', 'BEHAVIOR_RUNNING').length).toBeGreaterThanOrEqual(
      8
    );
    expect(
      requests.filter(
        r => r.path === '/generating' && fsm(r) !== 'BEHAVIOR_RUNNING'
      )
    ).toEqual([]);
    const behaviorReflections = at('/reflecting', 'BEHAVIOR_COMPLETED');
    expect(behaviorReflections.length).toBeGreaterThanOrEqual(8);
    const withMarker = behaviorReflections.filter(r =>
      JSON.stringify(dig(r.body, 'state', 'effects', 'current') ?? []).includes(
        'BCC-DONE:'
      )
    );
    // The second behavior of each of the four steps printed its marker, and it came back.
    expect(withMarker.length).toBeGreaterThanOrEqual(4);
    expect(at('/reflecting', 'STEP_COMPLETED')).toHaveLength(4);
    // The context is the sibling `state`, not `observation.context`.
    for (const request of requests.filter(r => r.method === 'POST')) {
      expect(dig(request.body, 'observation', 'context')).toBeUndefined();
      expect(isRecord(dig(request.body, 'state'))).toBe(true);
      expect(request.status).toBe(200);
    }
    expect(
      dig(at('/planning', 'IDLE')[0].body, 'state', 'variables')
    ).toMatchObject({
      user_problem: TASK
    });
  });

  test('bcc (auto): a typed server refusing the detection superset is found through the bcc body; a stage it ends early shows its unrun step as skipped', async ({
    page,
    tmpPath
  }, testInfo) => {
    const { url, notebook } = await prepare(
      page,
      tmpPath,
      ['--dialect', 'bcc', '--scenario', 'short-last-stage', '--strict-body'],
      { protocol: 'auto' },
      'bcc-strict.ipynb'
    );
    await runToCompletion(page, notebook, url, testInfo);
    await expect(dialectLine(page)).toHaveText('Planner: bcc dialect');

    const requests = await received(url);
    await attachLog(testInfo, 'bcc-strict-requests', requests);
    const posts = requests.filter(r => r.method === 'POST');
    // The superset probe was refused; the same request as a bcc client sends it was answered.
    expect(posts[0].status).toBe(422);
    expect(isRecord(dig(posts[0].body, 'observation', 'context'))).toBe(true);
    expect(typeof dig(posts[1].body, 'observation', 'location', 'goals')).toBe(
      'string'
    );
    expect(posts.slice(1).every(r => r.status === 200)).toBe(true);

    // The last stage was declared complete after its first step: its second step never ran.
    await plannedTree(page);
    const step = (name: string) =>
      panel(page).locator('.jp-bcc-step', {
        has: page.locator(`> .jp-bcc-tree-row`, { hasText: name })
      });
    await expect(step('Revenue by Region')).toHaveClass(/jp-bcc-mod-completed/);
    await expect(step('Monthly Trend')).toHaveClass(/jp-bcc-mod-skipped/);
    await expect(
      step('Monthly Trend').locator('.jp-bcc-status-icon').first()
    ).toHaveAttribute('aria-label', 'skipped');
    await capturePanel(page, testInfo, 'dialect-bcc-skipped-step');
  });

  test('v1: the first update_workflow of a run is the initial template, applied without asking', async ({
    page,
    tmpPath
  }, testInfo) => {
    const { url, notebook } = await prepare(
      page,
      tmpPath,
      ['--dialect', 'v1'],
      { protocol: 'v1' },
      'v1-first-template.ipynb'
    );
    await startRun(page, TASK, { path: notebook, dataFiles: ['sales.csv'] });

    // The entry step ends with the server's workflow; then the first analysis chapter runs.
    const firstChapter = panel(page).locator(
      '.jp-bcc-stage.jp-bcc-mod-current',
      { hasText: 'Data existence establishment' }
    );
    await expect
      .poll(
        async () =>
          (await firstChapter.count()) > 0 ||
          (await stateLine(page).getAttribute('data-state')) ===
            'WORKFLOW_UPDATE_PENDING',
        { timeout: 120000 }
      )
      .toBe(true);
    await attachLog(
      testInfo,
      'v1-first-template-requests',
      await received(url)
    );
    const states = (await timeline(page, notebook)).map(m => m.state);
    expect(states).not.toContain('WORKFLOW_UPDATE_PENDING');
    await expect(firstChapter).toBeVisible();
  });

  test('v1: a step that needs a variable nobody gave stops the run with Set Variables, which goes on once it is given', async ({
    page,
    tmpPath
  }, testInfo) => {
    const { url, notebook } = await prepare(
      page,
      tmpPath,
      [
        '--dialect',
        'v1',
        '--require-variable',
        'section_3_monthly_trend:region_column'
      ],
      { protocol: 'v1', autoAcceptWorkflowUpdates: true },
      'v1-variables.ipynb'
    );
    await startRun(page, TASK, { path: notebook, dataFiles: ['sales.csv'] });
    const error = panel(page).locator('.jp-bcc-error');
    await expect(error).toContainText('variables missing: region_column', {
      timeout: 240000
    });
    await expect(stateLine(page)).toHaveAttribute('data-state', 'ERROR');
    const setVariables = error.getByRole('button', { name: 'Set Variables…' });
    await expect(setVariables).toBeEnabled();
    await capturePanel(page, testInfo, 'dialect-v1-set-variables');
    await setVariables.click();
    const dialog = page.locator('.jp-Dialog');
    await expect(dialog).toContainText('region_column');
    // The field has the focus: typing goes there.
    await page.keyboard.type('region');
    await dialog.getByRole('button', { name: 'Set and Retry' }).click();
    await expect(stateLine(page)).toHaveText('Completed', { timeout: 240000 });
    expect((await runInfo(page, notebook)).error).toBeNull();
    const requests = await received(url);
    await attachLog(testInfo, 'v1-variables-requests', requests);
    const trend = requests.filter(
      r =>
        r.path === '/v1/actions' &&
        String(dig(r.body, 'step_index')).endsWith('section_3_monthly_trend')
    );
    // Not a task variable: it reaches the server because the server asked for it.
    expect(
      trend.map(r => dig(r.body, 'state', 'variables', 'region_column'))
    ).toEqual([undefined, ...trend.slice(1).map(() => 'region')]);
  });

  for (const target of ['v1', 'bcc', 'dslc'] as const) {
    test(`auto: a run against the ${target} planner finds the ${target} dialect`, async ({
      page,
      tmpPath
    }, testInfo) => {
      const args =
        target === 'dslc' ? ['--line-delay', '0'] : ['--dialect', target];
      const { url, notebook } = await prepare(
        page,
        tmpPath,
        args,
        { protocol: 'auto', autoAcceptWorkflowUpdates: target === 'v1' },
        `auto-${target}.ipynb`
      );
      if (target === 'dslc') {
        await uploadHousing(page, tmpPath);
        await runToCompletion(page, notebook, url, testInfo, HOUSING_TASK, [
          'housing.csv'
        ]);
        await capturePanel(page, testInfo, 'dialect-dslc-panel');
      } else if (target === 'bcc') {
        await runToCompletion(page, notebook, url, testInfo);
      } else {
        // Detection is what this test is about: a few behaviors on the dialect it found. A full v1 run
        // is the test above.
        await startRun(page, TASK, {
          path: notebook,
          dataFiles: ['sales.csv']
        });
        await expect
          .poll(async () => (await runInfo(page, notebook)).behaviorsRun, {
            timeout: 120000
          })
          .toBeGreaterThanOrEqual(3);
        expect((await runInfo(page, notebook)).error).toBeNull();
      }
      // The documented protocol goes without saying: only a v1 or bcc planner's line names its dialect.
      await expect(dialectLine(page)).toHaveText(
        target === 'dslc' ? 'Planner' : `Planner: ${target} dialect`
      );
      await expect(panel(page).locator('.jp-bcc-planner')).toHaveAttribute(
        'data-dialect',
        target
      );
      if (target === 'dslc') {
        return;
      }
      const requests = await received(url);
      await attachLog(testInfo, `auto-${target}-requests`, requests);
      const first = requests[0];
      expect(first.method).toBe('POST');
      expect(first.path).toBe('/planning');
      if (target === 'v1') {
        // The superset body goes to /planning (404 here), then the health probe finds v1.
        expect(first.status).toBe(404);
        expect(fsm0(first)).toBe('IDLE');
        expect(requests[1]).toMatchObject({
          method: 'GET',
          path: '/v2/health',
          status: 200
        });
        expect(requests[2].path).toBe('/v1/actions');
        // Detected once: no other probe afterwards.
        expect(
          requests.filter(
            r => r.path === '/planning' || r.path === '/v2/health'
          )
        ).toHaveLength(2);
      } else {
        // The superset /planning answered in XML: that answer is already the first planning answer.
        expect(first.status).toBe(200);
        expect(dig(first.body, 'state', 'FSM', 'state')).toBe('IDLE');
        expect(
          requests.filter(
            r =>
              r.path === '/planning' &&
              dig(r.body, 'state', 'FSM', 'state') === 'IDLE'
          )
        ).toHaveLength(1);
        expect(requests.filter(r => r.path.startsWith('/v'))).toEqual([]);
      }
    });
  }
});

/** The FSM state of the superset body's sibling `state`. */
function fsm0(request: IReceived): unknown {
  return dig(request.body, 'state', 'FSM', 'state');
}
