/**
 * The `bcc` adapter's requests, answers and actions; the loop that uses them is in `bcc.ts`
 * (docs/dialects.md#bcc).
 */
import { answerNeeded, PlannerError } from '../errors';
import type { GeneratingEvent } from '../actionStream';
import { isRecord, JsonObject, omit } from '../fields';
import { msg, type ProtocolText, say } from '../messages';
import { normalizeAction } from '../normalize';
import type {
  ContextUpdate,
  INotebookSummary,
  ObservationInput,
  PlanningRequestInput,
  PlanningResponse,
  WorkflowStage,
  WorkflowTemplate
} from '../schemas';
import type { IPlannerTransport } from '../transport';
import {
  INamed,
  IReflection,
  IStepDef,
  PlanningAnswer,
  planningAnswerFromJson,
  planningAnswerFromXml,
  reflectionFromNdjson,
  reflectionFromXml
} from './bccAnswers';
import {
  DialectLog,
  httpError,
  invalidAnswer,
  isRouteMissingError,
  looksLikeXml,
  parseJson,
  readText,
  send,
  unquotedBody
} from './common';
import { parseLenientXml } from './xml';
import {
  DEFAULT_BCC_IDLE_GOALS,
  emptyPlan,
  FsmName,
  IBccOptions,
  IPlan,
  IPrefetchedAnswer,
  levelJson,
  stageName,
  stepList,
  substitute,
  unwrappedList
} from './bccPlan';

export abstract class BccRequests {
  constructor(options: IBccOptions) {
    this._transport = options.transport;
    this._notebookId = options.notebookId ?? null;
    this._idleGoals = options.idleGoals ?? DEFAULT_BCC_IDLE_GOALS;
    this._log = options.log ?? (() => undefined);
    this._now = options.now ?? (() => new Date());
  }

  // ------------------------------------------------------------------------------------------
  // Requests and answers
  // ------------------------------------------------------------------------------------------

  protected async _planningAnswer(
    state: FsmName,
    expected: string[],
    signal?: AbortSignal
  ): Promise<PlanningAnswer> {
    this._transition(state, this._plan.fsm.last_transition);
    const url = this._transport.urlOf('planning');
    let answer: { contentType: string | null; text: string; status: number };
    if (state === 'IDLE' && this._prefetched) {
      answer = { ...this._prefetched, status: 200 };
      this._prefetched = null;
    } else {
      const response = await send(
        this._transport,
        'POST',
        'planning',
        this._body(state, false),
        signal
      );
      const text = await readText(response);
      if (!response.ok) {
        throw httpError('POST', url, response.status, text);
      }
      answer = {
        contentType: response.headers.get('Content-Type'),
        text,
        status: response.status
      };
    }
    answer.text = unquotedBody(answer.text);
    const known = ['workflow', 'stages', 'steps', 'behavior'];
    let parsed: PlanningAnswer | null = null;
    if (looksLikeXml(answer.contentType, answer.text)) {
      const doc = parseLenientXml(answer.text, known);
      this._noteRepairs(doc.repairs, doc.partial, url);
      const root = doc.root ?? unwrappedList(doc.roots);
      parsed = root ? planningAnswerFromXml(root) : null;
    } else {
      const json = parseJson(answer.text);
      parsed =
        json.ok && isRecord(json.value)
          ? planningAnswerFromJson(json.value)
          : null;
    }
    if (!parsed) {
      throw invalidAnswer(
        url,
        answer.status,
        `expected <${expected.join('> or <')}> for FSM state ${state}`,
        answer.text
      );
    }
    if (!expected.includes(parsed.kind)) {
      throw this._unexpected(state, parsed.kind);
    }
    return parsed;
  }

