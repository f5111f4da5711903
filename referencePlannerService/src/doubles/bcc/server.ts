/**
 * A test double of the server behind the Notebook-BCC client (`bcc` dialect,
 * docs/dialects.md#bcc): stateless, the sibling `state.FSM.state` picks the answer, the
 * plan travels in every request, `/planning` and `/reflecting` answer XML.
 */
import { z } from 'zod';

import type { IAnswer } from '../../answer';
import {
  BCC_STAGES,
  BCC_WORKFLOW_TITLE,
  behaviorCode,
  doneMarker,
  findStage,
  findStep,
  IBccStage,
  IBccStep
} from './plan';
import {
  behaviorXml,
  Damage,
  Layout,
  reflectionXml,
  stageReflectionXml,
  stagesXml,
  stepsXml
} from './xml';
import {
  fastApiJson,
  IDialectServerOptions,
  IDoubleRequest,
  IRunningDoubleServer,
  isRecord,
  notFound,
  startDoubleServer,
  streamAnswer,
  textAnswer
} from '../http';
import { SALES_CSV_PATH } from '../salesData';

export interface IBccScenario {
  name: string;
  description: string;
  /** Content-Type of the XML answers. */
  xmlType: string;
  generating: 'array' | 'ndjson';
  /** `on-planning`: `/reflecting` is missing and `/planning` serves the reflections. */
  reflecting: 'xml' | 'ndjson' | 'on-planning';
  layout: Layout;
  idleRoot: 'stages' | 'workflow';
  damage: Damage;
  /** The last stage's stage reflection says it is complete after its first step (a step remains). */
  shortLastStage: boolean;
}

const XML_TYPE = 'application/xml; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';
const NDJSON_TYPE = 'application/x-ndjson';

export const BCC_SCENARIOS: readonly IBccScenario[] = [
  {
    name: 'recorded',
    description:
      'application/xml, /generating as a pretty-printed JSON array, payload-layout reflections (default)',
    xmlType: XML_TYPE,
    generating: 'array',
    reflecting: 'xml',
    layout: 'payload',
    idleRoot: 'stages',
    damage: 'none',
    shortLastStage: false
  },
  {
    name: 'ndjson',
    description:
      'text/plain XML, /generating as NDJSON, prompt-layout reflections',
    xmlType: TEXT_TYPE,
    generating: 'ndjson',
    reflecting: 'xml',
    layout: 'prompt',
    idleRoot: 'stages',
    damage: 'none',
    shortLastStage: false
  },
  {
    name: 'workflow',
    description: 'the first answer has a <workflow> root with <title>',
    xmlType: TEXT_TYPE,
    generating: 'array',
    reflecting: 'xml',
    layout: 'prompt',
    idleRoot: 'workflow',
    damage: 'none',
    shortLastStage: false
  },
  {
    name: 'truncated',
    description: 'the first answer (<stages>) is cut inside <focus>',
    xmlType: XML_TYPE,
    generating: 'ndjson',
    reflecting: 'xml',
    layout: 'payload',
    idleRoot: 'stages',
    damage: 'truncated',
    shortLastStage: false
  },
  {
    name: 'mismatched-tag',
    description: 'every <behavior> closes <task> with </tsak>',
    xmlType: TEXT_TYPE,
    generating: 'array',
    reflecting: 'xml',
    layout: 'prompt',
    idleRoot: 'stages',
    damage: 'mismatched',
    shortLastStage: false
  },
  {
    name: 'reflect-on-planning',
    description: '/reflecting answers 404; /planning serves the reflections',
    xmlType: XML_TYPE,
    generating: 'array',
    reflecting: 'on-planning',
    layout: 'payload',
    idleRoot: 'stages',
    damage: 'none',
    shortLastStage: false
  },
  {
    name: 'ndjson-reflection',
    description:
      '/reflecting streams add-text, mark_step_complete / mark_stage_complete, complete_reflection',
    xmlType: TEXT_TYPE,
    generating: 'ndjson',
    reflecting: 'ndjson',
    layout: 'payload',
    idleRoot: 'stages',
    damage: 'none',
    shortLastStage: false
  },
  {
    name: 'short-last-stage',
    description:
      'the last stage is complete after its first step: its stage reflection says so while a step remains',
    xmlType: XML_TYPE,
    generating: 'array',
    reflecting: 'xml',
    layout: 'payload',
    idleRoot: 'stages',
    damage: 'none',
    shortLastStage: true
  }
];

