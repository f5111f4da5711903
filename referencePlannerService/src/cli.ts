/** Command-line options of the reference planner service. */
import { readFileSync } from 'fs';
import { parseArgs } from 'util';

import {
  DIALECT_USAGE,
  IDialectCliOptions,
  parseDialectCli
} from './doubles/cli';
import { DEMO_PACE_MS } from '../../src/referencePlanner/pace';
import { parseFault } from './faults';
import { parseTrace, ReplayScript } from './replay';
import {
  DEFAULT_HOST,
  DEFAULT_LINE_DELAY_MS,
  DEFAULT_MAX_BODY,
  DEFAULT_PORT,
  IPlannerServerOptions,
  normalizeOrigin
} from './server';

export const USAGE = `Notebook-BCC reference planner

Usage: node referencePlannerService/lib/referencePlannerService/src/main.js [options]

  --host HOST            listen address (default ${DEFAULT_HOST}: this machine only)
  --port PORT            listen port, 0 = any free port (default ${DEFAULT_PORT})
  --token TOKEN          require "Authorization: Bearer TOKEN" on API requests
  --allowed-host NAME    also answer requests whose Host is NAME (a DNS name clients use for this
                         planner); repeatable. Loopback names and the --host address always pass,
                         on --host 0.0.0.0 also this machine's name and addresses; any other Host
                         is refused (403) against DNS rebinding.
  --cors-origin ORIGIN   let pages from ORIGIN (e.g. http://localhost:8888) call the planner from the
                         browser; repeatable. Without it no CORS headers are sent: JupyterLab reaches
                         the planner through its server relay.
  --max-body SIZE        request body limit, e.g. 5mb, 512kb, 1000000 (default 5mb)
  --line-delay MS        pause between streamed actions (default ${DEFAULT_LINE_DELAY_MS})
  --pace MS              pace like a planner that thinks, so a user can watch cells arrive: about MS
                         before each action, longer before code and before planning answers
                         (replaces --line-delay; the built-in demo planner uses ${DEMO_PACE_MS}). Default 0.
  --max-tries N          failed behaviors before a step is given up (default 3)
  --replay FILE          answer with the recorded run in FILE (JSONL run trace) instead of planning
  --replay-speed X       replay timings divided by X; 0 = no delays (default 1)
  --fault SPEC           inject a fault; repeatable. SPEC = NAME[=VALUE][@[ENDPOINT:]N]
                         NAME: malformed-line, split-utf8, truncated-line, reset, stall,
                               oversized-action[=BYTES], unknown-action, missing-field,
                               many-warnings[=LINES], long-line[=BYTES], many-actions[=LINES],
                               paused-flood[=BYTES] (after a 4 s pause), bad-pattern (/planning),
                               http-500, http-429[=RETRY_AFTER_S], slow-first-byte[=MS]
                         @N: the Nth request it applies to (stream faults count /generating,
                             status faults every API request); default: the first. Fires once.
  --quiet                no request log
  --help                 this text

Endpoints: POST /planning, POST /generating (alias /generate), GET /health.
Session key: the X-Notebook-Id header (else observation.context.notebook.id, else "default").

${DIALECT_USAGE}`;

export class UsageError extends Error {}

/** `5mb`, `512kb`, `1000000` -> bytes. */
export function parseSize(text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(b|kb|k|mb|m|gb|g)?$/i.exec(text.trim());
  if (!match) {
    throw new UsageError(
      `--max-body "${text}": expected a size like 5mb, 512kb or 1000000`
    );
  }
  const unit = (match[2] ?? 'b').toLowerCase()[0];
  const factor =
    unit === 'k'
      ? 1024
      : unit === 'm'
        ? 1024 ** 2
        : unit === 'g'
          ? 1024 ** 3
          : 1;
  return Math.round(Number(match[1]) * factor);
}

function number(
  name: string,
  text: string | undefined,
  fallback: number,
  min = 0
): number {
  if (text === undefined) {
    return fallback;
  }
  const value = Number(text);
  if (!Number.isFinite(value) || value < min) {
    throw new UsageError(`--${name} "${text}": expected a number >= ${min}`);
  }
  return value;
}

export interface ICliOptions {
  help: boolean;
  server: IPlannerServerOptions;
  /** Set by `--dialect NAME` (a test double's name): start that double instead of the planner. */
  dialect?: IDialectCliOptions;
}

export function parseCli(argv: string[]): ICliOptions {
  let values;
  try {
    const split = parseDialectCli(argv);
    if (split.dialect) {
      return { help: split.dialect.help, server: {}, dialect: split.dialect };
    }
    argv = split.argv;
    ({ values } = parseArgs({
      args: argv,
      options: {
        host: { type: 'string' },
        port: { type: 'string' },
        token: { type: 'string' },
        'allowed-host': { type: 'string', multiple: true },
        'cors-origin': { type: 'string', multiple: true },
        'max-body': { type: 'string' },
        'line-delay': { type: 'string' },
        pace: { type: 'string' },
        'max-tries': { type: 'string' },
        replay: { type: 'string' },
        'replay-speed': { type: 'string' },
        fault: { type: 'string', multiple: true },
        quiet: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' }
      },
      strict: true
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  let faults;
  try {
    faults = (values.fault ?? []).map(parseFault);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  let corsOrigins: string[];
  try {
    corsOrigins = (values['cors-origin'] ?? []).map(normalizeOrigin);
  } catch (error) {
    throw new UsageError(`--cors-origin ${(error as Error).message}`);
  }
  let replay: ReplayScript | null = null;
  if (values.replay) {
    let text: string;
    try {
      text = readFileSync(values.replay, 'utf8');
    } catch (error) {
      throw new UsageError(
        `--replay: cannot read ${values.replay}: ${(error as Error).message}`
      );
    }
    try {
      replay = new ReplayScript(
        parseTrace(text, values.replay),
        number('replay-speed', values['replay-speed'], 1)
      );
    } catch (error) {
      throw new UsageError(`--replay: ${(error as Error).message}`);
    }
  }
  return {
    help: values.help ?? false,
    server: {
      host: values.host ?? DEFAULT_HOST,
      port: number('port', values.port, DEFAULT_PORT),
      token: values.token ?? null,
      allowedHosts: values['allowed-host'] ?? [],
      corsOrigins,
      maxBodyBytes: values['max-body']
        ? parseSize(values['max-body'])
        : DEFAULT_MAX_BODY,
      lineDelayMs: number(
        'line-delay',
        values['line-delay'],
        DEFAULT_LINE_DELAY_MS
      ),
      paceMs: number('pace', values.pace, 0),
      maxTries: number('max-tries', values['max-tries'], 3, 1),
      replay,
      faults,
      ...(values.quiet ? { log: null } : {})
    }
  };
}
