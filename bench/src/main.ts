/**
 * `make bench` / `make bench-short`: the five figures of issue 7, measured side by side in one run,
 * printed as a table and written to bench/results/bench.json (bench-short.json for the short run).
 *
 *   node bench/lib/bench/src/main.js [--short] [--only 1,2,...]
 */
import type { Browser, Page } from '@playwright/test';
import { mkdirSync, mkdtempSync, writeFileSync } from 'fs';
import { cpus, tmpdir } from 'os';
import * as path from 'path';
import { parseArgs } from 'util';
import { applyBenchmark, IApplyResult } from './applyBench';
import { execBenchmark, IExecResult } from './execBench';
import { IMemoryResult, memoryBenchmark } from './memoryBench';
import { IObservationResult, observationBenchmark } from './observationBench';
import { launchBrowser, openLab } from './page';
import { ILabProcess, killAll, REPO_ROOT, startLab } from './processes';
import { IVariablesResult, variablesBenchmark } from './variablesBench';

interface ISizes {
  applyActions: number;
  applyRounds: number;
  execs: number;
  execRounds: number;
  smallRows: number;
  largeRows: number;
  variableRepeats: number;
  observationBehaviors: number;
  observationUnlimitedBehaviors: number;
  outputBytes: number;
  memoryEarly: number;
  memoryLate: number;
}

const FULL: ISizes = {
  applyActions: 1000,
  applyRounds: 1,
  execs: 200,
  execRounds: 2,
  smallRows: 1000,
  largeRows: 1000000,
  variableRepeats: 15,
  observationBehaviors: 500,
  observationUnlimitedBehaviors: 100,
  outputBytes: 1024 * 1024,
  memoryEarly: 50,
  memoryLate: 500
};

const SHORT: ISizes = {
  applyActions: 200,
  applyRounds: 1,
  execs: 40,
  execRounds: 1,
  smallRows: 1000,
  largeRows: 1000000,
  variableRepeats: 5,
  observationBehaviors: 60,
  observationUnlimitedBehaviors: 60,
  outputBytes: 1024 * 1024,
  memoryEarly: 10,
  memoryLate: 60
};

interface IResults {
  mode: 'full' | 'short';
  date: string;
  machine: { cpus: number; cpuModel: string; node: string };
  sizes: ISizes;
  apply?: IApplyResult;
  exec?: IExecResult;
  variables?: IVariablesResult;
  observation?: IObservationResult;
  memory?: IMemoryResult;
  durationSeconds: number;
}

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function table(results: IResults): string {
  const rows: string[][] = [['#', 'figure', 'measured', 'target', 'met']];
  const { apply, exec, variables, observation, memory } = results;
  if (apply) {
    rows.push([
      '1',
      `apply ${apply.actions} adds`,
      `ratio ${apply.ratio} (extension ${apply.extensionMs} ms / direct ${apply.directMs} ms); per action p50 ${apply.latencyP50Ms} ms, p95 ${apply.latencyP95Ms} ms` +
        (apply.withoutFollow
          ? `; followNewCells off: ratio ${apply.withoutFollow.ratio}, p50 ${apply.withoutFollow.latencyP50Ms} ms, p95 ${apply.withoutFollow.latencyP95Ms} ms`
          : ''),
      `<= ${apply.target}`,
      apply.met ? 'yes' : 'NO'
    ]);
  }
  if (exec) {
    rows.push([
      '2',
      `exec x${exec.execs}`,
      `ratio ${exec.ratio} to CodeCell.execute (${exec.extensionMsPerExec} vs ${exec.cellExecuteMsPerExec} ms/exec); ${exec.ratioToKernel} to bare requestExecute (${exec.kernelMsPerExec} ms)`,
      `<= ${exec.target}`,
      exec.met ? 'yes' : 'NO'
    ]);
  }
  if (variables) {
    rows.push([
      '3',
      `variables 10 frames + 200`,
      `ratio ${variables.ratio} (${variables.largeRows} rows ${variables.largeMs} ms / ${variables.smallRows} rows ${variables.smallMs} ms)`,
      `<= ${variables.target}`,
      variables.met ? 'yes' : 'NO'
    ]);
  }
  if (observation) {
    rows.push([
      '4',
      `observation ${observation.behaviors} x 1 MB`,
      `planning max ${observation.planningMaxChars} chars (limit ${observation.maxContextLength}); generating with/without the filter: ${observation.unlimited.generatingWithFilterChars}/${observation.unlimited.generatingWithoutFilterChars} = ${observation.unlimited.ratio} before trimming, ${observation.generatingWithFilterChars}/${observation.generatingWithoutFilterChars} = ${observation.ratio} as sent (both trimmed to the limit)`,
      `<= ${observation.maxContextLength}`,
      observation.planningWithinLimit ? 'yes' : 'NO'
    ]);
  }
  if (memory) {
    rows.push([
      '5',
      `heap ${memory.late.behaviors} vs ${memory.early.behaviors} behaviors`,
      `${mb(memory.late.heapBytes)} vs ${mb(memory.early.heapBytes)}: ratio ${memory.ratio}, +${mb(memory.growthBytes)} (${memory.growthPerBehaviorBytes} B/behavior); the run trace (${memory.late.traceChars} chars, capped at 4M) holds ${mb(memory.late.heapBytes - memory.lateWithoutTrace.heapBytes)} of it`,
      'small',
      '-'
    ]);
  }
  const widths = rows[0].map((_, c) => Math.max(...rows.map(r => r[c].length)));
  return rows
    .map(r => r.map((cell, c) => cell.padEnd(widths[c])).join(' | '))
    .join('\n');
}

