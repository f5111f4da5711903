/**
 * What the panel and the notifications say of a run's contract and of how it ended: the deliverables,
 * the steps given up, the checks of the outputs, the toast, the marks of the progress tree, the model
 * error box and the usage line before any model call (docs/using.md).
 */
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { CommandRegistry } from '@lumino/commands';
import * as React from 'react';
import type { IDeliverable, IRunOutcome } from '../../engine/state/contracts';
import { say } from '../../engine/messages';
import type { IRunError } from '../../engine/types';
import * as protocol from '../../protocol/messages';
import { CommandIDs, type IStageNode } from '../../tokens';
import { Deliverables } from '../components/Deliverables';
import { OutputsSection } from '../components/OutputsSection';
import { ProgressTree } from '../components/ProgressTree';
import { RunError } from '../components/RunError';
import { UsageLine } from '../components/UsageLine';
import {
  completedNotice,
  deliverableLines,
  deliverLine,
  describeCompleted,
  givenUpLines
} from '../outcome';
import { trackOutputs } from '../tree';
import { markingTrans } from './markingTranslator';
import { disposeRendered, render } from './rendered';
import { runningSnapshot, trans } from './snapshots';

afterEach(disposeRendered);

const ANSWER: IDeliverable = {
  name: 'answer',
  kind: 'label',
  describe: 'a region name',
  status: 'unchecked',
  value: null,
  type: null,
  reason: null,
  terms: { of_column: 'region', frame: 'df' }
};

function outcome(overrides: Partial<IRunOutcome> = {}): IRunOutcome {
  return {
    ok: true,
    givenUp: [],
    deliverables: [ANSWER],
    contractSummary: null,
    summary: 'Completed',
    ...overrides
  };
}

const CHECKED_TITLE =
  'The kernel checked the kind and form the task asked for, not that the analysis is right.';

const DELIVERED: IDeliverable = {
  ...ANSWER,
  status: 'delivered',
  value: 'North',
  type: 'str'
};
const MISSING: IDeliverable = {
  ...ANSWER,
  status: 'failed',
  reason: '`answer` is missing'
};
const ROW: IDeliverable = {
  ...ANSWER,
  status: 'failed',
  value: '859',
  type: 'int',
  reason:
    "`answer` is 859, an int: not a value of df['region'] (a row number where a label was asked?)"
};
const GIVEN_UP = {
  stageId: 'analysis',
  stepId: 'monthly_totals',
  name: 'Monthly totals',
  reason: 'The file has no date column.'
};

