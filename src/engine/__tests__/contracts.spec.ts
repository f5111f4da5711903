/**
 * Output contracts in a run, the pure part: which contracts are checked when, what the planner is sent,
 * what an answer changes, and how the run ends (docs/protocol.md#output-contracts).
 */
import {
  normalizePlanningResponse,
  type OutputCheck,
  type OutputContract,
  type PlanningResponse,
  type WorkflowTemplate
} from '../../protocol';
import {
  checksToSend,
  contractsAfterAnswer,
  contractsToCheck,
  emptyContracts,
  givenUpReason,
  type IContractsState,
  outcomeSummary,
  readContractsState,
  runOutcome,
  savedContracts,
  uncheckedResults,
  withChecks
} from '../state/contracts';
import { WorkflowProgress } from '../state/progress';

const ANSWER: OutputContract = {
  name: 'answer',
  kind: 'label',
  of_column: 'region',
  describe: 'a region name'
};
const BY_REGION: OutputContract = {
  name: 'by_region',
  kind: 'series',
  index: 'region'
};

const TEMPLATE: WorkflowTemplate = {
  stages: [
    {
      id: 's1',
      name: 'Analysis',
      steps: [
        {
          id: 'sum',
          name: 'Revenue by region',
          output_contracts: [BY_REGION]
        },
        { id: 'pick', name: 'Pick the region' }
      ]
    }
  ]
};

function progressAt(stepId: string): WorkflowProgress {
  const progress = new WorkflowProgress(() => new Date(0));
  progress.setTemplate(TEMPLATE);
  progress.startStage('s1');
  progress.startStep(stepId);
  return progress;
}

function where(progress: WorkflowProgress) {
  return {
    stageId: progress.currentStageId,
    stepId: progress.currentStepId,
    step: progress.currentStep
  };
}

function answered(raw: unknown): PlanningResponse {
  const normalized = normalizePlanningResponse(raw);
  if (!normalized.ok) {
    throw new Error(normalized.error);
  }
  return normalized.response;
}

const OK: OutputCheck = {
  ok: true,
  kind: 'series',
  type: 'Series(4)',
  value: null
};
const ROW: OutputCheck = {
  ok: false,
  kind: 'label',
  type: 'int',
  value: '859',
  reason:
    "`answer` is 859, an int: not a value of df['region'] (a row number where a label was asked?)"
};

describe('contractsToCheck: what is checked after a behavior', () => {
  it('checks the current step’s template contracts and the run’s deliverables', () => {
    const state: IContractsState = {
      ...emptyContracts(),
      run: { deliverables: [ANSWER] }
    };
    expect(contractsToCheck(state, where(progressAt('sum')))).toEqual([
      BY_REGION,
      ANSWER
    ]);
    // Another step has no contracts of its own: only the deliverables.
    expect(contractsToCheck(state, where(progressAt('pick')))).toEqual([
      ANSWER
    ]);
  });

  it('adds the contracts a progress_update sent for this step only, and lets a deliverable win over a step’s', () => {
    const weak: OutputContract = { name: 'answer', kind: 'any' };
    const state: IContractsState = {
      run: { deliverables: [ANSWER] },
      step: { stageId: 's1', stepId: 'pick', contracts: [weak] },
      checks: {}
    };
    expect(contractsToCheck(state, where(progressAt('pick')))).toEqual([
      ANSWER
    ]);
    const other: IContractsState = {
      ...state,
      run: null
    };
    expect(contractsToCheck(other, where(progressAt('pick')))).toEqual([weak]);
    expect(contractsToCheck(other, where(progressAt('sum')))).toEqual([
      BY_REGION
    ]);
  });

  it('checks nothing in a run without contracts', () => {
    expect(
      contractsToCheck(emptyContracts(), where(progressAt('pick')))
    ).toEqual([]);
  });
});

