/**
 * Figure 1, apply cost: a replayed stream of N `add` actions (markdown and code, no exec) through the
 * extension, against inserting the same N cells directly through the notebook's shared model, in the
 * same page. Per action: from the line's arrival in the planner client to the cell's node in the DOM.
 */
import type { Page } from '@playwright/test';
import { writeFileSync } from 'fs';
import * as path from 'path';
import type { IBenchWindow } from './page';
import {
  closeNotebook,
  newNotebook,
  setSettings,
  settle,
  startRun,
  waitFinished
} from './page';
import { startReplayPlanner } from './processes';
import {
  achievedAnswer,
  continueAnswer,
  ReplayTraceBuilder,
  startAnswer,
  workflow
} from '../../src/protocol/testing/replayTrace';
import { median, quantile, round } from './stats';

export interface IApplyOptions {
  actions: number;
  rounds: number;
  /** A first pair that warms the page up, not counted (the short run, which only proves the figure runs, has none). */
  warmUp: boolean;
  workDir: string;
  /** Progress lines, e.g. for a long run. */
  log?: (message: string) => void;
}

interface ICellSpec {
  kind: 'markdown' | 'code';
  source: string;
}

interface ITimings {
  /** From the first insert (direct) or the first line's arrival (extension) to the last cell in the DOM plus one frame. */
  totalMs: number;
  /** Per cell: line arrival to node in the DOM (extension only). */
  latencies: number[];
  cells: number;
}

export interface IApplyRound {
  directMs: number;
  extensionMs: number;
  ratio: number;
}

export interface IApplyResult {
  actions: number;
  rounds: IApplyRound[];
  /** The median of the rounds' ratios. */
  ratio: number;
  /** The lowest and the highest round's ratio. */
  ratioSpread: [number, number];
  /** The highest round's ratio (`ratioSpread[1]`): the round that lays out worst. */
  worstRatio: number;
  directMs: number;
  extensionMs: number;
  /** Over every extension round's actions. */
  latencyP50Ms: number;
  latencyP95Ms: number;
  /** For the median of the rounds' ratios. */
  target: number;
  /** For the worst round's ratio. */
  worstTarget: number;
  latencyTargetMs: number;
  met: boolean;
  /** One more pair with the `followNewCells` setting off (the default is on). */
  withoutFollow:
    (IApplyRound & { latencyP50Ms: number; latencyP95Ms: number }) | null;
  method: string;
}

export const APPLY_METHOD =
  'Both sides run in one page, each on a fresh notebook, with the workflow panel open. Direct: ' +
  'sharedModel.insertCell() for each cell, awaiting a microtask in between (as the driver does). ' +
  'Extension: the reference planner replays one /generating stream of the same actions (--replay, ' +
  '--replay-speed 0) to a run started with the notebook-bcc:run command. Time runs from the first insert ' +
  '(direct) or the first line handed to the planner client (the RunTrace observer, patched in the page ' +
  'to take performance.now()) until a MutationObserver on the notebook viewport has seen every new cell ' +
  'node, plus one animation frame. Per-action latency pairs the k-th streamed line with the k-th cell node. ' +
  'Before each side the page collects garbage and waits until idle; a first pair warms the page up and ' +
  "is not counted. Rounds alternate which side goes first; the figure is the median of the rounds' ratios, with the " +
  "lowest and highest (the worst round), and the p95 over every extension round's actions. It uses the default settings " +
  '(followNewCells on); one more pair is measured with it off.';

export interface ILongRunSide {
  firstP95Ms: number;
  lastP95Ms: number;
  /** lastP95Ms / firstP95Ms. */
  ratio: number;
  wallMs: number;
}

export interface ILongRunResult {
  actions: number;
  window: number;
  /** Actions per behavior (a behavior may send at most 2,000: docs/protocol.md#limits). */
  perBehavior: number;
  /** The extension: line arrival to cell node. */
  extension: ILongRunSide;
  /** JupyterLab alone: the same cells inserted in the same bursts, insert to cell node. */
  direct: ILongRunSide;
  /** The extension's growth against JupyterLab's own: extension.ratio / direct.ratio. */
  relative: number;
  target: number;
  /** The extension's figure (extension.ratio) is within the target. */
  met: boolean;
  /** What the extension adds: its growth against JupyterLab's own (relative) is within the target. */
  relativeMet: boolean;
  method: string;
}

export const LONG_RUN_METHOD =
  'One run of N replayed add actions (markdown and code, no exec), in behaviors of B actions (a behavior ' +
  'may send at most 2,000), in a fresh notebook with the panel open; per action, line arrival to cell ' +
  'node in the DOM as for the apply figure. The figure is the p95 of the last window of actions against ' +
  'the p95 of the first. Beside it, in the same page, JupyterLab alone: the same N cells inserted through ' +
  'the shared model in bursts of B (the next burst once the last one is in the DOM), insert to cell node, ' +
  "with the same windows; the extension's growth divided by JupyterLab's is what the extension adds.";

