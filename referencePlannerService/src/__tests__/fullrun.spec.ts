/**
 * Full runs of the engine's WorkflowRunner against the planner over HTTP. The fake driver cannot run
 * pandas, so a small stand-in kernel gives each code cell the variables (and printed output) a real
 * kernel would: every name the cell assigns at the top level.
 */
import {
  DEFAULT_SETTINGS,
  IRunFinished,
  IRunSettings,
  RunTrace,
  WorkflowRunner
} from '../../../src/engine';
import { FakeNotebookDriver, IFakeCell } from '../../../src/engine/testing';
import type { IExecResult } from '../../../src/engine';
import { DslcAdapter } from '../../../src/protocol';
import { parseTrace, ReplayScript } from '../replay';
import { IRunningPlannerServer, startPlannerServer } from '../server';
import { DATA_PATH, TASK } from './helpers';

const ALL_ACTION_TYPES = [
  'add',
  'exec',
  'is_thinking',
  'finish_thinking',
  'new_chapter',
  'new_section',
  'update_title',
  'update_workflow',
  'update_stage_steps',
  'end_phase',
  'next_event'
];

const COLUMNS = [
  'Id',
  'LotFrontage',
  'OverallQual',
  'GrLivArea',
  'Neighborhood',
  'SalePrice'
];

const LOAD_OUTPUT = [
  'Loaded data/housing.csv: 400 rows x 25 columns',
  `Columns: ${JSON.stringify(COLUMNS)}`,
  "<class 'pandas.DataFrame'>",
  'RangeIndex: 400 entries, 0 to 399',
  ' #   Column        Non-Null Count  Dtype',
  ' 0   Id            400 non-null    int64',
  ' 5   LotFrontage   337 non-null    float64',
  ' 24  SalePrice     400 non-null    int64'
].join('\n');

const REPORT = [
  '## Findings',
  '',
  `**Task:** ${TASK}`,
  '',
  '- Numeric drivers of SalePrice (Pearson r): OverallQual (+0.83), GrLivArea (+0.56).'
].join('\n');

/**
 * Names a cell assigns at the top level (`df = ...`, `df_clean, imputation_log = ...`), also in the
 * block of a top-level `if` (`if pd is not None:`), though not in a function's body.
 */
function topLevelAssignments(source: string): string[] {
  const names: string[] = [];
  let inFunction = false;
  for (const line of source.split('\n')) {
    if (/^\S/.test(line)) {
      inFunction = /^(?:def|class)\b/.test(line);
    }
    const match = inFunction
      ? null
      : /^(?: {4})?([A-Za-z_][\w]*(?:\s*,\s*[A-Za-z_][\w]*)*)\s*=(?!=)/.exec(
          line
        );
    if (match) {
      names.push(...match[1].split(',').map(name => name.trim()));
    }
  }
  return names;
}

function summaryOf(name: string): unknown {
  if (name === 'df') {
    return 'DataFrame(400×25)';
  }
  if (name === 'df_clean') {
    return 'DataFrame(400×24)';
  }
  if (name === 'missing_summary') {
    return {
      LotFrontage: { count: 63, rate: 0.1575 },
      PoolQC: { count: 392, rate: 0.98 }
    };
  }
  if (name === 'findings_report') {
    return `str(${REPORT.length})`;
  }
  return /^[A-Z_]+$/.test(name) ? 'str' : `object(${name})`;
}

interface IKernelOptions {
  /** Makes an execution fail: return the exception line (e.g. `FileNotFoundError: ...`) or null. */
  fail?: (cell: IFakeCell, attempt: number) => string | null;
}

function standInKernel(
  driver: FakeNotebookDriver,
  options: IKernelOptions = {}
): void {
  let attempt = 0;
  driver.onExec = cell => {
    attempt++;
    const failure = options.fail?.(cell, attempt) ?? null;
    if (failure) {
      const [ename, ...rest] = failure.split(': ');
      return {
        status: 'error',
        output: `Traceback (most recent call last):\n  Cell In[${attempt}], line 4\n${failure}`,
        ename,
        evalue: rest.join(': ')
      } satisfies IExecResult;
    }
    for (const name of topLevelAssignments(cell.source)) {
      driver.variables[name] = summaryOf(name);
    }
    let output = 'ok';
    if (cell.source.includes('pd.read_csv')) {
      output = LOAD_OUTPUT;
    } else if (
      cell.source.includes('findings_report = build_findings_report')
    ) {
      output = REPORT;
    }
    return { status: 'ok', output } satisfies IExecResult;
  };
}

interface IRunResult {
  finished: IRunFinished;
  driver: FakeNotebookDriver;
  runner: WorkflowRunner;
  trace: RunTrace;
  actions: Array<Record<string, unknown>>;
  confirmations: number;
  warnings: string[];
}

