/** What an answer's contracts and a step given up change in the run state, decided without a runner. */
import {
  normalizePlanningResponse,
  type PlanningResponse
} from '../../../protocol';
import { op } from '../../state/transaction';
import { answerContracts, stepGivenUp } from '../outputChecks';
import { applied, begunState, TEMPLATE } from '../../__tests__/runnerSetup';

function answered(raw: unknown): PlanningResponse {
  const normalized = normalizePlanningResponse(raw);
  if (!normalized.ok) {
    throw new Error(normalized.error);
  }
  return normalized.response;
}

describe('answerContracts', () => {
  it('keeps the step’s contracts, their names among the step’s expected outputs', () => {
    const state = begunState('t', TEMPLATE);
    applied(state, op.progress('setExpected', 'steps', ['df']));
    applied(
      state,
      ...answerContracts(
        state,
        answered({
          targetAchieved: false,
          context_update: {
            progress_update: {
              level: 'steps',
              focus: 'f',
              current_outputs: { contracts: [{ name: 'mean', kind: 'number' }] }
            }
          }
        })
      )
    );
    expect(state.contracts.step?.contracts.map(c => c.name)).toEqual(['mean']);
    expect(state.progress.outputs('steps').expected).toEqual(['df', 'mean']);
  });

  it('changes nothing for an answer without contracts', () => {
    const state = begunState('t', TEMPLATE);
    expect(answerContracts(state, answered({ targetAchieved: false }))).toEqual(
      []
    );
  });
});

describe('stepGivenUp', () => {
  it('names the step and the planner’s reason, and records the step as given up with it', () => {
    const state = begunState('t', TEMPLATE);
    const { warning, ops } = stepGivenUp(
      state,
      answered({
        targetAchieved: false,
        transition: { target_achieved: false },
        context_update: {
          progress_update: { level: 'steps', focus: 'no price column' }
        }
      })
    );
    expect(warning).toMatchObject({
      id: 'stepGivenUp',
      params: ['Load', 'no price column']
    });
    expect(ops).toEqual([op.progress('skipCurrentStep', 'no price column')]);
  });

  it('says the step ended early when the planner gives no reason', () => {
    const state = begunState('t', TEMPLATE);
    const { warning, ops } = stepGivenUp(
      state,
      answered({ targetAchieved: false })
    );
    expect(warning).toMatchObject({ id: 'stepEndedEarly', params: ['Load'] });
    expect(ops).toEqual([op.progress('skipCurrentStep', null)]);
  });
});