async function withPage<T>(
  browser: Browser,
  lab: ILabProcess,
  work: (page: Page) => Promise<T>
): Promise<T> {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 }
  });
  const page = await context.newPage();
  page.setDefaultTimeout(600000);
  try {
    await openLab(page, lab.url);
    return await work(page);
  } finally {
    await context.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { short: { type: 'boolean' }, only: { type: 'string' } },
    strict: true
  });
  const mode = values.short ? 'short' : 'full';
  const sizes = values.short ? SHORT : FULL;
  const only = new Set(
    (values.only ?? '1,2,3,4,5').split(',').map(s => s.trim())
  );
  const workDir = mkdtempSync(path.join(tmpdir(), 'bcc-bench-'));
  const started = Date.now();
  const results: IResults = {
    mode,
    date: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? '',
      node: process.version
    },
    sizes,
    durationSeconds: 0
  };
  const log = (message: string) =>
    console.log(
      `[bench ${((Date.now() - started) / 1000).toFixed(0)}s] ${message}`
    );

  if (only.has('4')) {
    log(
      `4. observation size: ${sizes.observationBehaviors} behaviors x ${mb(sizes.outputBytes)} (engine, Node)`
    );
    results.observation = await observationBenchmark({
      behaviors: sizes.observationBehaviors,
      unlimitedBehaviors: sizes.observationUnlimitedBehaviors,
      outputBytes: sizes.outputBytes,
      workDir
    });
  }
  if (['1', '2', '3', '5'].some(n => only.has(n))) {
    log('starting JupyterLab and Chromium');
    const lab = await startLab();
    const browser = await launchBrowser();
    try {
      if (only.has('1')) {
        log(
          `1. apply cost: ${sizes.applyActions} actions x ${sizes.applyRounds} rounds`
        );
        results.apply = await withPage(browser, lab, page =>
          applyBenchmark(page, {
            actions: sizes.applyActions,
            rounds: sizes.applyRounds,
            workDir,
            log
          })
        );
      }
      if (only.has('2')) {
        log(`2. exec cost: ${sizes.execs} execs x ${sizes.execRounds} rounds`);
        results.exec = await withPage(browser, lab, page =>
          execBenchmark(page, {
            execs: sizes.execs,
            rounds: sizes.execRounds,
            workDir
          })
        );
      }
      if (only.has('3')) {
        log(
          `3. variable collection: ${sizes.smallRows} vs ${sizes.largeRows} rows`
        );
        results.variables = await withPage(browser, lab, page =>
          variablesBenchmark(page, {
            smallRows: sizes.smallRows,
            largeRows: sizes.largeRows,
            repeats: sizes.variableRepeats
          })
        );
      }
      if (only.has('5')) {
        log(
          `5. memory: heap after ${sizes.memoryEarly} and ${sizes.memoryLate} behaviors`
        );
        results.memory = await withPage(browser, lab, page =>
          memoryBenchmark(page, {
            early: sizes.memoryEarly,
            late: sizes.memoryLate,
            workDir
          })
        );
      }
    } finally {
      await browser.close();
      await lab.stop();
    }
  }
  results.durationSeconds = Math.round((Date.now() - started) / 1000);

  const outDir = path.join(REPO_ROOT, 'bench/results');
  mkdirSync(outDir, { recursive: true });
  const outFile = path.join(
    outDir,
    mode === 'full' ? 'bench.json' : 'bench-short.json'
  );
  const json = JSON.stringify(results, null, 2) + '\n';
  writeFileSync(outFile, json);
  console.log('');
  console.log(
    `Notebook-BCC benchmarks (${mode}, ${results.machine.cpus} CPUs, ${results.durationSeconds} s)`
  );
  console.log(table(results));
  console.log('');
  for (const [n, figure] of [
    ['1', results.apply],
    ['2', results.exec],
    ['3', results.variables],
    ['4', results.observation],
    ['5', results.memory]
  ] as const) {
    if (figure) {
      console.log(`${n}. ${figure.method}`);
    }
  }
  console.log('');
  console.log(json);
  console.log(`written to ${path.relative(REPO_ROOT, outFile)}`);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killAll();
    process.exit(130);
  });
}

main().catch((error: unknown) => {
  killAll();
  console.error(
    error instanceof Error ? (error.stack ?? error.message) : error
  );
  process.exit(1);
});
