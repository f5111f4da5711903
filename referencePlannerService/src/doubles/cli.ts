/**
 * `--dialect NAME`: the command line of the dialect test doubles (`registry.ts`), and starting them.
 * The names it takes are the extension's dialect registry's; each double declares its own flags.
 */
import { parseArgs } from 'util';

import type { DoubleFlags, FlagValues } from './double';
import { IRunningDoubleServer, REQUESTS_PATH } from './http';
import {
  DOUBLE_NAMES,
  DOUBLES,
  type DoubleName,
  REFERENCE_PLANNER
} from './registry';

const DOUBLE_LIST = Object.keys(DOUBLES).join(' or ');

export const DIALECT_USAGE = `Dialect test doubles (docs/dialects.md#test-doubles):

  --dialect NAME         ${REFERENCE_PLANNER} (the reference planner, default), ${DOUBLE_LIST} (a test double)
${Object.values(DOUBLES)
  .map(double => double.usage)
  .join('\n')}
  --record FILE          append every request received to FILE (JSON lines)
  With a double, only --host, --port, --line-delay and --quiet apply as well.
  Every double lists the requests it received at GET ${REQUESTS_PATH} (DELETE clears them).`;

export interface IDialectCliOptions {
  dialect: DoubleName;
  help: boolean;
  host: string;
  port: number;
  recordFile: string | null;
  lineDelayMs?: number;
  quiet: boolean;
  /** The double's own options, as it read them from its flags. */
  own: unknown;
}

/** The flags every double takes. */
const COMMON_FLAGS: DoubleFlags = {
  host: { type: 'string' },
  port: { type: 'string' },
  record: { type: 'string' },
  'line-delay': { type: 'string' },
  quiet: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' }
};

function dialectOf(argv: readonly string[]): {
  dialect: string | null;
  rest: string[];
} {
  const rest: string[] = [];
  let dialect: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--dialect') {
      dialect = argv[i + 1] ?? '';
      i++;
    } else if (arg.startsWith('--dialect=')) {
      dialect = arg.slice('--dialect='.length);
    } else {
      rest.push(arg);
    }
  }
  return { dialect, rest };
}

function isDoubleName(name: string): name is DoubleName {
  return Object.keys(DOUBLES).includes(name);
}

/** A flag or environment variable of another double than `dialect`: a usage error naming its owner. */
function misplaced(
  dialect: DoubleName,
  values: Readonly<Record<string, unknown>>,
  env: NodeJS.ProcessEnv
): string | null {
  for (const [name, double] of Object.entries(DOUBLES)) {
    if (name === dialect) {
      continue;
    }
    const flag = Object.keys(double.flags).find(
      key => values[key] !== undefined
    );
    if (flag) {
      return `--${flag} applies to --dialect ${name} only`;
    }
    const variable = (double.env ?? []).find(key => env[key]?.trim());
    if (variable) {
      return `$${variable} applies to --dialect ${name} only`;
    }
  }
  return null;
}

/**
 * `dialect: null` when the reference planner should run (no `--dialect`, or its own name); `argv` is
 * then the arguments without `--dialect` for the planner's own parser.
 */
export function parseDialectCli(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  defaults: { host: string; port: number } = { host: '127.0.0.1', port: 28600 }
): { argv: string[]; dialect: IDialectCliOptions | null } {
  const { dialect, rest } = dialectOf(argv);
  if (dialect === null || dialect === REFERENCE_PLANNER) {
    return { argv: rest, dialect: null };
  }
  if (!isDoubleName(dialect)) {
    throw new Error(
      `--dialect "${dialect}": expected one of ${DOUBLE_NAMES.join(', ')}`
    );
  }
  const flags: DoubleFlags = Object.assign(
    {},
    COMMON_FLAGS,
    ...Object.values(DOUBLES).map(double => double.flags)
  );
  const values: FlagValues = parseArgs({
    args: rest,
    options: flags,
    strict: true
  }).values;
  const text = (key: string): string | undefined => {
    const value = values[key];
    return typeof value === 'string' ? value : undefined;
  };
  const port = Number(text('port') ?? defaults.port);
  if (!Number.isInteger(port) || port < 0) {
    throw new Error(`--port "${text('port')}": expected a port number`);
  }
  const lineDelayText = text('line-delay');
  const lineDelay =
    lineDelayText === undefined ? undefined : Number(lineDelayText);
  if (lineDelay !== undefined && !(lineDelay >= 0)) {
    throw new Error(`--line-delay "${lineDelayText}": expected a number >= 0`);
  }
  const problem = misplaced(dialect, values, env);
  if (problem) {
    throw new Error(problem);
  }
  return {
    argv: rest,
    dialect: {
      dialect,
      help: values.help === true,
      host: text('host') ?? defaults.host,
      port,
      recordFile: text('record') ?? null,
      lineDelayMs: lineDelay,
      quiet: values.quiet === true,
      own: DOUBLES[dialect].read(values, env)
    }
  };
}

export function startDialectDouble(
  options: IDialectCliOptions
): Promise<IRunningDoubleServer> {
  return DOUBLES[options.dialect].start(
    {
      host: options.host,
      port: options.port,
      recordFile: options.recordFile,
      lineDelayMs: options.lineDelayMs,
      ...(options.quiet ? { log: null } : {})
    },
    options.own
  );
}

/** The start-up line of a double. */
export function describeDouble(
  options: IDialectCliOptions,
  url: string
): string {
  const detail = DOUBLES[options.dialect].describe(options.own);
  return `Notebook-BCC ${options.dialect} test double listening on ${url} (${detail}); requests at ${url}${REQUESTS_PATH}`;
}
