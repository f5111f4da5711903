/**
 * The `v1` adapter (the public Easy-notebook server): `POST v1/actions` streams one behavior, `POST
 * v1/reflection` says whether the step is done, and the server's only memory is a `state` object that
 * the client stores and sends back (docs/dialects.md#v1). Composed of its parts: what it remembers
 * (`memory.ts`), the answer's reader (`answer.ts`) and the action mapping (`actions.ts`).
 */
import type { GeneratingEvent } from '../../actionStream';
import { answerNeeded, PlannerError } from '../../errors';
import { isRecord, JsonObject } from '../../fields';
import { type ProtocolText, say } from '../../messages';
import type {
  GeneratingRequestInput,
  ObservationInput,
  PlanningRequestInput,
  PlanningResponse
} from '../../schemas';
import type { WorkflowTemplate } from '../../actionSchemas';
import type { IPlannerTransport } from '../../transport';
import {
  answerLineEvents,
  DialectLog,
  httpError,
  IGeneratingOptions,
  invalidAnswer,
  IPlanningOptions,
  isRouteMissingError,
  parseJson,
  readText,
  send
} from '../common';
import type { IDialectAdapter } from '../dialect';
import { IV1ActionContext, v1Warning } from './actions';
import { V1AnswerReader } from './answer';
import { IBeforeBehavior, V1Memory } from './memory';
import {
  detailOf,
  emptyTodo,
  ILocation,
  IV1Options,
  IV1SavedState,
  lastTodo,
  locationOf,
  sectionOf,
  V1_ENTRY_STAGE_ID,
  V1_ENTRY_STEP_ID
} from './state';

/** How a behavior ended without applying anything, so the server's answer to it never ran. */
const NOT_RUN = new Set(['skipped', 'stopped', 'interrupted']);

/** What this adapter saves: the fields of `IV1SavedState`, and the behavior whose answer may go unused. */
interface IV1AdapterSave extends IV1SavedState {
  /** The adapter before the last behavior, while its answer may still be skipped (absent in older saves). */
  beforeBehavior?: IBeforeBehavior | null;
  /** The `effect` to send again with the next request (a skipped behavior's). */
  replayEffect?: JsonObject | null;
}

export class V1Adapter implements IDialectAdapter {
  readonly dialect = 'v1';

  constructor(options: IV1Options) {
    this._transport = options.transport;
    this._entryStageId = options.entryStageId ?? V1_ENTRY_STAGE_ID;
    this._entryStepId = options.entryStepId ?? V1_ENTRY_STEP_ID;
    this._log = options.log ?? (() => undefined);
    this._memory = new V1Memory(options.historyLimit ?? 50, this._log);
    this._actions = { memory: this._memory, log: this._log };
  }

  /** The stored server state (read-only view, for the UI). */
  get serverState(): Readonly<JsonObject> {
    return this._memory.state;
  }

  /**
   * A new run starts at the server's entry step, whatever template the notebook holds: the engine is to
   * ask `planning` first, which answers with the entry template (DIALECTS.md §2.7 item 1).
   */
  get needsPlanningFirst(): boolean {
    return this._memory.entryDue;
  }

  async planning(
    request: PlanningRequestInput,
    options: IPlanningOptions = {}
  ): Promise<PlanningResponse> {
    const where = locationOf(request.observation);
    const feedback = request.behavior_feedback;
    if (
      feedback &&
      where.stageId &&
      where.stepId &&
      this._notRun(feedback as JsonObject, where.stageId, where.stepId)
    ) {
      return this._continue(where.stepId);
    }
    // The last behavior ran (or a step starts): its request will not be sent again.
    this._memory.beforeBehavior = null;
    this._memory.adoptTaskVariables(request.observation);
    if (!feedback) {
      return this._stepStart(where, options);
    }
    return this._reflect(request, where, options);
  }

