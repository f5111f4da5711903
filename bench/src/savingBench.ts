/**
 * Saving: a replayed run whose every behavior adds a code cell that shows a ~200 KB figure. Counts the
 * saves and the bytes they send, times the main-thread work of each save (the notebook's toJSON and
 * the request body's JSON.stringify), and how long each new cell waits for the first save after it.
 */
import type { Page, Request } from '@playwright/test';
import { statSync, writeFileSync } from 'fs';
import * as path from 'path';
import type { ICellAdded, IWorkflowRunner } from '../../src/engine/types';
import {
  achievedAnswer,
  continueAnswer,
  ReplayTraceBuilder,
  startAnswer,
  workflow
} from '../../src/protocol/testing/replayTrace';
import type { IBenchWindow } from './page';
import {
  closeNotebook,
  newNotebook,
  setSettings,
  startRun,
  waitFinished
} from './page';
import { startReplayPlanner } from './processes';
import { round } from './stats';

export interface ISavingResult {
  behaviors: number;
  figureBytes: number;
  saves: number;
  bytesWritten: number;
  finalFileBytes: number;
  /** bytes written / final file size. */
  writeAmplification: number;
  runWallMs: number;
  /** Main-thread time in the saves' toJSON and JSON.stringify of the body. */
  savingMs: number;
  /** All long tasks (> 50 ms) during the run. */
  longTaskMs: number;
  /** savingMs / runWallMs. */
  savingShare: number;
  /** The longest a new cell waited for a save to start after it. */
  maxUnsavedMs: number;
  target: { savingShare: number; maxUnsavedMs: number };
  met: boolean;
  method: string;
}

export const SAVING_METHOD =
  'A replayed run of N behaviors, each adding one code cell that displays a ~200 KB image/png output ' +
  '(150 KB of random bytes, base64) and running it. Saves are the PUT /api/contents requests; in the page, ' +
  'while a save of the notebook is under way, the time spent in the model toJSON() and in JSON.stringify ' +
  'calls returning more than 50 KB (the request body, whose length is the bytes written) is the ' +
  'main-thread time of saving; long tasks come from a PerformanceObserver. ' +
  "Each cell's wait is from the runner's cellAdded to the start of the next save. The final size is the " +
  "file's size on disk after the run.";

const FIGURE_CODE = [
  'import base64, os',
  'from IPython.display import display',
  "display({'image/png': base64.b64encode(os.urandom(150000)).decode()}, raw=True)"
].join('\n');

function savingTrace(behaviors: number, file: string): string {
  const trace = new ReplayTraceBuilder().planning(
    startAnswer(workflow('Saving benchmark', [{ id: 'save', name: 'Save' }]))
  );
  for (let i = 0; i < behaviors; i++) {
    if (i > 0) {
      trace.planning(continueAnswer());
    }
    trace.actions([
      {
        action: 'add',
        shot_type: 'action',
        content: `# figure ${i}\n${FIGURE_CODE}`,
        store_id: `figure_${i}`
      },
      { action: 'exec', codecell_id: `figure_${i}`, need_output: true }
    ]);
  }
  return trace.planning(achievedAnswer()).write(file, writeFileSync);
}

interface ISavingProbe {
  savingMs: number;
  /** The request bodies of the saves, in characters. */
  bodyChars: number;
  savesInFlight: number;
  longTaskMs: number;
  cellTimes: number[];
  saveTimes: number[];
}

export async function savingBenchmark(
  page: Page,
  options: { behaviors: number; workDir: string; rootDir: string }
): Promise<ISavingResult> {
  const traceFile = savingTrace(
    options.behaviors,
    path.join(options.workDir, 'saving.trace.jsonl')
  );
  const planner = await startReplayPlanner(traceFile);
  let saves = 0;
  const onRequest = (request: Request) => {
    if (
      request.method() === 'PUT' &&
      new URL(request.url()).pathname.includes('/api/contents/')
    ) {
      saves++;
    }
  };
  try {
    await setSettings(page, { baseUrl: planner.url });
    await newNotebook(page, 'saving');
    await page.evaluate(key => {
      const w = window as unknown as IBenchWindow & {
        savingProbe: ISavingProbe;
      };
      const { panel, runner } = w.bench.notebooks[key];
      const probe: ISavingProbe = {
        savingMs: 0,
        bodyChars: 0,
        savesInFlight: 0,
        longTaskMs: 0,
        cellTimes: [],
        saveTimes: []
      };
      w.savingProbe = probe;
      const model = panel.context.model;
      const toJSON = model.toJSON.bind(model);
      model.toJSON = () => {
        const start = performance.now();
        try {
          return toJSON();
        } finally {
          probe.savingMs += performance.now() - start;
        }
      };
      const stringify = JSON.stringify;
      JSON.stringify = ((...args: Parameters<typeof JSON.stringify>) => {
        const start = performance.now();
        const text = stringify(...args);
        if (probe.savesInFlight > 0 && text && text.length > 50000) {
          probe.savingMs += performance.now() - start;
          probe.bodyChars += text.length;
        }
        return text;
      }) as typeof JSON.stringify;
      const save = panel.context.save.bind(panel.context);
      panel.context.save = async () => {
        probe.saveTimes.push(performance.now());
        probe.savesInFlight++;
        try {
          await save();
        } finally {
          probe.savesInFlight--;
        }
      };
      runner.cellAdded.connect((_: IWorkflowRunner, __: ICellAdded) => {
        probe.cellTimes.push(performance.now());
      });
      new PerformanceObserver(list => {
        for (const entry of list.getEntries()) {
          probe.longTaskMs += entry.duration;
        }
      }).observe({ type: 'longtask' });
    }, 'saving');
    page.on('request', onRequest);
    const started = Date.now();
    await startRun(page, 'saving', 'Saving benchmark');
    const finished = await waitFinished(page, 'saving');
    const runWallMs = Date.now() - started;
    if (finished.reason !== 'completed') {
      throw new Error(
        `the saving run ended with ${finished.reason}: ${finished.message}`
      );
    }
    // The run's last save has been sent when the run finished; let its request be seen.
    await page.waitForTimeout(500);
    page.off('request', onRequest);
    const probe = await page.evaluate(
      () => (window as unknown as { savingProbe: ISavingProbe }).savingProbe
    );
    const notebookPath = await page.evaluate(
      key =>
        (window as unknown as IBenchWindow).bench.notebooks[key].panel.context
          .path,
      'saving'
    );
    const finalFileBytes = statSync(
      path.join(options.rootDir, notebookPath)
    ).size;
    await closeNotebook(page, 'saving');
    const waits = probe.cellTimes.map(at => {
      const next = probe.saveTimes.find(save => save >= at);
      return next === undefined ? Infinity : next - at;
    });
    const maxUnsavedMs = Math.max(0, ...waits);
    const savingShare = probe.savingMs / runWallMs;
    const target = { savingShare: 0.05, maxUnsavedMs: 10000 };
    return {
      behaviors: options.behaviors,
      figureBytes: 200000,
      saves,
      bytesWritten: probe.bodyChars,
      finalFileBytes,
      writeAmplification: round(probe.bodyChars / finalFileBytes),
      runWallMs,
      savingMs: round(probe.savingMs),
      longTaskMs: round(probe.longTaskMs),
      savingShare: round(savingShare),
      maxUnsavedMs: round(maxUnsavedMs),
      target,
      met:
        savingShare <= target.savingShare &&
        maxUnsavedMs <= target.maxUnsavedMs,
      method: SAVING_METHOD
    };
  } finally {
    page.off('request', onRequest);
    await planner.stop();
  }
}
