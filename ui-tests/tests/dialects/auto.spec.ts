/**
 * Runs in `auto` that must find the right dialect: against each double and the reference planner
 * itself, and against a typed server that refuses the detection superset. The fixture is
 * `doubles.ts`.
 */
import {
  capturePanel,
  expect,
  panel,
  runInfo,
  startRun,
  test,
  uploadHousing
} from '../helpers';
import {
  HOUSING_TASK,
  TASK,
  attachLog,
  dialectLine,
  dig,
  fsm0,
  isRecord,
  plannedTree,
  prepare,
  received,
  runToCompletion,
  useDialectRuns
} from './doubles';

test.describe('Planner dialects', () => {
  useDialectRuns();

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