describe('checksToSend: observation.context.output_checks', () => {
  it('sends the latest check of each name checked now, without the run’s own bookkeeping', () => {
    let state: IContractsState = {
      ...emptyContracts(),
      run: { deliverables: [ANSWER] }
    };
    expect(checksToSend(state, where(progressAt('sum')))).toBeNull();
    state = withChecks(state, { by_region: OK, answer: ROW }, 'behavior_001');
    expect(state.checks.answer.behaviorId).toBe('behavior_001');
    expect(checksToSend(state, where(progressAt('sum')))).toEqual({
      by_region: OK,
      answer: ROW
    });
    // In the next step, the earlier step's variable is no longer what the planner is judged on.
    expect(checksToSend(state, where(progressAt('pick')))).toEqual({
      answer: ROW
    });
  });

  it('keeps the latest check of a name, and a bounded number of names', () => {
    let state = withChecks(emptyContracts(), { answer: ROW }, 'behavior_001');
    state = withChecks(
      state,
      { answer: { ...ROW, ok: true, value: 'North', reason: undefined } },
      'behavior_002'
    );
    expect(state.checks.answer).toMatchObject({
      ok: true,
      value: 'North',
      behaviorId: 'behavior_002'
    });
    const many = Object.fromEntries(
      Array.from({ length: 150 }, (_, i) => [`v${i}`, OK])
    );
    const kept = withChecks(state, many, null);
    expect(Object.keys(kept.checks)).toHaveLength(100);
    expect(kept.checks.v149).toBeDefined();
    expect(kept.checks.answer).toBeUndefined();
  });

  it('says why a check could not be made, for each name', () => {
    expect(uncheckedResults([ANSWER], 'the kernel is dead')).toEqual({
      answer: {
        ok: false,
        kind: 'label',
        type: null,
        value: null,
        reason: '`answer` could not be checked: the kernel is dead'
      }
    });
  });
});

describe('contractsAfterAnswer: what a /planning answer changes', () => {
  it('takes the run’s contract, and a later one replaces it', () => {
    const first = contractsAfterAnswer(
      emptyContracts(),
      answered({
        targetAchieved: false,
        context_update: {
          contract: {
            deliverables: [
              { name: 'answer', kind: 'label', ofColumn: 'region' }
            ],
            summary: 'Deliver: `answer`, a region name'
          }
        }
      }),
      { stageId: 's1', stepId: 'pick' }
    );
    expect(first?.run).toEqual({
      deliverables: [{ name: 'answer', kind: 'label', of_column: 'region' }],
      summary: 'Deliver: `answer`, a region name'
    });
    const second = contractsAfterAnswer(
      first!,
      answered({
        targetAchieved: false,
        context_update: { contract: { deliverables: ['total'] } }
      }),
      { stageId: 's1', stepId: 'pick' }
    );
    expect(second?.run).toEqual({
      deliverables: [{ name: 'total', kind: 'any' }]
    });
  });

  it('joins a progress_update’s contracts to the current step’s, and starts afresh in another step', () => {
    const update = (name: string) =>
      answered({
        targetAchieved: false,
        context_update: {
          progress_update: {
            level: 'behaviors',
            focus: 'f',
            current_outputs: { contracts: [{ name, kind: 'number' }] }
          }
        }
      });
    const first = contractsAfterAnswer(emptyContracts(), update('mean'), {
      stageId: 's1',
      stepId: 'sum'
    });
    const second = contractsAfterAnswer(first!, update('median'), {
      stageId: 's1',
      stepId: 'sum'
    });
    expect(second?.step?.contracts.map(c => c.name)).toEqual([
      'mean',
      'median'
    ]);
    const elsewhere = contractsAfterAnswer(second!, update('share'), {
      stageId: 's1',
      stepId: 'pick'
    });
    expect(elsewhere?.step).toEqual({
      stageId: 's1',
      stepId: 'pick',
      contracts: [{ name: 'share', kind: 'number' }]
    });
  });

  it('changes nothing for an answer without contracts', () => {
    expect(
      contractsAfterAnswer(
        emptyContracts(),
        answered({ targetAchieved: true }),
        {
          stageId: 's1',
          stepId: 'sum'
        }
      )
    ).toBeNull();
  });
});

