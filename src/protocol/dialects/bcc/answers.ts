/**
 * The answers of a `bcc` planner read into plain records: `<stages>`/`<workflow>`, `<steps>`,
 * `<behavior>`, `<reflection>`, `<stage_reflection>`, or the same as JSON, and the NDJSON reflection
 * form (docs/dialects.md#bcc).
 */
import { isRecord, JsonObject } from '../../fields';
import { asString } from '../common';
import {
  attr,
  child,
  childrenNamed,
  elements,
  find,
  findAll,
  IXmlElement,
  textOf
} from '../xml';

export interface INamed {
  name: string;
  description: string;
}

export interface IStageDef {
  stage_id: string;
  title: string;
  goal: string;
  verified_artifacts: INamed[];
  required_variables: INamed[];
  optional?: boolean;
  insert_after?: string;
  insert_before?: string;
  replaces?: string;
}

export interface IStepDef {
  step_id: string;
  title: string;
  goal: string;
  verified_artifacts: INamed[];
  required_variables: INamed[];
  pcs_considerations?: Record<string, string>;
}

export interface IBehaviorDef {
  behavior_id: string;
  step_id: string;
  agent: string;
  task: string;
  inputs: Record<string, string>;
  outputs: INamed[];
  acceptance: string[];
  whathappened?: Happened;
}

/** `<whathappened>`: its fields (`overview`, `background`, …) as the BCC client sends them, or its text. */
export type Happened = string | JsonObject;

export interface IStagesAnswer {
  kind: 'stages';
  title?: string;
  description?: string;
  focus?: string;
  goals?: string;
  stages: IStageDef[];
}

export interface IStepsAnswer {
  kind: 'steps';
  focus?: string;
  goals?: string;
  steps: IStepDef[];
}

export interface IBehaviorAnswer {
  kind: 'behavior';
  behavior: IBehaviorDef;
}

export interface IOutputsUpdate {
  produced: string[];
  in_progress: string[];
  remaining: string[];
}

/** What a reflection (behavior or stage level, XML or NDJSON) decides. */
export interface IReflection {
  kind: 'reflection' | 'stage_reflection';
  /** Behavior level: the step is complete. */
  stepComplete: boolean;
  /** Stage level: the stage is complete. */
  stageComplete: boolean;
  variables: JsonObject;
  /** `<save_current_effect name>`: this variable gets the current effects. */
  saveEffectAs?: string;
  outputs?: IOutputsUpdate;
  nextStepId?: string;
  /** Focus for what comes next (next behavior or next step). */
  focus?: string;
  reasoning?: string;
  progressPercent?: string;
  whathappened?: Happened;
  /** A stage reflection's `<experience_summary>`: kept on the stage record. */
  experienceSummary?: string;
  /** A stage reflection's `<key_findings>` (each `<finding>`, or the element's text): kept on the stage record. */
  keyFindings?: string[];
  proposedGoal?: string;
  needsMoreSteps: boolean;
  /** Markdown comment cells (NDJSON form). */
  comments: string[];
  /** The two signals of completion disagree. */
  conflict?: string;
  ndjson: boolean;
}

export type PlanningAnswer = IStagesAnswer | IStepsAnswer | IBehaviorAnswer;

const TRUE = /^\s*(true|yes|1)\s*$/i;

function named(element: IXmlElement | undefined, tag: string): INamed[] {
  return childrenNamed(element, tag).map(item => ({
    name: attr(item, 'name') ?? textOf(item),
    description: attr(item, 'name') !== undefined ? textOf(item) : ''
  }));
}

function optionalText(element: IXmlElement | undefined): string | undefined {
  const text = textOf(element);
  return element && text ? text : undefined;
}

function stageOf(element: IXmlElement): IStageDef {
  const stage: IStageDef = {
    stage_id: attr(element, 'id') ?? attr(element, 'stage_id') ?? '',
    title: attr(element, 'title') ?? textOf(child(element, 'title')),
    goal: textOf(child(element, 'goal')),
    verified_artifacts: named(child(element, 'verified_artifacts'), 'variable'),
    required_variables: named(child(element, 'required_variables'), 'variable')
  };
  if (TRUE.test(attr(element, 'optional') ?? '')) {
    stage.optional = true;
  }
  for (const key of ['insert_after', 'insert_before', 'replaces'] as const) {
    const value = attr(element, key);
    if (value !== undefined) {
      stage[key] = value;
    }
  }
  stage.title ||= stage.stage_id;
  return stage;
}

