/**
 * Bundle: the JavaScript the extension makes a real page load, recorded from the page's responses
 * under the extension's static URL and gzipped here, at startup and then at each first use: a
 * notebook opens, the workflow panel opens, the first run.
 */
import type { Page, Response } from '@playwright/test';
import { existsSync, writeFileSync } from 'fs';
import * as path from 'path';
import { gzipSync } from 'zlib';
import {
  achievedAnswer,
  ReplayTraceBuilder,
  startAnswer,
  workflow
} from '../../src/protocol/testing/replayTrace';
import type { IBenchWindow } from './page';
import {
  closeNotebook,
  newNotebook,
  openLab,
  setSettings,
  startRun,
  waitFinished
} from './page';
import { REPO_ROOT, startReplayPlanner } from './processes';

const LABEXTENSION = 'jupyterlab_notebook_bcc/labextension';

export const STATIC_PATH = '/lab/extensions/jupyterlab-notebook-bcc/static/';

export interface IBundleFile {
  file: string;
  bytes: number;
  gzipBytes: number;
}

export interface IBundlePhase {
  phase: 'startup' | 'notebook' | 'panel' | 'run';
  files: IBundleFile[];
  gzipBytes: number;
}

export interface IBundleResult {
  /** The target holds for the production build (`jlpm build:prod`) only. */
  build: 'production' | 'development';
  phases: IBundlePhase[];
  startupGzipBytes: number;
  laterGzipBytes: number;
  targetGzipBytes: number;
  met: boolean;
  method: string;
}

export const BUNDLE_METHOD =
  `A fresh page (/lab?reset) records every response under ${STATIC_PATH}; each body is gzipped ` +
  '(zlib level 9) and summed. Startup: until JupyterLab is restored and the network is idle. Then, ' +
  'each a phase of its own: a notebook with a kernel opens; the workflow panel opens; the first run ' +
  '(one add action, replayed by the reference planner) completes.';

const TARGET_GZIP_BYTES = 40 * 1024;

function fileOf(url: string): string {
  const pathname = new URL(url).pathname;
  return pathname.slice(pathname.indexOf(STATIC_PATH) + STATIC_PATH.length);
}

export async function bundleBenchmark(
  page: Page,
  options: { labUrl: string; workDir: string }
): Promise<IBundleResult> {
  const pending: Array<Promise<IBundleFile | null>> = [];
  const onResponse = (response: Response) => {
    if (!response.url().includes(STATIC_PATH)) {
      return;
    }
    pending.push(
      response.body().then(
        body => ({
          file: fileOf(response.url()),
          bytes: body.length,
          gzipBytes: gzipSync(body, { level: 9 }).length
        }),
        () => null
      )
    );
  };
  const phases: IBundlePhase[] = [];
  const seen = new Set<string>();
  const phase = async (name: IBundlePhase['phase']) => {
    await page.waitForLoadState('networkidle');
    const files = (await Promise.all(pending.splice(0))).filter(
      (file): file is IBundleFile => !!file && !seen.has(file.file)
    );
    files.forEach(file => seen.add(file.file));
    phases.push({
      phase: name,
      files,
      gzipBytes: files.reduce((sum, file) => sum + file.gzipBytes, 0)
    });
  };

  const trace = new ReplayTraceBuilder()
    .planning(startAnswer(workflow('Bundle', [{ id: 'b', name: 'Bundle' }])))
    .actions([{ action: 'add', shot_type: 'dialogue', content: 'First use.' }])
    .planning(achievedAnswer())
    .write(path.join(options.workDir, 'bundle.trace.jsonl'), writeFileSync);
  const planner = await startReplayPlanner(trace);
  page.on('response', onResponse);
  try {
    await openLab(page, options.labUrl);
    await page.waitForTimeout(1000);
    await phase('startup');
    await newNotebook(page, 'bundle');
    await phase('notebook');
    await page.evaluate(() =>
      (window as unknown as IBenchWindow).jupyterapp.commands.execute(
        'notebook-bcc:open'
      )
    );
    await page.waitForTimeout(500);
    await phase('panel');
    await setSettings(page, { baseUrl: planner.url });
    await startRun(page, 'bundle', 'Bundle');
    const finished = await waitFinished(page, 'bundle');
    if (finished.reason !== 'completed') {
      throw new Error(`the bundle run ended with ${finished.reason}`);
    }
    await phase('run');
    await closeNotebook(page, 'bundle');
  } finally {
    page.off('response', onResponse);
    await planner.stop();
  }
  const startup = phases[0].gzipBytes;
  // Only a production build writes the third-party licenses file.
  const build = existsSync(
    path.join(REPO_ROOT, LABEXTENSION, 'static/third-party-licenses.json')
  )
    ? 'production'
    : 'development';
  return {
    build,
    phases,
    startupGzipBytes: startup,
    laterGzipBytes: phases
      .slice(1)
      .reduce((sum, phase) => sum + phase.gzipBytes, 0),
    targetGzipBytes: TARGET_GZIP_BYTES,
    met: build === 'production' && startup <= TARGET_GZIP_BYTES,
    method: BUNDLE_METHOD
  };
}
