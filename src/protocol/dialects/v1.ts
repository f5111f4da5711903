/**
 * The `v1` dialect (the public Easy-notebook server): `POST v1/actions` streams one behavior, `POST
 * v1/reflection` says whether the step is done, and the server's only memory is a `state` object that
 * the client stores and sends back (docs/dialects.md#v1).
 */
import { answerNeeded, PlannerError } from '../errors';
import { overlongLineWarning } from '../actionStream';
import type { GeneratingEvent } from '../actionStream';
import { msg, type ProtocolText, say } from '../messages';
import type { IGeneratingOptions, IPlanningOptions } from './common';
import { isRecord, JsonObject, omit } from '../fields';
import { normalizeAction, normalizeWorkflowTemplate } from '../normalize';
import type {
  GeneratingRequestInput,
  ObservationInput,
  PlanningRequestInput,
  PlanningResponse,
  WorkflowTemplate
} from '../schemas';
import type { IPlannerTransport } from '../transport';
import {
  asString,
  DialectLog,
  httpError,
  IDialectPlannerService,
  invalidAnswer,
  isRouteMissingError,
  parseJson,
  readLines,
  readText,
  send
} from './common';
import {
  describeData,
  detailOf,
  dropNulls,
  emptyTodo,
  fullStepIndex,
  ILocation,
  isMissing,
  IV1Options,
  IV1SavedState,
  lastTodo,
  locationOf,
  missingVariableNames,
  NO_DATA_DESCRIPTION,
  NOTICE_PREFIXES,
  problemName,
  sectionOf,
  TASK_VARIABLES,
  V1_ENTRY_STAGE_ID,
  V1_ENTRY_STEP_ID
} from './v1State';

export {
  fullStepIndex,
  missingVariableNames,
  V1_ENTRY_STAGE_ID,
  V1_ENTRY_STEP_ID
} from './v1State';
export type { IV1Options, IV1SavedState } from './v1State';

/**
 * Items of the engine's effects that are not exec outputs: its warnings and notices, and the note that
 * says the request was trimmed to fit (docs/dialects.md#v1-stream). The server reads `effect.current[0]`
 * as the last exec's output and saves it as a variable, so none of them is sent.
 */
const NOT_OUTPUTS = [...NOTICE_PREFIXES, '[context trimmed:'];

/** How a behavior ended without applying anything, so the server's answer to it never ran. */
const NOT_RUN = new Set(['skipped', 'stopped', 'interrupted']);

/** The adapter before a behavior's request, and the `effect` sent with it. */
interface IBeforeBehavior {
  saved: IV1SavedState;
  effect: JsonObject;
}

/** What this adapter saves: the fields of `IV1SavedState`, and the behavior whose answer may go unused. */
interface IV1AdapterSave extends IV1SavedState {
  /** The adapter before the last behavior, while its answer may still be skipped (absent in older saves). */
  beforeBehavior?: IBeforeBehavior | null;
  /** The `effect` to send again with the next request (a skipped behavior's). */
  replayEffect?: JsonObject | null;
}

export class V1PlannerService implements IDialectPlannerService {
  readonly dialect = 'v1';

  constructor(options: IV1Options) {
    this._transport = options.transport;
    this._entryStageId = options.entryStageId ?? V1_ENTRY_STAGE_ID;
    this._entryStepId = options.entryStepId ?? V1_ENTRY_STEP_ID;
    this._historyLimit = options.historyLimit ?? 50;
    this._log = options.log ?? (() => undefined);
  }

  /** The stored server state (read-only view, for the UI). */
  get serverState(): Readonly<JsonObject> {
    return this._state;
  }