function stepOf(element: IXmlElement): IStepDef {
  const step: IStepDef = {
    step_id: attr(element, 'id') ?? attr(element, 'step_id') ?? '',
    title: attr(element, 'title') ?? textOf(child(element, 'title')),
    goal: textOf(child(element, 'goal')),
    verified_artifacts: named(child(element, 'verified_artifacts'), 'variable'),
    required_variables: named(child(element, 'required_variables'), 'variable')
  };
  const pcs = child(element, 'pcs_considerations');
  if (pcs) {
    step.pcs_considerations = {};
    for (const key of ['predictability', 'computability', 'stability']) {
      const value = optionalText(child(pcs, key));
      if (value !== undefined) {
        step.pcs_considerations[key] = value;
      }
    }
  }
  step.title ||= step.step_id;
  return step;
}

function behaviorOf(element: IXmlElement): IBehaviorDef {
  const task = child(element, 'task');
  const inputs: Record<string, string> = {};
  for (const variable of childrenNamed(child(element, 'inputs'), 'variable')) {
    inputs[attr(variable, 'name') ?? ''] = textOf(variable);
  }
  const behavior: IBehaviorDef = {
    behavior_id:
      attr(element, 'id') ??
      attr(element, 'behavior_id') ??
      attr(task, 'behavior_id') ??
      '',
    step_id: attr(element, 'step_id') ?? '',
    agent: textOf(child(element, 'agent')),
    task: textOf(task),
    inputs,
    outputs: named(child(element, 'outputs'), 'artifact'),
    acceptance: childrenNamed(child(element, 'acceptance'), 'criterion').map(
      textOf
    )
  };
  const happened = happenedOf(child(element, 'whathappened'));
  if (happened) {
    behavior.whathappened = happened;
  }
  return behavior;
}

/** An element with element children as `{child: text}` (a repeated child: a list); else its text. */
function happenedOf(element: IXmlElement | undefined): Happened | undefined {
  const parts = elements(element);
  if (parts.length === 0) {
    return optionalText(element);
  }
  const fields: JsonObject = {};
  for (const part of parts) {
    const value = textOf(part).trim();
    const before = fields[part.name];
    fields[part.name] =
      before === undefined
        ? value
        : [...(Array.isArray(before) ? before : [before]), value];
  }
  return fields;
}

/** A planning answer's root element -> its record; null for a root this reader does not know. */
export function planningAnswerFromXml(
  root: IXmlElement
): PlanningAnswer | null {
  switch (root.name.toLowerCase()) {
    case 'workflow': {
      const stages = child(root, 'stages');
      const inner = stages ? planningAnswerFromXml(stages) : null;
      const answer: IStagesAnswer =
        inner?.kind === 'stages'
          ? inner
          : { kind: 'stages', stages: findAll(root, 'stage').map(stageOf) };
      answer.title = optionalText(child(root, 'title')) ?? answer.title;
      answer.description =
        optionalText(child(root, 'description')) ?? answer.description;
      return answer;
    }
    case 'stages':
      return {
        kind: 'stages',
        stages: findAll(root, 'stage').map(stageOf),
        focus: optionalText(child(root, 'focus')),
        goals: optionalText(child(root, 'goals')),
        title: optionalText(child(root, 'title')),
        description: optionalText(child(root, 'description'))
      };
    case 'steps':
      return {
        kind: 'steps',
        steps: findAll(root, 'step').map(stepOf),
        focus: optionalText(child(root, 'focus')),
        goals: optionalText(child(root, 'goals'))
      };
    case 'behavior':
      return { kind: 'behavior', behavior: behaviorOf(root) };
  }
  return null;
}

