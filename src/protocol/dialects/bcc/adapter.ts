/**
 * The `bcc` adapter (the server Notebook-BCC was written against): a stateless server that reads the
 * whole plan and a sibling `state` on every request, answers `/planning` in XML (stages, steps, behavior)
 * depending on `state.FSM.state`, `/generating` with actions keyed by `type`, and `/reflecting` with a
 * reflection (docs/dialects.md#bcc). Composed of its parts: the state it saves (`state.ts`), its
 * requests (`requests.ts`), the loop (`loop.ts`) and the action mapping (`actions.ts`).
 */
import type { GeneratingEvent } from '../../actionStream';
import type { JsonObject } from '../../fields';
import type { ProtocolText } from '../../messages';
import type {
  ContextUpdate,
  GeneratingRequestInput,
  INotebookSummary,
  PlanningRequestInput,
  PlanningResponse
} from '../../schemas';
import {
  answerLineEvents,
  type DialectLog,
  type IGeneratingOptions,
  type IPlanningOptions
} from '../common';
import { BccAnswerReader, bccActionEvents, IBccActionContext } from './actions';
import { BccLoop } from './loop';
import type { IDialectAdapter, IProbeAnswer } from '../dialect';
import type { IBccOptions } from './plan';
import { BccRequests } from './requests';
import { BccState } from './state';

export class BccAdapter implements IDialectAdapter {
  constructor(options: IBccOptions) {
    this._log = options.log ?? (() => undefined);
    this._requests = new BccRequests(
      { ...options, log: this._log },
      this._state
    );
    this._loop = new BccLoop(this._state, this._requests, this._log);
    const state = this._state;
    this._actions = {
      get headings() {
        return state.headings;
      },
      log: this._log
    };
  }

  readonly dialect = 'bcc';

  /** The IDLE answer that detection already received: used instead of asking again. */
  usePrefetched(answer: IProbeAnswer): void {
    this._requests.prefetched = answer;
  }

  /**
   * The body this adapter sends first, at `IDLE`, for `request`: detection's probe when a server
   * refuses the superset. Call it on an adapter with no plan (a new one).
   */
  idleBody(
    request: PlanningRequestInput,
    notebook?: INotebookSummary
  ): JsonObject {
    return this._requests.idleBody(request, notebook);
  }

  async planning(
    request: PlanningRequestInput,
    options: IPlanningOptions = {}
  ): Promise<PlanningResponse> {
    const { signal } = options;
    this._requests.observe(request.observation, options.notebook ?? null);
    const warn = (warning: ProtocolText) => {
      this._log(warning.message);
      options.onWarning?.(warning);
    };
    const update: ContextUpdate = {};
    const response: PlanningResponse = { targetAchieved: false };
    if (request.behavior_feedback) {
      this._requests.feedback = request.behavior_feedback as JsonObject;
      // At STEP_RUNNING the last behavior's verdict is in already: a Retry after the next behavior
      // could not be planned.
      const finished =
        this._state.plan.fsm.state !== 'STEP_RUNNING' &&
        (await this._loop.afterBehavior(update, response, warn, signal));
      if (finished) {
        return this._state.finish(response, update);
      }
    } else {
      this._requests.feedback = null;
      await this._loop.stepStart(update, warn, signal);
    }
    if (this._state.plan.fsm.state === 'STEP_RUNNING') {
      await this._loop.planBehavior(update, response, signal);
    }
    return this._state.finish(response, update);
  }

  /**
   * The behavior's events: the plan first when no behavior is planned (§3.6), the cells the client
   * writes itself, then the server's answer, read line by line by the one reader (`readLines`).
   */
  async *generating(
    request: GeneratingRequestInput,
    options: IGeneratingOptions = {}
  ): AsyncGenerator<GeneratingEvent, void, undefined> {
    const state = this._state;
    this._requests.observe(request.observation, options.notebook ?? null);
    const url = this._requests.urlOf('generating');
    // The seed's generation start mode does not apply to bcc (§3.6): a step's behavior is planned first.
    const planned = state.plan.behaviors.current
      ? []
      : await this._loop.planBeforeGenerating(options.signal);
    state.transition('BEHAVIOR_RUNNING', state.plan.fsm.last_transition);
    let index = 0;
    const numbered = (event: GeneratingEvent): GeneratingEvent =>
      event.kind === 'action' ? { ...event, index: index++ } : event;
    yield* planned;
    for (const action of state.takePending()) {
      yield* bccActionEvents(this._actions, action, url, true).map(numbered);
    }
    const response = await this._requests.generating(options.signal);
    const reader = new BccAnswerReader(this._actions, url);
    yield* answerLineEvents(response, url, reader, {
      signal: options.signal,
      log: this._log,
      numbered
    });
    yield* reader.end().map(numbered);
    state.transition('BEHAVIOR_COMPLETED', 'COMPLETE_ACTION');
  }

  saveState(): unknown {
    return this._state.save();
  }

  restoreState(saved: unknown): void {
    this.resetState();
    this._state.restore(saved);
  }

  resetState(): void {
    this._state.reset();
    this._requests.reset();
  }

  private readonly _log: DialectLog;
  private readonly _state = new BccState();
  private readonly _requests: BccRequests;
  private readonly _loop: BccLoop;
  /** What the action mapping reads: the headings written so far (read when it maps). */
  private readonly _actions: IBccActionContext;
}