describe('the deliverables in words', () => {
  it('says what to deliver during the run: the planner’s summary, else one made from the contract', () => {
    expect(
      deliverLine(
        outcome({ contractSummary: 'Deliver: `answer`, a region name' }),
        trans
      )
    ).toBe('Deliver: `answer`, a region name');
    expect(
      deliverLine(
        outcome({
          deliverables: [
            ANSWER,
            { ...ANSWER, name: 'share', kind: 'number', describe: null },
            { ...ANSWER, name: 'x', kind: 'any', describe: null }
          ]
        }),
        trans
      )
    ).toBe('Deliver: `answer`, a region name; `share`, a number; `x`');
    expect(deliverLine(outcome(), markingTrans)).toBe(
      '⟦Deliver: `answer`, a region name⟧'
    );
  });

  it('says each deliverable’s latest check during the run', () => {
    expect(
      deliverableLines(
        outcome({ deliverables: [ANSWER, { ...ROW, name: 'total' }] }),
        false,
        trans
      )
    ).toEqual([
      { name: 'answer', status: 'pending', text: '`answer`: not checked yet' },
      { name: 'total', status: 'failed', text: ROW.reason }
    ]);
  });

  it('says the answer checked in the kernel at the end, or why it was not delivered', () => {
    expect(
      deliverableLines(outcome({ deliverables: [DELIVERED] }), true, trans)
    ).toEqual([
      {
        name: 'answer',
        status: 'delivered',
        text: "Answer: North (checked in the kernel: a value of df['region'])",
        title: CHECKED_TITLE
      }
    ]);
    expect(
      deliverableLines(outcome({ deliverables: [MISSING] }), true, trans)[0]
        .text
    ).toBe('Not delivered: `answer` is missing');
    expect(
      deliverableLines(outcome({ deliverables: [ANSWER] }), true, trans)[0].text
    ).toBe('Not delivered: `answer` was not checked in the kernel');
    // Several deliverables, or one without a short value, are named.
    expect(
      deliverableLines(
        outcome({
          deliverables: [
            DELIVERED,
            {
              ...DELIVERED,
              name: 'summary',
              kind: 'dataframe',
              value: null,
              type: 'DataFrame(4×2)',
              terms: { columns: ['region', 'total'] }
            }
          ]
        }),
        true,
        trans
      ).map(line => line.text)
    ).toEqual([
      "Delivered: `answer`, North (checked in the kernel: a value of df['region'])",
      'Delivered: `summary`, DataFrame(4×2) (checked in the kernel: a DataFrame with the columns region, total)'
    ]);
    // The sentence is translated; the kernel's value is shown as it is.
    expect(
      deliverableLines(
        outcome({ deliverables: [DELIVERED] }),
        true,
        markingTrans
      )[0].text
    ).toBe(
      "⟦Answer: North (checked in the kernel: ⟦a value of df['region']⟧)⟧"
    );
  });

  it('says what the kernel checked, so that a delivered value does not read as a right one', () => {
    const checked = (terms: IDeliverable['terms'], kind = DELIVERED.kind) =>
      deliverableLines(
        outcome({ deliverables: [{ ...DELIVERED, kind, terms }] }),
        true,
        trans
      )[0].text;
    expect(checked({ decimals: 2 }, 'number')).toBe(
      'Answer: North (checked in the kernel: a number rounded to 2 decimals)'
    );
    expect(checked({}, 'number')).toBe(
      'Answer: North (checked in the kernel: a number)'
    );
    expect(checked({ of_column: 'city', frame: 'sales' })).toBe(
      "Answer: North (checked in the kernel: a value of sales['city'])"
    );
    expect(checked({ one_of: ['yes', 'no'] }, 'text')).toBe(
      'Answer: North (checked in the kernel: one of "yes", "no")'
    );
    expect(checked({ index: 'region' }, 'series')).toBe(
      'Answer: North (checked in the kernel: a Series indexed by region)'
    );
    expect(checked({ keys: ['a', 'b'] }, 'dict')).toBe(
      'Answer: North (checked in the kernel: a dict with the keys a, b)'
    );
    expect(checked({}, 'any')).toBe(
      'Answer: North (checked in the kernel: it exists)'
    );
    // During the run too, and each line says on hover what a check is not.
    const during = deliverableLines(
      outcome({
        deliverables: [{ ...DELIVERED, kind: 'number', terms: { decimals: 3 } }]
      }),
      false,
      trans
    )[0];
    expect(during).toEqual({
      name: 'answer',
      status: 'delivered',
      text: '`answer`: North (checked in the kernel: a number rounded to 3 decimals)',
      title: CHECKED_TITLE
    });
  });

  it('names the steps given up with the planner’s reason', () => {
    expect(
      givenUpLines(
        outcome({
          givenUp: [GIVEN_UP, { ...GIVEN_UP, name: 'Chart', reason: null }]
        }),
        trans
      )
    ).toEqual([
      'Step given up: Monthly totals. The file has no date column.',
      'Step given up: Chart'
    ]);
  });
});

describe('the end of a run in words', () => {
  const problems = outcome({
    ok: false,
    givenUp: [GIVEN_UP],
    deliverables: [MISSING]
  });

  it('says Completed only when all is well', () => {
    expect(describeCompleted(undefined, trans)).toBe('Completed');
    expect(
      describeCompleted(outcome({ deliverables: [DELIVERED] }), trans)
    ).toBe('Completed');
    expect(describeCompleted(problems, trans)).toBe(
      'Finished with problems: 1 step given up; `answer` not delivered'
    );
    expect(
      describeCompleted(
        outcome({ ok: false, givenUp: [GIVEN_UP, GIVEN_UP], deliverables: [] }),
        markingTrans
      )
    ).toBe('⟦Finished with problems: ⟦2 steps given up⟧⟧');
  });

  it('toasts a warning, not “Workflow completed”, for a run that ended with problems', () => {
    expect(
      completedNotice(
        {
          reason: 'completed',
          message: 'The workflow ended with problems.',
          outcome: problems
        },
        'sales.ipynb',
        trans
      )
    ).toEqual({
      type: 'warning',
      message:
        'Workflow finished with problems in sales.ipynb: 1 step given up; `answer` not delivered'
    });
    expect(
      completedNotice(
        { reason: 'completed', message: 'done', outcome: outcome() },
        'sales.ipynb',
        trans
      )
    ).toEqual({
      type: 'warning',
      message:
        'Workflow finished with problems in sales.ipynb: `answer` not delivered'
    });
    expect(
      completedNotice(
        { reason: 'completed', message: 'done' },
        'sales.ipynb',
        trans
      )
    ).toEqual({
      type: 'success',
      message: 'Workflow completed in sales.ipynb'
    });
  });
});

