/**
 * The processes a benchmark (or a fault test) needs beside the browser: the reference planner, started
 * with any flags on a free port, and a throwaway JupyterLab with the extension and galata's in-page
 * helpers. Each is stopped by its own pid, never by name.
 */
import { ChildProcess, spawn } from 'child_process';
import { existsSync, mkdtempSync } from 'fs';
import { createServer } from 'net';
import { tmpdir } from 'os';
import * as path from 'path';

/** The repository root (this file is `bench/src/processes.ts`, or `bench/lib/bench/src/processes.js`). */
export const REPO_ROOT = (() => {
  let dir = __dirname;
  while (
    !existsSync(path.join(dir, 'referencePlannerService', 'tsconfig.json'))
  ) {
    const parent = path.dirname(dir);
    if (parent === dir) {
      throw new Error(`no repository root above ${__dirname}`);
    }
    dir = parent;
  }
  return dir;
})();

export const PLANNER_MAIN = path.join(
  REPO_ROOT,
  'referencePlannerService/lib/referencePlannerService/src/main.js'
);
const SERVER_CONFIG = path.join(
  REPO_ROOT,
  'ui-tests/jupyter_server_test_config.py'
);

export interface IChild {
  readonly process: ChildProcess;
  /** Every line the process printed (stdout and stderr), in order. */
  readonly output: string[];
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();

/** Stops every process started here, e.g. when the benchmark is interrupted. */
export function killAll(): void {
  for (const child of running) {
    child.kill('SIGTERM');
  }
}

function track(child: ChildProcess): ChildProcess {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

function watch(
  child: ChildProcess,
  onLine?: (line: string) => void,
  times?: number[]
): string[] {
  const output: string[] = [];
  const split = (stream: NodeJS.ReadableStream | null) => {
    let rest = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        output.push(line);
        times?.push(Date.now());
        onLine?.(line);
      }
    });
  };
  split(child.stdout);
  split(child.stderr);
  return output;
}

function stopper(child: ChildProcess, graceMs = 10000): () => Promise<void> {
  return () =>
    new Promise<void>(resolve => {
      if (child.exitCode !== null || child.signalCode !== null) {
        resolve();
        return;
      }
      const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
      child.once('exit', () => {
        clearTimeout(force);
        resolve();
      });
      child.kill('SIGTERM');
    });
}

export interface IPlannerProcess extends IChild {
  url: string;
  port: number;
  /** The request log (`POST /planning 200 12ms`), in order, with the time each line was read. */
  requests(): Array<{ line: string; at: number }>;
}

/**
 * Starts `referencePlannerService/lib/referencePlannerService/src/main.js --port 0 ...args` and resolves with its URL once it listens.
 * Its request log is kept (no `--quiet`), so callers can check what it answered.
 */
/** The reference planner replaying `traceFile` as fast as it can. */
export function startReplayPlanner(
  traceFile: string
): Promise<IPlannerProcess> {
  return startPlanner([
    '--replay',
    traceFile,
    '--replay-speed',
    '0',
    '--quiet'
  ]);
}

export function startPlanner(args: string[]): Promise<IPlannerProcess> {
  const child = track(
    spawn(process.execPath, [PLANNER_MAIN, '--port', '0', ...args], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe']
    })
  );
  const times: number[] = [];
  return new Promise((resolve, reject) => {
    let settled = false;
    const output = watch(
      child,
      line => {
        const match = /listening on (http:\/\/[^\s]+)/.exec(line);
        if (match && !settled) {
          settled = true;
          const url = match[1];
          resolve({
            process: child,
            output,
            url,
            port: Number(new URL(url).port),
            requests: () =>
              output
                .map((line, i) => ({ line, at: times[i] }))
                .filter(entry =>
                  /^(GET|POST|OPTIONS|HEAD) \//.test(entry.line)
                ),
            stop: stopper(child)
          });
        }
      },
      times
    );
    child.once('exit', code => {
      if (!settled) {
        settled = true;
        reject(
          new Error(
            `the planner exited (${code}) before listening:\n${output.join('\n')}`
          )
        );
      }
    });
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitForUrl(
  url: string,
  timeoutMs: number,
  child: ChildProcess
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`the process serving ${url} exited (${child.exitCode})`);
    }
    try {
      const response = await fetch(url);
      if (response.ok) {
        return;
      }
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      throw new Error(`${url} did not answer within ${timeoutMs / 1000} s`);
    }
    await new Promise(resolve => setTimeout(resolve, 250));
  }
}

export interface ILabProcess extends IChild {
  url: string;
  /** The server's root directory: files put here are visible to the notebooks and their kernels. */
  rootDir: string;
}

/**
 * A JupyterLab of its own: ui-tests' server config (no token, galata's in-page helpers, the app
 * exposed as `window.jupyterapp`), a fresh root dir and a fresh user-settings dir, so nothing the
 * benchmark changes reaches anyone else's JupyterLab.
 */
export async function startLab(
  options: { args?: string[] } = {}
): Promise<ILabProcess> {
  const port = await freePort();
  const rootDir = mkdtempSync(path.join(tmpdir(), 'bcc-bench-root-'));
  const settingsDir = mkdtempSync(path.join(tmpdir(), 'bcc-bench-settings-'));
  const child = track(
    spawn(
      'jupyter',
      [
        'lab',
        '--config',
        SERVER_CONFIG,
        '--port',
        String(port),
        '--ServerApp.port_retries=0',
        '--no-browser',
        ...(options.args ?? [])
      ],
      {
        cwd: rootDir,
        env: {
          ...process.env,
          JUPYTERLAB_GALATA_ROOT_DIR: rootDir,
          JUPYTERLAB_SETTINGS_DIR: settingsDir
        },
        stdio: ['ignore', 'pipe', 'pipe']
      }
    )
  );
  const output = watch(child);
  const url = `http://localhost:${port}`;
  try {
    await waitForUrl(`${url}/lab`, 180000, child);
  } catch (error) {
    await stopper(child)();
    throw new Error(
      `${(error as Error).message}\n${output.slice(-30).join('\n')}`
    );
  }
  return { process: child, output, url, rootDir, stop: stopper(child, 20000) };
}
