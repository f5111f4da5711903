/**
 * Figure 4, observation size, measured at the engine level in Node: the real WorkflowRunner and the
 * real DslcAdapter talk over HTTP to the reference planner replaying a scripted run, with the
 * engine's in-memory notebook driver standing in for JupyterLab (500 cells of 1 MB output each are
 * not something a browser tab can be asked to hold). Every behavior runs a cell that prints 1 MB of
 * text that does not repeat; every request body the client sends is measured.
 */
import { writeFileSync } from 'fs';
import * as path from 'path';
import {
  DEFAULT_SETTINGS,
  IRunSettings,
  RunTrace,
  WorkflowRunner
} from '../../src/engine';
import type { INotebookSummary } from '../../src/engine/ports/driver';
import { FakeNotebookDriver } from '../../src/engine/testing';
import { IPlannerObserver, DslcAdapter } from '../../src/protocol';
import { startPlanner } from './processes';
import {
  achievedAnswer,
  continueAnswer,
  ReplayTraceBuilder,
  startAnswer,
  workflow
} from '../../src/protocol/testing/replayTrace';
import { median, round } from './stats';

export interface IObservationOptions {
  behaviors: number;
  /** Behaviors of the runs without a context length limit (their size is steady once history is full). */
  unlimitedBehaviors: number;
  outputBytes: number;
  workDir: string;
}

interface IRunSizes {
  behaviors: number;
  planning: number[];
  generating: number[];
  msPerBehavior: number;
}

export interface IObservationResult {
  behaviors: number;
  outputBytes: number;
  maxContextLength: number;
  /** Largest /planning body over the run with the default limit. */
  planningMaxChars: number;
  planningWithinLimit: boolean;
  /** /generating body, median over the run's last behaviors, default limit. */
  generatingWithFilterChars: number;
  generatingWithoutFilterChars: number;
  /** with / without, default limit. */
  ratio: number;
  /** The same pair with no limit (maxContextLength 0): what the filter alone removes. */
  unlimited: {
    behaviors: number;
    planningChars: number;
    generatingWithFilterChars: number;
    generatingWithoutFilterChars: number;
    ratio: number;
  };
  msPerBehavior: number;
  method: string;
}

export const OBSERVATION_METHOD =
  'Engine level, in Node: WorkflowRunner + DslcAdapter (fetch) + the reference planner replaying a ' +
  "scripted run, with the engine's FakeNotebookDriver (its notebook summary cut to 500 characters of " +
  'last output, as the JupyterLab driver does) whose kernel prints 1 MB of non-repeating text per exec ' +
  'and holds 210 variables. Request bodies are measured as sent (JSON characters) through the ' +
  "client's observer. The filter is the one the reference planner sends on a first attempt: two named " +
  'variables, the last 3 current effects, no history, behavior and step focus. Sizes of /generating are ' +
  "medians over the last 20 behaviors. The same run without a limit shows the filter's own effect.";

const FOCUS = [
  '## Step: Summarize the data',
  '',
  'Describe the distribution of each numeric column and the most frequent categories.',
  '',
  '### State analysis',
  '- Task: benchmark the observation size',
  '- `frame_0`: DataFrame(1000000×4)',
  '',
  '### Targets',
  '- `report`: a dict of summaries',
  '',
  '### Suggested method',
  'Call describe() on every frame and collect the results in a dict.'
].join('\n');

const FILTER = {
  variables_to_include: ['problem_description', 'csv_file_path'],
  effects_config: {
    include_current: true,
    current_limit: 3,
    include_history: false,
    history_limit: 0
  },
  focus_to_include: ['behaviors', 'steps'],
  outputs_tracking: { expected_variables: ['report'] }
};

/** Characters of the last output the real NotebookDriver keeps in its notebook summary. */
const SUMMARY_OUTPUT_CAP = 500;

/** The engine's in-memory driver, with the notebook summary cut as the JupyterLab driver cuts it. */
class BenchDriver extends FakeNotebookDriver {
  notebookSummary(): INotebookSummary {
    const summary = super.notebookSummary();
    const last = summary.last_output;
    return last !== null && last.length > SUMMARY_OUTPUT_CAP
      ? { ...summary, last_output: last.slice(0, SUMMARY_OUTPUT_CAP) + '…' }
      : summary;
  }
}

/** 1 MB of lines of words that never repeat in shape, so log summarizing cannot shrink it. */
function printedText(bytes: number): string {
  const words = [
    'alpha',
    'beta',
    'gamma',
    'delta',
    'omega',
    'sigma',
    'kappa',
    'theta',
    'lambda'
  ];
  let seed = 12345;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed;
  };
  const lines: string[] = [];
  let size = 0;
  while (size < bytes) {
    const line = Array.from(
      { length: 8 },
      () => words[next() % words.length]
    ).join(' ');
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\n').slice(0, bytes);
}