async function runWorkflow(
  server: IRunningPlannerServer,
  kernel: IKernelOptions = {},
  notebookId = 'demo.ipynb'
): Promise<IRunResult> {
  const driver = new FakeNotebookDriver();
  standInKernel(driver, kernel);
  const trace = new RunTrace();
  const client = new DslcAdapter({
    baseUrl: server.url,
    headers: { 'X-Notebook-Id': notebookId },
    observer: [trace, { onWarning: () => undefined }]
  });
  let confirmations = 0;
  const settings: IRunSettings = { ...DEFAULT_SETTINGS, baseUrl: server.url };
  const runner = new WorkflowRunner({
    driver,
    client,
    settings: () => settings,
    trace,
    hooks: {
      confirmWorkflowUpdate: async () => {
        confirmations++;
        return true;
      }
    }
  });
  const warnings: string[] = [];
  runner.warning.connect((_, warning) => warnings.push(warning.message));
  const finished = await runner.start({ task: TASK, dataFiles: [DATA_PATH] });
  const actions = trace.records.flatMap(record =>
    record.kind === 'line'
      ? [
          (JSON.parse(record.line) as { action: Record<string, unknown> })
            .action
        ]
      : []
  );
  return { finished, driver, runner, trace, actions, confirmations, warnings };
}

