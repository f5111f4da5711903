/**
 * Figure 5, memory: the page's JS heap (after forced garbage collection, read through the DevTools
 * protocol) when a run has done the first checkpoint's behaviors, against after the last one. Every
 * behavior runs the same cell again, so the notebook does not grow: what grows is the run's own state.
 */
import type { CDPSession, Page } from '@playwright/test';
import { writeFileSync } from 'fs';
import * as path from 'path';
import type { IRunSnapshot, IWorkflowRunner } from '../../src/engine/types';
import type { IBenchWindow } from './page';
import {
  collectGarbage,
  newNotebook,
  setSettings,
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
import { round } from './stats';

export interface IMemoryOptions {
  /** Behaviors at the first reading. */
  early: number;
  /** Behaviors of the whole run, read at its end. */
  late: number;
  workDir: string;
}

export interface IHeapReading {
  behaviors: number;
  heapBytes: number;
  /** The run's trace as JSONL, in characters. */
  traceChars: number;
  traceRecords: number;
  effectsHistory: number;
  timings: number;
  cells: number;
}

export interface IMemoryResult {
  early: IHeapReading;
  late: IHeapReading;
  /** The late reading again after `runner.trace.clear()`: how much of the growth is the run trace. */
  lateWithoutTrace: IHeapReading;
  /** late heap / early heap. */
  ratio: number;
  growthBytes: number;
  growthPerBehaviorBytes: number;
  method: string;
}

export const MEMORY_METHOD =
  'A fresh page runs one replayed workflow in which every behavior is /planning, then a /generating ' +
  'stream that runs the same code cell again (print of a short line), so the notebook keeps the same ' +
  'cells. The run is paused at the first checkpoint (runner.pause() from a progressChanged handler); ' +
  'HeapProfiler.collectGarbage (twice) and Runtime.getHeapUsage give the used JS heap. The second ' +
  'reading is taken the same way once the run has completed, and a third after clearing the run trace ' +
  '(runner.trace.clear()), which tells how much of the growth the trace holds.';

function memoryTrace(behaviors: number, file: string): string {
  const trace = new ReplayTraceBuilder()
    .planning(
      startAnswer(
        workflow('Memory benchmark', [{ id: 'memory', name: 'Memory' }])
      )
    )
    .actions([
      {
        action: 'add',
        shot_type: 'action',
        content: "print('tick')",
        store_id: 'tick'
      },
      { action: 'exec', codecell_id: 'tick', need_output: true }
    ]);
  for (let i = 1; i < behaviors; i++) {
    trace
      .planning(continueAnswer())
      .actions([{ action: 'exec', codecell_id: 'tick', need_output: true }]);
  }
  return trace.planning(achievedAnswer()).write(file, writeFileSync);
}

async function usedHeap(cdp: CDPSession): Promise<number> {
  await collectGarbage(cdp);
  const usage = await cdp.send('Runtime.getHeapUsage');
  return usage.usedSize;
}

async function reading(
  page: Page,
  cdp: CDPSession,
  key: string
): Promise<IHeapReading> {
  const state = await page.evaluate(key => {
    const w = window as unknown as IBenchWindow;
    const { panel, runner } = w.bench.notebooks[key];
    return {
      behaviors: runner.snapshot.behaviorsRun,
      traceChars: runner.trace.toJSONL().length,
      traceRecords: runner.trace.length,
      effectsHistory: runner.effects.history.length,
      timings: runner.snapshot.timings.length,
      cells: panel.content.model?.sharedModel.cells.length ?? 0
    };
  }, key);
  return { ...state, heapBytes: await usedHeap(cdp) };
}

export async function memoryBenchmark(
  page: Page,
  options: IMemoryOptions
): Promise<IMemoryResult> {
  const traceFile = memoryTrace(
    options.late,
    path.join(options.workDir, 'memory.trace.jsonl')
  );
  const planner = await startReplayPlanner(traceFile);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('HeapProfiler.enable');
  try {
    await setSettings(page, { baseUrl: planner.url });
    await newNotebook(page, 'memory');
    await page.evaluate(
      ({ key, early }) => {
        const w = window as unknown as IBenchWindow;
        const runner = w.bench.notebooks[key].runner;
        const onProgress = (_: IWorkflowRunner, snapshot: IRunSnapshot) => {
          if (snapshot.behaviorsRun >= early) {
            runner.progressChanged.disconnect(onProgress);
            runner.pause();
          }
        };
        runner.progressChanged.connect(onProgress);
      },
      { key: 'memory', early: options.early }
    );
    await startRun(page, 'memory', 'Memory benchmark');
    await page.waitForFunction(
      key =>
        (window as unknown as IBenchWindow).bench.notebooks[key].runner.snapshot
          .paused,
      'memory',
      { timeout: 600000, polling: 250 }
    );
    const early = await reading(page, cdp, 'memory');
    await page.evaluate(
      key =>
        (window as unknown as IBenchWindow).bench.notebooks[
          key
        ].runner.resume(),
      'memory'
    );
    const finished = await waitFinished(page, 'memory');
    if (finished.reason !== 'completed') {
      throw new Error(
        `the memory run ended with ${finished.reason}: ${finished.message}`
      );
    }
    const late = await reading(page, cdp, 'memory');
    await page.evaluate(
      key =>
        (window as unknown as IBenchWindow).bench.notebooks[
          key
        ].runner.trace.clear(),
      'memory'
    );
    const lateWithoutTrace = await reading(page, cdp, 'memory');
    const growth = late.heapBytes - early.heapBytes;
    return {
      early,
      late,
      lateWithoutTrace,
      ratio: round(late.heapBytes / early.heapBytes),
      growthBytes: growth,
      growthPerBehaviorBytes: round(
        growth / Math.max(1, late.behaviors - early.behaviors)
      ),
      method: MEMORY_METHOD
    };
  } finally {
    await cdp.detach().catch(() => undefined);
    await planner.stop();
  }
}
