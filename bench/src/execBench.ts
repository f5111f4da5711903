/**
 * Figure 2, exec cost: N `exec` actions of trivial code through the extension, against N executions of
 * the same cell by JupyterLab itself (`CodeCell.execute`) and N raw `kernel.requestExecute` calls, in
 * the same page and the same kernel.
 */
import type { CodeCell } from '@jupyterlab/cells';
import type { Page } from '@playwright/test';
import { writeFileSync } from 'fs';
import * as path from 'path';
import type { IActionApplied, IWorkflowRunner } from '../../src/engine/types';
import type { IBenchWindow } from './page';
import {
  closeNotebook,
  newNotebook,
  setSettings,
  startRun,
  waitFinished
} from './page';
import { startReplayPlanner } from './processes';
import {
  achievedAnswer,
  ReplayTraceBuilder,
  startAnswer,
  workflow
} from '../../src/protocol/testing/replayTrace';
import { median, round } from './stats';

export interface IExecOptions {
  execs: number;
  rounds: number;
  workDir: string;
}

export interface IExecRound {
  extensionMs: number;
  cellExecuteMs: number;
  kernelMs: number;
  ratio: number;
  ratioToKernel: number;
  /** Median time from the kernel's idle after one execution to the next execute_request: the extension. */
  extensionGapMs: number;
  /** The same between two CodeCell.execute calls. */
  cellExecuteGapMs: number;
}

export interface IExecResult {
  execs: number;
  rounds: IExecRound[];
  /** Extension against JupyterLab's own cell execution: the median of the rounds. */
  ratio: number;
  /** The lowest and the highest round's ratio. */
  ratioSpread: [number, number];
  /** Extension against raw kernel round trips: the median of the rounds. */
  ratioToKernel: number;
  extensionMsPerExec: number;
  cellExecuteMsPerExec: number;
  kernelMsPerExec: number;
  /** Medians over the rounds of the gaps between executions (IExecRound). */
  extensionGapMs: number;
  cellExecuteGapMs: number;
  target: number;
  met: boolean;
  method: string;
}

const CODE = 'bench_x = 1';
const STORE_ID = 'bench_cell';

export const EXEC_METHOD =
  'One replayed /generating stream adds a code cell (`bench_x = 1`) and runs it N times with `exec` ' +
  '(no outputs tracked, so no variable collection between execs). Extension time: from the add being ' +
  'applied to the N-th exec being applied (runner.actionApplied). Then, in the same notebook and kernel, ' +
  'the same cell is run N times with CodeCell.execute (what running a cell costs in JupyterLab), and the ' +
  'same code N times with kernel.requestExecute (a bare kernel round trip). Rounds alternate whether the ' +
  "extension or CodeCell.execute goes first; the figure is the median of the rounds' ratios against " +
  "CodeCell.execute, with the lowest and highest. The gaps are the median time from the kernel's idle " +
  'status after one execution to the next execute_request sent, seen on the kernel connection: the ' +
  'time each side spends between two executions.';

function execTrace(execs: number, rounds: number, file: string): string {
  const trace = new ReplayTraceBuilder();
  for (let r = 0; r < rounds; r++) {
    trace
      .planning(
        startAnswer(workflow('Exec benchmark', [{ id: 'exec', name: 'Exec' }]))
      )
      .actions([
        {
          action: 'add',
          shot_type: 'action',
          content: CODE,
          store_id: STORE_ID
        },
        ...Array.from({ length: execs }, () => ({
          action: 'exec',
          codecell_id: STORE_ID,
          need_output: true
        }))
      ])
      .planning(achievedAnswer());
  }
  return trace.write(file, writeFileSync);
}

/** Records, on the notebook's kernel connection, when each execute_request goes out and each idle status comes in. */
async function recordGaps(page: Page, key: string): Promise<void> {
  await page.evaluate(key => {
    const w = window as unknown as IBenchWindow & {
      execGaps: { sends: number[]; idles: number[] };
    };
    const kernel = w.bench.notebooks[key].panel.sessionContext.session?.kernel;
    if (!kernel) {
      throw new Error('no kernel');
    }
    const gaps = { sends: [] as number[], idles: [] as number[] };
    w.execGaps = gaps;
    kernel.anyMessage.connect((_, { msg, direction }) => {
      const type = msg.header.msg_type;
      if (direction === 'send' && type === 'execute_request') {
        gaps.sends.push(performance.now());
      } else if (
        direction === 'recv' &&
        type === 'status' &&
        (msg.content as { execution_state?: string }).execution_state === 'idle'
      ) {
        gaps.idles.push(performance.now());
      }
    });
  }, key);
}

/** The median gap from an idle status to the next execute_request, over the sends since `fromSend`; returns it and the send count. */
async function gapSince(
  page: Page,
  fromSend: number
): Promise<{ gapMs: number; sends: number }> {
  const { sends, idles } = await page.evaluate(() => {
    const w = window as unknown as {
      execGaps: { sends: number[]; idles: number[] };
    };
    return w.execGaps;
  });
  const gaps: number[] = [];
  for (let i = Math.max(1, fromSend + 1); i < sends.length; i++) {
    const idle = idles.filter(t => t < sends[i]).pop();
    if (idle !== undefined && idle > sends[i - 1]) {
      gaps.push(sends[i] - idle);
    }
  }
  return { gapMs: median(gaps), sends: sends.length };
}

