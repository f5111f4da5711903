/**
 * The demo planner's analysis under pandas 2 and pandas 3: the whole demo run (the built-in planner
 * driving the engine) on each data set in `demo/data`, every code cell run in a real IPython kernel of
 * a Python with that pandas. pandas 3 is `.venv`'s; pandas 2 is `.venv-pandas2`'s (`make pandas2-venv`,
 * which `make test` builds first). `BCC_PANDAS2_PYTHON` and `BCC_PANDAS3_PYTHON` name other Pythons.
 */
import { existsSync, readFileSync } from 'fs';
import { join } from 'path';

import type * as nbformat from '@jupyterlab/nbformat';

import {
  DEFAULT_SETTINGS,
  RunTrace,
  WorkflowRunner
} from '../../../src/engine';
import type { IExecResult, IRunSettings } from '../../../src/engine';
import { FakeNotebookDriver } from '../../../src/engine/testing';
import { outputsToText } from '../../../src/notebook/outputText';
import {
  BUILTIN_PLANNER_URL,
  createBuiltinPlannerTransport
} from '../../../src/referencePlanner/transport';
import { DslcAdapter } from '../../../src/protocol';
import { IPythonKernel } from './kernel';

const ROOT = join(__dirname, '..', '..', '..');
const DEMO_DIR = join(ROOT, 'demo');

const PYTHONS: Array<{ major: number; python: string; how: string }> = [
  {
    major: 2,
    python:
      process.env.BCC_PANDAS2_PYTHON ??
      join(ROOT, '.venv-pandas2', 'bin', 'python'),
    how: 'make pandas2-venv'
  },
  {
    major: 3,
    python:
      process.env.BCC_PANDAS3_PYTHON ?? join(ROOT, '.venv', 'bin', 'python'),
    how: 'make venv'
  }
];

interface IDemoCase {
  dataPath: string;
  task: string;
  target?: string;
}

const CASES: IDemoCase[] = [
  {
    dataPath: 'data/sales.csv',
    task: 'Forecast next quarter revenue for each region in sales.csv'
  },
  {
    dataPath: 'data/housing.csv',
    task: 'housing.csv 中哪些因素影响房价？',
    target: 'SalePrice'
  }
];

interface IDemoRun {
  reason: string;
  pandas: string;
  effects: string[];
  report: string;
}

async function runDemo(python: string, demo: IDemoCase): Promise<IDemoRun> {
  const kernel = new IPythonKernel(DEMO_DIR, python);
  const effects: string[] = [];
  try {
    const version = await kernel.run(
      'import pandas\nprint(pandas.__version__)'
    );
    const pandas = outputsToText(
      version.outputs as unknown as nbformat.IOutput[]
    ).text.trim();
    const driver = new FakeNotebookDriver();
    driver.onExec = async cell => {
      const result = await kernel.run(cell.source);
      const { text, error } = outputsToText(
        result.outputs as unknown as nbformat.IOutput[]
      );
      effects.push(text);
      driver.variables = Object.fromEntries(
        result.variables.map(name => [name, `object(${name})`])
      );
      return (
        error
          ? { status: 'error', output: text, ...error }
          : { status: 'ok', output: text }
      ) satisfies IExecResult;
    };
    const client = new DslcAdapter({
      transport: createBuiltinPlannerTransport({ paceMs: 0 }),
      notebookId: `pandas-${python}-${demo.dataPath}`,
      observer: { onWarning: () => undefined }
    });
    const settings: IRunSettings = {
      ...DEFAULT_SETTINGS,
      baseUrl: BUILTIN_PLANNER_URL
    };
    const runner = new WorkflowRunner({
      driver,
      client,
      settings: () => settings,
      trace: new RunTrace(),
      hooks: { confirmWorkflowUpdate: async () => true }
    });
    const finished = await runner.start({
      task: demo.task,
      dataFiles: [demo.dataPath],
      ...(demo.target ? { targetColumn: demo.target } : {})
    });
    const report =
      driver.cells
        .filter(cell => cell.kind === 'markdown')
        .map(cell => cell.source)
        .find(source => source.startsWith('## Findings\n')) ?? '';
    return { reason: finished.reason, pandas, effects, report };
  } finally {
    await kernel.close();
  }
}

/** The data file's columns, from its header. */
function columnsOf(dataPath: string): string[] {
  return readFileSync(join(DEMO_DIR, dataPath), 'utf8')
    .split('\n')[0]
    .trim()
    .split(',');
}

/** `a / b (+0.93)` pairs of the findings' "Strongest pairwise correlations" line. */
function pairsIn(report: string): Array<[string, string, string]> {
  const line = /^- Strongest pairwise correlations: (.*)$/m.exec(report);
  return [
    ...(line?.[1] ?? '').matchAll(/([^,]+?) \/ ([^,]+?) \(([^)]*)\)/g)
  ].map(([, a, b, value]) => [a.trim(), b.trim(), value]);
}

const FIGURE = /\[image\/png (\d+)×(\d+), \d+ KB\]/g;

describe.each(PYTHONS)(
  'the demo analysis under pandas $major',
  ({ major, python, how }) => {
    jest.setTimeout(300_000);

    it.each(CASES)(
      '$dataPath: findings without NaN that name real correlations',
      async demo => {
        if (!existsSync(python)) {
          throw new Error(`${python} does not exist: run \`${how}\` first`);
        }
        const run = await runDemo(python, demo);
        expect(run.pandas).toMatch(new RegExp(`^${major}\\.`));
        expect(run.reason).toBe('completed');
        expect(run.effects.filter(text => text.includes('Traceback'))).toEqual(
          []
        );
        expect(run.report).not.toBe('');
        expect(run.report).not.toMatch(/\bnan\b/i);
        const columns = columnsOf(demo.dataPath);
        const pairs = pairsIn(run.report);
        expect(pairs.length).toBeGreaterThan(0);
        for (const [a, b, value] of pairs) {
          expect(a).not.toBe(b);
          expect(columns).toContain(a);
          expect(columns).toContain(b);
          expect(Math.abs(Number(value))).toBeLessThanOrEqual(1);
        }
        if (demo.target) {
          expect(run.report).toMatch(
            new RegExp(
              `Numeric drivers of ${demo.target} \\(Pearson r\\): \\w+ \\([+-]0\\.\\d\\d\\)`
            )
          );
        } else {
          expect(run.report).toContain('No target column was given');
        }
        // Figures fit a notebook column: none wider than about 8.5 inches at the inline backend's dpi.
        const figures = run.effects.flatMap(text => [...text.matchAll(FIGURE)]);
        expect(figures.length).toBeGreaterThanOrEqual(demo.target ? 3 : 2);
        for (const [, width] of figures) {
          expect(Number(width)).toBeLessThanOrEqual(900);
        }
      }
    );
  }
);