function observationTrace(
  behaviors: number,
  filter: boolean,
  file: string
): string {
  const extra = {
    context_update: { progress_update: { level: 'behaviors', focus: FOCUS } },
    ...(filter ? { context_filter: FILTER } : {})
  };
  const trace = new ReplayTraceBuilder()
    .planning(
      startAnswer(
        workflow('Observation benchmark', [{ id: 'observe', name: 'Observe' }]),
        extra
      )
    )
    .actions([
      {
        action: 'add',
        shot_type: 'action',
        content: 'print(big_output())',
        store_id: 'out'
      },
      { action: 'exec', codecell_id: 'out', need_output: true }
    ]);
  for (let i = 1; i < behaviors; i++) {
    trace
      .planning(continueAnswer(extra))
      .actions([{ action: 'exec', codecell_id: 'out', need_output: true }]);
  }
  return trace.planning(achievedAnswer()).write(file, writeFileSync);
}

async function measureRun(
  behaviors: number,
  filter: boolean,
  maxContextLength: number,
  printed: string,
  workDir: string
): Promise<IRunSizes> {
  const file = path.join(
    workDir,
    `observation-${filter ? 'filter' : 'nofilter'}-${maxContextLength}.trace.jsonl`
  );
  const planner = await startPlanner([
    '--replay',
    observationTrace(behaviors, filter, file),
    '--replay-speed',
    '0',
    '--max-body',
    '50mb',
    '--quiet'
  ]);
  try {
    const settings: IRunSettings = {
      ...DEFAULT_SETTINGS,
      baseUrl: planner.url,
      maxContextLength
    };
    const sizes: IRunSizes = {
      behaviors,
      planning: [],
      generating: [],
      msPerBehavior: 0
    };
    const observer: IPlannerObserver = {
      onRequest: (url, body) => {
        const list = url.endsWith('/planning')
          ? sizes.planning
          : sizes.generating;
        list.push(JSON.stringify(body).length);
      }
    };
    const driver = new BenchDriver();
    driver.variables = {
      ...Object.fromEntries(
        Array.from({ length: 10 }, (_, i) => [
          `frame_${i}`,
          'DataFrame(1000000×4)'
        ])
      ),
      ...Object.fromEntries(
        Array.from({ length: 200 }, (_, i) => [
          `var_${i}`,
          i % 2 ? `text value ${i}` : i
        ])
      )
    };
    let execs = 0;
    driver.onExec = () => ({
      status: 'ok',
      output: `behavior ${++execs}\n${printed}`
    });
    const runner = new WorkflowRunner({
      driver,
      client: new DslcAdapter({
        baseUrl: planner.url,
        observer: [observer, { onWarning: () => undefined }]
      }),
      settings: () => settings,
      trace: new RunTrace()
    });
    const started = Date.now();
    const finished = await runner.start({
      task: 'Benchmark the observation size',
      dataFiles: ['data.csv']
    });
    sizes.msPerBehavior = (Date.now() - started) / behaviors;
    runner.dispose();
    if (finished.reason !== 'completed') {
      throw new Error(
        `the observation run ended with ${finished.reason}: ${finished.message}`
      );
    }
    if (sizes.generating.length !== behaviors) {
      throw new Error(
        `${sizes.generating.length} /generating requests for ${behaviors} behaviors`
      );
    }
    return sizes;
  } finally {
    await planner.stop();
  }
}

const tail = (values: number[]) => median(values.slice(-20));

export async function observationBenchmark(
  options: IObservationOptions
): Promise<IObservationResult> {
  const printed = printedText(options.outputBytes);
  const limit = DEFAULT_SETTINGS.maxContextLength;
  const withFilter = await measureRun(
    options.behaviors,
    true,
    limit,
    printed,
    options.workDir
  );
  const withoutFilter = await measureRun(
    options.behaviors,
    false,
    limit,
    printed,
    options.workDir
  );
  const unlimitedWith = await measureRun(
    options.unlimitedBehaviors,
    true,
    0,
    printed,
    options.workDir
  );
  const unlimitedWithout = await measureRun(
    options.unlimitedBehaviors,
    false,
    0,
    printed,
    options.workDir
  );
  const planningMax = Math.max(
    ...withFilter.planning,
    ...withoutFilter.planning
  );
  return {
    behaviors: options.behaviors,
    outputBytes: options.outputBytes,
    maxContextLength: limit,
    planningMaxChars: planningMax,
    planningWithinLimit: planningMax <= limit,
    generatingWithFilterChars: round(tail(withFilter.generating)),
    generatingWithoutFilterChars: round(tail(withoutFilter.generating)),
    ratio: round(tail(withFilter.generating) / tail(withoutFilter.generating)),
    unlimited: {
      behaviors: options.unlimitedBehaviors,
      planningChars: round(tail(unlimitedWithout.planning)),
      generatingWithFilterChars: round(tail(unlimitedWith.generating)),
      generatingWithoutFilterChars: round(tail(unlimitedWithout.generating)),
      ratio: round(
        tail(unlimitedWith.generating) / tail(unlimitedWithout.generating)
      )
    },
    msPerBehavior: round(withFilter.msPerBehavior),
    method: OBSERVATION_METHOD
  };
}
