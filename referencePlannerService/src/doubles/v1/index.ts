/**
 * The test double of the public Easy-notebook server (docs/dialects.md#test-doubles): `--dialect v1`,
 * with `--fail-step` (also `$V1_DOUBLE_FAIL_STEP`) and `--require-variable`.
 */
import { defineDouble, texts } from '../double';
import {
  parseV1Failure,
  parseV1Requirement,
  startV1Double,
  V1_FAIL_ENV
} from './server';

export * from './server';

export const v1Double = defineDouble({
  flags: {
    'fail-step': { type: 'string', multiple: true },
    'require-variable': { type: 'string', multiple: true }
  },
  env: [V1_FAIL_ENV],
  usage: `  --fail-step SECTION[@N] v1 double only: that section raises on its Nth behavior (default 1),
                         answered 404 "Sequence for section SECTION not found"; repeatable;
                         also read from $${V1_FAIL_ENV} (comma separated)
  --require-variable SECTION:NAME
                         v1 double only: that section also requires the variable NAME (answered
                         with the missing-variables text while it is absent); repeatable`,
  read(values, env) {
    const failures = [
      ...texts(values['fail-step']),
      ...(env[V1_FAIL_ENV] ?? '').split(',').filter(spec => spec.trim())
    ];
    return {
      failures: failures.map(parseV1Failure),
      requirements: texts(values['require-variable']).map(parseV1Requirement)
    };
  },
  start: (common, own) => startV1Double({ ...common, ...own }),
  describe(own) {
    const requiring = own.requirements.length
      ? `; ${own.requirements.map(r => `${r.section} requires ${r.name}`).join(', ')}`
      : '';
    return own.failures.length
      ? `failing ${own.failures.map(f => `${f.section}@${f.nth}`).join(', ')}${requiring}`
      : `no failing step${requiring}`;
  }
});