/** A description in a JSON answer: text as it is, any other value as JSON. */
function descriptionJson(value: unknown): string {
  if (value === undefined || value === null) {
    return '';
  }
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Named things in a JSON answer: a `{name: description}` map (as the BCC client sends them) or a list. */
function namedJson(raw: unknown): INamed[] {
  if (isRecord(raw)) {
    return Object.entries(raw).map(([name, description]) => ({
      name,
      description: descriptionJson(description)
    }));
  }
  if (!Array.isArray(raw)) {
    return [];
  }
  return raw.map(item =>
    isRecord(item)
      ? {
          name: String(item.name ?? item.variable_name ?? ''),
          description: descriptionJson(item.description ?? item.value)
        }
      : { name: String(item), description: '' }
  );
}

/** A JSON planning answer in the parsed shape (`stages`, `steps`, or a behavior with `behavior_id`). */
export function planningAnswerFromJson(
  body: JsonObject
): PlanningAnswer | null {
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  if (Array.isArray(body.stages)) {
    return {
      kind: 'stages',
      title: asString(body.title),
      description: asString(body.description),
      focus: asString(body.focus),
      goals: asString(body.goals),
      stages: body.stages.filter(isRecord).map(s => ({
        stage_id: text(s.stage_id ?? s.id),
        title: text(s.title ?? s.name) || text(s.stage_id ?? s.id),
        goal: text(s.goal),
        verified_artifacts: namedJson(s.verified_artifacts),
        required_variables: namedJson(s.required_variables),
        ...(s.optional === true ? { optional: true } : {})
      }))
    };
  }
  if (Array.isArray(body.steps)) {
    return {
      kind: 'steps',
      focus: asString(body.focus),
      goals: asString(body.goals),
      steps: body.steps.filter(isRecord).map(s => ({
        step_id: text(s.step_id ?? s.id),
        title: text(s.title ?? s.name) || text(s.step_id ?? s.id),
        goal: text(s.goal),
        verified_artifacts: namedJson(s.verified_artifacts),
        required_variables: namedJson(s.required_variables)
      }))
    };
  }
  // Under `behavior` it is one even without an id (`<step_id>_b<n>` is given later); at the top level
  // only `behavior_id` says so.
  const behavior = isRecord(body.behavior) ? body.behavior : body;
  if (isRecord(body.behavior) || typeof behavior.behavior_id === 'string') {
    return {
      kind: 'behavior',
      behavior: {
        behavior_id: text(behavior.behavior_id ?? behavior.id),
        step_id: text(behavior.step_id),
        agent: text(behavior.agent),
        task: text(behavior.task),
        inputs: Object.fromEntries(
          namedJson(behavior.inputs).map(input => [
            input.name,
            input.description
          ])
        ),
        outputs: namedJson(behavior.outputs),
        acceptance: Array.isArray(behavior.acceptance)
          ? behavior.acceptance.map(String)
          : []
      }
    };
  }
  return null;
}

function artifactNames(element: IXmlElement | undefined): string[] {
  return childrenNamed(element, 'artifact')
    .map(a => attr(a, 'name') ?? textOf(a))
    .filter(Boolean);
}

function outputsOf(
  element: IXmlElement | undefined
): IOutputsUpdate | undefined {
  if (!element) {
    return undefined;
  }
  return {
    produced: artifactNames(child(element, 'produced')),
    in_progress: artifactNames(child(element, 'in_progress')),
    remaining: artifactNames(child(element, 'remaining'))
  };
}

function variablesOf(element: IXmlElement | undefined): JsonObject {
  const variables: JsonObject = {};
  for (const variable of childrenNamed(element, 'variable')) {
    const name = attr(variable, 'name');
    if (name) {
      variables[name] = attr(variable, 'value') ?? textOf(variable);
    }
  }
  return variables;
}

function emptyReflection(kind: IReflection['kind']): IReflection {
  return {
    kind,
    stepComplete: false,
    stageComplete: false,
    variables: {},
    needsMoreSteps: false,
    comments: [],
    ndjson: false
  };
}

/** `<reflection>` or `<stage_reflection>`; null for another root. */
export function reflectionFromXml(root: IXmlElement): IReflection | null {
  const name = root.name.toLowerCase();
  const decision = child(root, 'decision');
  // `Step Completed`, `step-completed` and `STEP_COMPLETED` alike.
  const nextState = textOf(child(decision, 'next_state'))
    .toUpperCase()
    .replace(/[\s-]+/g, '_');
  const context = child(root, 'context_for_next');
  if (name === 'reflection') {
    const result = emptyReflection('reflection');
    // The older BCC client asked for `current_behavior_is_complete` and read it as the step's completion.
    const attributeName = [
      'current_step_is_complete',
      'current_behavior_is_complete'
    ].find(name => attr(root, name) !== undefined);
    const attribute = attributeName ? attr(root, attributeName) : undefined;
    const byAttribute = TRUE.test(attribute ?? '');
    const running =
      nextState.includes('STEP_RUNNING') ||
      nextState.includes('STATE_STEP_RUNNING');
    result.stepComplete = nextState.includes('STEP_COMPLETED')
      ? true
      : running
        ? false
        : byAttribute;
    if (
      attribute !== undefined &&
      nextState &&
      byAttribute !== result.stepComplete
    ) {
      result.conflict = `${attributeName}="${attribute}" but next_state ${nextState}`;
    }
    result.variables = variablesOf(child(context, 'variables_produced'));
    result.saveEffectAs = attr(find(root, 'save_current_effect'), 'name');
    result.outputs = outputsOf(child(root, 'outputs_tracking_update'));
    const recommendations = child(context, 'recommendations_for_next');
    result.focus = optionalText(
      child(
        recommendations,
        result.stepComplete ? 'if_moving_forward' : 'if_continuing_behavior'
      )
    );
    result.reasoning =
      optionalText(child(decision, 'reasoning')) ??
      optionalText(child(find(root, 'goal_achievement'), 'reasoning'));
    result.whathappened = happenedOf(child(context, 'whathappened'));
    return result;
  }
  if (name === 'stage_reflection') {
    const result = emptyReflection('stage_reflection');
    result.stepComplete = true;
    result.stageComplete =
      TRUE.test(attr(root, 'stage_is_complete') ?? '') ||
      nextState.includes('STAGE_COMPLETED');
    const continuing = child(context, 'if_continuing_stage');
    result.nextStepId = optionalText(child(continuing, 'next_step_id'));
    result.focus =
      optionalText(child(continuing, 'next_step_focus')) ??
      optionalText(child(decision, 'next_focus'));
    result.variables = variablesOf(
      child(continuing, 'variables_to_carry_forward')
    );
    const outputs =
      child(child(root, 'outputs_tracking_update'), 'stage_level') ??
      child(root, 'outputs_update');
    result.outputs = outputsOf(outputs);
    result.reasoning = optionalText(child(decision, 'reasoning'));
    const progress = find(root, 'stage_progress', 'progress');
    result.progressPercent =
      attr(progress, 'progress_percentage') ??
      attr(progress, 'percentage') ??
      optionalText(child(progress, 'progress_percentage')) ??
      optionalText(child(progress, 'percentage'));
    const review = child(root, 'stage_goal_review');
    const needsUpdate =
      attr(review, 'needs_update') ?? textOf(child(review, 'needs_update'));
    if (TRUE.test(needsUpdate ?? '')) {
      result.proposedGoal =
        attr(review, 'proposed_goal') ??
        optionalText(child(review, 'proposed_goal'));
    }
    result.needsMoreSteps = TRUE.test(
      attr(child(root, 'plan_new_steps'), 'needs_more_steps') ?? ''
    );
    result.experienceSummary = optionalText(find(root, 'experience_summary'));
    const findings = find(root, 'key_findings');
    const listed = childrenNamed(findings, 'finding')
      .map(textOf)
      .filter(Boolean);
    const findingsText = optionalText(findings);
    result.keyFindings =
      listed.length > 0 ? listed : findingsText ? [findingsText] : undefined;
    result.whathappened =
      result.experienceSummary ?? result.keyFindings?.join('; ');
    return result;
  }
  return null;
}

/** The NDJSON reflection form: comment cells, `mark_step_complete`, `mark_stage_complete`. */
export function reflectionFromNdjson(messages: unknown[]): IReflection {
  const result = emptyReflection('reflection');
  result.ndjson = true;
  for (const message of messages) {
    const action =
      isRecord(message) && isRecord(message.action) ? message.action : message;
    if (!isRecord(action)) {
      continue;
    }
    const type = String(action.type ?? action.action ?? '');
    const content = asString(action.content) ?? asString(action.text);
    switch (type) {
      case 'add-text':
      case 'add_text':
      case 'add':
        if (content) {
          result.comments.push(content);
        }
        break;
      case 'mark_step_complete':
        result.stepComplete = true;
        break;
      case 'mark_stage_complete':
        result.stepComplete = true;
        result.stageComplete = true;
        break;
    }
  }
  return result;
}
