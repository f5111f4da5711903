/**
 * The `v1` adapter's fields: entry point, saved state, and the reading of the server's `state`
 * (docs/dialects.md#v1).
 */
import { isRecord, JsonObject } from '../../fields';
import type { ObservationInput } from '../../schemas';
import type { IPlannerTransport } from '../../transport';
import { DialectLog, parseJson } from '../common';

export const V1_ENTRY_STAGE_ID = 'chapter_0_planning';
export const V1_ENTRY_STEP_ID = 'section_1_design_workflow';

/** The names the server reads from `state.variables` that come from the user's task. */
export const TASK_VARIABLES = [
  'user_goal',
  'problem_description',
  'context_description',
  'csv_file_path',
  'target_variable',
  'problem_name'
] as const;

/** Engine notices that are not exec outputs: the server reads `effect.current[0]` as the last output. */
export const NOTICE_PREFIXES = ['⚠️ WARN:', 'next_event:'];

export interface IV1Options {
  transport: IPlannerTransport;
  /** The server's fixed entry point, run first when the run has no template. */
  entryStageId?: string;
  entryStepId?: string;
  /** Bound of `effect.history`. Default 50. */
  historyLimit?: number;
  log?: DialectLog;
}

/** What the adapter saves with the run (docs/dialects.md#v1, stop and resume). */
export interface IV1SavedState {
  dialect: 'v1';
  state: JsonObject;
  nextStep: string | null;
  /** The stage of the header that named `nextStep` (absent in older saves). */
  nextStepOf?: string | null;
  /** The last `v1/actions` answer was read to its end. */
  streamComplete: boolean;
  stepKey: string | null;
  behaviors: number;
  /** An action of the current step has arrived (absent in older saves). */
  stepActed?: boolean;
  nextStageId: string | null;
  /** Variables the server asked for; the user's values for them are sent (absent in older saves). */
  askedVariables?: string[];
}

/** A state the adapter saved (`IV1SavedState`), or null: a notebook file is untrusted input. */
export function readV1Saved(
  saved: unknown
): (JsonObject & { state: JsonObject }) | null {
  return isRecord(saved) && isRecord(saved.state)
    ? { ...saved, state: saved.state }
    : null;
}

export function emptyTodo(state: JsonObject): boolean {
  return !Array.isArray(state.toDoList) || state.toDoList.length === 0;
}

export function lastTodo(state: JsonObject): string | null {
  const list = state.toDoList;
  if (!Array.isArray(list) || list.length === 0) {
    return null;
  }
  const last = list[list.length - 1];
  return typeof last === 'string' ? last : JSON.stringify(last);
}

const isSpace = (char: string | undefined) =>
  char !== undefined && char.trim() === '';

/** A name the server keeps a variable under (`user_goal`, `top_5_lines`), not a path or a phrase. */
const VARIABLE_NAME = /^[\p{L}_][\p{L}\p{N}_]*$/u;

/**
 * `['user_goal', 'csv_file_path']` at the end of a text (then optionally `.` or `。`) -> the names;
 * null when the text does not end with such a list. One pass over the text, whatever it holds: a
 * planner's answer must not be able to stall the page.
 */
export function missingVariableNames(text: string): string[] | null {
  let end = text.length;
  while (isSpace(text[end - 1])) {
    end--;
  }
  if (text[end - 1] === '.' || text[end - 1] === '。') {
    end--;
    while (isSpace(text[end - 1])) {
      end--;
    }
  }
  const close = end - 1;
  if (text[close] !== ']') {
    return null;
  }
  const open = text.lastIndexOf('[', close);
  if (open < 0) {
    return null;
  }
  const names: string[] = [];
  let at = open + 1;
  for (;;) {
    while (isSpace(text[at])) {
      at++;
    }
    if (at === close) {
      break;
    }
    const quote = text[at];
    if (quote !== "'" && quote !== '"') {
      return null;
    }
    const closing = text.indexOf(quote, at + 1);
    if (closing < 0 || closing > close) {
      return null;
    }
    const name = text.slice(at + 1, closing);
    if (!VARIABLE_NAME.test(name)) {
      return null;
    }
    names.push(name);
    at = closing + 1;
    while (isSpace(text[at])) {
      at++;
    }
    if (text[at] === ',') {
      at++;
    }
  }
  return names.length > 0 ? names : null;
}

