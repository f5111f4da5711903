/**
 * Startup: page load to JupyterLab's `restored`, with the extension against without it. Two servers run
 * side by side, each given its own labextensions folder (links to every installed prebuilt extension,
 * one of them without this one), so nothing shared is configured; cold loads alternate between them.
 */
import type { Browser } from '@playwright/test';
import { execFileSync } from 'child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  symlinkSync
} from 'fs';
import * as path from 'path';
import { median, quantile, round } from './stats';
import { ILabProcess, startLab } from './processes';

export const EXTENSION_NAME = 'jupyterlab-notebook-bcc';

export interface IStartupResult {
  loads: number;
  withMs: number[];
  withoutMs: number[];
  withMedianMs: number;
  withoutMedianMs: number;
  ratio: number;
  /** The 25th and 75th percentiles of the pairs' ratios. */
  ratioSpread: [number, number];
  /** The same for the main thread's busy time until `restored`. */
  busyRatio: number;
  busyRatioSpread: [number, number];
  withBusyMedianMs: number;
  withoutBusyMedianMs: number;
  target: number;
  met: boolean;
  method: string;
}

export const STARTUP_METHOD =
  'Two JupyterLab servers side by side, each with a labextensions folder of its own (--LabApp.labextensions_path) ' +
  'linking every installed prebuilt extension, one without this extension. Each load is a new browser ' +
  'context (empty cache) opening /lab?reset; the time is performance.now() when app.restored resolves. ' +
  'Loads alternate between the servers (with first, then without first), in pairs; the figure is the ' +
  "median of the pairs' ratios (with / without), with their quartiles. Beside it, the same for the " +
  "main thread's busy time until then (Chrome's TaskDuration metric), which a loaded machine moves less.";

/** Every prebuilt extension JupyterLab would find, first folder first, as `name -> folder`. */
function installedExtensions(): Map<string, string> {
  const paths = JSON.parse(
    execFileSync('jupyter', ['--paths', '--json'], { encoding: 'utf8' })
  ) as { data: string[] };
  const found = new Map<string, string>();
  for (const data of paths.data) {
    const dir = path.join(data, 'labextensions');
    if (!existsSync(dir)) {
      continue;
    }
    for (const entry of readdirSync(dir)) {
      const names = entry.startsWith('@')
        ? readdirSync(path.join(dir, entry)).map(name => `${entry}/${name}`)
        : [entry];
      for (const name of names) {
        if (!found.has(name)) {
          found.set(name, path.join(dir, name));
        }
      }
    }
  }
  return found;
}

function extensionsFolder(
  workDir: string,
  extensions: Map<string, string>,
  without: string | null
): string {
  const folder = mkdtempSync(path.join(workDir, 'labextensions-'));
  for (const [name, target] of extensions) {
    if (name === without) {
      continue;
    }
    const link = path.join(folder, name);
    mkdirSync(path.dirname(link), { recursive: true });
    symlinkSync(target, link);
  }
  return folder;
}

interface ILoad {
  /** performance.now() when `restored` resolved. */
  ms: number;
  /** Main-thread busy time until then (Chrome's TaskDuration), ms: less moved by a loaded machine. */
  taskMs: number;
}

async function loadTime(browser: Browser, lab: ILabProcess): Promise<ILoad> {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 }
  });
  try {
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Performance.enable');
    await page.addInitScript(() => {
      const w = window as unknown as {
        jupyterapp?: { restored: Promise<void> };
        benchRestoredAt?: number;
      };
      let app: { restored: Promise<void> } | undefined;
      Object.defineProperty(w, 'jupyterapp', {
        configurable: true,
        get: () => app,
        set: value => {
          app = value;
          void value.restored.then(() => {
            w.benchRestoredAt = performance.now();
          });
        }
      });
    });
    await page.goto(`${lab.url}/lab?reset`);
    const handle = await page.waitForFunction(
      () => (window as unknown as { benchRestoredAt?: number }).benchRestoredAt,
      undefined,
      { timeout: 120000, polling: 50 }
    );
    const ms = (await handle.jsonValue()) as number;
    const { metrics } = await cdp.send('Performance.getMetrics');
    const task = metrics.find(m => m.name === 'TaskDuration')?.value ?? NaN;
    return { ms, taskMs: task * 1000 };
  } finally {
    await context.close();
  }
}

export async function startupBenchmark(
  browser: Browser,
  options: { loads: number; workDir: string; log: (message: string) => void }
): Promise<IStartupResult> {
  const extensions = installedExtensions();
  if (!extensions.has(EXTENSION_NAME)) {
    throw new Error(`${EXTENSION_NAME} is not installed for JupyterLab`);
  }
  const labs = await Promise.all(
    [null, EXTENSION_NAME].map(without =>
      startLab({
        args: [
          `--LabApp.labextensions_path=${extensionsFolder(options.workDir, extensions, without)}`
        ]
      })
    )
  );
  const [withLab, withoutLab] = labs;
  const withLoads: ILoad[] = [];
  const withoutLoads: ILoad[] = [];
  try {
    // One warm-up load each: the servers' first answers are slower than any later one.
    await loadTime(browser, withLab);
    await loadTime(browser, withoutLab);
    for (let i = 0; i < options.loads; i++) {
      const order = i % 2 === 0 ? [true, false] : [false, true];
      for (const withExtension of order) {
        const load = await loadTime(
          browser,
          withExtension ? withLab : withoutLab
        );
        (withExtension ? withLoads : withoutLoads).push(load);
      }
      options.log(
        `load ${i + 1}: with ${round(withLoads[i].ms)} ms (busy ${round(withLoads[i].taskMs)}), without ${round(withoutLoads[i].ms)} ms (busy ${round(withoutLoads[i].taskMs)})`
      );
    }
  } finally {
    await Promise.all(labs.map(lab => lab.stop()));
  }
  // Each load is paired with the other server's load beside it: the pairs' ratios are free of the
  // drift of a loaded machine (load times moved from 1.6 to 3.5 s within one earlier run).
  const withMs = withLoads.map(load => load.ms);
  const withoutMs = withoutLoads.map(load => load.ms);
  const pairs = withMs.map((ms, i) => ms / withoutMs[i]);
  const ratio = median(pairs);
  const busyPairs = withLoads.map(
    (load, i) => load.taskMs / withoutLoads[i].taskMs
  );
  return {
    loads: options.loads,
    withMs: withMs.map(ms => round(ms)),
    withoutMs: withoutMs.map(ms => round(ms)),
    withMedianMs: round(median(withMs)),
    withoutMedianMs: round(median(withoutMs)),
    ratio: round(ratio),
    ratioSpread: [round(quantile(pairs, 0.25)), round(quantile(pairs, 0.75))],
    busyRatio: round(median(busyPairs)),
    busyRatioSpread: [
      round(quantile(busyPairs, 0.25)),
      round(quantile(busyPairs, 0.75))
    ],
    withBusyMedianMs: round(median(withLoads.map(load => load.taskMs))),
    withoutBusyMedianMs: round(median(withoutLoads.map(load => load.taskMs))),
    target: 1.05,
    met: ratio <= 1.05,
    method: STARTUP_METHOD
  };
}
