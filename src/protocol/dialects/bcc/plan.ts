/**
 * The plan and FSM state the `bcc` adapter keeps between requests (docs/dialects.md#bcc).
 */
import { JsonObject } from '../../fields';
import type { IPlannerTransport } from '../../transport';
import { IBehaviorDef, INamed, IStageDef, IStepDef } from './answers';
import { DialectLog } from '../common';
import { IXmlElement } from '../xml';

export const DEFAULT_BCC_IDLE_GOALS =
  'Split the user problem into stages, each with the artifacts it must produce. Problem: %user_problem%. Data files: %user_submit_files%.';

export type FsmName =
  | 'IDLE'
  | 'STAGE_RUNNING'
  | 'STEP_RUNNING'
  | 'BEHAVIOR_RUNNING'
  | 'BEHAVIOR_COMPLETED'
  | 'STEP_COMPLETED'
  | 'STAGE_COMPLETED'
  | 'WORKFLOW_COMPLETED';

export interface ILevel<T> {
  current: T | null;
  remaining: T[];
  completed: (T & JsonObject)[];
  focus?: string;
  expected: INamed[];
  produced: string[];
  in_progress: string[];
}

export interface IPlan {
  title?: string;
  stages: ILevel<IStageDef>;
  steps: ILevel<IStepDef>;
  behaviors: ILevel<IBehaviorDef>;
  iteration: number;
  /** The stage whose steps are in `steps`. */
  stepsOf: string | null;
  /**
   * The steps of the stages left behind, by stage id: the template the client sends back (a stage
   * goal update) keeps them, or it would look like a new workflow. Absent in older saves.
   */
  pastSteps?: Record<string, IStepDef[]>;
  /** The `<focus>` of the current stage's `<steps>`: a step's focus when nothing more specific came. */
  stepListFocus?: string;
  /** The `<if_moving_forward>` of the last step verdict: the next step's focus unless the stage reflection names one. */
  movingForward?: string;
  /**
   * What the current stage's reflections said of it (`experience_summary`, the last one's;
   * `key_findings`, all of them): kept on its record when it completes. Absent in older saves.
   */
  stageNotes?: { experience_summary?: string; key_findings?: string[] };
  goals: string;
  fsm: { state: FsmName; last_transition: string; previous_state?: FsmName };
  variables: JsonObject;
}

export interface IBccOptions {
  transport: IPlannerTransport;
  notebookId?: string | null;
  /** `location.goals` at IDLE; `%name%` is replaced by `state.variables.name`. */
  idleGoals?: string;
  log?: DialectLog;
  now?: () => Date;
}

export function level<T>(): ILevel<T> {
  return {
    current: null,
    remaining: [],
    completed: [],
    expected: [],
    produced: [],
    in_progress: []
  };
}

/** The current stage's steps, in order: done, current, to come (a completed current step once). */
export function stepList(plan: IPlan): IStepDef[] {
  const all = [
    ...plan.steps.completed,
    ...(plan.steps.current ? [plan.steps.current] : []),
    ...plan.steps.remaining
  ];
  return all.filter(
    (step, i) => all.findIndex(s => s.step_id === step.step_id) === i
  );
}

export function emptyPlan(): IPlan {
  return {
    stages: level(),
    steps: level(),
    behaviors: level(),
    iteration: 0,
    stepsOf: null,
    goals: '',
    fsm: { state: 'IDLE', last_transition: 'RESET' },
    variables: {}
  };
}

/** The fields of a stage, step or behavior that name things: lists here, maps on the wire. */
const NAMED_FIELDS = ['verified_artifacts', 'required_variables', 'outputs'];

/** A stage, step or behavior as the BCC client sends it: each named list as a `{name: description}` map. */
function sentDefinition(definition: object): JsonObject {
  const sent: JsonObject = { ...definition };
  for (const field of NAMED_FIELDS) {
    const list = sent[field];
    if (Array.isArray(list)) {
      sent[field] = Object.fromEntries(
        (list as INamed[]).map(item => [item.name, item.description])
      );
    }
  }
  return sent;
}

/** One level of `progress`; `current_outputs.expected` stays a list of `{name, description}`. */
export function levelJson<T extends object>(item: ILevel<T>): JsonObject {
  return {
    current: item.current && sentDefinition(item.current),
    remaining: item.remaining.map(sentDefinition),
    completed: item.completed.map(sentDefinition),
    ...(item.focus !== undefined ? { focus: item.focus } : {}),
    current_outputs: {
      expected: item.expected,
      produced: item.produced,
      in_progress: item.in_progress
    }
  };
}

export function stageName(stage: IStageDef): string {
  return stage.optional ? `${stage.title} (optional)` : stage.title;
}

export function substitute(text: string, variables: JsonObject): string {
  return text.replace(/%([A-Za-z0-9_]+)%/g, (whole, name: string) => {
    const value = variables[name];
    if (value === undefined) {
      return whole;
    }
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
}

/** `<step>…<step>…<focus>…` with no `<steps>` wrapper: the list the roots form. */
export function unwrappedList(roots: IXmlElement[]): IXmlElement | null {
  for (const [item, list] of [
    ['step', 'steps'],
    ['stage', 'stages']
  ]) {
    if (roots.some(root => root.name.toLowerCase() === item)) {
      return { name: list, attributes: {}, children: roots };
    }
  }
  return null;
}

/**
 * Stages or steps as an LLM may write them, some without an id: each gets one from its title (its
 * letters and digits joined by `_`), else `<prefix>_<n>`; a repeated id gets `_2`, `_3`, ... The
 * client keys its plan by these ids, so none may be empty or shared.
 */
export function withIds<T extends { title: string }>(
  items: T[],
  key: 'stage_id' | 'step_id',
  prefix: string
): T[] {
  const used = new Set<string>();
  return items.map((item, index) => {
    const given = String((item as Record<string, unknown>)[key] ?? '').trim();
    const base =
      given ||
      item.title
        .toLowerCase()
        .replace(/[^\p{L}\p{N}]+/gu, '_')
        .replace(/^_+|_+$/g, '') ||
      `${prefix}_${index + 1}`;
    let id = base;
    for (let n = 2; used.has(id); n++) {
      id = `${base}_${n}`;
    }
    used.add(id);
    return id === given ? item : { ...item, [key]: id };
  });
}
