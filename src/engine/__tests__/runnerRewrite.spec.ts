import type { PlanningResponse, WorkflowTemplate } from '../../protocol';
import { FakeNotebookDriver } from '../testing';
import {
  AnyAction,
  code,
  effectsOf,
  exec,
  type ISetup,
  plan,
  setup,
  TEMPLATE,
  text,
  when,
  withTemplate
} from './runnerSetup';

function rewrite(codecell_id: string, content: string): AnyAction {
  return { action: 'rewrite_cell', codecell_id, content };
}

const FAILING = 'raise KeyError("region")';
const FIX = 'total = 1';

/** Step p1 of ONE_STEP: a first code that fails, then its fix; achieved at the third plan. */
function failThenFix() {
  return {
    planning: [withTemplate(false), plan(false), plan(true)],
    generating: [
      [code(FAILING, 'load'), exec('load')],
      [rewrite('load', FIX), exec('load')]
    ]
  };
}

describe('a retry fixes its own cell (rewrite_cell)', () => {
  it('keeps one cell for the step: the fix replaces the failed code, which stays with the cell as an attempt', async () => {
    const s = setup(failThenFix());
    expect((await s.runner.start({ task: 't' })).reason).toBe('completed');
    const cells = s.driver.codeCells();
    expect(cells.map(c => c.source)).toEqual([FIX]);
    const [cell] = cells;
    expect(cell.metadata.attempts).toEqual([
      {
        code: FAILING,
        error: 'KeyError: region',
        traceback: expect.stringContaining('KeyError: region'),
        at: expect.any(String),
        by: 'planner'
      }
    ]);
    expect(s.driver.executed).toEqual([cell.id, cell.id]);
    expect(s.driver.variables).toEqual({ total: '1' });
    const [start, afterFailure, afterFix] = s.client.planningRequests;
    expect(afterFailure.behavior_feedback?.last_action_result).toBe('error');
    expect(afterFix.behavior_feedback?.last_action_result).toBe('success');
    // The failed attempt reaches the planner with the step, bounded, beside the effects.
    expect(start.observation.context?.cell_attempts).toBeUndefined();
    expect(afterFix.observation.context?.cell_attempts).toEqual([
      {
        cell_id: cell.id,
        store_id: 'load',
        step_id: 'p1',
        attempts: 2,
        code: FIX,
        failed: [{ attempt: 1, code: FAILING, error: 'KeyError: region' }]
      }
    ]);
    for (const request of [
      ...s.client.planningRequests,
      ...s.client.generatingRequests
    ]) {
      expect(request.options?.optional_actions).toEqual(['rewrite_cell']);
    }
    expect(s.warnings).toEqual([]);
  });

  it('keeps why the replaced code failed when it raised nothing: the step’s check in the kernel that failed', async () => {
    const MEAN: WorkflowTemplate = {
      name: 'Mean',
      stages: [
        {
          id: 's1',
          name: 'Answer',
          steps: [
            {
              id: 'p1',
              name: 'Mean',
              output_contracts: [{ name: 'mean', kind: 'number', decimals: 2 }]
            }
          ]
        }
      ]
    };
    const s = setup({
      planning: [withTemplate(false, MEAN), plan(false), plan(true)],
      generating: [
        [code('mean = 3.14159\nprint(round(mean, 2))', 'mean'), exec('mean')],
        [rewrite('mean', 'mean = round(3.14159, 2)'), exec('mean')]
      ]
    });
    s.driver.onExec = (_cell, driver) => {
      driver.variables.mean = driver.executed.length === 1 ? 3.14159 : 3.14;
      return { status: 'ok', output: '3.14' };
    };
    expect((await s.runner.start({ task: 't' })).reason).toBe('completed');
    const [cell] = s.driver.codeCells();
    const reason =
      s.client.planningRequests[1].observation.context?.output_checks?.mean
        .reason;
    expect(reason).toMatch(/^`mean` .*2 decimals/);
    expect(cell.metadata.attempts).toEqual([
      {
        code: 'mean = 3.14159\nprint(round(mean, 2))',
        error: `Check failed: ${reason}`,
        traceback: null,
        at: expect.any(String),
        by: 'planner'
      }
    ]);
    // The planner reads it with the attempt too.
    expect(
      s.client.planningRequests[2].observation.context?.cell_attempts?.[0]
        .failed
    ).toEqual([
      {
        attempt: 1,
        code: 'mean = 3.14159\nprint(round(mean, 2))',
        error: `Check failed: ${reason}`
      }
    ]);
  });

  it('never rewrites a cell the user edited: the fix goes right below it, takes its name, and the user is told', async () => {
    let s!: ISetup;
    const userEdits = (): PlanningResponse => {
      s.driver.editCell(s.driver.codeCells()[0].id, `${FAILING}  # mine`);
      return plan(false);
    };
    s = setup({
      planning: [withTemplate(false), userEdits, plan(true)],
      generating: [
        [code(FAILING, 'load'), exec('load'), text('after')],
        [rewrite('load', FIX), exec('load')]
      ]
    });
    expect((await s.runner.start({ task: 't' })).reason).toBe('completed');
    expect(s.driver.cells.map(c => c.source)).toEqual([
      `${FAILING}  # mine`,
      FIX,
      'after'
    ]);
    const [edited, fix] = s.driver.codeCells();
    expect(edited.metadata.attempts).toBeUndefined();
    expect(fix.metadata).toMatchObject({ fix_of: edited.id });
    expect(fix.provenance.store_id).toBe('load');
    // The exec of the same name ran the fix, not the user's cell.
    expect(s.driver.executed).toEqual([edited.id, fix.id]);
    expect(s.warnings.map(w => w.text?.id ?? w.message)).toEqual([
      'rewriteBelowEdited'
    ]);
    expect(effectsOf(s.client.planningRequests[2])[0]).toBe(
      `⚠️ rewrite_cell of 'load' not applied in place: the user edited that cell, and a cell the user edited is never rewritten. The fix was added below cell '${edited.id}' as cell '${fix.id}'; exec 'load' runs it.`
    );
  });

  it('takes lastAddedCellId and a fenced fix; the fix of a cell that is gone or not the run’s is added as a new cell', async () => {
    const driver = new FakeNotebookDriver();
    const mine = driver.addUserCell('x = 0');
    const s = setup(
      {
        planning: [withTemplate(false), plan(false), plan(true)],
        generating: [
          [code(FAILING), exec()],
          [
            rewrite('lastAddedCellId', '```python\nx = 2\n```'),
            exec(),
            rewrite('gone', 'y = 3'),
            exec('gone'),
            rewrite(mine, 'z = 4'),
            exec(mine)
          ]
        ]
      },
      { driver }
    );
    expect((await s.runner.start({ task: 't' })).reason).toBe('completed');
    expect(driver.cells.map(c => c.source)).toEqual([
      'x = 0',
      'z = 4',
      'x = 2',
      'y = 3'
    ]);
    expect(driver.variables).toEqual({ x: '2', y: '3', z: '4' });
    expect(driver.cells[0].metadata.attempts).toBeUndefined();
    expect(s.warnings.map(w => w.text?.id)).toEqual([
      'rewriteAsNewCell',
      'rewriteAsNewCell'
    ]);
    expect(s.client.planningRequests[2].behavior_feedback).toMatchObject({
      actions_executed: 6,
      actions_succeeded: 6
    });
  });
});