export const DEFAULT_BCC_SCENARIO = 'recorded';
export const BCC_LINE_DELAY_MS = 10;

export interface IBccOptions extends IDialectServerOptions {
  scenario?: string;
  /**
   * Validate bodies like a typed server (FastAPI, pydantic): 422 when `location.goals` is not a string
   * or the body has an `observation.context`. The detection superset has both.
   */
  strictBody?: boolean;
  /** Pause between NDJSON lines. */
  lineDelayMs?: number;
}

export function findBccScenario(name: string): IBccScenario {
  const scenario = BCC_SCENARIOS.find(s => s.name === name);
  if (!scenario) {
    throw new Error(
      `unknown bcc scenario "${name}"; one of ${BCC_SCENARIOS.map(s => s.name).join(', ')}`
    );
  }
  return scenario;
}

const PlanObjectSchema = z.record(z.string(), z.unknown());

const LevelSchema = z.looseObject({
  current: z.unknown().optional(),
  completed: z.array(z.unknown()).optional(),
  remaining: z.array(z.unknown()).optional()
});

const BccRequestSchema = z.looseObject({
  observation: z
    .looseObject({
      location: z
        .looseObject({
          progress: z
            .looseObject({
              stages: LevelSchema.optional(),
              steps: LevelSchema.optional(),
              behaviors: LevelSchema.optional()
            })
            .optional()
        })
        .optional()
    })
    .optional(),
  state: z.looseObject({
    variables: z.record(z.string(), z.unknown()).optional(),
    effects: z
      .looseObject({ current: z.array(z.unknown()).optional() })
      .optional(),
    FSM: z.looseObject({ state: z.string() })
  })
});

type BccRequest = z.infer<typeof BccRequestSchema>;
type Level = z.infer<typeof LevelSchema>;

const FSM_STATES = [
  'IDLE',
  'STAGE_RUNNING',
  'STEP_RUNNING',
  'BEHAVIOR_RUNNING',
  'BEHAVIOR_COMPLETED',
  'STEP_COMPLETED'
] as const;
type FsmState = (typeof FSM_STATES)[number];

const unprocessable = (detail: string): IAnswer => fastApiJson(422, { detail });

class PlanError extends Error {}

function levelOf(
  body: BccRequest,
  level: 'stages' | 'steps' | 'behaviors'
): Level {
  return body.observation?.location?.progress?.[level] ?? {};
}

function currentObject(
  body: BccRequest,
  level: 'stages' | 'steps' | 'behaviors',
  required: readonly string[]
): z.infer<typeof PlanObjectSchema> {
  const parsed = PlanObjectSchema.safeParse(levelOf(body, level).current);
  const missing = parsed.success
    ? required.filter(key => parsed.data[key] === undefined)
    : required;
  if (!parsed.success || missing.length) {
    throw new PlanError(
      `observation.location.progress.${level}.current must be the plan object (missing ${missing.join(', ')})`
    );
  }
  return parsed.data;
}

function currentStage(body: BccRequest): IBccStage {
  const object = currentObject(body, 'stages', [
    'stage_id',
    'goal',
    'verified_artifacts'
  ]);
  const stage = findStage(object.stage_id);
  if (!stage) {
    throw new PlanError(`unknown stage ${String(object.stage_id)}`);
  }
  return stage;
}

function currentStep(
  body: BccRequest,
  stage: IBccStage
): { step: IBccStep; index: number } {
  const object = currentObject(body, 'steps', ['step_id', 'goal']);
  const found = findStep(stage, object.step_id);
  if (!found) {
    throw new PlanError(
      `unknown step ${String(object.step_id)} in stage ${stage.id}`
    );
  }
  return found;
}

/** Behaviors of this step already completed, as the client lists them. */
function completedBehaviors(body: BccRequest, step: IBccStep): number {
  return (levelOf(body, 'behaviors').completed ?? []).filter(
    item =>
      !isRecord(item) ||
      item.step_id === undefined ||
      item.step_id === step.id ||
      String(item.behavior_id ?? '').startsWith(`${step.id}_b`)
  ).length;
}