  protected async _reflect(
    state: 'BEHAVIOR_COMPLETED' | 'STEP_COMPLETED',
    warn: (warning: ProtocolText) => void,
    signal?: AbortSignal
  ): Promise<IReflection> {
    this._transition(
      state,
      state === 'STEP_COMPLETED' ? 'COMPLETE_STEP' : 'COMPLETE_ACTION'
    );
    const body = this._body(state, true);
    for (const path of ['reflecting', 'planning'] as const) {
      if (
        this._reflectRoute === 'local' ||
        (path === 'reflecting' && this._reflectRoute === 'planning')
      ) {
        continue;
      }
      const url = this._transport.urlOf(path);
      // Without the reflection the behavior has no verdict: going on to /generating would run it again.
      let response: Response;
      let text: string;
      try {
        response = await send(this._transport, 'POST', path, body, signal);
        text = await readText(response);
      } catch (error) {
        throw error instanceof PlannerError && error.kind !== 'abort'
          ? answerNeeded(error)
          : error;
      }
      if (!response.ok) {
        const error = httpError('POST', url, response.status, text);
        if (isRouteMissingError(error)) {
          this._log(`bcc: ${url} is missing; reflections go to the next route`);
          this._reflectRoute = path === 'reflecting' ? 'planning' : 'local';
          continue;
        }
        throw answerNeeded(error);
      }
      return this._readReflection(
        response.headers.get('Content-Type'),
        unquotedBody(text),
        url,
        response.status,
        state
      );
    }
    warn(say('bccNoReflection'));
    const local: IReflection = {
      kind: state === 'STEP_COMPLETED' ? 'stage_reflection' : 'reflection',
      stepComplete: true,
      stageComplete:
        state === 'STEP_COMPLETED' && this._plan.steps.remaining.length === 0,
      variables: {},
      needsMoreSteps: false,
      comments: [],
      ndjson: false
    };
    return local;
  }

  protected _readReflection(
    contentType: string | null,
    text: string,
    url: string,
    status: number,
    state: FsmName
  ): IReflection {
    const known = ['reflection', 'stage_reflection'];
    if (looksLikeXml(contentType, text)) {
      const doc = parseLenientXml(text, known);
      this._noteRepairs(doc.repairs, doc.partial, url);
      const reflection = doc.root ? reflectionFromXml(doc.root) : null;
      if (!reflection) {
        throw invalidAnswer(
          url,
          status,
          `expected <reflection> or <stage_reflection> for FSM state ${state}`,
          text
        );
      }
      const fits =
        state === 'STEP_COMPLETED' ? 'stage_reflection' : 'reflection';
      if (reflection.kind !== fits) {
        // A verdict on the step taken for one on the stage (or back) would skip steps or stages.
        throw this._unexpected(state, reflection.kind, url);
      }
      return reflection;
    }
    const messages = reflectionMessages(text);
    if (messages.length === 0) {
      throw invalidAnswer(url, status, 'neither XML nor NDJSON', text);
    }
    return reflectionFromNdjson(messages);
  }

  /**
   * The body this adapter sends first, at `IDLE`, for `request`: detection's probe when a server
   * refuses the superset. Call it on an adapter with no plan (a new one).
   */
  idleBody(
    request: PlanningRequestInput,
    notebook?: INotebookSummary
  ): JsonObject {
    this._observation = request.observation;
    this._notebook = notebook ?? null;
    return this._body('IDLE', false);
  }

  protected _body(state: FsmName, stream: boolean): JsonObject {
    const plan = this._plan;
    const context = this._observation?.context;
    const variables = this._stateVariables();
    const goals = state === 'IDLE' ? this._idleGoalsText() : plan.goals;
    const body: JsonObject = {
      observation: {
        location: {
          current: {
            stage_id: plan.stages.current?.stage_id ?? null,
            step_id: plan.steps.current?.step_id ?? null,
            behavior_id: plan.behaviors.current?.behavior_id ?? null,
            behavior_iteration: plan.iteration
          },
          progress: {
            stages: levelJson(plan.stages),
            steps: levelJson(plan.steps),
            behaviors: {
              ...levelJson(plan.behaviors),
              iteration: plan.iteration || null
            }
          },
          goals
        }
      },
      state: {
        variables,
        effects: this._effects(state),
        notebook: {
          ...(this._notebook ?? context?.notebook ?? {}),
          notebook_id: this._notebookId
        },
        FSM: {
          state,
          last_transition: plan.fsm.last_transition,
          timestamp: this._now().toISOString(),
          ...(plan.fsm.previous_state
            ? { previous_state: plan.fsm.previous_state }
            : {})
        }
      },
      options: { stream }
    };
    if (this._feedback && state !== 'IDLE' && state !== 'BEHAVIOR_RUNNING') {
      body.behavior_feedback = this._feedback;
    }
    if (state === 'BEHAVIOR_RUNNING') {
      // §3.2 sends no notebook_id to /generating. The key is present but undefined, so that a
      // transport adding the notebook id to every body it does not find it in (the extension's,
      // `src/lab/planner.ts`) leaves this one alone, and JSON leaves it out.
      body.notebook_id = undefined;
    } else if (this._notebookId) {
      body.notebook_id = this._notebookId;
    }
    return body;
  }

