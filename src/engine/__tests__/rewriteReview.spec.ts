/**
 * Interactive mode shows a rewrite as a diff of the cell (its code now against the fix), to accept,
 * reject or edit before accepting; new code is shown as code, as before.
 */
import type { PlanningResponse } from '../../protocol';
import type { BehaviorDecision, IBehaviorApproval } from '../types';
import {
  AnyAction,
  code,
  effectsOf,
  exec,
  type ISetup,
  plan,
  setup,
  withTemplate
} from './runnerSetup';

const FAILING = 'raise KeyError("region")';
const FIX = 'total = 1';

function rewrite(codecell_id: string, content: string): AnyAction {
  return { action: 'rewrite_cell', codecell_id, content };
}

/** A failed cell, then a behavior that fixes it, approved as `answer` says. */
function reviewed(
  answer: (request: IBehaviorApproval) => BehaviorDecision,
  second: AnyAction[] = [
    rewrite('load', `\`\`\`python\n${FIX}\n\`\`\``),
    exec('load')
  ],
  beforeFix?: (s: ISetup) => void
) {
  const seen: IBehaviorApproval[] = [];
  let s!: ISetup;
  const atFailure = (): PlanningResponse => {
    beforeFix?.(s);
    return plan(false);
  };
  s = setup(
    {
      planning: [withTemplate(false), atFailure, plan(true)],
      generating: [[code(FAILING, 'load'), exec('load')], second]
    },
    {
      settings: { interactive: true },
      hooks: {
        approveBehavior: async request => {
          seen.push(request);
          return seen.length === 1 ? 'run' : answer(request);
        }
      }
    }
  );
  return { s, seen };
}

describe('Interactive mode: a rewrite is reviewed as a diff', () => {
  it('shows the failed code against the fix, not as new code nor as a cell it runs', async () => {
    const { s, seen } = reviewed(() => 'run');
    expect((await s.runner.start({ task: 't' })).reason).toBe('completed');
    const [cell] = s.driver.codeCells();
    expect(seen[1].codeCells).toEqual([]);
    expect(seen[1].existingCells).toEqual([]);
    expect(seen[1].rewrites).toEqual([
      {
        index: 0,
        reference: 'load',
        cellId: cell.id,
        position: 1,
        before: FAILING,
        after: FIX,
        inPlace: true
      }
    ]);
    expect(s.driver.codeCells().map(c => c.source)).toEqual([FIX]);
    expect(s.client.planningRequests[2].behavior_feedback).toMatchObject({
      last_action_result: 'success'
    });
  });

  it('keeps the old code when the user rejects the fix, and tells the planner as a skip', async () => {
    const { s } = reviewed(() => 'skip');
    expect((await s.runner.start({ task: 't' })).reason).toBe('completed');
    const [cell] = s.driver.codeCells();
    expect(cell.source).toBe(FAILING);
    expect(cell.metadata.attempts).toBeUndefined();
    const after = s.client.planningRequests[2];
    expect(after.behavior_feedback?.last_action_result).toBe('skipped');
    expect(effectsOf(after)).toEqual([
      "Behavior behavior_002 was skipped by the user: its 2 actions were not applied. The user rejected the rewrite of 'load': the cell keeps its code."
    ]);
  });

  it('writes the code the user edited in the diff, and tells the planner', async () => {
    const { s } = reviewed(request => ({
      decision: 'run',
      edits: { [request.rewrites![0].index]: 'total = 2' }
    }));
    expect((await s.runner.start({ task: 't' })).reason).toBe('completed');
    const [cell] = s.driver.codeCells();
    expect(cell.source).toBe('total = 2');
    expect(s.driver.variables).toEqual({ total: '2' });
    expect(effectsOf(s.client.planningRequests[2])).toEqual([
      "The user edited the fix of 'load' before accepting it; the cell holds the user's version.",
      ''
    ]);
  });

  it('asks for a rewrite without an exec too, and says when the fix will go below an edited cell', async () => {
    const { s, seen } = reviewed(
      () => 'run',
      [rewrite('load', FIX)],
      setupOf =>
        setupOf.driver.editCell(setupOf.driver.codeCells()[0].id, 'x = 0')
    );
    expect((await s.runner.start({ task: 't' })).reason).toBe('completed');
    expect(seen).toHaveLength(2);
    expect(seen[1].rewrites).toMatchObject([
      { before: 'x = 0', after: FIX, inPlace: false }
    ]);
    expect(s.driver.codeCells().map(c => c.source)).toEqual(['x = 0', FIX]);
  });
});

/** Step p1 without interactive mode: a first code that fails, then a fix whose code reaches outside. */
function flaggedFix(answer: BehaviorDecision) {
  const asked: IBehaviorApproval[] = [];
  const s = setup(
    {
      planning: [withTemplate(false), plan(false), plan(true)],
      generating: [
        [code(FAILING, 'load'), exec('load')],
        [rewrite('load', FLAGGED_FIX), exec('load')]
      ]
    },
    {
      hooks: {
        approveBehavior: async request => {
          asked.push(request);
          return answer;
        }
      }
    }
  );
  return { s, asked };
}

const FLAGGED_FIX = 'import os\ntotal = len(os.environ)';

describe('A fix whose code reaches outside is held like new code', () => {
  it('asks without interactive mode, with the fix and its flags; a skip keeps the failed code and says why', async () => {
    const { s, asked } = flaggedFix('skip');
    expect((await s.runner.start({ task: 't' })).reason).toBe('completed');
    // The failed first code was not flagged: only the fix was asked about.
    expect(asked).toHaveLength(1);
    const [cell] = s.driver.codeCells();
    expect(asked[0]).toMatchObject({
      reason: 'flagged',
      codeCells: [],
      rewrites: [
        {
          cellId: cell.id,
          before: FAILING,
          after: FLAGGED_FIX,
          inPlace: true,
          flags: [{ risk: 'environment', line: 2, what: 'os.environ' }]
        }
      ]
    });
    expect(cell.source).toBe(FAILING);
    expect(cell.metadata.attempts).toBeUndefined();
    expect(s.driver.executed).toEqual([cell.id]);
    const after = s.client.planningRequests[2];
    expect(after.behavior_feedback?.last_action_result).toBe('skipped');
    expect(effectsOf(after)).toEqual([
      "Behavior behavior_002 was held before its code ran, because the code reads the environment (line 2: os.environ); the user skipped it: its 2 remaining actions were not applied. The user rejected the rewrite of 'load': the cell keeps its code."
    ]);
  });

  it('rewrites the cell once the user allows it', async () => {
    const { s, asked } = flaggedFix('run');
    expect((await s.runner.start({ task: 't' })).reason).toBe('completed');
    expect(asked).toHaveLength(1);
    const [cell] = s.driver.codeCells();
    expect(cell.source).toBe(FLAGGED_FIX);
    expect(cell.metadata.attempts).toMatchObject([{ code: FAILING }]);
    expect(s.driver.executed).toEqual([cell.id, cell.id]);
  });

  it('holds it with no one to ask: nothing is rewritten', async () => {
    const s = setup({
      planning: [withTemplate(false), plan(false), plan(true)],
      generating: [
        [code(FAILING, 'load'), exec('load')],
        [rewrite('load', FLAGGED_FIX), exec('load')]
      ]
    });
    expect((await s.runner.start({ task: 't' })).reason).toBe('completed');
    expect(s.driver.codeCells().map(c => c.source)).toEqual([FAILING]);
    expect(effectsOf(s.client.planningRequests[2])[0]).toContain(
      'no one could approve it'
    );
  });
});