function csvPath(body: BccRequest): string {
  const files = body.state.variables?.user_submit_files;
  const first = Array.isArray(files) ? files[0] : files;
  return typeof first === 'string' && first.trim() ? first : SALES_CSV_PATH;
}

function markerSeen(body: BccRequest, step: IBccStep): boolean {
  const marker = doneMarker(step.id);
  return (body.state.effects?.current ?? []).some(item =>
    (typeof item === 'string' ? item : JSON.stringify(item)).includes(marker)
  );
}

type Action = Record<string, unknown>;

function generatingActions(
  body: BccRequest,
  stage: IBccStage,
  step: { step: IBccStep; index: number },
  iteration: number
): Array<{ wrapped: boolean; action: Action }> {
  const code = behaviorCode(step.step, iteration, csvPath(body));
  const wrapped = (action: Action) => ({ wrapped: true, action });
  const actions = [];
  if (iteration <= 1) {
    if (stage.id === BCC_STAGES[0].id && step.index === 0) {
      actions.push(
        wrapped({ type: 'update_title', content: BCC_WORKFLOW_TITLE })
      );
    }
    if (step.index === 0) {
      actions.push(wrapped({ type: 'new_section', content: stage.title }));
    }
    actions.push(wrapped({ type: 'new_step', content: step.step.title }));
  }
  actions.push(
    wrapped({
      type: 'add',
      shot_type: 'markdown',
      content:
        iteration <= 1
          ? `Goal: ${step.step.goal}`
          : `Checking \`${step.step.artifact.name}\`.`
    }),
    wrapped({ type: 'add', shot_type: 'action', content: code }),
    wrapped({ type: 'exec', codecell_id: 'lastAddedCellId', need_output: true })
  );
  if (iteration <= 1) {
    actions.push({
      wrapped: false,
      action: {
        type: 'add',
        shot_type: 'markdown',
        content: `\`${step.step.artifact.name}\` should now exist in the kernel.`
      }
    });
  }
  return actions;
}

export function startBccDouble(
  options: IBccOptions = {}
): Promise<IRunningDoubleServer> {
  const scenario = findBccScenario(options.scenario ?? DEFAULT_BCC_SCENARIO);
  const lineDelay = options.lineDelayMs ?? BCC_LINE_DELAY_MS;
  const xml = (text: string): IAnswer =>
    textAnswer(200, scenario.xmlType, text);
  const ndjson = (actions: readonly unknown[]): IAnswer =>
    streamAnswer(
      NDJSON_TYPE,
      actions.map(action => JSON.stringify(action)),
      actions.map((_, i) => (i === 0 ? 0 : lineDelay))
    );

  function reflect(body: BccRequest, state: FsmState): IAnswer {
    const stage = currentStage(body);
    const step = currentStep(body, stage);
    const stageDone =
      step.index === stage.steps.length - 1 ||
      (scenario.shortLastStage && stage === BCC_STAGES[BCC_STAGES.length - 1]);
    if (state === 'BEHAVIOR_COMPLETED') {
      const complete = markerSeen(body, step.step);
      if (scenario.reflecting === 'ndjson') {
        return ndjson([
          {
            action: {
              type: 'add-text',
              content: complete
                ? `${step.step.title}: the marker is in the outputs, the step is done.`
                : `${step.step.title}: not done yet, ${step.step.artifact.name} still needs a check.`
            }
          },
          ...(complete ? [{ action: { type: 'mark_step_complete' } }] : []),
          { action: { type: 'complete_reflection' } }
        ]);
      }
      return xml(reflectionXml(step.step, complete, scenario.layout));
    }
    if (scenario.reflecting === 'ndjson') {
      return ndjson([
        {
          action: {
            type: 'add-text',
            content: stageDone
              ? `${stage.title} is complete.`
              : `${step.step.title} done; next: ${stage.steps[step.index + 1].title}.`
          }
        },
        ...(stageDone ? [{ action: { type: 'mark_stage_complete' } }] : []),
        { action: { type: 'complete_reflection' } }
      ]);
    }
    return xml(
      stageReflectionXml(stage, step.index, scenario.layout, stageDone)
    );
  }

  function plan(body: BccRequest, state: FsmState): IAnswer {
    switch (state) {
      case 'IDLE':
        return xml(stagesXml(BCC_STAGES, scenario.idleRoot, scenario.damage));
      case 'STAGE_RUNNING':
        return xml(stepsXml(currentStage(body)));
      case 'STEP_RUNNING': {
        const step = currentStep(body, currentStage(body));
        return xml(
          behaviorXml(
            step.step,
            completedBehaviors(body, step.step) + 1,
            csvPath(body),
            scenario.damage
          )
        );
      }
      default:
        if (scenario.reflecting === 'on-planning') {
          return reflect(body, state);
        }
        return unprocessable(
          `FSM state ${state} is answered by ${state === 'BEHAVIOR_RUNNING' ? '/generating' : '/reflecting'}, not /planning`
        );
    }
  }

  function generate(body: BccRequest, state: FsmState): IAnswer {
    if (state !== 'BEHAVIOR_RUNNING') {
      return unprocessable(
        `/generating answers the FSM state BEHAVIOR_RUNNING, not ${state}`
      );
    }
    const stage = currentStage(body);
    const step = currentStep(body, stage);
    const behavior = currentObject(body, 'behaviors', ['behavior_id']);
    const fromId = /_b(\d+)$/.exec(String(behavior.behavior_id));
    const iteration = Math.max(
      fromId ? Number(fromId[1]) : 1,
      completedBehaviors(body, step.step) + 1
    );
    const actions = generatingActions(body, stage, step, iteration);
    if (scenario.generating === 'array') {
      return textAnswer(
        200,
        'application/json',
        JSON.stringify(
          actions.map(a => (a.wrapped ? { action: a.action } : a.action)),
          null,
          2
        )
      );
    }
    return ndjson(
      actions.map(a => (a.wrapped ? { action: a.action } : a.action))
    );
  }

  return startDoubleServer('bcc', options, request => {
    const route =
      request.path === '/planning'
        ? plan
        : request.path === '/generating'
          ? generate
          : request.path === '/reflecting' &&
              scenario.reflecting !== 'on-planning'
            ? (body: BccRequest, state: FsmState) =>
                state === 'BEHAVIOR_COMPLETED' || state === 'STEP_COMPLETED'
                  ? reflect(body, state)
                  : unprocessable(
                      `/reflecting answers BEHAVIOR_COMPLETED or STEP_COMPLETED, not ${state}`
                    )
            : null;
    if (!route) {
      return notFound();
    }
    if (request.method !== 'POST') {
      return fastApiJson(405, { detail: 'Method Not Allowed' });
    }
    return answerRequest(request, route, options.strictBody ?? false);
  });
}

