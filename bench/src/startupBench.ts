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
  /** The ratio of the 25th and of the 75th percentiles. */
  ratioSpread: [number, number];
  target: number;
  met: boolean;
  method: string;
}

export const STARTUP_METHOD =
  'Two JupyterLab servers side by side, each with a labextensions folder of its own (--LabApp.labextensions_path) ' +
  'linking every installed prebuilt extension, one without this extension. Each load is a new browser ' +
  'context (empty cache) opening /lab?reset; the time is performance.now() when app.restored resolves. ' +
  'Loads alternate between the servers (with first, then without first); the figure is the ratio of the medians.';

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

async function loadTime(browser: Browser, lab: ILabProcess): Promise<number> {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 }
  });
  try {
    const page = await context.newPage();
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
    return (await handle.jsonValue()) as number;
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
  const withMs: number[] = [];
  const withoutMs: number[] = [];
  try {
    // One warm-up load each: the servers' first answers are slower than any later one.
    await loadTime(browser, withLab);
    await loadTime(browser, withoutLab);
    for (let i = 0; i < options.loads; i++) {
      const order = i % 2 === 0 ? [true, false] : [false, true];
      for (const withExtension of order) {
        const ms = await loadTime(
          browser,
          withExtension ? withLab : withoutLab
        );
        (withExtension ? withMs : withoutMs).push(ms);
      }
      options.log(
        `load ${i + 1}: with ${round(withMs[i])} ms, without ${round(withoutMs[i])} ms`
      );
    }
  } finally {
    await Promise.all(labs.map(lab => lab.stop()));
  }
  const ratio = median(withMs) / median(withoutMs);
  return {
    loads: options.loads,
    withMs: withMs.map(ms => round(ms)),
    withoutMs: withoutMs.map(ms => round(ms)),
    withMedianMs: round(median(withMs)),
    withoutMedianMs: round(median(withoutMs)),
    ratio: round(ratio),
    ratioSpread: [
      round(quantile(withMs, 0.25) / quantile(withoutMs, 0.25)),
      round(quantile(withMs, 0.75) / quantile(withoutMs, 0.75))
    ],
    target: 1.05,
    met: ratio <= 1.05,
    method: STARTUP_METHOD
  };
}
