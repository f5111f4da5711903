/**
 * What the planner reads from an observation. Everything here works on whatever part of the
 * observation the client sent, so a filtered /generating payload and a resumed run both make sense.
 */
import type { BehaviorFeedback, Observation } from '../protocol';

export function variablesOf(observation: Observation): Record<string, unknown> {
  return observation.context?.variables ?? {};
}

export function hasVariable(observation: Observation, name: string): boolean {
  const value = variablesOf(observation)[name];
  return value !== undefined && value !== null;
}

function stringVariable(
  observation: Observation,
  names: string[]
): string | null {
  const variables = variablesOf(observation);
  for (const name of names) {
    const value = variables[name];
    if (typeof value === 'string' && value.trim()) {
      return value.trim();
    }
    if (
      Array.isArray(value) &&
      typeof value[0] === 'string' &&
      value[0].trim()
    ) {
      return value[0].trim();
    }
  }
  return null;
}

export const TASK_VARIABLES = [
  'problem_description',
  'task',
  'task_description'
];
export const DATA_PATH_VARIABLES = [
  'csv_file_path',
  'data_path',
  'data_file',
  'csv_path',
  'data_files'
];

export function taskOf(observation: Observation): string {
  return stringVariable(observation, TASK_VARIABLES) ?? '';
}

export function dataPathOf(observation: Observation): string | null {
  return stringVariable(observation, DATA_PATH_VARIABLES);
}

/** A target column the client set (or the planner set earlier, once the data showed it). */
export function targetVariableOf(observation: Observation): string | null {
  return stringVariable(observation, ['target_column', 'target']);
}

export interface IPosition {
  stageId: string | null;
  stepId: string | null;
  /** Behaviors of the current step the client has started, from 0 at the step's start. */
  iteration: number;
}

function idOf(value: unknown): string | null {
  if (typeof value === 'string' && value) {
    return value;
  }
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    for (const key of ['step_id', 'stage_id', 'id']) {
      if (typeof record[key] === 'string' && record[key]) {
        return record[key] as string;
      }
    }
  }
  return null;
}

export function positionOf(observation: Observation): IPosition {
  const location = observation.location;
  const current = location.current;
  const progress = location.progress;
  const iteration =
    current?.behavior_iteration ??
    progress?.behaviors?.iteration ??
    progress?.behaviors?.completed.length ??
    0;
  return {
    stageId: current?.stage_id ?? idOf(progress?.stages?.current),
    stepId: current?.step_id ?? idOf(progress?.steps?.current),
    iteration
  };
}

export function effectTexts(
  observation: Observation,
  which: 'current' | 'all'
): string[] {
  const effects = observation.context?.effects;
  if (!effects) {
    return [];
  }
  return which === 'current'
    ? [...effects.current]
    : [...effects.history, ...effects.current];
}

const TRACEBACK = /Traceback \(most recent call last\)/;
const ERROR_LINE =
  /^\s*(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception)\b:?.*$/gm;

/** The most telling error line of the latest effect that holds an error, e.g. `KeyError: 'SalePrice'`. */
export function lastErrorIn(texts: readonly string[]): string | null {
  for (let i = texts.length - 1; i >= 0; i--) {
    const text = texts[i];
    const lines = text.match(ERROR_LINE);
    if (lines && lines.length) {
      return lines[lines.length - 1].trim().slice(0, 400);
    }
    if (TRACEBACK.test(text)) {
      return text.trim().split('\n').pop()?.slice(0, 400) ?? 'Traceback';
    }
  }
  return null;
}

/** Did the behavior that just ran fail? Only asked when the request carries its feedback. */
export function behaviorFailed(
  observation: Observation,
  feedback: BehaviorFeedback | undefined
): boolean {
  if (!feedback) {
    return false;
  }
  if (feedback.last_action_result === 'error') {
    return true;
  }
  return lastErrorIn(effectTexts(observation, 'current')) !== null;
}

/** A short description of a variable's kernel summary for the focus text. */
export function describeVariable(
  observation: Observation,
  name: string
): string {
  const value = variablesOf(observation)[name];
  if (value === undefined) {
    return 'not present';
  }
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
