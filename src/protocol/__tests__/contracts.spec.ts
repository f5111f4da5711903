/**
 * Output contracts as planners send them (docs/protocol.md#output-contracts): read liberally, an
 * invalid one dropped with a warning and the others kept.
 */
import {
  normalizeContract,
  normalizeContracts,
  normalizeRunContract
} from '../contracts';
import { normalizeAction, normalizeWorkflowTemplate } from '../normalize';
import { normalizePlanningResponse } from '../normalizeResponse';
import { ObservationContextSchema } from '../schemas';

describe('normalizeContract', () => {
  it('reads the fields of the contract, camelCase too, and defaults the kind to any', () => {
    const warnings: string[] = [];
    expect(
      normalizeContract(
        {
          name: 'answer',
          kind: 'label',
          ofColumn: 'region',
          frame: 'sales',
          describe: 'a region name',
          unknown_field: 1
        },
        'c',
        warnings
      )
    ).toEqual({
      name: 'answer',
      kind: 'label',
      of_column: 'region',
      frame: 'sales',
      describe: 'a region name',
      unknown_field: 1
    });
    expect(normalizeContract('total', 'c', warnings)).toEqual({
      name: 'total',
      kind: 'any'
    });
    expect(warnings).toEqual([]);
  });

  it('accepts the usual spellings of a kind, of the lists and of the rounding', () => {
    const warnings: string[] = [];
    const read = (raw: unknown) => normalizeContract(raw, 'c', warnings);
    expect(read({ name: 'x', kind: 'float', decimals: '2' })).toEqual({
      name: 'x',
      kind: 'number',
      decimals: 2
    });
    expect(read({ variable: 'n', type: 'int' })?.kind).toBe('integer');
    expect(read({ name: 's', kind: 'pd.Series', index: 'region' })?.kind).toBe(
      'series'
    );
    expect(read({ name: 'd', kind: 'DataFrame', columns: 'region' })).toEqual({
      name: 'd',
      kind: 'dataframe',
      columns: ['region']
    });
    expect(read({ name: 'm', kind: 'dict', keys: ['mean', 2] })?.keys).toEqual([
      'mean',
      '2'
    ]);
    expect(warnings).toEqual([]);
  });

  it('reads an unknown kind as any, with a warning', () => {
    const warnings: string[] = [];
    expect(
      normalizeContract({ name: 'x', kind: 'quaternion' }, 'c[0]', warnings)
    ).toEqual({ name: 'x', kind: 'any' });
    expect(warnings).toEqual([
      'c[0].kind "quaternion" is not a kind of contract; read as "any"'
    ]);
  });

  it('drops a contract without a Python name, or with a field it cannot read, with a warning', () => {
    const warnings: string[] = [];
    expect(normalizeContract({ kind: 'number' }, 'c[0]', warnings)).toBeNull();
    expect(normalizeContract({ name: 'df["x"]' }, 'c[1]', warnings)).toBeNull();
    expect(
      normalizeContract({ name: 'x', decimals: -1 }, 'c[2]', warnings)
    ).toBeNull();
    expect(normalizeContract(42, 'c[3]', warnings)).toBeNull();
    expect(warnings).toHaveLength(4);
    expect(warnings[0]).toMatch(/^c\[0\] ignored: name: /);
    expect(warnings[1]).toMatch(/^c\[1\] \(df\["x"\]\) ignored: name: /);
    expect(warnings[2]).toMatch(/^c\[2\] \(x\) ignored: decimals: /);
    expect(warnings[3]).toBe(
      'c[3] ignored: expected a contract object, got number 42'
    );
  });

  it('keeps the valid contracts of a list and the last of each name', () => {
    const warnings: string[] = [];
    expect(
      normalizeContracts(
        [{ name: 'a' }, { name: '1bad' }, { name: 'a', kind: 'text' }],
        'list',
        warnings
      )
    ).toEqual([{ name: 'a', kind: 'text' }]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^list\[1\] \(1bad\) ignored/);
  });
});

