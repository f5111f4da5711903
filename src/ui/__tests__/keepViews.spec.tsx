/**
 * The views of issue 43: a step's note and menu in the progress tree, the step menu's commands, the
 * note dialog, and the reproducibility check in words.
 */
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { nullTranslator } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import * as React from 'react';
import type { ItemStatus } from '../../engine/types';
import type { IReproducibilityRecord } from '../../notebook/reproducibility';
import { CommandIDs, type IStageNode } from '../../tokens';
import { ProgressTree } from '../components/ProgressTree';
import { Reproducibility } from '../components/Reproducibility';
import { reproducibilityText } from '../reproducibilityText';
import { openStepMenu } from '../stepMenu';
import { markingTrans } from './markingTranslator';
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

const STAGES: IStageNode[] = [
  {
    id: 's1',
    name: 'S1',
    status: 'current',
    goal: null,
    focus: null,
    assessment: null,
    produced: [],
    steps: [step('p1', 'completed'), step('p2', 'current')]
  }
];

const RECORD: IReproducibilityRecord = {
  checked_at: '2025-05-02T09:14:03.120Z',
  duration_ms: 4200,
  kernel: { name: 'python3', display_name: 'Python 3 (ipykernel)' },
  python: '3.11.7',
  packages: { pandas: '2.2.3', numpy: '2.1.0' },
  data_files: [{ path: 'sales.csv', sha256: 'ab12', size: 10 }],
  reference: 'end_of_run',
  cells_run: 5,
  cells_total: 5,
  reproduced: true,
  compared: 5,
  matched: 5,
  values: [],
  first_difference: null
};

describe('a step’s note and menu in the progress tree', () => {
  it('marks a step with a note, shows the note under it, and opens its menu from the keyboard', async () => {
    const onStepMenu = jest.fn();
    const host = await render(
      <ProgressTree
        stages={STAGES}
        rendermime={rendermime}
        trans={trans}
        notes={[{ stageId: 's1', stepId: 'p2', text: 'use the median' }]}
        onStepMenu={onStepMenu}
      />
    );
    await waitFor(() => host.querySelector('[data-id="step:s1/p2"]'));
    const p1 = host.querySelector('[data-id="step:s1/p1"]')!;
    const p2 = host.querySelector('[data-id="step:s1/p2"]')!;
    expect(p1.querySelector('.jp-bcc-step-note-mark')).toBeNull();
    const mark = p2.querySelector('.jp-bcc-step-note-mark')!;
    expect(mark.getAttribute('aria-label')).toBe('Your note: use the median');
    // The current step is unfolded: its note is under it.
    expect(p2.querySelector('.jp-bcc-step-note')?.textContent).toBe(
      'Your note: use the median'
    );
    const button = p2.querySelector<HTMLButtonElement>('.jp-bcc-step-menu')!;
    expect(button.getAttribute('aria-haspopup')).toBe('menu');
    expect(button.getAttribute('aria-label')).toBe('Step actions: P2');
    // A keyboard "click" has no pointer detail: the menu opens with its first item active.
    button.dispatchEvent(new MouseEvent('click', { bubbles: true, detail: 0 }));
    expect(onStepMenu).toHaveBeenCalledWith('s1', 'p2', button, true);
    expect(p1.querySelector('.jp-bcc-step-menu')).not.toBeNull();
  });

  it('lists the note and redo commands of the step in its menu', () => {
    const commands = new CommandRegistry();
    const ran: unknown[] = [];
    for (const id of [
      CommandIDs.noteStep,
      CommandIDs.removeStepNote,
      CommandIDs.redoStepWithNote,
      CommandIDs.redoFromStep
    ]) {
      commands.addCommand(id, {
        label: id,
        execute: args => ran.push([id, args])
      });
    }
    const anchor = document.createElement('button');
    document.body.append(anchor);
    const menu = openStepMenu(
      commands,
      trans,
      { stageId: 's1', stepId: 'p2' },
      anchor,
      true
    );
    expect(menu.items.map(item => item.command)).toEqual([
      CommandIDs.noteStep,
      CommandIDs.removeStepNote,
      '',
      CommandIDs.redoStepWithNote,
      CommandIDs.redoFromStep
    ]);
    expect(menu.activeIndex).toBe(0);
    menu.triggerActiveItem();
    expect(ran).toEqual([
      [CommandIDs.noteStep, { stageId: 's1', stepId: 'p2' }]
    ]);
    anchor.remove();
  });
});

