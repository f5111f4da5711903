/**
 * Full runs on the sales data against the reference planner's `v1` and `bcc` test doubles with the
 * `protocol` setting fixed, and what a v1 planner's workflow updates and variables do to a run. The
 * fixture is `doubles.ts`.
 */
import {
  capturePanel,
  expect,
  panel,
  runInfo,
  startRun,
  stateLine,
  test,
  timeline
} from '../helpers';
import {
  IReceived,
  TASK,
  attachLog,
  dialectLine,
  dig,
  expectRunCells,
  isRecord,
  plannedTree,
  prepare,
  received,
  runToCompletion,
  useDialectRuns
} from './doubles';

test.describe('Planner dialects', () => {
  useDialectRuns();

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
});