  async *generating(
    request: GeneratingRequestInput,
    options: IGeneratingOptions = {}
  ): AsyncGenerator<GeneratingEvent, void, undefined> {
    const { stageId, stepId } = locationOf(request.observation);
    const url = this._transport.urlOf('v1/actions');
    if (!stageId || !stepId) {
      throw new PlannerError({
        kind: 'invalid',
        url,
        ...say('notSentWithoutStep', `POST ${url}`)
      });
    }
    this._memory.adoptTaskVariables(request.observation);
    if (this._memory.cutOff(stageId, stepId)) {
      // A Retry after the answer broke off: the actions not received are lost.
      yield v1Warning(this._log, say('v1AnswerCutOff', stepId));
    }
    this._memory.enterStep(stageId, stepId);
    this._memory.missing = null;
    this._memory.entryDue = false;
    const body = {
      stage_id: stageId,
      step_index: this._memory.stepIndex(stageId, stepId),
      state: this._memory.outgoingState(request.observation),
      stream: true
    };
    const before: IBeforeBehavior = {
      saved: this._memory.savedCore(),
      effect: body.state.effect as JsonObject
    };
    const response = await this._sendActions(
      body,
      url,
      stageId,
      stepId,
      options.signal
    );
    this._memory.replayEffect = null;
    this._memory.beforeBehavior = before;
    this._memory.behaviors++;
    const reader = new V1AnswerReader(this._actions, {
      url,
      status: response.status,
      stageId,
      stepId
    });
    let index = 0;
    const numbered = (event: GeneratingEvent): GeneratingEvent =>
      event.kind === 'action' ? { ...event, index: index++ } : event;
    yield* answerLineEvents(response, url, reader, {
      signal: options.signal,
      log: this._log,
      numbered
    });
    yield* reader.end();
  }

  /** Sends a behavior's `v1/actions` request; an error status is an error (nothing ran). */
  private async _sendActions(
    body: {
      stage_id: string;
      step_index: string;
      state: JsonObject;
      stream: boolean;
    },
    url: string,
    stageId: string,
    stepId: string,
    signal?: AbortSignal
  ): Promise<Response> {
    let response = await send(
      this._transport,
      'POST',
      'v1/actions',
      body,
      signal
    );
    if (
      response.status === 400 &&
      !this._memory.bareStepIndex &&
      body.step_index !== sectionOf(stageId, stepId) &&
      /not found in stage/.test(detailOf(await response.clone().text()))
    ) {
      // A server older than the spec's branch knows its steps by their bare section ids only.
      this._memory.bareStepIndex = true;
      this._log('v1: the server knows steps by their bare section ids');
      response = await send(
        this._transport,
        'POST',
        'v1/actions',
        { ...body, step_index: this._memory.stepIndex(stageId, stepId) },
        signal
      );
    }
    if (!response.ok) {
      // Nothing ran: the stored state stands, and a Retry is still the step's first behavior.
      const text = await readText(response);
      throw this._actionsError(url, response.status, text, stageId, stepId);
    }
    return response;
  }

  saveState(): IV1AdapterSave {
    return {
      ...this._memory.savedCore(),
      ...(this._memory.beforeBehavior
        ? { beforeBehavior: structuredClone(this._memory.beforeBehavior) }
        : {}),
      ...(this._memory.replayEffect
        ? { replayEffect: structuredClone(this._memory.replayEffect) }
        : {})
    };
  }

  restoreState(saved: unknown): void {
    this._memory.restore(saved);
  }

  resetState(): void {
    this._memory.reset();
  }

  /**
   * The length of the `v1/actions` body this adapter would send for `request` (the server gets its
   * state and the effects, never the kernel summaries of the seed observation): the engine trims
   * only when that would not fit.
   */
  sentSize(request: { observation: ObservationInput }): number {
    const { stageId, stepId } = locationOf(request.observation);
    const { state } = this._memory.withTaskVariables(request.observation);
    return JSON.stringify({
      stage_id: stageId,
      step_index:
        stageId && stepId ? this._memory.stepIndex(stageId, stepId) : null,
      state: this._memory.outgoingState(request.observation, state),
      stream: true
    }).length;
  }

  // ------------------------------------------------------------------------------------------

