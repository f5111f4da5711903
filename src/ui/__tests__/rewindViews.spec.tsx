import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { nullTranslator } from '@jupyterlab/translation';
import * as React from 'react';
import type { IRewindPlan, IRewindRecord } from '../../engine/state/rewind';
import type { ItemStatus } from '../../engine/types';
import { ProgressTree } from '../components/ProgressTree';
import { RewindNote } from '../components/RewindNote';
import type { IStageNode } from '../../tokens';
import { RewindSummary } from '../rewindDialog';
import { disposeRendered, render, waitFor } from './rendered';

const trans = nullTranslator.load('notebook_bcc');
const rendermime = {} as IRenderMimeRegistry;

afterEach(disposeRendered);

function step(id: string, status: ItemStatus) {
  return {
    id,
    name: id.toUpperCase(),
    status,
    goal: null,
    focus: null,
    assessment: null,
    produced: [],
    behaviors: []
  };
}

function stage(
  id: string,
  status: ItemStatus,
  steps: IStageNode['steps']
): IStageNode {
  return {
    id,
    name: id.toUpperCase(),
    status,
    goal: null,
    focus: null,
    assessment: null,
    produced: [],
    steps
  };
}

describe('ProgressTree', () => {
  it('labels a step the stage never ran as skipped, with no Redo', async () => {
    const stages = [
      stage('s1', 'completed', [step('p1', 'completed'), step('p2', 'skipped')])
    ];
    const host = await render(
      <ProgressTree
        stages={stages}
        rendermime={rendermime}
        trans={trans}
        // The engine offers Redo only from steps that ran (p2 never did).
        redo={{ steps: ['s1/p1'], onRedo: jest.fn() }}
      />
    );
    // A completed stage starts folded.
    host
      .querySelector<HTMLElement>('[data-id="stage:s1"] > .jp-bcc-tree-row')!
      .click();
    await waitFor(() => host.querySelector('[data-id="step:s1/p2"]'));
    const p2 = host.querySelector('[data-id="step:s1/p2"]')!;
    expect(p2.classList).toContain('jp-bcc-mod-skipped');
    expect(
      p2.querySelector('.jp-bcc-status-icon')?.getAttribute('aria-label')
    ).toBe('skipped');
    expect(
      [...host.querySelectorAll<HTMLButtonElement>('.jp-bcc-redo-step')].map(
        b => b.dataset.stepId
      )
    ).toEqual(['p1']);
  });

  it('offers Redo from a step the planner gave up (skipped after it ran)', async () => {
    const stages = [
      stage('s1', 'completed', [step('p1', 'skipped'), step('p2', 'completed')])
    ];
    const host = await render(
      <ProgressTree
        stages={stages}
        rendermime={rendermime}
        trans={trans}
        redo={{ steps: ['s1/p1', 's1/p2'], onRedo: jest.fn() }}
      />
    );
    host
      .querySelector<HTMLElement>('[data-id="stage:s1"] > .jp-bcc-tree-row')!
      .click();
    await waitFor(() => host.querySelector('[data-id="step:s1/p1"]'));
    expect(host.querySelector('[data-id="step:s1/p1"]')!.classList).toContain(
      'jp-bcc-mod-skipped'
    );
    expect(
      [...host.querySelectorAll<HTMLButtonElement>('.jp-bcc-redo-step')].map(
        b => b.dataset.stepId
      )
    ).toEqual(['p1', 'p2']);
  });

  it('shows the planner’s assessment: its percentage in the row, its reasoning folded below', async () => {
    const plain = {
      createRenderer: () => {
        const node = document.createElement('div');
        return {
          node,
          renderModel: async (model: { data: Record<string, unknown> }) => {
            node.textContent = String(model.data['text/markdown']);
          },
          dispose: () => undefined
        };
      }
    } as unknown as IRenderMimeRegistry;
    const stages = [
      {
        ...stage('s1', 'current', [
          {
            ...step('p1', 'completed'),
            assessment: { reasoning: 'All **240** rows loaded.' }
          },
          step('p2', 'current')
        ]),
        assessment: { percent: 49.6 }
      }
    ];
    const host = await render(
      <ProgressTree stages={stages} rendermime={plain} trans={trans} />
    );
    const stageRow = host.querySelector(
      '[data-id="stage:s1"] > .jp-bcc-tree-row'
    );
    expect(stageRow?.querySelector('.jp-bcc-percent')?.textContent).toBe('50%');
    const p1 = host.querySelector('[data-id="step:s1/p1"]')!;
    expect(p1.querySelector('.jp-bcc-percent')).toBeNull();
    // A completed step starts folded; it can be unfolded for its assessment alone.
    expect(p1.getAttribute('aria-expanded')).toBe('false');
    p1.querySelector<HTMLElement>('.jp-bcc-tree-row')!.click();
    await waitFor(() => p1.querySelector('.jp-bcc-assessment'));
    const details = p1.querySelector('.jp-bcc-assessment')!;
    expect(details.querySelector('summary')?.textContent).toBe(
      'The planner’s assessment'
    );
    await waitFor(() => details.textContent?.includes('All **240** rows'));
    expect(
      host.querySelector('[data-id="step:s1/p2"] .jp-bcc-assessment')
    ).toBeNull();
  });

  it('offers Redo from here on the completed steps that can be redone', async () => {
    const stages = [
      stage('s1', 'current', [
        step('p1', 'completed'),
        step('p2', 'completed'),
        step('p3', 'current')
      ])
    ];
    const onRedo = jest.fn();
    const host = await render(
      <ProgressTree
        stages={stages}
        rendermime={rendermime}
        trans={trans}
        redo={{ steps: ['s1/p2', 's1/p3'], onRedo }}
      />
    );
    const buttons =
      host.querySelectorAll<HTMLButtonElement>('.jp-bcc-redo-step');
    // p1 has no checkpoint kept; p3 is not completed.
    expect([...buttons].map(b => b.dataset.stepId)).toEqual(['p2']);
    buttons[0].click();
    expect(onRedo).toHaveBeenCalledWith('s1', 'p2');
  });

  it("leaves Enter and Space on a control inside an item to that control, not to the item's folding", async () => {
    const stages = [
      stage('s1', 'current', [
        { ...step('p1', 'completed'), goal: 'Load the data' },
        step('p2', 'current')
      ])
    ];
    const host = await render(
      <ProgressTree
        stages={stages}
        rendermime={rendermime}
        trans={trans}
        redo={{ steps: ['s1/p1'], onRedo: jest.fn() }}
      />
    );
    const p1 = host.querySelector<HTMLElement>('[data-id="step:s1/p1"]')!;
    const redo = p1.querySelector<HTMLButtonElement>('.jp-bcc-redo-step')!;
    const before = p1.getAttribute('aria-expanded');
    expect(before).toBe('false');
    for (const key of ['Enter', ' ']) {
      redo.focus();
      const sent = redo.dispatchEvent(
        new KeyboardEvent('keydown', { key, bubbles: true, cancelable: true })
      );
      // Not prevented: the browser turns the key into the button's click.
      expect(sent).toBe(true);
    }
    await new Promise(resolve => setTimeout(resolve, 50));
    expect(p1.getAttribute('aria-expanded')).toBe(before);
    // On the item itself the keys still fold and unfold it.
    p1.focus();
    p1.dispatchEvent(
      new KeyboardEvent('keydown', {
        key: 'Enter',
        bubbles: true,
        cancelable: true
      })
    );
    await waitFor(() => p1.getAttribute('aria-expanded') !== before);
  });
});

