/**
 * A test double of the Easy-notebook DSLC server (`v1` dialect, docs/dialects.md#v1):
 * `POST /v1/actions` streams one behavior of a step as NDJSON sent as `application/json`,
 * progress lives in the `state` the client sends back, `POST /v1/reflection` only checks `toDoList`.
 */
import { z } from 'zod';

import type { IAnswer } from '../../answer';
import {
  fastApiJson,
  IDialectServerOptions,
  IDoubleRequest,
  IRunningDoubleServer,
  isRecord,
  notFound,
  pythonJson,
  pythonList,
  startDoubleServer,
  streamAnswer
} from '../http';
import {
  CHAPTERS,
  IChapter,
  IHandlerContext,
  ISection,
  V1Action
} from './chapters';

export const V1_LINE_DELAY_MS = 10;
/** `SECTION@N`: the step whose code raises on its n-th behavior. */
export const V1_FAIL_ENV = 'V1_DOUBLE_FAIL_STEP';

export interface IV1Failure {
  section: string;
  nth: number;
}

/** A variable a step requires besides its own (the published server's late steps need `target_variable`). */
export interface IV1Requirement {
  section: string;
  name: string;
}

export interface IV1Options extends IDialectServerOptions {
  /** Pause between streamed lines (default 10 ms, as the server's `asyncio.sleep`). */
  lineDelayMs?: number;
  failures?: readonly IV1Failure[];
  requirements?: readonly IV1Requirement[];
}

export function parseV1Requirement(spec: string): IV1Requirement {
  const match = /^(section_\w+?):(\w+)$/.exec(spec.trim());
  if (!match) {
    throw new Error(
      `required variable "${spec}": expected SECTION:NAME, e.g. section_3_monthly_trend:target_variable`
    );
  }
  return { section: match[1], name: match[2] };
}

export function parseV1Failure(spec: string): IV1Failure {
  const match = /^(section_\w+?)(?:@(\d+))?$/.exec(spec.trim());
  if (!match) {
    throw new Error(
      `failing step "${spec}": expected SECTION[@N], e.g. section_2_data_structure_discovery@2`
    );
  }
  return { section: match[1], nth: Number(match[2] ?? 1) };
}

const StateSchema = z.record(z.string(), z.unknown());

/** `/v1/actions`: ids may be null here (the handler answers 422 with a string detail). */
const ActionsRequestSchema = z.looseObject({
  stage_id: z.string().nullish(),
  step_index: z.union([z.string(), z.number().int()]).nullish(),
  state: StateSchema.default({}),
  stream: z.boolean().default(true),
  notebook_id: z.string().nullish()
});

const ReflectionRequestSchema = z.looseObject({
  stage_id: z.string(),
  step_index: z.union([z.string(), z.number().int()]),
  state: StateSchema.default({}),
  notebook_id: z.string().nullish()
});

const GenerateRequestSchema = z.looseObject({
  issue: z.string(),
  context: z.unknown().optional()
});

type StateRecord = z.infer<typeof StateSchema>;

/** FastAPI's 422 list: one `{type, loc, msg, input}` per problem. */
function validationError(
  issues: readonly z.core.$ZodIssue[],
  body: unknown
): IAnswer {
  const detail = issues.map(issue => {
    const loc = [
      'body',
      ...issue.path.map(p => (typeof p === 'symbol' ? String(p) : p))
    ];
    let input: unknown = body;
    for (const key of issue.path) {
      input = isRecord(input) ? input[String(key)] : undefined;
    }
    const missing = input === undefined;
    return {
      type: missing ? 'missing' : issue.code,
      loc,
      msg: missing ? 'Field required' : issue.message,
      input: missing ? (isRecord(body) ? body : null) : input
    };
  });
  return fastApiJson(422, { detail });
}

function jsonInvalid(text: string): IAnswer {
  return fastApiJson(422, {
    detail: [
      {
        type: 'json_invalid',
        loc: ['body', 0],
        msg: 'JSON decode error',
        input: {},
        ctx: { error: text.trim() ? 'Expecting value' : 'Empty body' }
      }
    ]
  });
}

function isMissing(value: unknown): boolean {
  return (
    value === undefined ||
    value === null ||
    value === '' ||
    (Array.isArray(value) && value.length === 0) ||
    (isRecord(value) && Object.keys(value).length === 0)
  );
}

function lookupIn(state: StateRecord, name: string): unknown {
  const variables = isRecord(state.variables) ? state.variables : {};
  return isMissing(variables[name]) ? state[name] : variables[name];
}

interface ILocated {
  chapter: IChapter;
  section: ISection;
  index: number;
}