describe('a full planned run driven by the WorkflowRunner', () => {
  let server: IRunningPlannerServer;

  beforeEach(async () => {
    server = await startPlannerServer({ port: 0, lineDelayMs: 0, log: null });
  });

  afterEach(async () => {
    await server.close();
  });

  it('runs the whole workflow on the sample data, using every action type', async () => {
    const { finished, driver, runner, actions, confirmations } =
      await runWorkflow(server);
    expect(finished.reason).toBe('completed');
    expect(runner.snapshot.state).toBe('WORKFLOW_COMPLETED');

    // The template came with the first planning answer; the target step was added once the data showed SalePrice.
    const stages = runner.snapshot.stages.map(stage => ({
      id: stage.id,
      steps: stage.steps.map(step => step.id)
    }));
    expect(stages).toEqual([
      { id: 'data_loading', steps: ['load_data'] },
      { id: 'data_cleaning', steps: ['missing_values', 'impute_missing'] },
      {
        id: 'exploratory_analysis',
        steps: ['distributions', 'correlations', 'target_drivers']
      },
      { id: 'findings', steps: ['findings_report'] }
    ]);
    // The same template again (update_workflow) is no change, so nobody is asked to confirm it.
    expect(confirmations).toBe(0);

    expect(new Set(actions.map(a => a.action))).toEqual(
      new Set(ALL_ACTION_TYPES)
    );

    // One code cell per step, each run once, each producing the step's expected variables.
    const code = driver.codeCells().map(cell => cell.source);
    expect(code).toHaveLength(7);
    expect(code[0]).toContain(`DATA_PATH = "${DATA_PATH}"`);
    expect(driver.executed).toHaveLength(7);
    for (const name of [
      'df',
      'missing_summary',
      'df_clean',
      'imputation_log',
      'numeric_summary',
      'correlations'
    ]) {
      expect(driver.variables).toHaveProperty(name);
    }
    expect(driver.variables).toHaveProperty('target_correlations');
    expect(driver.variables).toHaveProperty('findings_report');

    // The report is in the notebook as Markdown, and the title is the task.
    const markdown = driver.cells
      .filter(cell => cell.kind === 'markdown')
      .map(cell => cell.source);
    expect(markdown).toContain(REPORT);
    expect(driver.title).toBe(TASK);
    expect(markdown).toEqual(
      expect.arrayContaining([
        '## Data loading',
        '### Load and inspect the data'
      ])
    );
  });

  it('sends context filters that name the next step inputs', async () => {
    const { trace } = await runWorkflow(server);
    const planningAnswers = trace.records.flatMap(record =>
      record.kind === 'response' &&
      record.endpoint.endsWith('/planning') &&
      record.body
        ? [record.body]
        : []
    ) as Array<{
      targetAchieved: boolean;
      context_filter?: Record<string, unknown>;
    }>;
    const filters = planningAnswers.flatMap(answer =>
      answer.context_filter ? [answer.context_filter] : []
    );
    expect(filters.length).toBeGreaterThanOrEqual(7);
    expect(filters).toContainEqual(
      expect.objectContaining({
        variables_to_include: expect.arrayContaining([
          'problem_description',
          'csv_file_path',
          'missing_summary'
        ]),
        variables_to_summarize: { df: 'shape_only' },
        outputs_tracking: { expected_variables: ['df_clean', 'imputation_log'] }
      })
    );
    expect(filters).toContainEqual(
      expect.objectContaining({
        variables_to_summarize: { df_clean: 'describe_only' },
        outputs_tracking: { expected_variables: ['correlations'] }
      })
    );
    for (const filter of filters) {
      expect(filter.effects_config).toBeDefined();
      expect(filter.focus_to_include).toEqual(
        expect.arrayContaining(['behaviors'])
      );
    }
  });

  it('retries a failed step with a different approach', async () => {
    const { finished, driver } = await runWorkflow(server, {
      fail: (cell, attempt) =>
        attempt === 1
          ? "FileNotFoundError: [Errno 2] No such file or directory: 'data/housing.csv'"
          : null
    });
    expect(finished.reason).toBe('completed');
    // The client offers rewrite_cell: the retry fixes the load cell itself, which keeps the failed code.
    const loads = driver
      .codeCells()
      .filter(cell => cell.source.includes('read_csv'));
    expect(loads).toHaveLength(1);
    expect(loads[0].source).toContain('glob(');
    expect(loads[0].metadata.attempts).toEqual([
      expect.objectContaining({
        code: expect.stringContaining('pd.read_csv(DATA_PATH)'),
        error: expect.stringContaining('FileNotFoundError')
      })
    ]);
    const notes = driver.cells
      .filter(cell => cell.kind === 'markdown')
      .map(cell => cell.source);
    expect(notes.some(note => note.includes('Attempt 1 failed'))).toBe(false);
    expect(driver.variables).toHaveProperty('findings_report');
  });

  it('gives up a step after three failed attempts, explains it and moves on', async () => {
    const { finished, driver, runner } = await runWorkflow(server, {
      fail: cell =>
        /^correlations = /m.test(cell.source)
          ? 'ValueError: could not convert string to float'
          : null
    });
    expect(finished.reason).toBe('completed');
    // One cell for the step: its code is the third approach, the two before it are its attempts.
    const cells = driver
      .codeCells()
      .filter(cell => /^correlations = /m.test(cell.source));
    expect(cells).toHaveLength(1);
    const earlier = cells[0].metadata.attempts as { code: string }[];
    const tried = [...earlier.map(attempt => attempt.code), cells[0].source];
    expect(tried).toHaveLength(3);
    expect(new Set(tried).size).toBe(3);
    const notes = driver.cells
      .filter(cell => cell.kind === 'markdown')
      .map(cell => cell.source);
    const skip = notes.find(note =>
      note.startsWith('**Skipping "Correlate numeric columns".**')
    );
    expect(skip).toContain('ValueError: could not convert string to float');
    expect(skip).toContain('What was tried:');
    // The run went on: later steps ran and the report was still written.
    expect(driver.variables).toHaveProperty('target_correlations');
    expect(driver.variables).toHaveProperty('findings_report');
    expect(driver.variables).not.toHaveProperty('correlations');
    expect(runner.snapshot.state).toBe('WORKFLOW_COMPLETED');
  });

  it('when the data cannot be loaded, every later step says why it is skipped', async () => {
    const { finished, driver } = await runWorkflow(server, {
      fail: () =>
        "FileNotFoundError: [Errno 2] No such file or directory: 'data/housing.csv'"
    });
    expect(finished.reason).toBe('completed');
    expect(driver.executed).toHaveLength(3);
    const skips = driver.cells.filter(cell =>
      cell.source.startsWith('**Skipping')
    );
    expect(
      skips.map(cell => /Skipping "([^"]+)"/.exec(cell.source)?.[1])
    ).toEqual([
      'Load and inspect the data',
      'Summarize missing values',
      'Impute missing values',
      'Describe distributions',
      'Correlate numeric columns',
      'Report the findings'
    ]);
  });

  it('is deterministic: two runs send the same actions', async () => {
    const first = await runWorkflow(server, {}, 'a.ipynb');
    const second = await runWorkflow(server, {}, 'b.ipynb');
    expect(second.actions).toEqual(first.actions);
  });

  it('replays a recorded run: the same actions, in the same order', async () => {
    const recorded = await runWorkflow(server);
    const jsonl = recorded.trace.toJSONL();
    const replayServer = await startPlannerServer({
      port: 0,
      log: null,
      replay: new ReplayScript(parseTrace(jsonl), 0)
    });
    try {
      const replayed = await runWorkflow(replayServer);
      expect(replayed.finished.reason).toBe('completed');
      expect(replayed.actions).toEqual(recorded.actions);
      expect(replayed.driver.cells.map(cell => cell.source)).toEqual(
        recorded.driver.cells.map(cell => cell.source)
      );
    } finally {
      await replayServer.close();
    }
  });
});