  /**
   * A new run starts at the server's entry step, whatever template the notebook holds: the engine is to
   * ask `planning` first, which answers with the entry template (DIALECTS.md §2.7 item 1).
   */
  get needsPlanningFirst(): boolean {
    return this._entryDue;
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
    this._beforeBehavior = null;
    this._adoptTaskVariables(request.observation);
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
    this._adoptTaskVariables(request.observation);
    if (this._cutOff(stageId, stepId)) {
      // A Retry after the answer broke off: the actions not received are lost.
      yield this._warning(say('v1AnswerCutOff', stepId));
    }
    this._enterStep(stageId, stepId);
    this._missing = null;
    this._entryDue = false;
    const body = {
      stage_id: stageId,
      step_index: this._stepIndex(stageId, stepId),
      state: this._outgoingState(request.observation),
      stream: true
    };
    const before: IBeforeBehavior = {
      saved: this._savedCore(),
      effect: body.state.effect as JsonObject
    };
    let response = await send(
      this._transport,
      'POST',
      'v1/actions',
      body,
      options.signal
    );
    if (
      response.status === 400 &&
      !this._bareStepIndex &&
      body.step_index !== sectionOf(stageId, stepId) &&
      /not found in stage/.test(detailOf(await response.clone().text()))
    ) {
      // A server older than the spec's branch knows its steps by their bare section ids only.
      this._bareStepIndex = true;
      this._log('v1: the server knows steps by their bare section ids');
      response = await send(
        this._transport,
        'POST',
        'v1/actions',
        { ...body, step_index: this._stepIndex(stageId, stepId) },
        options.signal
      );
    }
    if (!response.ok) {
      // Nothing ran: the stored state stands, and a Retry is still the step's first behavior.
      const text = await readText(response);
      throw this._actionsError(url, response.status, text, stageId, stepId);
    }
    this._replayEffect = null;
    this._beforeBehavior = before;
    this._behaviors++;
    // The missing-variables answer comes instead of the step's first actions.
    const first = !this._stepActed;
    let index = 0;
    let onlyAdds = true;
    let lastContent: string | null = null;
    let sawAction = false;
    /** Whether a line carried the server's state or steps: else the server did not move. */
    let moved = false;
    let reportedError: string | null = null;
    for await (const line of readLines(response, options.signal)) {
      if (typeof line !== 'string') {
        const warning = overlongLineWarning(`POST ${url}`, line, line.head);
        this._log(warning.message);
        yield warning;
        continue;
      }
      const parsed = parseJson(line);
      if (!parsed.ok || !isRecord(parsed.value)) {
        yield this._warning(
          say(
            'lineProblem',
            `POST ${url}`,
            msg('malformedLine'),
            line.slice(0, 200)
          )
        );
        continue;
      }
      const message = parsed.value;
      if (isRecord(message.header)) {
        this._nextStep = asString(message.header.next_step) ?? null;
        this._nextStepOf = asString(message.header.stage_id) ?? stageId;
        this._log(
          `v1 header: stage ${String(message.header.stage_id)}, next step ${this._nextStep ?? '(none)'}`
        );
        continue;
      }
      if (!isRecord(message.action)) {
        yield this._notice(
          say(
            'lineProblem',
            `POST ${url}`,
            msg('lineWithoutActionIgnored'),
            line.slice(0, 200)
          )
        );
        continue;
      }
      const raw = message.action;
      if (!sawAction) {
        // From the first action on, an answer that breaks off leaves the step half done.
        this._streamComplete = false;
        this._stepActed = true;
      }
      if (isRecord(raw.state)) {
        this._state = omit(raw.state, ['effect']);
        moved = true;
      }
      if (raw.action === 'error' || raw.action === 'text') {
        // The server's fallbacks when a handler raised: "Error executing action: …".
        reportedError ??=
          asString(raw.error_message) ??
          asString(raw.content) ??
          'no details returned';
      } else if (raw.action === 'update_stage_steps') {
        moved = true;
      }
      sawAction = true;
      if (raw.action === 'add') {
        lastContent = asString(raw.content) ?? lastContent;
      } else {
        onlyAdds = false;
      }
      for (const event of this._mapAction(raw, url)) {
        yield event.kind === 'action' ? { ...event, index: index++ } : event;
      }
    }
    this._streamComplete = true;
    if (!moved) {
      // The server's memory did not move (a handler raised, or the last toDoList entry matches no
      // handler): a reflection would complete the step with nothing run, or ask the same again forever.
      throw new PlannerError({
        kind: 'invalid',
        url,
        status: response.status,
        ...(reportedError === null
          ? say('v1NoAction', sectionOf(stageId, stepId))
          : say('plannerReportedError', reportedError))
      });
    }
    // The server says what a step or one of its handlers lacks in a text ending with the list of
    // names, whatever its words (`缺少必需变量: ['problem_name']`, `Missing: ['user_goal']`; spec
    // §2.7 item 8); names its state has are not what it lacks.
    const said =
      sawAction && onlyAdds && lastContent
        ? missingVariableNames(lastContent)
        : null;
    const stored = isRecord(this._state.variables) ? this._state.variables : {};
    const names =
      said && said.every(name => isMissing(stored[name])) ? said : null;
    if (names && !first) {
      // A later handler: the server dropped its event and the chain goes on (spec §2.6).
      yield this._warning(
        say('v1HandlerSkipped', sectionOf(stageId, stepId), names.join(', '))
      );
    } else if (names && emptyTodo(this._state)) {
      // The step's first answer names what it lacks instead of running: it did not run.
      this._missing = names;
      names.forEach(name => this._asked.add(name));
      const section = sectionOf(stageId, stepId);
      throw new PlannerError({
        kind: 'invalid',
        url,
        status: response.status,
        ...say('v1VariablesMissing', section, names.join(', ')),
        missingVariables: names
      });
    }
  }