  private _stepStart(
    where: ILocation,
    options: IPlanningOptions
  ): PlanningResponse {
    const entryDue = this._memory.entryDue;
    this._memory.entryDue = false;
    if (!where.stageId || (entryDue && where.stageId !== this._entryStageId)) {
      // A template left in the notebook by an earlier run (another planner's, perhaps) names stages
      // this server may not know, and the server has none of that run's variables: a new run begins
      // at its entry step, which sends the server's own template.
      this._log(
        where.stageId
          ? `v1: a new run starts at ${this._entryStageId} / ${this._entryStepId}, not at stage ${where.stageId} of the template in the notebook`
          : `v1: no template yet; starting at ${this._entryStageId} / ${this._entryStepId}`
      );
      return {
        targetAchieved: false,
        context_update: {
          workflow_update: {
            workflowTemplate: this._bootstrapTemplate(),
            provisional: true
          }
        }
      };
    }
    if (!where.stepId) {
      // The header's next section is one of its own chapter's.
      if (this._memory.nextStep && this._memory.nextStepOf === where.stageId) {
        this._log(
          `v1: stage ${where.stageId} has no step list; using the server's next step ${this._memory.nextStep}`
        );
        return {
          targetAchieved: false,
          context_update: {
            stage_steps_update: {
              stage_id: where.stageId,
              steps: [
                { id: this._memory.nextStep, name: this._memory.nextStep }
              ]
            }
          }
        };
      }
      options.onWarning?.(say('v1StageWithoutSteps', where.stageId));
      return { targetAchieved: true };
    }
    if (this._memory.cutOff(where.stageId, where.stepId)) {
      options.onWarning?.(say('v1AnswerCutOff', where.stepId));
    }
    this._memory.enterStep(where.stageId, where.stepId);
    return this._continue(where.stepId);
  }

  /**
   * The last behavior of this step applied nothing (the user skipped it, or it was stopped or
   * interrupted before its first action): every line of its answer carried the server's state at the
   * end of that behavior, which never ran. The adapter goes back to where it was before the request,
   * and the next request sends that state and that `effect` again, so that the server asks for the
   * same work and `effect.current[0]` is still the last exec output, not a note about the skip.
   */
  private _notRun(
    feedback: JsonObject,
    stageId: string,
    stepId: string
  ): boolean {
    const before = this._memory.beforeBehavior;
    const result = feedback.last_action_result;
    if (
      !before ||
      before.saved.stepKey !== `${stageId}/${stepId}` ||
      typeof result !== 'string' ||
      !NOT_RUN.has(result) ||
      (feedback.actions_executed ?? 0) !== 0
    ) {
      return false;
    }
    const behaviors = this._memory.behaviors;
    this._memory.restore(before.saved);
    // A new behavior (its own id), asking the server the same as the one that did not run.
    this._memory.behaviors = behaviors;
    this._memory.replayEffect = before.effect;
    this._log(
      `v1: behavior ${stepId}#b${behaviors} ${result}; its request is sent again with the state before it`
    );
    return true;
  }

  private async _reflect(
    request: PlanningRequestInput,
    where: ILocation,
    options: IPlanningOptions
  ): Promise<PlanningResponse> {
    const url = this._transport.urlOf('v1/reflection');
    if (!where.stageId || !where.stepId) {
      throw new PlannerError({
        kind: 'invalid',
        url,
        ...say('notSentWithoutStep', `POST ${url}`)
      });
    }
    if (this._memory.missing) {
      options.onWarning?.(
        say('v1StepRestarts', where.stepId, this._memory.missing.join(', '))
      );
      this._memory.enterStep(where.stageId, where.stepId);
      return this._continue(where.stepId);
    }
    if (this._memory.cutOff(where.stageId, where.stepId)) {
      // Every line carries the end-of-behavior toDoList: a reflection on a partial answer would judge
      // actions that never arrived (docs/dialects.md#v1, stop and resume).
      options.onWarning?.(say('v1AnswerCutOff', where.stepId));
      this._memory.enterStep(where.stageId, where.stepId);
      return this._continue(where.stepId);
    }
    const body = {
      stage_id: where.stageId,
      step_index: this._memory.stepIndex(where.stageId, where.stepId),
      state: this._memory.outgoingState(request.observation)
    };
    let response: Response;
    let text: string;
    try {
      response = await send(
        this._transport,
        'POST',
        'v1/reflection',
        body,
        options.signal
      );
      text = await readText(response);
    } catch (error) {
      if (
        error instanceof PlannerError &&
        (error.kind === 'network' || error.kind === 'timeout')
      ) {
        return this._decideLocally(where.stepId, error.message, options);
      }
      throw error;
    }
    if (response.status >= 500 || [408, 429].includes(response.status)) {
      return this._decideLocally(
        where.stepId,
        `HTTP ${response.status}: ${detailOf(text) || '(no details)'}`,
        options
      );
    }
    if (!response.ok) {
      const error = httpError(
        'POST',
        url,
        response.status,
        text,
        say(
          'requestFailed',
          `POST ${url}`,
          `HTTP ${response.status}: ${detailOf(text) || '(no details)'}`
        )
      );
      // A route that is missing lets detection run again; any other refusal stops with a Retry,
      // since going on to /generating would run the step's start handler again.
      throw isRouteMissingError(error) ? error : answerNeeded(error);
    }
    const parsed = parseJson(text);
    if (
      !parsed.ok ||
      !isRecord(parsed.value) ||
      typeof parsed.value.targetAchieved !== 'boolean'
    ) {
      throw invalidAnswer(
        url,
        response.status,
        'expected an object with a boolean "targetAchieved"',
        text
      );
    }
    return this._stepEnd(where.stepId, parsed.value.targetAchieved);
  }

