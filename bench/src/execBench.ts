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
import { round } from './stats';

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
}

export interface IExecResult {
  execs: number;
  rounds: IExecRound[];
  /** Extension against JupyterLab's own cell execution, last round. */
  ratio: number;
  /** Extension against raw kernel round trips, last round. */
  ratioToKernel: number;
  extensionMsPerExec: number;
  cellExecuteMsPerExec: number;
  kernelMsPerExec: number;
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
  'same code N times with kernel.requestExecute (a bare kernel round trip). The target ratio is taken ' +
  'against CodeCell.execute; the ratio to the bare kernel is shown beside it.';

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
    // Warm the kernel and the page's execution path before anything is timed.
    await measureKernel(page, 'exec', 20);
    for (let r = 0; r < options.rounds; r++) {
      const extension = await measureExtension(page, 'exec', options.execs);
      const cellMs = await measureCellExecute(page, 'exec', options.execs);
      const kernelMs = await measureKernel(page, 'exec', options.execs);
      rounds.push({
        extensionMs: round(extension),
        cellExecuteMs: round(cellMs),
        kernelMs: round(kernelMs),
        ratio: round(extension / cellMs),
        ratioToKernel: round(extension / kernelMs)
      });
    }
    await closeNotebook(page, 'exec');
  } finally {
    await planner.stop();
  }
  const last = rounds[rounds.length - 1];
  return {
    execs: options.execs,
    rounds,
    ratio: last.ratio,
    ratioToKernel: last.ratioToKernel,
    extensionMsPerExec: round(last.extensionMs / options.execs),
    cellExecuteMsPerExec: round(last.cellExecuteMs / options.execs),
    kernelMsPerExec: round(last.kernelMs / options.execs),
    target: 1.2,
    met: last.ratio <= 1.2,
    method: EXEC_METHOD
  };
}