  saveState(): IV1AdapterSave {
    return {
      ...this._savedCore(),
      ...(this._beforeBehavior
        ? { beforeBehavior: structuredClone(this._beforeBehavior) }
        : {}),
      ...(this._replayEffect
        ? { replayEffect: structuredClone(this._replayEffect) }
        : {})
    };
  }

  /** The saved fields of the server's memory and the step (never a snapshot of a behavior before). */
  private _savedCore(): IV1SavedState {
    return {
      dialect: 'v1',
      state: structuredClone(this._state),
      nextStep: this._nextStep,
      nextStepOf: this._nextStepOf,
      streamComplete: this._streamComplete,
      stepKey: this._stepKey,
      behaviors: this._behaviors,
      stepActed: this._stepActed,
      nextStageId: this._nextStageId,
      askedVariables: [...this._asked]
    };
  }

  restoreState(saved: unknown): void {
    this.resetState();
    if (!isRecord(saved) || !isRecord(saved.state)) {
      return;
    }
    this._state = structuredClone(saved.state);
    this._nextStep = asString(saved.nextStep) ?? null;
    this._nextStepOf = asString(saved.nextStepOf) ?? null;
    this._streamComplete = saved.streamComplete !== false;
    this._stepKey = asString(saved.stepKey) ?? null;
    this._behaviors = typeof saved.behaviors === 'number' ? saved.behaviors : 0;
    this._stepActed =
      typeof saved.stepActed === 'boolean'
        ? saved.stepActed
        : this._behaviors > 0;
    this._nextStageId = asString(saved.nextStageId) ?? null;
    this._asked = new Set(
      Array.isArray(saved.askedVariables)
        ? saved.askedVariables.filter(
            (name): name is string => typeof name === 'string'
          )
        : []
    );
    // A resumed run goes on in the template it was saved with.
    this._entryDue = false;
    const before = saved.beforeBehavior;
    this._beforeBehavior =
      isRecord(before) && isRecord(before.saved) && isRecord(before.effect)
        ? (structuredClone(before) as unknown as IBeforeBehavior)
        : null;
    this._replayEffect = isRecord(saved.replayEffect)
      ? structuredClone(saved.replayEffect)
      : null;
  }

  resetState(): void {
    this._state = {};
    this._nextStep = null;
    this._nextStepOf = null;
    this._streamComplete = true;
    this._stepKey = null;
    this._behaviors = 0;
    this._stepActed = false;
    this._nextStageId = null;
    this._missing = null;
    this._asked = new Set();
    this._entryDue = true;
    this._beforeBehavior = null;
    this._replayEffect = null;
  }