describe('the run’s contract (context_update.contract)', () => {
  it('is read from a planning answer, with its summary and answer format', () => {
    const result = normalizePlanningResponse({
      targetAchieved: false,
      contextUpdate: {
        contract: {
          deliverables: [
            { name: 'answer', kind: 'label', of_column: 'region' }
          ],
          summary: 'Deliver: `answer`, a region name',
          answerFormat: '@answer[value]'
        }
      }
    });
    expect(result.ok && result.response.context_update?.contract).toEqual({
      deliverables: [{ name: 'answer', kind: 'label', of_column: 'region' }],
      summary: 'Deliver: `answer`, a region name',
      answer_format: '@answer[value]'
    });
    expect(result.ok && result.warnings).toEqual([]);
  });

  it('drops an invalid deliverable with a warning and keeps the rest of the answer', () => {
    const result = normalizePlanningResponse({
      targetAchieved: true,
      context_update: {
        contract: { deliverables: [{ name: 'ok_name' }, { name: '' }] },
        variables: { x: 1 }
      }
    });
    expect(result.ok).toBe(true);
    if (!result.ok) {
      return;
    }
    expect(result.response.context_update?.contract?.deliverables).toEqual([
      { name: 'ok_name', kind: 'any' }
    ]);
    expect(result.response.context_update?.variables).toEqual({ x: 1 });
    expect(result.warnings).toHaveLength(1);
    expect(result.warnings[0]).toMatch(
      /^context_update\.contract\.deliverables\[1\] \(\) ignored/
    );
  });

  it('takes a bare list as the deliverables, and says what it cannot read', () => {
    const warnings: string[] = [];
    expect(normalizeRunContract(['answer'], warnings)).toEqual({
      deliverables: [{ name: 'answer', kind: 'any' }]
    });
    expect(normalizeRunContract('answer', warnings)).toBeNull();
    expect(normalizeRunContract({ summary: 'x' }, warnings)).toBeNull();
    expect(warnings).toEqual([
      'context_update.contract ignored: expected an object, got string "answer"',
      'context_update.contract ignored: it has no "deliverables"'
    ]);
  });
});

describe('step contracts', () => {
  it('are read on a template step, and each name is an expected output of the step', () => {
    const result = normalizeWorkflowTemplate({
      stages: [
        {
          id: 's1',
          steps: [
            {
              id: 'sum',
              expected_outputs: ['totals'],
              outputContracts: [
                { name: 'by_region', kind: 'series', index: 'region' },
                { name: 'bad name' }
              ]
            }
          ]
        }
      ]
    });
    expect(result.ok).toBe(true);
    if (!result.ok) {
      return;
    }
    const step = result.template.stages[0].steps[0];
    expect(step.output_contracts).toEqual([
      { name: 'by_region', kind: 'series', index: 'region' }
    ]);
    expect(step.expected_outputs).toEqual(['totals', 'by_region']);
    expect(result.warnings).toHaveLength(1);
    expect(result.warnings[0]).toMatch(
      /^stages\[0\]\.steps\[0\]\.output_contracts\[1\] \(bad name\) ignored/
    );
  });

  it('reach the warnings of a planning answer and of an update_workflow action', () => {
    const template = {
      stages: [
        { id: 's1', steps: [{ id: 'p', output_contracts: [{ kind: 'x' }] }] }
      ]
    };
    const answer = normalizePlanningResponse({
      targetAchieved: false,
      context_update: { workflow_update: { workflowTemplate: template } }
    });
    expect(answer.ok && answer.warnings.join('\n')).toMatch(
      /output_contracts\[0\] ignored/
    );
    const action = normalizeAction({
      action: 'update_workflow',
      updated_workflow: template
    });
    expect(action.ok && action.warnings.join('\n')).toMatch(
      /output_contracts\[0\] ignored/
    );
  });

  it('are read in a progress_update for the current step', () => {
    const result = normalizePlanningResponse({
      targetAchieved: false,
      context_update: {
        progress_update: {
          level: 'steps',
          current_outputs: {
            expected: ['share'],
            contracts: [{ name: 'share', kind: 'number', decimals: 2 }, 7]
          }
        }
      }
    });
    expect(result.ok).toBe(true);
    if (!result.ok) {
      return;
    }
    const update = result.response.context_update?.progress_update;
    expect(
      !Array.isArray(update) && update?.current_outputs?.contracts
    ).toEqual([{ name: 'share', kind: 'number', decimals: 2 }]);
    expect(result.warnings).toEqual([
      'progress_update.current_outputs.contracts[1] ignored: expected a contract object, got number 7'
    ]);
  });
});

describe('observation.context.output_checks', () => {
  it('is part of the observation’s context', () => {
    const context = ObservationContextSchema.parse({
      output_checks: {
        answer: {
          ok: false,
          kind: 'label',
          type: 'int',
          value: '859',
          reason:
            "`answer` is 859, an int: not a value of df['region'] (a row number where a label was asked?)"
        }
      }
    });
    expect(context.output_checks?.answer.ok).toBe(false);
  });
});