/**
 * The data as the task variable `context_description` describes it: the data files, and the rows and
 * columns of the first DataFrame among the run's variable summaries (`DataFrame(240×4)`); null with no
 * data file.
 */
export function describeData(
  variables: Record<string, unknown>
): string | null {
  const files = Array.isArray(variables.data_files)
    ? variables.data_files.filter((f): f is string => typeof f === 'string')
    : typeof variables.csv_file_path === 'string'
      ? [variables.csv_file_path]
      : [];
  if (files.length === 0) {
    return null;
  }
  for (const value of Object.values(variables)) {
    const shape =
      typeof value === 'string'
        ? /^DataFrame\((\d[\d,]*)\s*[×x]\s*(\d[\d,]*)\)/.exec(value)
        : null;
    if (shape) {
      return `${files.join(', ')}, ${shape[1]} x ${shape[2]}`;
    }
  }
  return files.join(', ');
}

/** `context_description` when the run has no data file: the server requires a non-empty one. */
export const NO_DATA_DESCRIPTION = 'No data file was given.';

/** How long a `problem_name` made from the task may be (the notebook's title is made of it). */
const PROBLEM_NAME_LENGTH = 60;

/**
 * The task's first sentence with a few letters or digits in it (not a list number such as `1.`) as
 * `problem_name`, which the entry step requires and titles the notebook with: cut at a word before
 * 60 characters. Never null for a task with anything in it.
 */
export function problemName(task: string): string | null {
  const text = task.trim();
  if (!text) {
    return null;
  }
  const sentences = text
    .split(/[\r\n\u2028\u2029]+|(?<=[.!?])\s+|[。！？]/u)
    .map(s => s.trim());
  const first =
    sentences.find(s => (s.match(/[\p{L}\p{N}]/gu) ?? []).length >= 3) ?? text;
  const chars = [...first];
  if (chars.length <= PROBLEM_NAME_LENGTH) {
    return first;
  }
  const cut = chars.slice(0, PROBLEM_NAME_LENGTH).join('');
  const space = cut.lastIndexOf(' ');
  return `${(space > PROBLEM_NAME_LENGTH / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** `<stage>_<section>`, the form the server matches first. */
export function fullStepIndex(stageId: string, stepId: string): string {
  return stepId.startsWith(`${stageId}_`) ? stepId : `${stageId}_${stepId}`;
}

export function sectionOf(stageId: string, stepId: string): string {
  return stepId.startsWith(`${stageId}_`)
    ? stepId.slice(stageId.length + 1)
    : stepId;
}

export function dropNulls(fields: JsonObject): JsonObject {
  return Object.fromEntries(
    Object.entries(fields).filter(([, value]) => value !== null)
  );
}

export function detailOf(text: string): string {
  const parsed = parseJson(text);
  if (!parsed.ok || !isRecord(parsed.value)) {
    return text.trim();
  }
  const detail = parsed.value.detail;
  if (typeof detail === 'string') {
    return detail;
  }
  if (Array.isArray(detail)) {
    return detail
      .map(item =>
        isRecord(item)
          ? `${Array.isArray(item.loc) ? item.loc.join('.') : ''}: ${String(item.msg ?? '')}`
          : String(item)
      )
      .join('; ');
  }
  return text.trim();
}

export interface ILocation {
  stageId: string | null;
  stepId: string | null;
}

export function locationOf(
  observation: ObservationInput | undefined
): ILocation {
  const current = observation?.location?.current;
  return {
    stageId: current?.stage_id ?? null,
    stepId: current?.step_id ?? null
  };
}

export function isMissing(value: unknown): boolean {
  return (
    value === undefined ||
    value === null ||
    value === '' ||
    (Array.isArray(value) && value.length === 0) ||
    (isRecord(value) && Object.keys(value).length === 0)
  );
}