describe('rewritten cells through undo, redo, pause and reload', () => {
  it('undoes the behavior that rewrote a cell: the failed code is back, its attempt leaves the history', async () => {
    const s = setup(failThenFix());
    void s.runner.start({ task: 't', stepMode: true });
    await s.paused();
    s.runner.resume();
    await when(
      s.runner.progressChanged,
      snap => snap.paused && snap.behavior.iteration === 2,
      undefined
    );
    const [cell] = s.driver.codeCells();
    expect(cell.source).toBe(FIX);
    const planned = await s.runner.rewindPlan({ kind: 'behavior' });
    expect(planned?.remove).toEqual([]);
    expect(planned?.restore.map(c => c.summary)).toEqual([FAILING]);
    const record = await s.runner.rewind({ kind: 'behavior' });
    expect(record).toMatchObject({ kind: 'undo_behavior', restored: 1 });
    expect(s.driver.codeCells().map(c => c.source)).toEqual([FAILING]);
    expect(cell.metadata.attempts).toEqual([]);
    // The planner may fix it again: the cell is the run's as before, and its error goes with it again.
    expect(s.driver.rewriteStatus(cell.id)).toBe('ok');
    await s.driver.rewriteCell({
      cellId: cell.id,
      source: FIX,
      at: new Date()
    });
    expect(cell.metadata.attempts).toMatchObject([
      { code: FAILING, error: 'KeyError: region' }
    ]);
  });

  it('redoes from a step whose cell was rewritten: the rewritten cell goes with the step', async () => {
    const s = setup({
      planning: [
        withTemplate(false, TEMPLATE),
        plan(false),
        plan(true),
        plan(false),
        plan(true),
        plan(false),
        plan(true)
      ],
      generating: [
        [code(FAILING, 'load'), exec('load')],
        [rewrite('load', FIX), exec('load')],
        [code('b = 2'), exec()],
        [code('c = 3'), exec()]
      ]
    });
    expect((await s.runner.start({ task: 't' })).reason).toBe('completed');
    expect(s.driver.codeCells().map(c => c.source)).toEqual([
      FIX,
      'b = 2',
      'c = 3'
    ]);
    s.client.planningScript.push(
      plan(false),
      plan(true),
      plan(false),
      plan(true)
    );
    s.client.generatingScript.push(
      [code('b = 20'), exec()],
      [code('c = 30'), exec()]
    );
    const record = await s.runner.rewind(
      { kind: 'step', stageId: 's1', stepId: 'p2' },
      { restartKernel: false }
    );
    expect(record.removed).toBe(2);
    expect((await when(s.runner.finished, () => true)).reason).toBe(
      'completed'
    );
    // The rewritten cell of p1 stays as it was fixed, with its attempt.
    expect(s.driver.codeCells().map(c => c.source)).toEqual([
      FIX,
      'b = 20',
      'c = 30'
    ]);
    expect(s.driver.codeCells()[0].metadata.attempts).toHaveLength(1);

    s.client.planningScript.push(
      plan(false),
      plan(true),
      plan(true),
      plan(true)
    );
    s.client.generatingScript.push([code('a = 1', 'load'), exec('load')]);
    const again = await s.runner.rewind(
      { kind: 'step', stageId: 's1', stepId: 'p1' },
      { restartKernel: false }
    );
    // Rewritten by the run, it is the run's: it goes with its step like any of the run's cells.
    expect(again.removed).toBe(3);
    expect(again.kept).toBe(0);
    await when(s.runner.finished, () => true);
    expect(s.driver.codeCells()[0].source).toBe('a = 1');
  });

  it('resumes a saved run after a reload: the fix of the failed cell still finds it by name', async () => {
    const driver = new FakeNotebookDriver();
    const first = setup(
      {
        planning: [withTemplate(false), plan(false)],
        generating: [[code(FAILING, 'load'), exec('load')]]
      },
      { driver }
    );
    // Paused once the failed exec is applied, as a user who saw the error would.
    first.runner.actionApplied.connect((_, applied) => {
      if (applied.index === 1) {
        first.runner.pause();
      }
    });
    void first.runner.start({ task: 't' });
    await first.paused();
    const [failed] = driver.codeCells();
    // The page reloads: a new runner reads the run saved in the notebook.
    const later = setup(
      {
        planning: [plan(false), plan(true)],
        generating: [[rewrite('load', FIX), exec('load')]]
      },
      { driver }
    );
    expect((await later.runner.resumeFromSaved())?.reason).toBe('completed');
    expect(driver.codeCells().map(c => [c.id, c.source])).toEqual([
      [failed.id, FIX]
    ]);
    expect(driver.codeCells()[0].metadata.attempts).toMatchObject([
      { code: FAILING, error: 'KeyError: region' }
    ]);
  });
});