  /**
   * `v1/reflection` failed on the way (a gateway, the network): its answer is known without it, since
   * the server only says whether the stored `toDoList` is empty. Falling back to `/generating`
   * instead would run the finished step's start handler again.
   */
  private _decideLocally(
    stepId: string,
    cause: string,
    options: IPlanningOptions
  ): PlanningResponse {
    const done =
      Object.keys(this._memory.state).length > 0 &&
      emptyTodo(this._memory.state);
    options.onWarning?.(
      say(
        'v1ReflectionDecidedLocally',
        `POST ${this._transport.urlOf('v1/reflection')}`,
        cause,
        JSON.stringify(this._memory.state.toDoList ?? [])
      )
    );
    return this._stepEnd(stepId, done);
  }

  private _stepEnd(stepId: string, achieved: boolean): PlanningResponse {
    if (!achieved) {
      return this._continue(stepId);
    }
    const next = this._memory.nextStageId;
    this._memory.nextStageId = null;
    this._memory.behaviors = 0;
    return {
      targetAchieved: true,
      transition: {
        target_achieved: true,
        ...(next ? { next_stage_id: next } : {})
      }
    };
  }

  /** The next behavior of the step: its made-up id and its focus. */
  private _continue(stepId: string): PlanningResponse {
    const iteration = this._memory.behaviors + 1;
    const next = lastTodo(this._memory.state);
    const response: PlanningResponse = {
      targetAchieved: false,
      transition: { continue_behaviors: true, target_achieved: false },
      behavior: { id: `${stepId}#b${iteration}`, iteration }
    };
    if (next) {
      response.context_update = {
        progress_update: { level: 'behaviors', focus: `next: ${next}` }
      };
      response.behavior = { ...response.behavior, target: `next: ${next}` };
    }
    return response;
  }

  private _bootstrapTemplate(): WorkflowTemplate {
    return {
      name: 'Planning',
      stages: [
        {
          id: this._entryStageId,
          name: this._entryStageId,
          steps: [{ id: this._entryStepId, name: this._entryStepId }]
        }
      ]
    };
  }

  private _actionsError(
    url: string,
    status: number,
    text: string,
    stageId: string,
    stepId: string
  ): PlannerError {
    const detail = detailOf(text);
    const sequence = /^Sequence for section (.+) not found/.exec(detail);
    let message: ProtocolText;
    if (status === 404 && sequence) {
      message = say('v1StepFailed', sequence[1]);
    } else if (status === 404 && /^Stage .+ not found/.test(detail)) {
      message = say('v1UnknownStage', `POST ${url}`, stageId, detail);
    } else if (status === 400 && /not found in stage/.test(detail)) {
      message = say(
        'v1UnknownStep',
        `POST ${url}`,
        sectionOf(stageId, stepId),
        detail
      );
    } else {
      message = say(
        'requestFailed',
        `POST ${url}`,
        `HTTP ${status}: ${detail || '(no details)'}`
      );
    }
    return httpError('POST', url, status, text, message);
  }

  private readonly _transport: IPlannerTransport;
  private readonly _entryStageId: string;
  private readonly _entryStepId: string;
  private readonly _log: DialectLog;
  private readonly _memory: V1Memory;
  /** What the action mapping reads and sets. */
  private readonly _actions: IV1ActionContext;
}
