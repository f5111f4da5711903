/** `--dialect v1|bcc`: the command line of the dialect test doubles, and starting them. */
import { parseArgs } from 'util';

import {
  BCC_SCENARIOS,
  DEFAULT_BCC_SCENARIO,
  findBccScenario,
  startBccDouble
} from './bcc';
import { IRunningDoubleServer, REQUESTS_PATH } from './http';
import {
  IV1Failure,
  IV1Requirement,
  parseV1Failure,
  parseV1Requirement,
  startV1Double,
  V1_FAIL_ENV
} from './v1';

export const DIALECTS = ['dslc', 'v1', 'bcc'] as const;
export type Dialect = (typeof DIALECTS)[number];

export const DIALECT_USAGE = `Dialect test doubles (docs/protocol.md#dialects):

  --dialect NAME         dslc (the reference planner, default), v1 or bcc (a test double)
  --scenario NAME        bcc double only (default ${DEFAULT_BCC_SCENARIO}):
${BCC_SCENARIOS.map(s => `                           ${s.name.padEnd(20)} ${s.description}`).join('\n')}
  --strict-body          bcc double only: validate bodies like a typed server, answering 422 to a
                         location.goals that is not a string or to an observation.context (the
                         detection superset has both)
  --fail-step SECTION[@N] v1 double only: that section raises on its Nth behavior (default 1),
                         answered 404 "Sequence for section SECTION not found"; repeatable;
                         also read from $${V1_FAIL_ENV} (comma separated)
  --require-variable SECTION:NAME
                         v1 double only: that section also requires the variable NAME (answered
                         with the missing-variables text while it is absent); repeatable
  --record FILE          append every request received to FILE (JSON lines)
  With a double, only --host, --port, --line-delay and --quiet apply as well.
  Every double lists the requests it received at GET ${REQUESTS_PATH} (DELETE clears them).`;

export interface IDialectCliOptions {
  dialect: Exclude<Dialect, 'dslc'>;
  help: boolean;
  host: string;
  port: number;
  scenario: string;
  strictBody: boolean;
  failures: IV1Failure[];
  requirements: IV1Requirement[];
  recordFile: string | null;
  lineDelayMs?: number;
  quiet: boolean;
}

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

/**
 * `dialect: null` when the reference planner should run (no `--dialect`, or `dslc`); `argv` is then
 * the arguments without `--dialect` for the planner's own parser.
 */
export function parseDialectCli(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  defaults: { host: string; port: number } = { host: '127.0.0.1', port: 28600 }
): { argv: string[]; dialect: IDialectCliOptions | null } {
  const { dialect, rest } = dialectOf(argv);
  if (dialect === null || dialect === 'dslc') {
    return { argv: rest, dialect: null };
  }
  if (dialect !== 'v1' && dialect !== 'bcc') {
    throw new Error(
      `--dialect "${dialect}": expected one of ${DIALECTS.join(', ')}`
    );
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      host: { type: 'string' },
      port: { type: 'string' },
      scenario: { type: 'string' },
      'strict-body': { type: 'boolean' },
      'fail-step': { type: 'string', multiple: true },
      'require-variable': { type: 'string', multiple: true },
      record: { type: 'string' },
      'line-delay': { type: 'string' },
      quiet: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' }
    },
    strict: true
  });
  const port = Number(values.port ?? defaults.port);
  if (!Number.isInteger(port) || port < 0) {
    throw new Error(`--port "${values.port}": expected a port number`);
  }
  const lineDelay =
    values['line-delay'] === undefined
      ? undefined
      : Number(values['line-delay']);
  if (lineDelay !== undefined && !(lineDelay >= 0)) {
    throw new Error(
      `--line-delay "${values['line-delay']}": expected a number >= 0`
    );
  }
  if (values.scenario !== undefined && dialect !== 'bcc') {
    throw new Error('--scenario applies to --dialect bcc only');
  }
  const scenario = values.scenario ?? DEFAULT_BCC_SCENARIO;
  findBccScenario(scenario);
  if (values['strict-body'] && dialect !== 'bcc') {
    throw new Error('--strict-body applies to --dialect bcc only');
  }
  const failSpecs = [
    ...(values['fail-step'] ?? []),
    ...(env[V1_FAIL_ENV] ?? '').split(',').filter(spec => spec.trim())
  ];
  if (failSpecs.length && dialect !== 'v1') {
    throw new Error(
      `--fail-step (and $${V1_FAIL_ENV}) apply to --dialect v1 only`
    );
  }
  const requireSpecs = values['require-variable'] ?? [];
  if (requireSpecs.length && dialect !== 'v1') {
    throw new Error('--require-variable applies to --dialect v1 only');
  }
  return {
    argv: rest,
    dialect: {
      dialect,
      help: values.help ?? false,
      host: values.host ?? defaults.host,
      port,
      scenario,
      strictBody: values['strict-body'] ?? false,
      failures: failSpecs.map(parseV1Failure),
      requirements: requireSpecs.map(parseV1Requirement),
      recordFile: values.record ?? null,
      lineDelayMs: lineDelay,
      quiet: values.quiet ?? false
    }
  };
}

export function startDialectDouble(
  options: IDialectCliOptions
): Promise<IRunningDoubleServer> {
  const common = {
    host: options.host,
    port: options.port,
    recordFile: options.recordFile,
    lineDelayMs: options.lineDelayMs,
    ...(options.quiet ? { log: null } : {})
  };
  return options.dialect === 'v1'
    ? startV1Double({
        ...common,
        failures: options.failures,
        requirements: options.requirements
      })
    : startBccDouble({
        ...common,
        scenario: options.scenario,
        strictBody: options.strictBody
      });
}

/** The start-up line of a double. */
export function describeDouble(
  options: IDialectCliOptions,
  url: string
): string {
  const requiring = options.requirements.length
    ? `; ${options.requirements.map(r => `${r.section} requires ${r.name}`).join(', ')}`
    : '';
  const detail =
    options.dialect === 'bcc'
      ? `scenario ${options.scenario}${options.strictBody ? ', strict bodies' : ''}`
      : options.failures.length
        ? `failing ${options.failures.map(f => `${f.section}@${f.nth}`).join(', ')}${requiring}`
        : `no failing step${requiring}`;
  return `Notebook-BCC ${options.dialect} test double listening on ${url} (${detail}); requests at ${url}${REQUESTS_PATH}`;
}
