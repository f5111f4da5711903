/**
 * The run's side of the request bodies (`requests.ts` builds them): what the builders read of the run,
 * the summaries the context filter asks the kernel for, what the builders report, and the failed
 * request kept for `retry()`. What they consume of the run (the kept request, the context filter) goes
 * back through the runner as a transaction.
 */
import type {
  GeneratingRequestInput,
  PlanningRequestInput
} from '../../protocol';
import { msg } from '../messages';
import type { INotebookSummary } from '../ports/driver';
import { errorMessage } from '../actions/registry';
import { op, transaction } from '../state/transaction';
import { redactedPatterns, redactionTest } from '../variables';
import { checksToSend } from '../state/contracts';
import type { RunBoundaries } from './boundaries';
import { contractsLocation } from './outputChecks';
import type { IRunHost } from './host';

/** What the run's side of the requests uses of the runner. */
export type IRequestsHost = Pick<
  IRunHost,
  'state' | 'dispatch' | 'control' | 'driver' | 'settings' | 'client'
>;
import {
  generatingBody,
  type IRequestInputs,
  type IRequestReport,
  planningBody,
  summariesToCompute
} from './requests';
import { RunStopped } from './runControl';

export class RunRequests {
  constructor(
    private readonly _host: IRequestsHost,
    private readonly _boundaries: RunBoundaries
  ) {}

  /** The failed request kept for `retry()`, once. */
  takeRetry(endpoint: 'planning'): PlanningRequestInput | null;
  takeRetry(endpoint: 'generating'): GeneratingRequestInput | null;
  takeRetry(
    endpoint: 'planning' | 'generating'
  ): PlanningRequestInput | GeneratingRequestInput | null {
    const retry = this._host.state.retry;
    if (!retry || retry.endpoint !== endpoint) {
      return null;
    }
    void this._host.dispatch(
      transaction('requests.retryTaken', [op.set({ retry: null })])
    );
    return retry.body;
  }

  /** What the request builders read of the run, now. */
  private _requestInputs(notebook: INotebookSummary): IRequestInputs {
    const { state, client } = this._host;
    const settings = this._host.settings();
    return {
      parts: {
        progress: state.progress,
        effects: state.effects.toJSON(),
        notebook,
        fsm: state.fsm.toContext(),
        legacy: state.legacy,
        outputChecks: checksToSend(state.contracts, contractsLocation(state))
      },
      variables: {
        context: { ...state.contextVariables },
        kernel: { ...state.kernelVariables },
        task: state.taskVariables()
      },
      isRedacted: redactionTest(settings),
      maxLength: settings.maxContextLength,
      service: client
    };
  }

  private _report(reports: IRequestReport[]): void {
    for (const { message, source, effect } of reports) {
      this._boundaries.warn(message, source);
      if (effect !== null) {
        this._boundaries.addEffect(effect);
      }
    }
  }

  planning(notebook: INotebookSummary): PlanningRequestInput {
    const { request, reports } = planningBody(
      this._requestInputs(notebook),
      this._host.state.pendingFeedback
    );
    this._report(reports);
    return request;
  }

  /** Applies (and consumes) the context filter of the last `/planning` answer. */
  async generating(
    notebook: INotebookSummary
  ): Promise<GeneratingRequestInput> {
    const host = this._host;
    // Read before anything below adds an effect: those reach the planner with the next request.
    const inputs = this._requestInputs(notebook);
    const filter = host.state.filter;
    await host.dispatch(
      transaction('requests.filterTaken', [op.set({ filter: null })])
    );
    const { ask, refused } = summariesToCompute(
      filter,
      host.settings().interactive
    );
    if (refused) {
      this._report([refused]);
    }
    let summaries: Record<string, unknown> = {};
    if (ask) {
      try {
        summaries = await host.control.untilStopped(
          host.driver.summarizeVariables(ask, redactedPatterns(host.settings()))
        );
      } catch (error) {
        if (error instanceof RunStopped) {
          throw error;
        }
        this._boundaries.warn(
          msg('summarizeFailed', errorMessage(error)),
          'driver'
        );
      }
    }
    const { request, reports } = generatingBody(inputs, filter, summaries);
    this._report(reports);
    return request;
  }
}
