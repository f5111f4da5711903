/**
 * The demo as a user gets it: the built-in planner (through its transport) drives the engine, and every
 * code cell runs in a real IPython kernel with pandas and matplotlib on `demo/data/housing.csv`.
 * Outputs become effect text as in JupyterLab (`outputsToText`).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
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
import { APPROACHES } from '../../../src/referencePlanner/codegen';
import { DslcAdapter } from '../../../src/protocol';
import { DATA_PATH, TASK } from './helpers';
import { IPythonKernel } from './kernel';

const DEMO_DIR = join(__dirname, '..', '..', '..', 'demo');

async function runInKernel(
  preamble?: string,
  task = TASK,
  dataFile = DATA_PATH
): Promise<{
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
    const client = new DslcAdapter({
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
    const finished = await runner.start({ task, dataFiles: [dataFile] });
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

  it('finds SalePrice in the Run dialog example "What drives house prices in housing.csv?"', async () => {
    const { driver, effects, reason } = await runInKernel(
      undefined,
      'What drives house prices in housing.csv?'
    );
    expect(reason).toBe('completed');
    expect(effects.filter(text => text.includes('Traceback'))).toEqual([]);
    const code = driver.codeCells().map(cell => cell.source);
    expect(code.filter(source => source.includes('TARGET = "house"'))).toEqual(
      []
    );
    const report = driver.cells
      .map(cell => cell.source)
      .find(source => source.startsWith('## Findings\n'));
    expect(report).toContain('Figure 3: SalePrice against');
  });

  it('finds the target of the task written in Chinese', async () => {
    const { driver, effects, reason } = await runInKernel(
      undefined,
      '房价（SalePrice）受哪些因素影响？请使用 housing.csv。'
    );
    expect(reason).toBe('completed');
    expect(effects.filter(text => text.includes('Traceback'))).toEqual([]);
    const report = driver.cells
      .map(cell => cell.source)
      .find(source => source.startsWith('## Findings\n'));
    expect(report).toMatch(/SalePrice \(Pearson r\): .*\(Figure 3\)/);
  });

  it('fixes a load that failed in its own cell: one code cell per step, the failed code kept with it', async () => {
    // A Latin-1 file: pandas' default UTF-8 read fails, the planner's next approach replaces bad bytes.
    const dir = mkdtempSync(join(tmpdir(), 'bcc-latin1-'));
    const latin1 = join(dir, 'housing-latin1.csv');
    const text = readFileSync(join(DEMO_DIR, DATA_PATH), 'utf8').replace(
      ',StoneBrook,',
      ',Stoné Brook,'
    );
    writeFileSync(latin1, Buffer.from(text, 'latin1'));
    try {
      const { driver, effects, reason } = await runInKernel(
        undefined,
        TASK,
        latin1
      );
      expect(reason).toBe('completed');
      expect(
        effects.filter(e => e.includes('UnicodeDecodeError'))
      ).toHaveLength(1);
      const cellsByStep = new Map<string, number>();
      for (const cell of driver.codeCells()) {
        const step = cell.provenance.step_id ?? '?';
        cellsByStep.set(step, (cellsByStep.get(step) ?? 0) + 1);
      }
      expect([...cellsByStep.values()].every(count => count === 1)).toBe(true);
      const load = driver
        .codeCells()
        .find(cell => cell.provenance.step_id === 'load_data');
      expect(load?.source).toContain('encoding_errors="replace"');
      expect(load?.output).not.toContain('Traceback');
      expect(load?.metadata.attempts).toEqual([
        expect.objectContaining({
          code: expect.stringContaining('pd.read_csv(DATA_PATH)'),
          error: expect.stringContaining('UnicodeDecodeError')
        })
      ]);
      // No note of the failed attempt among the cells: it is in the cell's attempts.
      expect(
        driver.cells.filter(cell => cell.source.includes('Attempt 1 failed'))
      ).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('without pandas, says once how to install it and ends without a traceback', async () => {
    // Makes `import pandas` fail as it would where pandas is not installed.
    const { driver, effects, reason } = await runInKernel(
      'import sys\nsys.modules["pandas"] = None'
    );
    expect(reason).toBe('completed');
    expect(effects.filter(text => text.includes('Traceback'))).toEqual([]);
    expect(driver.codeCells()).toHaveLength(1);
    const explanations = driver.cells.filter(
      cell =>
        cell.kind === 'markdown' &&
        cell.source.includes('pip install pandas matplotlib')
    );
    expect(explanations).toHaveLength(1);
    // The cleaning and exploratory steps are not each announced as skipped.
    const skipped = driver.cells.filter(cell =>
      cell.source.startsWith('**Skipping')
    );
    expect(skipped.length).toBeLessThanOrEqual(1);
  });
});

describe('figures with Chinese labels', () => {
  jest.setTimeout(120_000);

  /** The font family matplotlib ends with after a plotting cell, and what the cell printed. */
  async function fontsAfterPlotting(
    preamble: string
  ): Promise<{ family: unknown; printed: string }> {
    const kernel = new IPythonKernel(DEMO_DIR);
    try {
      await kernel.run(preamble);
      const plotted = await kernel.run(
        APPROACHES.correlations[0].code({
          dataPath: 'data.csv',
          frame: 'df',
          target: 'price',
          task: ''
        })
      );
      const { text } = outputsToText(
        plotted.outputs as unknown as nbformat.IOutput[]
      );
      const family = await kernel.run(
        'import json, matplotlib.pyplot as plt\nprint(json.dumps(list(plt.rcParams["font.family"])))'
      );
      const printed = outputsToText(
        family.outputs as unknown as nbformat.IOutput[]
      ).text;
      return { family: JSON.parse(printed), printed: text };
    } finally {
      await kernel.close();
    }
  }

  const FRAME = [
    'import pandas as pd',
    'df = pd.DataFrame({"price": [1.0, 2.0, 3.5, 4.0, 6.0], "area": [10, 21, 29, 42, 55], "rooms": [1, 2, 2, 3, 4]})'
  ].join('\n');

  it('puts the installed CJK fonts after DejaVu Sans, with no font warning', async () => {
    // CJK families as on a machine with Noto Sans CJK and WenQuanYi Zen Hei, whose only weight is 500
    // (here DejaVu's file under their names).
    const { family, printed } = await fontsAfterPlotting(
      [
        FRAME,
        'from matplotlib import font_manager',
        'dejavu = font_manager.findfont("DejaVu Sans")',
        'for name, weight in (("WenQuanYi Zen Hei", 500), ("Noto Sans CJK SC", 400)):',
        '    font_manager.fontManager.ttflist.append(font_manager.FontEntry(fname=dejavu, name=name, weight=weight))'
      ].join('\n')
    );
    expect(family).toEqual([
      'DejaVu Sans',
      'Noto Sans CJK SC',
      'WenQuanYi Zen Hei'
    ]);
    expect(printed).not.toMatch(/findfont|not found/);
  });

  it('names no CJK font that is not installed', async () => {
    const { family, printed } = await fontsAfterPlotting(FRAME);
    expect(family).toEqual(['DejaVu Sans']);
    expect(printed).not.toMatch(/findfont|not found/);
  });
});