/** The chapter and section, or the server's 404 / 400 answer. */
function locate(
  stageId: string,
  stepIndex: string | number
): ILocated | IAnswer {
  const chapter = CHAPTERS.find(c => c.id === stageId);
  if (!chapter) {
    return fastApiJson(404, { detail: `Stage ${stageId} not found` });
  }
  const raw = String(stepIndex);
  const bare = raw.startsWith(`${stageId}_`)
    ? raw.slice(stageId.length + 1)
    : raw;
  const index = chapter.sections.findIndex(s => s.id === bare);
  if (index < 0) {
    return fastApiJson(400, {
      detail: `Step ${bare} not found in stage ${stageId}. Available steps: ${pythonList(chapter.sections.map(s => s.id))}`
    });
  }
  return { chapter, section: chapter.sections[index], index };
}

/** The handler that the state's `toDoList` selects: its position is the behavior number − 1. */
function nextHandlerIndex(
  section: ISection,
  toDoList: readonly string[]
): number {
  if (toDoList.length === 0) {
    return 0;
  }
  return section.handlers.findIndex(
    ([event]) => event === toDoList[toDoList.length - 1]
  );
}

interface IBehaviorResult {
  /** Each action with the top-level state keys that existed when it was emitted (null: no `state`). */
  lines: Array<{ action: V1Action; keys: string[] | null }>;
  state: StateRecord;
}

class SequenceError extends Error {}

/** Runs one behavior: the handler the toDoList selects, or, for the entry step, the whole chain. */
function runBehavior(
  located: ILocated,
  requestState: StateRecord,
  options: Pick<IV1Options, 'failures' | 'requirements'>
): IBehaviorResult {
  const failures = options.failures ?? [];
  const { section } = located;
  const state: StateRecord = { ...requestState };
  const variables: Record<string, unknown> = isRecord(state.variables)
    ? { ...state.variables }
    : {};
  const toDoList: string[] = Array.isArray(state.toDoList)
    ? state.toDoList.map(String)
    : [];
  state.variables = variables;
  state.toDoList = toDoList;
  const effect = isRecord(state.effect) ? state.effect : {};
  const effectCurrent = Array.isArray(effect.current) ? effect.current : [];
  const lines: IBehaviorResult['lines'] = [];
  const withState = (action: V1Action): boolean =>
    action.action !== 'update_stage_steps';

  const required = [
    ...section.requires,
    ...(options.requirements ?? [])
      .filter(r => r.section === section.id)
      .map(r => r.name)
  ];
  const missing = required.filter(name => isMissing(lookupIn(state, name)));
  if (missing.length > 0) {
    lines.push({
      action: {
        action: 'add',
        shotType: 'dialogue',
        content: `Step ${section.id} cannot run: missing required variables ${pythonList(missing)}`
      },
      keys: Object.keys(state)
    });
    return { lines, state };
  }
  if (section.handlers.length === 0) {
    throw new SequenceError(`section ${section.id} has no code`);
  }
  let pushed = true;
  let first = true;
  while (pushed && (first || section.wholeChain)) {
    const index = nextHandlerIndex(section, toDoList);
    const event = toDoList.pop();
    pushed = false;
    if (index < 0) {
      lines.push({
        action: {
          action: 'error',
          error_message: `invalid event: ${pythonList([event ?? ''])}`
        },
        keys: null
      });
      break;
    }
    if (failures.some(f => f.section === section.id && f.nth === index + 1)) {
      throw new SequenceError(`${section.id} raised on behavior ${index + 1}`);
    }
    const context: IHandlerContext = {
      variables,
      effectCurrent,
      lookup: name => lookupIn(state, name),
      emit: action =>
        lines.push({
          action,
          keys: withState(action) ? Object.keys(state) : null
        }),
      push: name => {
        toDoList.push(name);
        pushed = true;
      },
      setStateKey: (key, value) => {
        state[key] = value;
      }
    };
    section.handlers[index][1](context);
    if (pushed) {
      context.emit({ action: 'next_event' });
    }
    first = false;
  }
  return { lines, state };
}

function headerLine(located: ILocated): string {
  const next = located.chapter.sections[located.index + 1];
  return pythonJson({
    header: {
      stage_id: located.chapter.id,
      step: null,
      next_step: next ? next.id : null
    }
  });
}

/** Every copy shares the end-of-behavior values; a key added later is absent from earlier lines. */
function actionLines(result: IBehaviorResult): string[] {
  return result.lines.map(({ action, keys }) => {
    if (keys === null) {
      return pythonJson({ action });
    }
    const snapshot: StateRecord = {};
    for (const key of keys) {
      snapshot[key] = result.state[key];
    }
    return pythonJson({ action: { ...action, state: snapshot } });
  });
}