describe('the reproducibility check in words', () => {
  it('says N of N, or what differs and where it first does', () => {
    expect(
      reproducibilityText({ kind: 'done', record: RECORD }, trans)
    ).toMatchObject({
      status: 'reproduced',
      headline: 'Reproduced: 5 of 5 values',
      firstDifference: null,
      values: []
    });
    const differs = reproducibilityText(
      {
        kind: 'done',
        record: {
          ...RECORD,
          reproduced: false,
          matched: 3,
          values: [
            {
              name: 'total',
              status: 'different',
              reference: '999',
              fresh: '10'
            },
            {
              name: 'df_clean',
              status: 'missing',
              reference: 'DataFrame(3×2)',
              fresh: null
            },
            {
              name: 'df',
              status: 'same',
              reference: 'DataFrame(3×2)',
              fresh: 'DataFrame(3×2)'
            }
          ],
          first_difference: {
            cell_id: 'c7',
            cell_index: 7,
            source: 'summary = df_clean.describe()',
            reason: "raised NameError: name 'df_clean' is not defined",
            kind: 'error',
            error: "NameError: name 'df_clean' is not defined"
          }
        }
      },
      trans
    );
    expect(differs).toMatchObject({
      status: 'differs',
      headline: 'Not reproduced: 3 of 5 values the same',
      firstDifference: {
        cellId: 'c7',
        text: "First difference at cell 7 (summary = df_clean.describe()): it raised NameError: name 'df_clean' is not defined"
      },
      values: [
        {
          name: 'total',
          text: '`total` differs: 10 in the fresh kernel, 999 in the run'
        },
        {
          name: 'df_clean',
          text: '`df_clean` is missing in the fresh kernel (the run had DataFrame(3×2))'
        }
      ]
    });
    expect(differs.details).toEqual(
      expect.arrayContaining([
        'Fresh kernel: Python 3 (ipykernel) (python3)',
        'Cells run: 5 of 5, in 4 s',
        'Python 3.11.7; pandas 2.2.3, numpy 2.1.0',
        'Data file sales.csv: sha256 ab12'
      ])
    );
  });

  it('says a check under way, stopped or impossible, in the user’s language', () => {
    const marked = markingTrans;
    expect(
      reproducibilityText(
        { kind: 'checking', phase: 'running', cell: 3, cells: 12 },
        trans
      ).headline
    ).toBe('Checking in a fresh kernel: cell 3 of 12…');
    expect(
      reproducibilityText(
        { kind: 'failed', message: 'x', stopped: true },
        trans
      ).headline
    ).toBe('The reproducibility check was stopped.');
    expect(
      reproducibilityText(
        {
          kind: 'failed',
          message: 'A fresh python9 kernel could not be started: 404',
          stopped: false
        },
        marked
      ).headline
    ).toMatch(/^⟦The reproducibility check could not run: A fresh python9/);
  });

  it('offers the check, and Stop while it runs; Show the cell runs its command', async () => {
    const commands = new CommandRegistry();
    const shown = jest.fn();
    commands.addCommand(CommandIDs.checkReproducibility, {
      execute: () => undefined
    });
    commands.addCommand(CommandIDs.stopReproducibilityCheck, {
      execute: () => undefined
    });
    commands.addCommand(CommandIDs.showCell, { execute: shown });
    const host = await render(
      <Reproducibility
        state={{
          kind: 'done',
          record: {
            ...RECORD,
            reproduced: false,
            first_difference: {
              cell_id: 'c7',
              cell_index: 7,
              source: 'x',
              reason: 'did not finish within 600 s',
              kind: 'timeout',
              seconds: 600
            }
          }
        }}
        canCheck={true}
        commands={commands}
        trans={trans}
      />
    );
    expect(host.querySelector('[data-command]')?.textContent).toBe(
      'Check again'
    );
    expect(
      host.querySelector('.jp-bcc-reproducibility-first')?.textContent
    ).toContain(
      'First difference at cell 7 (x): it did not finish within 600 s'
    );
    host
      .querySelector<HTMLButtonElement>('.jp-bcc-reproducibility-first button')!
      .click();
    expect(shown).toHaveBeenCalledWith({ cellId: 'c7' });
    disposeRendered();
    const checking = await render(
      <Reproducibility
        state={{ kind: 'checking', phase: 'running', cell: 2, cells: 5 }}
        canCheck={false}
        commands={commands}
        trans={trans}
      />
    );
    const stop = checking.querySelector<HTMLButtonElement>('[data-command]')!;
    expect(stop.dataset.command).toBe(CommandIDs.stopReproducibilityCheck);
    expect(stop.textContent).toBe('Stop the check');
    expect(stop.disabled).toBe(false);
    expect(
      checking.querySelector('.jp-bcc-reproducibility-status')?.textContent
    ).toBe('Checking in a fresh kernel: cell 2 of 5…');
  });

  it('shows nothing before a run that can be checked', async () => {
    const host = await render(
      <div>
        <Reproducibility
          state={null}
          canCheck={false}
          commands={new CommandRegistry()}
          trans={trans}
        />
      </div>
    );
    expect(host.querySelector('.jp-bcc-reproducibility')).toBeNull();
  });
});