function cellSpecs(count: number): ICellSpec[] {
  return Array.from({ length: count }, (_, i) =>
    i % 2 === 0
      ? {
          kind: 'markdown',
          source: `Bench note ${i}: what the next cell computes, in **one** sentence.`
        }
      : { kind: 'code', source: `value_${i} = ${i} * 2` }
  );
}

function addAction(cell: ICellSpec): Record<string, unknown> {
  return cell.kind === 'code'
    ? { action: 'add', shot_type: 'action', content: cell.source }
    : { action: 'add', shot_type: 'dialogue', content: cell.source };
}

function applyTrace(cells: ICellSpec[], rounds: number, file: string): string {
  const trace = new ReplayTraceBuilder();
  for (let r = 0; r < rounds; r++) {
    trace
      .planning(
        startAnswer(
          workflow('Apply benchmark', [{ id: 'apply', name: 'Apply' }])
        )
      )
      .actions(cells.map(addAction))
      .planning(achievedAnswer());
  }
  return trace.write(file, writeFileSync);
}

/** Installs a MutationObserver that records when each new cell node enters the notebook's viewport. */
async function observeCells(
  page: Page,
  key: string,
  count: number
): Promise<void> {
  await page.evaluate(
    ({ key, count }) => {
      const w = window as unknown as IBenchWindow & {
        applyProbe: {
          domTimes: number[];
          lineTimes: number[];
          all: Promise<number>;
          observer: MutationObserver;
        };
      };
      const { panel } = w.bench.notebooks[key];
      const domTimes: number[] = [];
      let done: (t: number) => void = () => undefined;
      const all = new Promise<number>(resolve => (done = resolve));
      const observer = new MutationObserver(records => {
        const now = performance.now();
        for (const record of records) {
          record.addedNodes.forEach(node => {
            if (
              node instanceof HTMLElement &&
              node.classList.contains('jp-Cell')
            ) {
              domTimes.push(now);
            }
          });
        }
        if (domTimes.length >= count) {
          done(domTimes[count - 1]);
        }
      });
      observer.observe(panel.content.viewportNode, { childList: true });
      w.applyProbe = { domTimes, lineTimes: [], all, observer };
    },
    { key, count }
  );
}

/** Waits for every cell node and one frame after; returns the probe's times. Fails after `timeoutMs`. */
async function collectProbe(
  page: Page,
  timeoutMs = 1800000
): Promise<{ domTimes: number[]; lineTimes: number[]; end: number }> {
  return page.evaluate(async timeoutMs => {
    const w = window as unknown as {
      applyProbe: {
        domTimes: number[];
        lineTimes: number[];
        all: Promise<number>;
        observer: MutationObserver;
      };
    };
    const probe = w.applyProbe;
    const timedOut = await Promise.race([
      probe.all.then(() => false),
      new Promise<boolean>(resolve =>
        setTimeout(() => resolve(true), timeoutMs)
      )
    ]);
    if (timedOut) {
      probe.observer.disconnect();
      throw new Error(
        `only ${probe.domTimes.length} cell nodes (and ${probe.lineTimes.length} lines) after ${timeoutMs / 1000} s`
      );
    }
    await new Promise(resolve =>
      requestAnimationFrame(() => setTimeout(resolve, 0))
    );
    const end = performance.now();
    probe.observer.disconnect();
    return { domTimes: probe.domTimes, lineTimes: probe.lineTimes, end };
  }, timeoutMs);
}

/**
 * BCC_BENCH_PROFILE=<folder>: a Chrome CPU profile of each side's rounds, to open in DevTools:
 * `<folder>/direct.cpuprofile` and `<folder>/extension.cpuprofile` (the last round of each).
 */
async function profiled<T>(
  page: Page,
  side: 'direct' | 'extension',
  measure: () => Promise<T>
): Promise<T> {
  const folder = process.env.BCC_BENCH_PROFILE;
  if (!folder) {
    return measure();
  }
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.start');
  const result = await measure();
  const { profile } = await cdp.send('Profiler.stop');
  writeFileSync(
    path.join(folder, `${side}.cpuprofile`),
    JSON.stringify(profile)
  );
  await cdp.detach();
  return result;
}