describe('Rewind dialog and note', () => {
  it('lists what goes, what stays and what comes back', async () => {
    const plan: IRewindPlan = {
      target: { kind: 'step', stageId: 's1', stepId: 'p2' },
      seq: 3,
      stageId: 's1',
      stepId: 'p2',
      behaviorId: null,
      steps: ['p2', 'p3'],
      remove: [
        {
          cellId: 'c1',
          kind: 'code',
          stepId: 'p2',
          behaviorId: 'b1',
          summary: 'b = 2'
        }
      ],
      keep: [
        {
          cellId: 'c2',
          kind: 'markdown',
          stepId: 'p3',
          behaviorId: 'b2',
          summary: 'my notes'
        }
      ],
      restore: [
        {
          cellId: 't',
          kind: 'markdown',
          stepId: 'p1',
          behaviorId: 'b0',
          summary: '# First'
        }
      ],
      untouched: 4
    };
    const host = await render(
      <RewindSummary plan={plan} stepName="Explore" trans={trans} />
    );
    expect(host.textContent).toContain(
      'The run goes back to the start of step “Explore” and runs again from there.'
    );
    const ids = (list: string) =>
      [...host.querySelectorAll<HTMLElement>(`.jp-bcc-rewind-${list} li`)].map(
        li => li.dataset.cellId
      );
    expect(ids('remove')).toEqual(['c1']);
    expect(ids('keep')).toEqual(['c2']);
    expect(ids('restore')).toEqual(['t']);
    expect(host.textContent).toContain('1 cell will be removed');
    expect(host.textContent).toContain('1 cell you edited is kept');
    expect(host.textContent).toContain('(4 cells, yours included)');
  });

  it('says in the panel what a rewind did', async () => {
    const record: IRewindRecord = {
      kind: 'redo_from_step',
      at: '2026-01-01T00:00:00.000Z',
      stageId: 's1',
      stepId: 'p2',
      behaviorId: null,
      steps: ['p2', 'p3'],
      removed: 5,
      kept: 1,
      restored: 0,
      kernelRestarted: true,
      rerun: 3,
      rerunError: null,
      effect: 'The user rewound to step p2; ...'
    };
    const host = await render(<RewindNote record={record} trans={trans} />);
    expect(host.textContent).toBe(
      'Redone from step p2. 5 cells removed, 1 edited cell kept, kernel restarted, 3 cells re-run.'
    );
  });

  it('says when the kernel was not restarted, and why', async () => {
    const record: IRewindRecord = {
      kind: 'redo_from_step',
      at: '2026-01-01T00:00:00.000Z',
      stageId: 's1',
      stepId: 'p2',
      behaviorId: null,
      steps: ['p2'],
      removed: 2,
      kept: 0,
      restored: 0,
      kernelRestarted: false,
      rerun: 0,
      rerunError: 'The kernel is dead.',
      effect: 'The user rewound to step p2; ...'
    };
    const host = await render(<RewindNote record={record} trans={trans} />);
    expect(host.textContent).toBe(
      'Redone from step p2. 2 cells removed. The kernel was not restarted: The kernel is dead.'
    );
  });
});