async function measureExtension(
  page: Page,
  key: string,
  execs: number
): Promise<number> {
  await page.evaluate(
    ({ key, execs }) => {
      const w = window as unknown as IBenchWindow & {
        execProbe: Promise<{ ms: number; failed: string[] }>;
      };
      const runner = w.bench.notebooks[key].runner;
      w.execProbe = new Promise(resolve => {
        let start = 0;
        let done = 0;
        const failed: string[] = [];
        const onApplied = (_: IWorkflowRunner, applied: IActionApplied) => {
          if (applied.action.action === 'add') {
            start = performance.now();
          } else if (applied.action.action === 'exec') {
            if (!applied.result.ok) {
              failed.push(applied.result.summary ?? 'exec failed');
            }
            if (++done === execs) {
              runner.actionApplied.disconnect(onApplied);
              resolve({ ms: performance.now() - start, failed });
            }
          }
        };
        runner.actionApplied.connect(onApplied);
      });
    },
    { key, execs }
  );
  await startRun(page, key, 'Exec benchmark');
  const result = await page.evaluate(
    () =>
      (
        window as unknown as {
          execProbe: Promise<{ ms: number; failed: string[] }>;
        }
      ).execProbe
  );
  const finished = await waitFinished(page, key);
  if (finished.reason !== 'completed') {
    throw new Error(
      `the exec run ended with ${finished.reason}: ${finished.message}`
    );
  }
  if (result.failed.length > 0) {
    throw new Error(
      `${result.failed.length} execs failed, e.g. ${result.failed[0]}`
    );
  }
  return result.ms;
}

/** Runs the cell with JupyterLab's own CodeCell.execute, N times in a row. */
async function measureCellExecute(
  page: Page,
  key: string,
  execs: number
): Promise<number> {
  return page.evaluate(
    async ({ key, execs, code }) => {
      const w = window as unknown as IBenchWindow;
      const { panel } = w.bench.notebooks[key];
      const cell = panel.content.widgets.find(
        c => c.model.type === 'code' && c.model.sharedModel.getSource() === code
      ) as CodeCell | undefined;
      if (!cell) {
        throw new Error('the benchmark cell is missing');
      }
      const execute = (cell.constructor as typeof CodeCell).execute;
      const start = performance.now();
      for (let i = 0; i < execs; i++) {
        const reply = await execute(cell, panel.sessionContext);
        if (!reply || reply.content.status !== 'ok') {
          throw new Error('CodeCell.execute failed');
        }
      }
      return performance.now() - start;
    },
    { key, execs, code: CODE }
  );
}

async function measureKernel(
  page: Page,
  key: string,
  execs: number
): Promise<number> {
  return page.evaluate(
    async ({ key, execs, code }) => {
      const w = window as unknown as IBenchWindow;
      const kernel =
        w.bench.notebooks[key].panel.sessionContext.session?.kernel;
      if (!kernel) {
        throw new Error('no kernel');
      }
      const start = performance.now();
      for (let i = 0; i < execs; i++) {
        const reply = await kernel.requestExecute({ code }).done;
        if (reply.content.status !== 'ok') {
          throw new Error('requestExecute failed');
        }
      }
      return performance.now() - start;
    },
    { key, execs, code: CODE }
  );
}

export async function execBenchmark(
  page: Page,
  options: IExecOptions
): Promise<IExecResult> {
  const traceFile = execTrace(
    options.execs,
    options.rounds,
    path.join(options.workDir, 'exec.trace.jsonl')
  );
  const planner = await startReplayPlanner(traceFile);
  const rounds: IExecRound[] = [];
  try {
    await setSettings(page, { baseUrl: planner.url });
    await newNotebook(page, 'exec');
    await recordGaps(page, 'exec');
    // Warm the kernel and the page's execution path before anything is timed.
    await measureKernel(page, 'exec', 20);
    for (let r = 0; r < options.rounds; r++) {
      const timed = async <T>(measure: () => Promise<T>) => {
        const { sends } = await gapSince(page, 0);
        const value = await measure();
        return { value, gapMs: (await gapSince(page, sends)).gapMs };
      };
      const extensionSide = () =>
        timed(() => measureExtension(page, 'exec', options.execs));
      const cellSide = () =>
        timed(() => measureCellExecute(page, 'exec', options.execs));
      let extension: { value: number; gapMs: number };
      let cell: { value: number; gapMs: number };
      if (r % 2 === 0) {
        extension = await extensionSide();
        cell = await cellSide();
      } else {
        cell = await cellSide();
        extension = await extensionSide();
      }
      const kernelMs = await measureKernel(page, 'exec', options.execs);
      rounds.push({
        extensionMs: round(extension.value),
        cellExecuteMs: round(cell.value),
        kernelMs: round(kernelMs),
        ratio: round(extension.value / cell.value),
        ratioToKernel: round(extension.value / kernelMs),
        extensionGapMs: round(extension.gapMs),
        cellExecuteGapMs: round(cell.gapMs)
      });
    }
    await closeNotebook(page, 'exec');
  } finally {
    await planner.stop();
  }
  const ratios = rounds.map(r => r.ratio);
  const ratio = median(ratios);
  const perExec = (ms: number) => round(ms / options.execs);
  return {
    execs: options.execs,
    rounds,
    ratio: round(ratio),
    ratioSpread: [Math.min(...ratios), Math.max(...ratios)],
    ratioToKernel: round(median(rounds.map(r => r.ratioToKernel))),
    extensionMsPerExec: perExec(median(rounds.map(r => r.extensionMs))),
    cellExecuteMsPerExec: perExec(median(rounds.map(r => r.cellExecuteMs))),
    kernelMsPerExec: perExec(median(rounds.map(r => r.kernelMs))),
    extensionGapMs: round(median(rounds.map(r => r.extensionGapMs))),
    cellExecuteGapMs: round(median(rounds.map(r => r.cellExecuteGapMs))),
    target: 1.2,
    met: ratio <= 1.2,
    method: EXEC_METHOD
  };
}