async function measureDirect(
  page: Page,
  key: string,
  cells: ICellSpec[]
): Promise<ITimings> {
  await observeCells(page, key, cells.length);
  await settle(page);
  const { start, domTimes, end } = await profiled(page, 'direct', async () => {
    const start = await page.evaluate(
      async ({ key, cells }) => {
        const w = window as unknown as IBenchWindow;
        const shared = w.bench.notebooks[key].panel.content.model?.sharedModel;
        if (!shared) {
          throw new Error('no notebook model');
        }
        const start = performance.now();
        for (const cell of cells) {
          shared.insertCell(shared.cells.length, {
            cell_type: cell.kind,
            source: cell.source,
            metadata: {}
          });
          await Promise.resolve();
        }
        return start;
      },
      { key, cells }
    );
    return { start, ...(await collectProbe(page)) };
  });
  return { totalMs: end - start, latencies: [], cells: domTimes.length };
}

async function measureExtension(
  page: Page,
  key: string,
  count: number
): Promise<ITimings> {
  await observeCells(page, key, count);
  await page.evaluate(key => {
    const w = window as unknown as IBenchWindow & {
      applyProbe: { lineTimes: number[] };
    };
    const trace = w.bench.notebooks[key].runner.trace;
    const lineTimes = w.applyProbe.lineTimes;
    const onLine = trace.onLine;
    trace.onLine = (url: string, line: string) => {
      if (url.endsWith('/generating')) {
        lineTimes.push(performance.now());
      }
      onLine.call(trace, url, line);
    };
  }, key);
  await settle(page);
  const { domTimes, lineTimes, end } = await profiled(
    page,
    'extension',
    async () => {
      await startRun(page, key, 'Apply benchmark');
      return collectProbe(page);
    }
  );
  const finished = await waitFinished(page, key);
  if (finished.reason !== 'completed') {
    throw new Error(
      `the apply run ended with ${finished.reason}: ${finished.message}`
    );
  }
  if (lineTimes.length < count) {
    throw new Error(`only ${lineTimes.length} of ${count} lines were seen`);
  }
  const latencies = domTimes
    .slice(0, count)
    .map((t, i) => Math.max(0, t - lineTimes[i]));
  return { totalMs: end - lineTimes[0], latencies, cells: domTimes.length };
}

export async function applyBenchmark(
  page: Page,
  options: IApplyOptions
): Promise<IApplyResult> {
  const cells = cellSpecs(options.actions);
  // Up to two more runs than rounds: a first pair warms the page up (not counted), and the last one,
  // with `followNewCells` off, tells the scrolling apart.
  const traceFile = applyTrace(
    cells,
    options.rounds + (options.warmUp ? 2 : 1),
    path.join(options.workDir, 'apply.trace.jsonl')
  );
  const planner = await startReplayPlanner(traceFile);
  const rounds: IApplyRound[] = [];
  const latencies: number[] = [];
  const log = options.log ?? (() => undefined);
  const pair = async (
    directFirst = true
  ): Promise<{
    round: IApplyRound;
    extension: ITimings;
  }> => {
    const runDirect = async () => {
      await newNotebook(page, 'direct');
      const timings = await measureDirect(page, 'direct', cells);
      await closeNotebook(page, 'direct');
      log(`direct: ${round(timings.totalMs)} ms`);
      return timings;
    };
    const runExtension = async () => {
      await newNotebook(page, 'extension');
      const timings = await measureExtension(page, 'extension', cells.length);
      await closeNotebook(page, 'extension');
      log(`extension: ${round(timings.totalMs)} ms`);
      return timings;
    };
    let direct: ITimings;
    let extension: ITimings;
    if (directFirst) {
      direct = await runDirect();
      extension = await runExtension();
    } else {
      extension = await runExtension();
      direct = await runDirect();
    }
    return {
      round: {
        directMs: round(direct.totalMs),
        extensionMs: round(extension.totalMs),
        ratio: round(extension.totalMs / direct.totalMs)
      },
      extension
    };
  };
  let withoutFollow: IApplyResult['withoutFollow'] = null;
  try {
    await setSettings(page, { baseUrl: planner.url });
    await page.evaluate(() =>
      (window as unknown as IBenchWindow).jupyterapp.commands.execute(
        'notebook-bcc:open'
      )
    );
    if (options.warmUp) {
      log('warm-up pair (not counted):');
      await pair();
    }
    for (let r = 0; r < options.rounds; r++) {
      const { round: measured, extension } = await pair(r % 2 === 0);
      log(`round ${r + 1}: ratio ${measured.ratio}`);
      rounds.push(measured);
      latencies.push(...extension.latencies);
    }
    log('followNewCells off:');
    await setSettings(page, { followNewCells: false });
    const { round: measured, extension } = await pair();
    withoutFollow = {
      ...measured,
      latencyP50Ms: round(quantile(extension.latencies, 0.5)),
      latencyP95Ms: round(quantile(extension.latencies, 0.95))
    };
  } finally {
    await planner.stop();
  }
  const ratios = rounds.map(r => r.extensionMs / r.directMs);
  const ratio = median(ratios);
  const worst = Math.max(...ratios);
  const p95 = quantile(latencies, 0.95);
  return {
    actions: options.actions,
    rounds,
    ratio: round(ratio),
    ratioSpread: [round(Math.min(...ratios)), round(worst)],
    worstRatio: round(worst),
    directMs: round(median(rounds.map(r => r.directMs))),
    extensionMs: round(median(rounds.map(r => r.extensionMs))),
    latencyP50Ms: round(quantile(latencies, 0.5)),
    latencyP95Ms: round(p95),
    target: 1.1,
    worstTarget: 1.25,
    latencyTargetMs: 50,
    met: ratio <= 1.1 && worst <= 1.25 && p95 < 50,
    withoutFollow,
    method: APPLY_METHOD
  };
}