/** What a typed request model (FastAPI, pydantic) refuses in a body: one validation-list item. */
function strictRefusal(
  body: Record<string, unknown>
): Record<string, unknown> | null {
  const observation = isRecord(body.observation) ? body.observation : {};
  if ('context' in observation) {
    return {
      type: 'extra_forbidden',
      loc: ['body', 'observation', 'context'],
      msg: 'Extra inputs are not permitted',
      input: observation.context
    };
  }
  const location = isRecord(observation.location) ? observation.location : {};
  if ('goals' in location && typeof location.goals !== 'string') {
    return {
      type: 'string_type',
      loc: ['body', 'observation', 'location', 'goals'],
      msg: 'Input should be a valid string',
      input: location.goals
    };
  }
  return null;
}

function answerRequest(
  request: IDoubleRequest,
  route: (body: BccRequest, state: FsmState) => IAnswer,
  strict: boolean
): IAnswer {
  if (!isRecord(request.json)) {
    return unprocessable('the body must be a JSON object');
  }
  if (strict) {
    const refused = strictRefusal(request.json);
    if (refused) {
      return fastApiJson(422, { detail: [refused] });
    }
  }
  if (!isRecord(request.json.state)) {
    return unprocessable('the body has no state object');
  }
  const parsed = BccRequestSchema.safeParse(request.json);
  if (!parsed.success) {
    return unprocessable(
      parsed.error.issues
        .map(issue => `${issue.path.join('.')}: ${issue.message}`)
        .join('; ')
    );
  }
  const state = parsed.data.state.FSM.state.toUpperCase();
  const known = FSM_STATES.find(s => s === state);
  if (!known) {
    return unprocessable(`unknown FSM state ${parsed.data.state.FSM.state}`);
  }
  try {
    return route(parsed.data, known);
  } catch (error) {
    if (error instanceof PlanError) {
      return unprocessable(error.message);
    }
    throw error;
  }
}