  /**
   * `state.effects`: at `BEHAVIOR_RUNNING` the behavior has started (`START_BEHAVIOR`), so what is in
   * `current` belongs to the behaviors before it and is sent in `history` (the engine moves it itself
   * only when the first action arrives).
   */
  private _effects(state: FsmName): JsonObject {
    const effects = this._observation?.context?.effects;
    const current = [...(effects?.current ?? [])];
    const history = [...(effects?.history ?? [])];
    return state === 'BEHAVIOR_RUNNING'
      ? { current: [], history: [...history, ...current] }
      : { current, history };
  }

  // ------------------------------------------------------------------------------------------
  // Actions
  // ------------------------------------------------------------------------------------------

  protected _messageEvents(
    message: unknown,
    url: string,
    line: string
  ): GeneratingEvent[] {
    const events: GeneratingEvent[] = [];
    for (const item of messageList(message) ?? [message]) {
      const raw = isRecord(item) && isRecord(item.action) ? item.action : item;
      if (
        !isRecord(raw) ||
        (typeof raw.type !== 'string' && typeof raw.action !== 'string')
      ) {
        const notice = say(
          'lineProblem',
          `POST ${url}`,
          msg('lineWithoutActionIgnored'),
          line.slice(0, 200)
        );
        this._log(notice.message);
        events.push({ kind: 'notice', ...notice });
        continue;
      }
      events.push(...this._events(raw, url));
    }
    return events;
  }