/** JupyterLab alone: `cells` inserted through the shared model in bursts of `perBurst`; insert to DOM per cell. */
async function measureDirectBursts(
  page: Page,
  key: string,
  cells: ICellSpec[],
  perBurst: number
): Promise<number[]> {
  await observeCells(page, key, cells.length);
  await settle(page);
  await page.evaluate(
    async ({ key, cells, perBurst }) => {
      const w = window as unknown as IBenchWindow & {
        applyProbe: { domTimes: number[]; lineTimes: number[] };
      };
      const shared = w.bench.notebooks[key].panel.content.model?.sharedModel;
      if (!shared) {
        throw new Error('no notebook model');
      }
      const { domTimes, lineTimes } = w.applyProbe;
      for (let i = 0; i < cells.length; i++) {
        if (i % perBurst === 0) {
          // The next burst once the previous one is on the page, as a run's next behavior.
          while (domTimes.length < i) {
            await new Promise(resolve => setTimeout(resolve, 5));
          }
        }
        lineTimes.push(performance.now());
        shared.insertCell(shared.cells.length, {
          cell_type: cells[i].kind,
          source: cells[i].source,
          metadata: {}
        });
        await Promise.resolve();
      }
    },
    { key, cells, perBurst }
  );
  const { domTimes, lineTimes } = await collectProbe(page);
  return domTimes.map((t, i) => Math.max(0, t - lineTimes[i]));
}

function longRunSide(
  latencies: number[],
  window: number,
  wallMs: number
): ILongRunSide {
  const first = quantile(latencies.slice(0, window), 0.95);
  const last = quantile(latencies.slice(-window), 0.95);
  return {
    firstP95Ms: round(first),
    lastP95Ms: round(last),
    ratio: round(last / first),
    wallMs: Math.round(wallMs)
  };
}

/** One long run: does the cost of an action grow with the notebook, more than JupyterLab's own? */
export async function longRunBenchmark(
  page: Page,
  options: {
    actions: number;
    window: number;
    perBehavior: number;
    workDir: string;
    log?: (message: string) => void;
  }
): Promise<ILongRunResult> {
  const cells = cellSpecs(options.actions);
  const trace = new ReplayTraceBuilder().planning(
    startAnswer(workflow('Long run', [{ id: 'long', name: 'Long' }]))
  );
  for (let i = 0; i < cells.length; i += options.perBehavior) {
    if (i > 0) {
      trace.planning(continueAnswer());
    }
    trace.actions(cells.slice(i, i + options.perBehavior).map(addAction));
  }
  const traceFile = trace
    .planning(achievedAnswer())
    .write(path.join(options.workDir, 'long.trace.jsonl'), writeFileSync);
  const planner = await startReplayPlanner(traceFile);
  const log = options.log ?? (() => undefined);
  try {
    await setSettings(page, { baseUrl: planner.url });
    await page.evaluate(() =>
      (window as unknown as IBenchWindow).jupyterapp.commands.execute(
        'notebook-bcc:open'
      )
    );
    await newNotebook(page, 'long');
    const extension = await measureExtension(page, 'long', cells.length);
    await closeNotebook(page, 'long');
    log(`extension: ${round(extension.totalMs)} ms`);
    await newNotebook(page, 'long-direct');
    const started = Date.now();
    const direct = await measureDirectBursts(
      page,
      'long-direct',
      cells,
      options.perBehavior
    );
    const directMs = Date.now() - started;
    await closeNotebook(page, 'long-direct');
    log(`direct: ${round(directMs)} ms`);
    const extensionSide = longRunSide(
      extension.latencies,
      options.window,
      extension.totalMs
    );
    const directSide = longRunSide(direct, options.window, directMs);
    const relative = extensionSide.ratio / directSide.ratio;
    return {
      actions: options.actions,
      window: options.window,
      perBehavior: options.perBehavior,
      extension: extensionSide,
      direct: directSide,
      relative: round(relative),
      target: 1.2,
      met: extensionSide.ratio <= 1.2,
      relativeMet: relative <= 1.2,
      method: LONG_RUN_METHOD
    };
  } finally {
    await planner.stop();
  }
}
