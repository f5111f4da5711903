/**
 * The demo as a user gets it: the built-in planner (through its transport) drives the engine, and every
 * code cell runs in a real IPython kernel with pandas and matplotlib on `demo/data/housing.csv`.
 * Outputs become effect text as in JupyterLab (`outputsToText`).
 */
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
} from '../../../src/planner/transport';
import { PlannerClient } from '../../../src/protocol';
import { DATA_PATH, TASK } from './helpers';
import { IPythonKernel } from './kernel';

const DEMO_DIR = join(__dirname, '..', '..', '..', 'demo');

async function runInKernel(preamble?: string): Promise<{
  driver: FakeNotebookDriver;
  effects: string[];
  reason: string;
}> {
  const kernel = new IPythonKernel(DEMO_DIR);
  const effects: string[] = [];
  try {
    if (preamble) {
      await kernel.run(preamble);
    }
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
    const transport = createBuiltinPlannerTransport({ paceMs: 0 });
    const client = new PlannerClient({
      transport,
      notebookId: 'demo.ipynb',
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
    const finished = await runner.start({ task: TASK, dataFiles: [DATA_PATH] });
    return { driver, effects, reason: finished.reason };
  } finally {
    await kernel.close();
  }
}

const FIGURE = /\[image\/png (\d+)×(\d+), \d+ KB\]/g;

describe('the demo analysis in a real IPython kernel', () => {
  jest.setTimeout(300_000);

  it('completes with three figures that the findings report refers to, and sends no base64', async () => {
    const { driver, effects, reason } = await runInKernel();
    expect(reason).toBe('completed');
    expect(effects.filter(text => text.includes('Traceback'))).toEqual([]);
    expect(driver.executed).toHaveLength(driver.codeCells().length);
    const figures = effects.flatMap(text => [...text.matchAll(FIGURE)]);
    expect(figures.length).toBeGreaterThanOrEqual(3);
    for (const [, width, height] of figures) {
      expect(Number(width)).toBeGreaterThan(300);
      expect(Number(height)).toBeGreaterThan(200);
    }
    // No base64 payload (a long run of base64 characters) ever reaches the planner.
    expect(effects.join('\n')).not.toMatch(/[A-Za-z0-9+/]{200,}/);
    const report = driver.cells
      .filter(cell => cell.kind === 'markdown')
      .map(cell => cell.source)
      .find(source => source.startsWith('## Findings\n'));
    expect(report).toBeDefined();
    expect(report).toMatch(/SalePrice \(Pearson r\): .*\(Figure 3\)/);
    expect(report).toMatch(/Strongest pairwise correlations: .*\(Figure 2\)/);
    expect(report).toMatch(
      /### Figures[\s\S]*Figure 1: distributions of SalePrice/
    );
    expect(report).toContain('Figure 2: correlation heatmap');
    expect(report).toContain('Figure 3: SalePrice against');
  });

  it('still completes without matplotlib, saying why there is no figure', async () => {
    // Makes `import matplotlib.pyplot` fail as it would where matplotlib is not installed.
    const { driver, effects, reason } = await runInKernel(
      'import sys\nsys.modules["matplotlib"] = None\nsys.modules["matplotlib.pyplot"] = None'
    );
    expect(reason).toBe('completed');
    expect(effects.join('\n')).not.toMatch(/\[image\//);
    expect(
      effects.filter(text => text.includes('matplotlib is not installed'))
    ).toHaveLength(3);
    const report = driver.cells
      .map(cell => cell.source)
      .find(source => source.startsWith('## Findings\n'));
    expect(report).toBeDefined();
    expect(report).not.toContain('Figure');
  });
});
