/**
 * The run's output contracts checked in the kernel (docs/protocol.md#output-contracts): after each
 * behavior (the current step's contracts and the run's deliverables) and once more at the end (the
 * deliverables), and what a `/planning` answer changes in them. What to check and how the run ends
 * are pure (`state/contracts.ts`); what they change in the run state is decided by the functions
 * below and dispatched as transactions.
 */
import type { PlanningResponse } from '../../protocol';
import { errorMessage } from '../actions/registry';
import {
  contractsAfterAnswer,
  givenUpReason,
  contractsToCheck,
  type IContractsLocation,
  type IRunOutcome,
  runOutcome,
  uncheckedResults,
  withChecks
} from '../state/contracts';
import { type IMessage, msg } from '../messages';
import { union } from '../state/progressState';
import type { RunStateView } from '../state/runState';
import { op, type RunOp, transaction } from '../state/transaction';
import { redactedPatterns } from '../variables';
import type { IRunHost } from './host';
import { RunStopped } from './runControl';

/** What the checks use of the runner. */
export type IOutputChecksHost = Pick<
  IRunHost,
  'state' | 'dispatch' | 'control' | 'driver' | 'settings'
>;

/** Where the run is, as the contracts see it. */
export function contractsLocation(state: RunStateView): IContractsLocation {
  const { progress } = state;
  return {
    stageId: progress.currentStageId,
    stepId: progress.currentStepId,
    step: progress.currentStep
  };
}

/**
 * A `/planning` answer's contracts applied: the run's contract, and the current step's (their names
 * become expected outputs of the step).
 */
export function answerContracts(
  state: RunStateView,
  answer: PlanningResponse
): RunOp[] {
  const before = state.contracts;
  const contracts = contractsAfterAnswer(
    before,
    answer,
    contractsLocation(state)
  );
  if (!contracts) {
    return [];
  }
  const step = contracts.step;
  return [
    op.set({ contracts }),
    ...(step && step !== before.step
      ? [
          op.progress(
            'setExpected',
            'steps',
            union(
              state.progress.outputs('steps').expected,
              step.contracts.map(c => c.name)
            )
          )
        ]
      : [])
  ];
}

/**
 * The current step ends without reaching its target: what the user is told (the step by its name,
 * with the answer's reason), and the step recorded as given up for the run's outcome.
 */
export function stepGivenUp(
  state: RunStateView,
  answer: PlanningResponse
): { warning: IMessage; ops: RunOp[] } {
  const { progress } = state;
  const step =
    progress.currentStep?.name ?? progress.currentStepId ?? '(unnamed)';
  const reason = givenUpReason(answer);
  return {
    warning: reason
      ? msg('stepGivenUp', step, reason)
      : msg('stepEndedEarly', step),
    ops: [op.progress('skipCurrentStep', reason)]
  };
}

export class RunOutputChecks {
  constructor(
    private readonly _host: IOutputChecksHost,
    private readonly _warn: (message: IMessage) => void
  ) {}

  /** Code ran in the kernel (in interactive mode: code the user approved). */
  codeRan(): void {
    this._codeRan = true;
  }

  /**
   * After behavior `behaviorId`: the current step's contracts and the deliverables. In interactive
   * mode nothing is evaluated in the kernel for the planner unless approved code ran since the last check.
   */
  async afterBehavior(behaviorId: string | null): Promise<void> {
    const { state, settings } = this._host;
    const ran = this._codeRan;
    this._codeRan = false;
    if (settings().interactive && !ran) {
      return;
    }
    await this._check(
      contractsToCheck(state.contracts, contractsLocation(state)),
      behaviorId
    );
  }

  /** At the end of the run: the deliverables checked once more; how the run ends. */
  async atEnd(): Promise<IRunOutcome> {
    const { state } = this._host;
    await this._check(state.contracts.run?.deliverables ?? [], null);
    return runOutcome(state.progress.toJSON(), state.contracts);
  }

  private async _check(
    contracts: Parameters<typeof uncheckedResults>[0],
    behaviorId: string | null
  ): Promise<void> {
    if (contracts.length === 0) {
      return;
    }
    const { state, control, driver, settings } = this._host;
    let results;
    try {
      results = await control.untilStopped(
        driver.checkOutputs(contracts, redactedPatterns(settings()))
      );
    } catch (error) {
      if (error instanceof RunStopped) {
        throw error;
      }
      this._warn(msg('outputsNotChecked', errorMessage(error)));
      results = uncheckedResults(contracts, errorMessage(error));
    }
    await this._host.dispatch(
      transaction(
        'outputs.checked',
        [
          op.set({
            contracts: withChecks(state.contracts, results, behaviorId)
          })
        ],
        { show: true }
      )
    );
  }

  private _codeRan = false;
}
