/**
 * The `bcc` adapter's requests and their answers: the body sent for an FSM state, `/planning` and
 * `/reflecting` read; the loop that uses them is in `loop.ts` (docs/dialects.md#bcc).
 */
import { answerNeeded, PlannerError } from '../../errors';
import { isRecord, JsonObject } from '../../fields';
import { type ProtocolText, say } from '../../messages';
import type {
  INotebookSummary,
  ObservationInput,
  PlanningRequestInput
} from '../../schemas';
import type { IPlannerTransport } from '../../transport';
import {
  INamed,
  IReflection,
  PlanningAnswer,
  planningAnswerFromJson,
  planningAnswerFromXml,
  reflectionFromNdjson,
  reflectionFromXml
} from './answers';
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
} from '../common';
import type { IProbeAnswer } from '../dialect';
import { parseLenientXml } from '../xml';
import { messageList } from './actions';
import {
  DEFAULT_BCC_IDLE_GOALS,
  FsmName,
  IBccOptions,
  levelJson,
  substitute,
  unwrappedList
} from './plan';
import type { BccState } from './state';

export class BccRequests {
  constructor(
    options: IBccOptions,
    private readonly _state: BccState
  ) {
    this._transport = options.transport;
    this._notebookId = options.notebookId ?? null;
    this._idleGoals = options.idleGoals ?? DEFAULT_BCC_IDLE_GOALS;
    this._log = options.log ?? (() => undefined);
    this._now = options.now ?? (() => new Date());
  }

  /** What the engine described with its request: the observation and the notebook beside it. */
  observe(
    observation: ObservationInput | undefined,
    notebook: INotebookSummary | null
  ): void {
    this.observation = observation;
    this.notebook = notebook;
  }

  urlOf(path: string): string {
    return this._transport.urlOf(path);
  }

  /** A new run: no answer kept, reflections to `/reflecting` again. */
  reset(): void {
    this.prefetched = null;
    this._reflectRoute = 'reflecting';
  }

  /** Sends the behavior's `/generating` request; an error status is an error. */
  async generating(signal?: AbortSignal): Promise<Response> {
    const response = await send(
      this._transport,
      'POST',
      'generating',
      this.body('BEHAVIOR_RUNNING', true),
      signal
    );
    if (!response.ok) {
      const url = this._transport.urlOf('generating');
      throw httpError('POST', url, response.status, await readText(response));
    }
    return response;
  }

  async planningAnswer(
    state: FsmName,
    expected: string[],
    signal?: AbortSignal
  ): Promise<PlanningAnswer> {
    this._state.transition(state, this._state.plan.fsm.last_transition);
    const url = this._transport.urlOf('planning');
    let answer: { contentType: string | null; text: string; status: number };
    if (state === 'IDLE' && this.prefetched) {
      answer = { ...this.prefetched, status: 200 };
      this.prefetched = null;
    } else {
      const response = await send(
        this._transport,
        'POST',
        'planning',
        this.body(state, false),
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
      throw this.unexpected(state, parsed.kind);
    }
    return parsed;
  }

  async reflect(
    state: 'BEHAVIOR_COMPLETED' | 'STEP_COMPLETED',
    warn: (warning: ProtocolText) => void,
    signal?: AbortSignal
  ): Promise<IReflection> {
    this._state.transition(
      state,
      state === 'STEP_COMPLETED' ? 'COMPLETE_STEP' : 'COMPLETE_ACTION'
    );
    const body = this.body(state, true);
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
        state === 'STEP_COMPLETED' &&
        this._state.plan.steps.remaining.length === 0,
      variables: {},
      needsMoreSteps: false,
      comments: [],
      ndjson: false
    };
    return local;
  }

  private _readReflection(
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
        throw this.unexpected(state, reflection.kind, url);
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
    this.observation = request.observation;
    this.notebook = notebook ?? null;
    return this.body('IDLE', false);
  }

  body(state: FsmName, stream: boolean): JsonObject {
    const plan = this._state.plan;
    const context = this.observation?.context;
    const variables = this.stateVariables();
    const goals = state === 'IDLE' ? this.idleGoalsText() : plan.goals;
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
          ...(this.notebook ?? context?.notebook ?? {}),
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
    if (this.feedback && state !== 'IDLE' && state !== 'BEHAVIOR_RUNNING') {
      body.behavior_feedback = this.feedback;
    }
    if (state === 'BEHAVIOR_RUNNING') {
      // §3.2 sends no notebook_id to /generating. The key is present but undefined, so that a
      // transport adding the notebook id to every body it does not find it in (the extension's,
      // `src/lab/plannerConnection.ts`) leaves this one alone, and JSON leaves it out.
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
    const effects = this.observation?.context?.effects;
    const current = [...(effects?.current ?? [])];
    const history = [...(effects?.history ?? [])];
    return state === 'BEHAVIOR_RUNNING'
      ? { current: [], history: [...history, ...current] }
      : { current, history };
  }

  /** `state.variables`: the task's, the plan's, then the engine's (§3.2). */
  stateVariables(): JsonObject {
    const engineVariables: JsonObject = {
      ...(this.observation?.context?.variables ?? {})
    };
    const files =
      engineVariables.data_files ??
      (engineVariables.csv_file_path ? [engineVariables.csv_file_path] : []);
    return {
      user_problem: engineVariables.problem_description ?? '',
      user_submit_files: files,
      ...this._state.plan.variables,
      ...engineVariables
    };
  }

  /** `location.goals` at `IDLE`; the BCC client carries it on until `<steps>` brings its own. */
  idleGoalsText(): string {
    return substitute(this._idleGoals, this.stateVariables());
  }

  checkRequired(
    required: INamed[],
    warn: (warning: ProtocolText) => void
  ): void {
    const known = {
      ...this._state.plan.variables,
      ...(this.observation?.context?.variables ?? {})
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

  private _noteRepairs(repairs: string[], partial: boolean, url: string): void {
    if (partial) {
      this._log(
        `POST ${url}: the XML answer was truncated; read as far as it goes`
      );
    }
    if (repairs.length > 0) {
      this._log(`POST ${url}: XML repaired: ${repairs.join('; ')}`);
    }
  }

  unexpected(
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

  private readonly _transport: IPlannerTransport;
  private readonly _notebookId: string | null;
  private readonly _idleGoals: string;
  private readonly _log: DialectLog;
  private readonly _now: () => Date;
  observation: ObservationInput | undefined;
  /** The notebook the engine described beside its request: the last cells travel only this way. */
  notebook: INotebookSummary | null = null;
  /** The feedback on the last behavior, sent with the requests after it. */
  feedback: JsonObject | null = null;
  /** The IDLE answer that detection already received: used instead of asking again. */
  prefetched: IProbeAnswer | null = null;
  private _reflectRoute: 'reflecting' | 'planning' | 'local' = 'reflecting';
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