/** `stream: false` (docs/dialects.md#v1): broken for every chapter after the entry one. */
function unstreamed(
  located: ILocated,
  stepIndex: string | number,
  requestState: StateRecord,
  result: IBehaviorResult | null
): IAnswer {
  const { chapter, section, index } = located;
  const next = chapter.sections[index + 1];
  const steps = result
    ? result.lines.map(line => line.action)
    : [
        {
          action: 'text',
          content: `<coroutine object generate_${section.id} at 0x7f3a2c1d9e40>`
        }
      ];
  return fastApiJson(200, {
    stage_id: chapter.id,
    step: {
      id: chapter.id,
      title: chapter.title,
      description: chapter.description,
      icon: chapter.icon,
      stepId: `${chapter.id}_${section.id}`,
      state: requestState
    },
    sequence: {
      stage_id: chapter.id,
      step_id: `${chapter.id}_${section.id}`,
      step_index: stepIndex,
      next_step: next ? `${chapter.id}_${next.id}` : null,
      chapter_id: chapter.id,
      section_id: section.id,
      next_section: next ? next.id : null,
      steps
    },
    next_step: next ? index + 1 : null,
    state: result ? result.state : requestState
  });
}

function actions(request: IDoubleRequest, options: IV1Options): IAnswer {
  if (request.json === undefined) {
    return jsonInvalid(request.text);
  }
  const parsed = ActionsRequestSchema.safeParse(request.json);
  if (!parsed.success) {
    return validationError(parsed.error.issues, request.json);
  }
  const body = parsed.data;
  if (body.stage_id === null || body.stage_id === undefined) {
    return fastApiJson(422, { detail: 'stage_id cannot be null' });
  }
  if (body.step_index === null || body.step_index === undefined) {
    return fastApiJson(422, { detail: 'step_index cannot be null' });
  }
  const located = locate(body.stage_id, body.step_index);
  if (!('chapter' in located)) {
    return located;
  }
  if (!body.stream) {
    if (located.chapter.id !== CHAPTERS[0].id) {
      return unstreamed(located, body.step_index, body.state, null);
    }
    try {
      return unstreamed(
        located,
        body.step_index,
        body.state,
        runBehavior(located, body.state, options)
      );
    } catch (error) {
      if (error instanceof SequenceError) {
        return sequenceNotFound(located);
      }
      throw error;
    }
  }
  let result: IBehaviorResult;
  try {
    result = runBehavior(located, body.state, options);
  } catch (error) {
    if (error instanceof SequenceError) {
      return sequenceNotFound(located);
    }
    throw error;
  }
  const lineDelay = options.lineDelayMs ?? V1_LINE_DELAY_MS;
  const delays = [
    0,
    ...result.lines.map(
      ({ action }) =>
        lineDelay + (typeof action.delay === 'number' ? action.delay : 0)
    )
  ];
  return streamAnswer(
    'application/json',
    [headerLine(located), ...actionLines(result)],
    delays
  );
}

function sequenceNotFound(located: ILocated): IAnswer {
  return fastApiJson(404, {
    detail: `Sequence for section ${located.section.id} not found`
  });
}

function reflection(request: IDoubleRequest): IAnswer {
  if (request.json === undefined) {
    return jsonInvalid(request.text);
  }
  const parsed = ReflectionRequestSchema.safeParse(request.json);
  if (!parsed.success) {
    return validationError(parsed.error.issues, request.json);
  }
  const state = parsed.data.state;
  const toDoList = state.toDoList;
  const targetAchieved =
    Object.keys(state).length > 0 &&
    (toDoList === undefined ||
      toDoList === null ||
      (Array.isArray(toDoList) && toDoList.length === 0));
  return fastApiJson(200, {
    status: 'received',
    message: 'Feedback processed',
    targetAchieved,
    state
  });
}

function generate(request: IDoubleRequest): IAnswer {
  if (request.json === undefined) {
    return jsonInvalid(request.text);
  }
  const parsed = GenerateRequestSchema.safeParse(request.json);
  if (!parsed.success) {
    return validationError(parsed.error.issues, request.json);
  }
  const { issue, context } = parsed.data;
  const message =
    issue === 'generate_question_choice_map'
      ? [
          {
            target: 'revenue',
            problem_description: 'Predict next month’s revenue per region.',
            problem_name: 'Regional revenue forecast'
          },
          {
            target: 'units',
            problem_description: 'Explain what drives the units sold.',
            problem_name: 'Units drivers'
          }
        ]
      : [
          { type: 'text', content: `Noted: ${issue}`, context: context ?? null }
        ];
  return fastApiJson(200, { status: 'success', message });
}

const ROUTES: Record<
  string,
  {
    method: string;
    answer: (request: IDoubleRequest, options: IV1Options) => IAnswer;
  }
> = {
  '/v1/actions': { method: 'POST', answer: actions },
  '/v1/reflection': { method: 'POST', answer: reflection },
  '/v1/generate': { method: 'POST', answer: generate },
  '/v2/health': {
    method: 'GET',
    answer: () =>
      fastApiJson(200, {
        status: 'ok',
        message: 'DSLC v1 test double is running'
      })
  }
};

export function startV1Double(
  options: IV1Options = {}
): Promise<IRunningDoubleServer> {
  return startDoubleServer('v1', options, request => {
    const route = ROUTES[request.path];
    if (!route) {
      return notFound();
    }
    if (request.method !== route.method) {
      return fastApiJson(405, { detail: 'Method Not Allowed' });
    }
    return route.answer(request, options);
  });
}