describe('runOutcome: how the run ends', () => {
  it('is ok when no step was given up and every deliverable checks ok', () => {
    const progress = progressAt('pick').toJSON();
    const state = withChecks(
      { ...emptyContracts(), run: { deliverables: [ANSWER] } },
      { answer: { ok: true, kind: 'label', type: 'str', value: 'North' } },
      null
    );
    const outcome = runOutcome(progress, state);
    expect(outcome).toMatchObject({
      ok: true,
      givenUp: [],
      summary: 'Completed',
      deliverables: [
        {
          name: 'answer',
          describe: 'a region name',
          status: 'delivered',
          value: 'North',
          reason: null,
          // What the check held it to, so the panel can say what was checked (not that it is right).
          terms: { of_column: 'region', frame: 'df' }
        }
      ]
    });
  });

  it('names the steps given up, with the planner’s reason, and the deliverables not delivered', () => {
    const progress = progressAt('sum');
    progress.skipCurrentStep('The column `revenue` does not exist; giving up.');
    const state = withChecks(
      { ...emptyContracts(), run: { deliverables: [ANSWER] } },
      { answer: ROW },
      'behavior_002'
    );
    const outcome = runOutcome(progress.toJSON(), state);
    expect(outcome.ok).toBe(false);
    expect(outcome.givenUp).toEqual([
      {
        stageId: 's1',
        stepId: 'sum',
        name: 'Revenue by region',
        reason: 'The column `revenue` does not exist; giving up.'
      }
    ]);
    expect(outcome.deliverables[0]).toMatchObject({
      status: 'failed',
      value: '859',
      reason: ROW.reason
    });
    expect(outcome.summary).toBe(
      'Finished with problems: 1 step given up; `answer` not delivered'
    );
  });

  it('counts a deliverable never checked as not delivered', () => {
    const outcome = runOutcome(progressAt('pick').toJSON(), {
      ...emptyContracts(),
      run: { deliverables: [ANSWER, { name: 'total', kind: 'number' }] }
    });
    expect(outcome.deliverables.map(d => d.status)).toEqual([
      'unchecked',
      'unchecked'
    ]);
    expect(outcome.summary).toBe(
      'Finished with problems: `answer`, `total` not delivered'
    );
  });

  it('forgets a step given up once it is run again (Redo from it)', () => {
    const progress = progressAt('sum');
    progress.skipCurrentStep(null);
    expect(
      runOutcome(progress.toJSON(), emptyContracts()).givenUp
    ).toHaveLength(1);
    progress.startStep('sum');
    expect(runOutcome(progress.toJSON(), emptyContracts()).ok).toBe(true);
  });

  it('says several steps in the plural', () => {
    expect(
      outcomeSummary(
        [
          { stageId: 's', stepId: 'a', name: 'A', reason: null },
          { stageId: 's', stepId: 'b', name: 'B', reason: null }
        ],
        []
      )
    ).toBe('Finished with problems: 2 steps given up');
  });
});

describe('givenUpReason', () => {
  it('is the focus text of the answer that gave the step up', () => {
    expect(
      givenUpReason(
        answered({
          targetAchieved: false,
          transition: { continue_behaviors: false },
          context_update: {
            progress_update: [
              { level: 'stages', focus: 'stage text' },
              {
                level: 'steps',
                focus: '  No date column: cannot group by month.  '
              }
            ]
          }
        })
      )
    ).toBe('No date column: cannot group by month.');
    expect(givenUpReason(answered({ targetAchieved: false }))).toBeNull();
  });
});

describe('the saved contracts', () => {
  it('read back what can be read and leave the rest out', () => {
    const state = withChecks(
      {
        run: { deliverables: [ANSWER] },
        step: { stageId: 's1', stepId: 'sum', contracts: [BY_REGION] },
        checks: {}
      },
      { answer: ROW },
      'behavior_003'
    );
    expect(readContractsState(JSON.parse(JSON.stringify(state)))).toEqual(
      state
    );
    expect(
      readContractsState({
        run: { deliverables: 'answer' },
        step: { contracts: [{ name: 'not an identifier!' }, BY_REGION] },
        checks: { answer: { ok: 'yes' }, total: OK }
      })
    ).toEqual({
      run: null,
      step: { stageId: null, stepId: null, contracts: [BY_REGION] },
      checks: { total: { ...OK, behaviorId: null } }
    });
    expect(readContractsState(undefined)).toEqual(emptyContracts());
  });

  it('never keep the value of a secret-looking name', () => {
    const state = withChecks(
      emptyContracts(),
      {
        api_token: { ok: true, kind: 'text', type: 'str', value: 'sk-123' },
        answer: { ok: true, kind: 'label', type: 'str', value: 'North' }
      },
      null
    );
    const saved = savedContracts(state, name => name.endsWith('_token'));
    expect(saved.checks.api_token.value).toBeNull();
    expect(saved.checks.answer.value).toBe('North');
  });
});
