/**
 * The test double of the bcc server (docs/dialects.md#test-doubles): `--dialect bcc`, with
 * `--scenario` and `--strict-body`.
 */
import { defineDouble } from '../double';
import {
  BCC_SCENARIOS,
  DEFAULT_BCC_SCENARIO,
  findBccScenario,
  startBccDouble
} from './server';

export * from './server';

export const bccDouble = defineDouble({
  flags: {
    scenario: { type: 'string' },
    'strict-body': { type: 'boolean' }
  },
  usage: `  --scenario NAME        bcc double only (default ${DEFAULT_BCC_SCENARIO}):
${BCC_SCENARIOS.map(s => `                           ${s.name.padEnd(20)} ${s.description}`).join('\n')}
  --strict-body          bcc double only: validate bodies like a typed server, answering 422 to a
                         location.goals that is not a string or to an observation.context (the
                         detection superset has both)`,
  read(values) {
    const scenario =
      typeof values.scenario === 'string'
        ? values.scenario
        : DEFAULT_BCC_SCENARIO;
    findBccScenario(scenario);
    return { scenario, strictBody: values['strict-body'] === true };
  },
  start: (common, own) => startBccDouble({ ...common, ...own }),
  describe: own =>
    `scenario ${own.scenario}${own.strictBody ? ', strict bodies' : ''}`
});