describe('Deliverables', () => {
  it('shows what to deliver and the checks while the run goes on', async () => {
    const host = await render(
      <Deliverables
        outcome={outcome({
          contractSummary: 'Deliver: `answer`, a region name',
          deliverables: [ROW]
        })}
        completed={false}
        trans={trans}
      />
    );
    const box = host.querySelector('.jp-bcc-deliverables')!;
    expect(box.querySelector('.jp-bcc-deliver')?.textContent).toBe(
      'Deliver: `answer`, a region name'
    );
    const line = box.querySelector('.jp-bcc-deliverable')!;
    expect(line.getAttribute('data-status')).toBe('failed');
    expect(line.textContent).toBe(`✗ ${ROW.reason}`);
    expect(box.classList).toContain('jp-bcc-mod-problems');
  });

  it('shows the answer at the end, and the steps given up', async () => {
    const host = await render(
      <Deliverables
        outcome={outcome({
          ok: false,
          deliverables: [DELIVERED],
          givenUp: [GIVEN_UP]
        })}
        completed={true}
        trans={trans}
      />
    );
    expect(host.querySelector('.jp-bcc-deliver')).toBeNull();
    expect(host.querySelector('.jp-bcc-deliverable')?.textContent).toBe(
      "✓ Answer: North (checked in the kernel: a value of df['region'])"
    );
    expect(
      host.querySelector('.jp-bcc-deliverable')?.getAttribute('title')
    ).toBe(CHECKED_TITLE);
    expect(
      [...host.querySelectorAll('.jp-bcc-given-up')].map(li => li.textContent)
    ).toEqual(['Step given up: Monthly totals. The file has no date column.']);
  });
});

describe('OutputsSection: the check of each expected output', () => {
  it('marks an output ✓ or ✗ with the reason', async () => {
    const snapshot = runningSnapshot();
    const outputs = trackOutputs({
      ...snapshot,
      outputs: {
        ...snapshot.outputs,
        steps: {
          expected: ['by_region', 'answer', 'total'],
          produced: ['by_region'],
          in_progress: ['answer']
        }
      },
      outputChecks: {
        by_region: {
          ok: true,
          kind: 'series',
          type: 'Series(4)',
          value: null,
          behaviorId: 'behavior_001'
        },
        answer: {
          ok: false,
          kind: 'label',
          type: 'int',
          value: '859',
          reason: ROW.reason ?? undefined,
          behaviorId: 'behavior_001'
        },
        total: {
          ok: false,
          kind: 'number',
          type: null,
          value: null,
          reason: '`total` is missing',
          behaviorId: 'behavior_001'
        }
      }
    });
    const host = await render(
      <OutputsSection
        outputs={outputs.filter(o => o.check)}
        artifacts={[]}
        trans={trans}
      />
    );
    const rows = [...host.querySelectorAll('.jp-bcc-output')];
    expect(
      rows.map(row => row.querySelector('.jp-bcc-check')?.textContent)
    ).toEqual(['✓', '✗', '✗']);
    expect(
      rows[0].querySelector('.jp-bcc-check')?.getAttribute('aria-label')
    ).toBe('checked in the kernel');
    expect(rows[0].querySelector('.jp-bcc-check-reason')).toBeNull();
    expect(rows[1].querySelector('.jp-bcc-check-reason')?.textContent).toBe(
      ROW.reason
    );
    expect(rows[2].querySelector('.jp-bcc-check-reason')?.textContent).toBe(
      '`total` is missing'
    );
  });
});

