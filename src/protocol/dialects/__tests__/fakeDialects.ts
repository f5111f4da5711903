/**
 * What the tests of detection and of the dialect selector share: the run's first request, the notebook
 * beside it, a fake dslc adapter that records its calls, and the registry with one adapter replaced.
 */

import type { GeneratingEvent } from '../../actionStream';
import type { INotebookSummary, PlanningRequestInput } from '../../schemas';
import type { IDialect, IDialectAdapter } from '../dialect';
import { type DialectName, DIALECTS } from '../registry';

export const request: PlanningRequestInput = {
  observation: {
    location: { current: { stage_id: null, step_id: null } },
    context: {
      variables: { problem_description: 'Predict', data_files: ['a.csv'] },
      FSM: { state: 'STEP_RUNNING' }
    }
  }
};

export const SEED_NOTEBOOK = {
  title: 'T',
  cell_count: 1,
  last_cell_type: 'code',
  last_output: '1'
};

export const NOTEBOOK: INotebookSummary = {
  ...SEED_NOTEBOOK,
  execution_count: 1,
  cells: [
    { id: 'c', type: 'code', content: 'print(1)', outputs: ['1'], metadata: {} }
  ]
};

export function fakeDslc(): IDialectAdapter & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    async planning() {
      calls.push('planning');
      return { targetAchieved: true };
    },
    async *generating(): AsyncGenerator<GeneratingEvent> {
      calls.push('generating');
      yield { kind: 'warning', message: 'dslc' };
    }
  };
}

/** The registry's dialects, `name`'s adapter being `adapter` (a fake that records its calls). */
export function withAdapter(
  name: DialectName,
  adapter: IDialectAdapter
): IDialect<DialectName>[] {
  return DIALECTS.map(dialect =>
    dialect.name === name
      ? { ...dialect, createAdapter: () => () => adapter }
      : dialect
  );
}