  /**
   * The length of the `v1/actions` body this adapter would send for `request` (the server gets its
   * state and the effects, never the kernel summaries of the seed observation): the engine trims
   * only when that would not fit.
   */
  sentSize(request: { observation: ObservationInput }): number {
    const { stageId, stepId } = locationOf(request.observation);
    const { state } = this._withTaskVariables(request.observation);
    return JSON.stringify({
      stage_id: stageId,
      step_index: stageId && stepId ? this._stepIndex(stageId, stepId) : null,
      state: this._outgoingState(request.observation, state),
      stream: true
    }).length;
  }

  // ------------------------------------------------------------------------------------------

  private _stepStart(
    where: ILocation,
    options: IPlanningOptions
  ): PlanningResponse {
    const entryDue = this._entryDue;
    this._entryDue = false;
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
      if (this._nextStep && this._nextStepOf === where.stageId) {
        this._log(
          `v1: stage ${where.stageId} has no step list; using the server's next step ${this._nextStep}`
        );
        return {
          targetAchieved: false,
          context_update: {
            stage_steps_update: {
              stage_id: where.stageId,
              steps: [{ id: this._nextStep, name: this._nextStep }]
            }
          }
        };
      }
      options.onWarning?.(say('v1StageWithoutSteps', where.stageId));
      return { targetAchieved: true };
    }
    if (this._cutOff(where.stageId, where.stepId)) {
      options.onWarning?.(say('v1AnswerCutOff', where.stepId));
    }
    this._enterStep(where.stageId, where.stepId);
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
    const before = this._beforeBehavior;
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
    const behaviors = this._behaviors;
    this.restoreState(before.saved);
    // A new behavior (its own id), asking the server the same as the one that did not run.
    this._behaviors = behaviors;
    this._replayEffect = before.effect;
    this._log(
      `v1: behavior ${stepId}#b${behaviors} ${result}; its request is sent again with the state before it`
    );
    return true;
  }

  /** The step's last answer broke off (Stop, a lost connection, a reload): its end state cannot be trusted. */
  private _cutOff(stageId: string, stepId: string): boolean {
    return !this._streamComplete && this._stepKey === `${stageId}/${stepId}`;
  }

  /** Starting, abandoning or resuming a step: `toDoList` is `[]` unless the same step resumes intact. */
  private _enterStep(stageId: string, stepId: string): void {
    const key = `${stageId}/${stepId}`;
    const resumes = key === this._stepKey && this._streamComplete;
    if (!resumes || this._missing) {
      if (!emptyTodo(this._state)) {
        this._log(
          `v1: toDoList ${JSON.stringify(this._state.toDoList)} reset at the start of step ${stepId}`
        );
      }
      this._state = { ...this._state, toDoList: [] };
      this._behaviors = 0;
      this._stepActed = false;
      this._streamComplete = true;
      this._missing = null;
    }
    this._stepKey = key;
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
    if (this._missing) {
      options.onWarning?.(
        say('v1StepRestarts', where.stepId, this._missing.join(', '))
      );
      this._enterStep(where.stageId, where.stepId);
      return this._continue(where.stepId);
    }
    if (this._cutOff(where.stageId, where.stepId)) {
      // Every line carries the end-of-behavior toDoList: a reflection on a partial answer would judge
      // actions that never arrived (docs/dialects.md#v1, stop and resume).
      options.onWarning?.(say('v1AnswerCutOff', where.stepId));
      this._enterStep(where.stageId, where.stepId);
      return this._continue(where.stepId);
    }
    const body = {
      stage_id: where.stageId,
      step_index: this._stepIndex(where.stageId, where.stepId),
      state: this._outgoingState(request.observation)
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
    const done = Object.keys(this._state).length > 0 && emptyTodo(this._state);
    options.onWarning?.(
      say(
        'v1ReflectionDecidedLocally',
        `POST ${this._transport.urlOf('v1/reflection')}`,
        cause,
        JSON.stringify(this._state.toDoList ?? [])
      )
    );
    return this._stepEnd(stepId, done);
  }

  private _stepEnd(stepId: string, achieved: boolean): PlanningResponse {
    if (!achieved) {
      return this._continue(stepId);
    }
    const next = this._nextStageId;
    this._nextStageId = null;
    this._behaviors = 0;
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
    const iteration = this._behaviors + 1;
    const next = lastTodo(this._state);
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

  /** Task variables from the engine's context fill names the server's state lacks (never kernel summaries). */
  private _adoptTaskVariables(observation: ObservationInput | undefined): void {
    const { state, described } = this._withTaskVariables(observation);
    this._state = state;
    if (described) {
      this._describedData = described;
    }
  }

  /** The stored state with the task variables it lacks (the adapter's state is left as it is). */
  private _withTaskVariables(observation: ObservationInput | undefined): {
    state: JsonObject;
    described: string | null;
  } {
    const source = observation?.context?.variables ?? {};
    const variables: JsonObject = isRecord(this._state.variables)
      ? { ...this._state.variables }
      : {};
    const task: JsonObject = {};
    for (const name of [...TASK_VARIABLES, ...this._asked]) {
      task[name] = source[name];
    }
    task.user_goal ??= source.problem_description;
    if (typeof task.user_goal === 'string') {
      task.problem_name ??= problemName(task.user_goal);
    }
    for (const [name, value] of Object.entries(task)) {
      if (isMissing(variables[name]) && !isMissing(value)) {
        variables[name] = value;
      }
    }
    // The entry step and chapter 2 need `context_description` ("file, rows x columns"): made from
    // what the run knows, and kept up to date (the shape once the data is loaded) while nobody else
    // set it.
    let described: string | null = describeData(source) ?? NO_DATA_DESCRIPTION;
    if (
      isMissing(variables.context_description) ||
      variables.context_description === this._describedData
    ) {
      variables.context_description = described;
    } else {
      described = null;
    }
    const state: JsonObject = { ...this._state, variables };
    if (!Array.isArray(state.toDoList)) {
      state.toDoList = [];
    }
    return { state, described };
  }

  /** The stored state with the client-owned `effect` (the engine's effects without its notices). */
  private _outgoingState(
    observation: ObservationInput | undefined,
    stored: JsonObject = this._state
  ): JsonObject {
    if (this._replayEffect) {
      return { ...stored, effect: structuredClone(this._replayEffect) };
    }
    const effects = observation?.context?.effects;
    const keep = (items: readonly string[] | undefined) =>
      (items ?? []).filter(
        item => !NOT_OUTPUTS.some(prefix => item.startsWith(prefix))
      );
    const history = keep(effects?.history);
    return {
      ...stored,
      effect: {
        current: keep(effects?.current),
        history: history.slice(Math.max(0, history.length - this._historyLimit))
      }
    };
  }

  private _mapAction(raw: JsonObject, url: string): GeneratingEvent[] {
    const fields = dropNulls(omit(raw, ['state']));
    const type = asString(fields.action) ?? '';
    const adds = (content: string): JsonObject[] => [
      { action: 'add', shot_type: 'dialogue', content }
    ];
    let actions: JsonObject[];
    switch (type) {
      case 'add':
        if (fields.delay !== undefined) {
          this._log(`v1: add delay ${String(fields.delay)} ms ignored`);
        }
        actions = [omit(fields, ['delay'])];
        break;
      case 'exec':
        if (fields.auto_debug !== undefined) {
          this._log(`v1: exec auto_debug ignored`);
        }
        actions = [{ ...omit(fields, ['auto_debug']), need_output: true }];
        break;
      case 'set_effect_as_thinking':
        actions = [
          {
            action: 'set_effect_as_thinking',
            thinking_text: asString(fields.thinkingText) ?? ''
          }
        ];
        break;
      case 'next_event':
        this._log(
          `v1: next_event (next: ${lastTodo(this._state) ?? 'end of step'})`
        );
        return [];
      case 'update_workflow':
        actions = this._workflowAction(fields);
        break;
      case 'update_stage_steps':
        if (fields.next_step_id !== undefined) {
          this._log(
            `v1: update_stage_steps next_step_id ${String(fields.next_step_id)} ignored (it names the running step)`
          );
        }
        actions = [omit(fields, ['next_step_id'])];
        break;
      case 'error': {
        const text =
          asString(fields.error_message) ??
          asString(fields.content) ??
          'the planner reported an error';
        return [
          this._warning(
            say(
              'requestProblem',
              `POST ${url}`,
              msg('plannerErrorAction', text)
            )
          )
        ];
      }
      case 'text':
        this._log(`v1 text: ${asString(fields.content) ?? ''}`);
        return [];
      case 'command_call': {
        const command = asString(fields.command) ?? '';
        this._log(`v1: command not executed: ${command}`);
        actions = adds(`(planner requested: \`${command}\`)`);
        break;
      }
      case 'comunicate_with_agent':
        actions = adds(
          `**${asString(fields.agent_name) ?? 'agent'}:** ${asString(fields.content) ?? ''}`
        );
        break;
      default:
        actions = [fields];
    }
    const events: GeneratingEvent[] = [];
    const line = JSON.stringify(raw).slice(0, 500);
    for (const action of actions) {
      const normalized = normalizeAction(action);
      if (!normalized.ok) {
        events.push(
          this._warning(
            say(
              'requestProblem',
              `POST ${url}`,
              msg('actionIgnored', normalized.error)
            )
          )
        );
        continue;
      }
      for (const warning of normalized.warnings) {
        events.push(
          this._warning(say('requestProblem', `POST ${url}`, warning))
        );
      }
      for (const item of normalized.actions) {
        events.push({ kind: 'action', action: item, index: 0, line });
      }
    }
    return events;
  }

  private _workflowAction(fields: JsonObject): JsonObject[] {
    const updated = isRecord(fields.updated_workflow)
      ? fields.updated_workflow
      : {};
    const raw =
      updated.workflowTemplate ?? updated.workflow_template ?? updated;
    const next = asString(updated.nextStageId ?? updated.next_stage_id);
    const template = normalizeWorkflowTemplate(raw);
    if (!template.ok) {
      return [{ action: 'update_workflow' }];
    }
    this._nextStageId = next ?? null;
    if (next) {
      this._log(`v1: update_workflow names the next stage ${next}`);
    }
    return [{ action: 'update_workflow', updated_workflow: template.template }];
  }

  /** The full `<stage>_<section>` id (the spec's form), or the bare section id for a server that knows only that. */
  private _stepIndex(stageId: string, stepId: string): string {
    return this._bareStepIndex
      ? sectionOf(stageId, stepId)
      : fullStepIndex(stageId, stepId);
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

  private _warning(warning: ProtocolText): GeneratingEvent {
    this._log(warning.message);
    return { kind: 'warning', ...warning };
  }

  /** Shown and logged, never an effect: `effect.current[0]` stays the exec output. */
  private _notice(notice: ProtocolText): GeneratingEvent {
    this._log(notice.message);
    return { kind: 'notice', ...notice };
  }

  private readonly _transport: IPlannerTransport;
  private readonly _entryStageId: string;
  private readonly _entryStepId: string;
  private readonly _historyLimit: number;
  private readonly _log: DialectLog;
  private _state: JsonObject = {};
  private _nextStep: string | null = null;
  /** The stage of the header that gave `_nextStep`. */
  private _nextStepOf: string | null = null;
  private _streamComplete = true;
  private _stepKey: string | null = null;
  private _behaviors = 0;
  /** An action of the current step has arrived (its first behavior has begun). */
  private _stepActed = false;
  private _nextStageId: string | null = null;
  private _missing: string[] | null = null;
  /** Names the server said were missing: the user may set them ("Set Variables…"), and they are sent. */
  private _asked = new Set<string>();
  /** The server answered 400 to a full step id: it is sent the bare section id instead. */
  private _bareStepIndex = false;
  /** The `context_description` this adapter made, replaced as the run learns more. */
  private _describedData: string | null = null;
  /** A new run has not reached the entry step yet (set when a run starts: `resetState`). */
  private _entryDue = false;
  /** The adapter before the last behavior's request: restored when that behavior is not run. */
  private _beforeBehavior: IBeforeBehavior | null = null;
  /** The `effect` of a behavior that did not run, sent again with the next request. */
  private _replayEffect: JsonObject | null = null;
}