describe('ProgressTree: a step given up', () => {
  const rendermime = {} as IRenderMimeRegistry;
  const node = (id: string, status: IStageNode['status']) => ({
    id,
    name: id.toUpperCase(),
    status,
    goal: null,
    focus: null,
    assessment: null,
    produced: []
  });

  it('is not ticked, nor is its stage', async () => {
    const stages: IStageNode[] = [
      {
        ...node('s1', 'given_up'),
        steps: [
          { ...node('p1', 'given_up'), behaviors: [] },
          { ...node('p2', 'completed'), behaviors: [] }
        ]
      }
    ];
    const host = await render(
      <ProgressTree
        stages={stages}
        rendermime={rendermime}
        trans={trans}
        redo={{ steps: ['s1/p1', 's1/p2'], onRedo: jest.fn() }}
      />
    );
    const stage = host.querySelector('[data-id="stage:s1"]')!;
    expect(stage.classList).toContain('jp-bcc-mod-given_up');
    expect(
      stage.querySelector('.jp-bcc-status-icon')?.getAttribute('aria-label')
    ).toBe('ended with a step given up');
    (stage.querySelector('.jp-bcc-tree-row') as HTMLElement).click();
    await new Promise(resolve => setTimeout(resolve, 50));
    const step = host.querySelector('[data-id="step:s1/p1"]')!;
    expect(
      step.querySelector('.jp-bcc-status-icon')?.getAttribute('aria-label')
    ).toBe('given up');
    // It may be run again from here.
    expect(
      [...host.querySelectorAll<HTMLButtonElement>('.jp-bcc-redo-step')].map(
        b => b.dataset.stepId
      )
    ).toEqual(['p1', 'p2']);
  });
});

describe('RunError: the model error box', () => {
  const relay = 'http://localhost:8888/notebook-bcc/relay/generating';
  const modelError: IRunError = {
    endpoint: 'generating',
    retryable: true,
    action: 'open-llm-settings',
    ...say(
      'generatingFailed',
      protocol.msg(
        'requestFailed',
        `POST ${relay}`,
        'HTTP 424: The model endpoint refused the API key; set it in LLM Planner Settings.'
      )
    )
  };

  function commandsWith(open: jest.Mock): CommandRegistry {
    const commands = new CommandRegistry();
    commands.addCommand(CommandIDs.llmSettings, {
      label: 'LLM Planner Settings…',
      execute: open
    });
    commands.addCommand(CommandIDs.retry, {
      label: 'Retry',
      execute: jest.fn()
    });
    return commands;
  }

  it('says the model’s problem first and offers the LLM Planner Settings besides Retry', async () => {
    const open = jest.fn();
    const host = await render(
      <RunError
        error={modelError}
        canRetry={true}
        commands={commandsWith(open)}
        trans={trans}
      />
    );
    const message = host.querySelector('.jp-bcc-error-message')!.textContent!;
    expect(message).toBe(
      'The planner reports: The model endpoint refused the API key; set it in LLM Planner Settings.'
    );
    expect(message).not.toMatch(/HTTP|generat/);
    const buttons = [...host.querySelectorAll<HTMLButtonElement>('button')];
    expect(buttons.map(b => b.dataset.command)).toEqual([
      CommandIDs.llmSettings,
      CommandIDs.retry
    ]);
    expect(buttons[0].textContent).toBe('LLM Planner Settings…');
    expect(buttons[0].classList).toContain('jp-bcc-mod-primary');
    buttons[0].click();
    expect(open).toHaveBeenCalledTimes(1);
  });

  it('offers only Retry when the error asks nothing', async () => {
    const host = await render(
      <RunError
        error={{ ...modelError, action: undefined }}
        canRetry={true}
        commands={commandsWith(jest.fn())}
        trans={trans}
      />
    );
    expect(
      [...host.querySelectorAll<HTMLButtonElement>('button')].map(
        b => b.dataset.command
      )
    ).toEqual([CommandIDs.retry]);
  });
});

describe('UsageLine before any model call', () => {
  it('says nothing of 0 tokens in 0 model calls', async () => {
    const host = await render(
      <div>
        <UsageLine
          usage={{
            model: 'qwen2.5-coder-1.5b',
            behavior: { prompt_tokens: 0, completion_tokens: 0 },
            run: { prompt_tokens: 0, completion_tokens: 0, model_calls: 0 },
            cost: { run: 0, currency: 'USD' }
          }}
          trans={trans}
        />
      </div>
    );
    expect(host.querySelector('.jp-bcc-usage')).toBeNull();
    expect(host.textContent).not.toMatch(/0 prompt/);
  });

  it('shows the run once tokens were spent, not a behavior that spent none', async () => {
    const host = await render(
      <UsageLine
        usage={{
          behavior: { prompt_tokens: 0, completion_tokens: 0 },
          run: { prompt_tokens: 1754, completion_tokens: 120, model_calls: 1 }
        }}
        trans={trans}
      />
    );
    expect(host.querySelector('.jp-bcc-usage-behavior')).toBeNull();
    expect(host.querySelector('.jp-bcc-usage-run')?.textContent).toBe(
      'Run: 1,754 prompt + 120 completion tokens in 1 model call'
    );
  });
});
