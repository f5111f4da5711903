/**
 * The kernel helpers' Python (`kernelCode.ts`) run in an IPython shell: the redaction of names and of
 * keys inside what they summarise agrees with the engine's (`engine/variables.ts`), on one table.
 * Needs `$PYTHON` (else the repository's `.venv`, else `python3`) with IPython and pandas.
 */
import { spawnSync } from 'child_process';
import { existsSync } from 'fs';
import { join } from 'path';

import {
  CUSTOM_CASES,
  CUSTOM_PATTERNS,
  HIDDEN_BY_DEFAULT,
  SENT_BY_DEFAULT
} from '../../engine/__tests__/redactionCases';
import { DEFAULT_SETTINGS } from '../../engine/settings';
import {
  collectExpression,
  KERNEL_HELPERS,
  summarizeExpression
} from '../kernelCode';

const VENV_PYTHON = join(__dirname, '..', '..', '..', '.venv', 'bin', 'python');
const PYTHON =
  process.env.PYTHON ?? (existsSync(VENV_PYTHON) ? VENV_PYTHON : 'python3');

const SHELL = `
import json, sys
from IPython.core.interactiveshell import InteractiveShell

job = json.loads(sys.stdin.read())
shell = InteractiveShell.instance()
for code in (job['helpers'], job['setup']):
    result = shell.run_cell(code, silent=True)
    result.raise_error()
print(json.dumps({key: json.loads(repr(shell.ev(expression))) for key, expression in job['expressions'].items()}))
`;

/** Runs the helpers, then `setup`, in a fresh shell and evaluates each expression. */
function inKernel(
  setup: string,
  expressions: Record<string, string>
): Record<string, Record<string, unknown>> {
  const run = spawnSync(PYTHON, ['-c', SHELL], {
    input: JSON.stringify({ helpers: KERNEL_HELPERS, setup, expressions }),
    encoding: 'utf8',
    timeout: 60_000
  });
  if (run.status !== 0) {
    throw new Error(`${PYTHON} failed: ${run.stderr}`);
  }
  return JSON.parse(run.stdout);
}

const DEFAULTS = DEFAULT_SETTINGS.redactVariablePatterns;

describe('the kernel helpers hide secret-looking names', () => {
  it('by whole name segments, as the engine does, for the defaults and for patterns of the user', () => {
    const names = [...HIDDEN_BY_DEFAULT, ...SENT_BY_DEFAULT];
    const custom = CUSTOM_CASES.map(([name]) => name);
    const { defaults, own } = inKernel(
      [...names, ...custom].map(name => `${name} = 'v'`).join('\n'),
      {
        defaults: collectExpression(DEFAULTS),
        own: collectExpression(CUSTOM_PATTERNS)
      }
    );
    const values = (reply: Record<string, unknown>) =>
      reply.values as Record<string, unknown>;
    for (const name of HIDDEN_BY_DEFAULT) {
      expect([name, values(defaults)[name]]).toEqual([name, '<redacted>']);
    }
    for (const name of SENT_BY_DEFAULT) {
      expect([name, values(defaults)[name]]).toEqual([name, 'v']);
    }
    for (const [name, hidden] of CUSTOM_CASES) {
      expect([name, values(own)[name]]).toEqual([
        name,
        hidden ? '<redacted>' : 'v'
      ]);
    }
  });

  it('inside the dicts, records and frames it summarises, under any name', () => {
    const setup = `
import collections
import pandas as pd
Creds = collections.namedtuple('Creds', 'user access_token')
config = {'api_key': 'sk-dict', 'model': 'm', 'rows': [{'dbPassword': 'sk-nested'}]}
ordered = collections.OrderedDict(secret='sk-ordered', n=1)
creds = Creds('ann', 'sk-record')
frame = pd.DataFrame({'user': ['ann'], 'auth_token': ['sk-frame']})
`;
    const reply = inKernel(setup, {
      collected: collectExpression(DEFAULTS),
      heads: summarizeExpression(
        {
          config: 'head_only',
          ordered: 'head_only',
          creds: 'head_only',
          frame: 'head_only',
          api_key: 'head_only'
        },
        DEFAULTS
      ),
      off: collectExpression([])
    });
    const text = JSON.stringify({
      collected: reply.collected,
      heads: reply.heads
    });
    expect(text).not.toMatch(/sk-/);
    expect((reply.collected.values as Record<string, unknown>).config).toEqual({
      api_key: '<redacted>',
      model: 'm',
      rows: [{ dbPassword: '<redacted>' }]
    });
    expect((reply.collected.values as Record<string, unknown>).creds).toEqual({
      user: 'ann',
      access_token: '<redacted>'
    });
    expect(reply.heads.frame).toMatch(/ann/);
    // With redaction off, the values are summarised as they are.
    expect(JSON.stringify(reply.off)).toMatch(/sk-dict/);
  });
});