  protected _events(
    raw: JsonObject,
    url: string,
    fromClient = false
  ): GeneratingEvent[] {
    const type = String(raw.type ?? raw.action).trim();
    let fields: JsonObject = { ...omit(raw, ['type']), action: type };
    switch (type) {
      case 'add-text':
      case 'add_text':
        fields = { ...fields, action: 'add', shot_type: 'markdown' };
        break;
      case 'comment_result':
        // A markdown cell, then the effects it comments on move into history (§3.4).
        return [
          ...this._events(
            {
              ...omit(raw, ['type', 'action']),
              type: 'add',
              shot_type: 'markdown'
            },
            url,
            fromClient
          ),
          ...this._events({ type: 'archive_effects' }, url, fromClient)
        ];
      case 'update_last_text':
        fields = {
          action: 'update_last_text',
          text: raw.text ?? raw.content ?? ''
        };
        break;
      case 'new_section':
      case 'new_step':
      case 'newSection':
      case 'newStep': {
        const content = String(raw.content ?? raw.title ?? '')
          .replace(/^\s*#+\s*/, '')
          .trim();
        if (!fromClient && this._headings.includes(content)) {
          this._log(
            `bcc: ${type} "${content}" skipped: the client already wrote that heading`
          );
          return [];
        }
        break;
      }
    }
    const shot = fields.shot_type ?? fields.shotType;
    if (
      fields.action === 'add' &&
      (shot === undefined || shot === 'markdown')
    ) {
      fields.shot_type = 'dialogue';
      delete fields.shotType;
    }
    const normalized = normalizeAction(fields);
    if (!normalized.ok) {
      return [
        this._warning(
          say(
            'requestProblem',
            `POST ${url}`,
            msg('actionIgnored', normalized.error)
          )
        )
      ];
    }
    const line = JSON.stringify(raw).slice(0, 500);
    return [
      ...normalized.warnings.map(w =>
        this._warning(say('requestProblem', `POST ${url}`, w))
      ),
      ...normalized.actions.map(action => ({
        kind: 'action' as const,
        action,
        index: 0,
        line
      }))
    ];
  }

  /** `state.variables`: the task's, the plan's, then the engine's (§3.2). */
  protected _stateVariables(): JsonObject {
    const engineVariables: JsonObject = {
      ...(this._observation?.context?.variables ?? {})
    };
    const files =
      engineVariables.data_files ??
      (engineVariables.csv_file_path ? [engineVariables.csv_file_path] : []);
    return {
      user_problem: engineVariables.problem_description ?? '',
      user_submit_files: files,
      ...this._plan.variables,
      ...engineVariables
    };
  }

  /** `location.goals` at `IDLE`; the BCC client carries it on until `<steps>` brings its own. */
  protected _idleGoalsText(): string {
    return substitute(this._idleGoals, this._stateVariables());
  }

  /** A heading the client writes; the server's copy of it is skipped, `plain` too (no "(optional)"). */
  protected _heading(
    type: 'new_section' | 'new_step',
    title: string,
    plain = title
  ): void {
    this._pending.push({ type, content: title });
    this._headings = [...this._headings.slice(-3), ...new Set([title, plain])];
  }

  // ------------------------------------------------------------------------------------------

  protected _template(): WorkflowTemplate {
    const plan = this._plan;
    const stages = [
      ...plan.stages.completed,
      ...(plan.stages.current ? [plan.stages.current] : []),
      ...plan.stages.remaining
    ];
    const steps = stepList(plan);
    return {
      ...(plan.title ? { name: plan.title } : {}),
      stages: stages.map((stage): WorkflowStage => ({
        id: stage.stage_id,
        name: stageName(stage),
        goal: stage.goal,
        expected_outputs: stage.verified_artifacts.map(a => a.name),
        steps: (stage.stage_id === plan.stepsOf
          ? steps
          : (plan.pastSteps?.[stage.stage_id] ?? [])
        ).map(s => this._templateStep(s))
      }))
    };
  }

  protected _templateStep(step: IStepDef) {
    return {
      id: step.step_id,
      name: step.title,
      goal: step.goal,
      expected_outputs: step.verified_artifacts.map(a => a.name)
    };
  }

  protected _finish(
    response: PlanningResponse,
    update: ContextUpdate
  ): PlanningResponse {
    if (!this._templateSent && this._plan.stages.current) {
      update.workflow_update ??= { workflowTemplate: this._template() };
    }
    if (update.workflow_update) {
      this._templateSent = true;
    }
    if (Object.keys(update).length > 0) {
      response.context_update = update;
    }
    return response;
  }

  protected _checkRequired(
    required: INamed[],
    warn: (warning: ProtocolText) => void
  ): void {
    const known = {
      ...this._plan.variables,
      ...(this._observation?.context?.variables ?? {})
    };
    const missing = required
      .map(r => r.name)
      .filter(
        name =>
          name &&
          !(name in known) &&
          name !== 'user_problem' &&
          name !== 'user_submit_files'
      );
    if (missing.length > 0) {
      warn(say('bccRequiredVariables', missing.join(', ')));
    }
  }

  protected _noteRepairs(
    repairs: string[],
    partial: boolean,
    url: string
  ): void {
    if (partial) {
      this._log(
        `POST ${url}: the XML answer was truncated; read as far as it goes`
      );
    }
    if (repairs.length > 0) {
      this._log(`POST ${url}: XML repaired: ${repairs.join('; ')}`);
    }
  }

  protected _unexpected(
    state: FsmName,
    kind: string,
    url = this._transport.urlOf('planning')
  ): PlannerError {
    return new PlannerError({
      kind: 'invalid',
      url,
      ...say('bccUnexpectedAnswer', kind, state)
    });
  }

  protected _transition(state: FsmName, event: string): void {
    const fsm = this._plan.fsm;
    if (fsm.state !== state) {
      fsm.previous_state = fsm.state;
    }
    fsm.state = state;
    fsm.last_transition = event;
  }

  protected _warning(warning: ProtocolText): GeneratingEvent {
    this._log(warning.message);
    return { kind: 'warning', ...warning };
  }

  protected readonly _transport: IPlannerTransport;
  protected readonly _notebookId: string | null;
  protected readonly _idleGoals: string;
  protected readonly _log: DialectLog;
  protected readonly _now: () => Date;
  protected _plan: IPlan = emptyPlan();
  protected _observation: ObservationInput | undefined;
  /** The notebook the engine described beside its request: the last cells travel only this way. */
  protected _notebook: INotebookSummary | null = null;
  protected _feedback: JsonObject | null = null;
  protected _pending: JsonObject[] = [];
  protected _headings: string[] = [];
  protected _templateSent = false;
  protected _prefetched: IPrefetchedAnswer | null = null;
  protected _reflectRoute: 'reflecting' | 'planning' | 'local' = 'reflecting';
}

/** The messages of a JSON value that lists them: a JSON array or `{"actions": [...]}`; else null. */
function messageList(value: unknown): unknown[] | null {
  return Array.isArray(value)
    ? value
    : isRecord(value) && Array.isArray(value.actions)
      ? value.actions
      : null;
}

/**
 * The messages of a reflection that is not XML, in the forms a `/generating` answer takes: NDJSON
 * lines, one JSON array (pretty-printed over many lines) or `{"actions": [...]}` (an older client's
 * `stream: false`).
 */
function reflectionMessages(text: string): unknown[] {
  const whole = parseJson(text);
  const listed = whole.ok ? messageList(whole.value) : null;
  if (listed) {
    return listed;
  }
  return text
    .split('\n')
    .map(line => parseJson(line.trim()))
    .flatMap(parsed => (parsed.ok ? [parsed.value] : []));
}
