/**
 * The full observation (docs/protocol.md#observation) and the size limit of a request
 * (docs/protocol.md#request-size).
 */
import type {
  NotebookState,
  Observation,
  ObservationInput,
  OutputCheck,
  SectionProgress
} from '../protocol';
import type { INotebookSummary } from './ports/driver';
import { stepAttempts } from './ports/attempts';
import { IEffectsState, truncateOutput } from './state/effects';
import type { IFsmContext } from './state/fsm';
import type { ProgressReader } from './state/progress';

export interface IObservationParts {
  progress: ProgressReader;
  variables: Record<string, unknown>;
  effects: IEffectsState;
  notebook: INotebookSummary;
  fsm: IFsmContext;
  /** Superseded context (docs/protocol.md#be-liberal), echoed only to a planner that sent it. */
  legacy?: { toDoList?: string[]; section_progress?: SectionProgress };
  /** The latest checks of the contracts checked now (docs/protocol.md#output-contracts). */
  outputChecks?: Record<string, OutputCheck> | null;
}

/** The seed's four fields: the last cells and the execution count stay out of the observation. */
function seedNotebookSummary(notebook: INotebookSummary): NotebookState {
  const { title, cell_count, last_cell_type, last_output } = notebook;
  return { title, cell_count, last_cell_type, last_output };
}

export function buildObservation(parts: IObservationParts): Observation {
  const context: Observation['context'] = {
    variables: { ...parts.variables },
    effects: {
      current: [...parts.effects.current],
      history: [...parts.effects.history]
    },
    notebook: seedNotebookSummary(parts.notebook),
    FSM: { ...parts.fsm, transition: [...parts.fsm.transition] }
  };
  if (parts.legacy?.toDoList) {
    context.toDoList = [...parts.legacy.toDoList];
  }
  if (parts.legacy?.section_progress) {
    context.section_progress = { ...parts.legacy.section_progress };
  }
  if (parts.outputChecks) {
    context.output_checks = { ...parts.outputChecks };
  }
  const current = parts.progress.location();
  const attempts = stepAttempts(
    parts.notebook.attempts,
    current.step_id ?? null
  );
  if (attempts.length > 0) {
    context.cell_attempts = attempts;
  }
  // The user's notes on cells and steps (our extension): the notebook adapter reads and bounds them.
  if (parts.notebook.user_notes?.length) {
    context.user_notes = parts.notebook.user_notes.map(note => ({ ...note }));
  }
  return {
    location: {
      current,
      progress: parts.progress.toProgress(),
      goals: parts.progress.goals()
    },
    context
  };
}

export interface IFitReport {
  /** Serialized length before and after. */
  originalLength: number;
  finalLength: number;
  historyDropped: number;
  /** Human-readable steps taken, e.g. "12 history items dropped". */
  steps: string[];
  /** False when even the smallest form exceeds the limit: it is sent anyway. */
  fits: boolean;
  /** The note added to `observation.context.notices`, or null when nothing was trimmed. */
  note: string | null;
}

/** Room kept for the note that says what was trimmed. */
const NOTE_RESERVE = 300;

/** Longest string kept for a value in the first shortening pass; halved until things fit. */
const FIRST_VALUE_LIMIT = 4000;
const LAST_VALUE_LIMIT = 100;

function size(value: unknown): number {
  return JSON.stringify(value).length;
}

/**
 * Removes the fewest oldest items of `items` (a JSON array inside a document `total` characters long)
 * that bring the document within `budget`, keeping at least `keep`; each item is measured once.
 * Returns how many were removed.
 */
export function dropOldestToFit(
  items: unknown[],
  total: number,
  budget: number,
  keep = 0
): number {
  let count = 0;
  let remaining = total;
  while (remaining > budget && items.length - count > keep) {
    // An item and its comma; the last one left has no comma.
    const comma = items.length - count > 1 ? 1 : 0;
    remaining -= size(items[count]) + comma;
    count++;
  }
  if (count > 0) {
    items.splice(0, count);
  }
  return count;
}

function shorten(value: unknown, limit: number): unknown {
  if (typeof value === 'string') {
    return value.length > limit ? truncateOutput(value, limit) : value;
  }
  const json = JSON.stringify(value) ?? '';
  return json.length > limit ? truncateOutput(json, limit) : value;
}

/** The codes of the rewritten cells' attempts cut to `limit` (already bounded, they may still be long). */
function shortenAttempts(
  cells: { code: string; failed: { code: string }[] }[] | undefined,
  limit: number
): number {
  let shortened = 0;
  for (const cell of cells ?? []) {
    for (const item of [cell, ...cell.failed]) {
      if (item.code.length > limit) {
        item.code = truncateOutput(item.code, limit);
        shortened++;
      }
    }
  }
  return shortened;
}

/**
 * Keeps a request's serialized length within `maxChars`, trimming in this order until it fits: the oldest
 * `effects.history` items; the FSM transition history; details of completed items (actions taken,
 * artifacts); long values (variables, current effects, focus texts, last output) cut to a head and a tail,
 * halving the allowance down to 100 characters; the oldest current effects but the last; the oldest
 * completed items. A note in `effects.current` says what was done.
 *
 * When even that does not fit, the request is sent as it is with a note saying so: a planner that gets an
 * over-long request can still answer, a run that refuses to ask cannot go on.
 */
export function fitRequest<T extends { observation: ObservationInput }>(
  request: T,
  maxChars: number
): { request: T; report: IFitReport } {
  const originalLength = size(request);
  const report: IFitReport = {
    originalLength,
    finalLength: originalLength,
    historyDropped: 0,
    steps: [],
    fits: true,
    note: null
  };
  if (maxChars <= 0 || originalLength <= maxChars) {
    return { request, report };
  }
  const fitted = JSON.parse(JSON.stringify(request)) as T;
  const observation = fitted.observation;
  const context = observation.context ?? (observation.context = {});
  const budget = Math.max(0, maxChars - NOTE_RESERVE);
  // Measured once per pass, never once per dropped item (docs/protocol.md#limits).
  const fits = () => size(fitted) <= budget;
  const dropOldest = (items: unknown[], keep = 0): number =>
    dropOldestToFit(items, size(fitted), budget, keep);

  const history = context.effects?.history;
  if (history && history.length > 0) {
    report.historyDropped = dropOldest(history);
    if (report.historyDropped > 0) {
      report.steps.push(`${report.historyDropped} history items dropped`);
    }
  }

  if (!fits() && context.FSM?.transition && context.FSM.transition.length) {
    context.FSM.transition = [];
    report.steps.push('FSM history dropped');
  }

  const progress = observation.location.progress;
  const levels = [progress?.stages, progress?.steps, progress?.behaviors];
  if (!fits()) {
    let touched = false;
    for (const level of levels) {
      for (const item of level?.completed ?? []) {
        if (item.actions_taken || item.outputs_produced?.artifacts) {
          delete item.actions_taken;
          if (item.outputs_produced) {
            delete item.outputs_produced.artifacts;
          }
          touched = true;
        }
      }
    }
    if (touched) {
      report.steps.push('details of completed items dropped');
    }
  }

  let shortened = 0;
  for (
    let limit = FIRST_VALUE_LIMIT;
    limit >= LAST_VALUE_LIMIT && !fits();
    limit = Math.floor(limit / 2)
  ) {
    const variables = context.variables ?? {};
    for (const name of Object.keys(variables)) {
      const next = shorten(variables[name], limit);
      if (next !== variables[name]) {
        variables[name] = next;
        shortened++;
      }
    }
    const current = context.effects?.current ?? [];
    current.forEach((text, i) => {
      if (text.length > limit) {
        current[i] = truncateOutput(text, limit);
        shortened++;
      }
    });
    for (const level of levels) {
      if (level?.focus && level.focus.length > limit) {
        level.focus = truncateOutput(level.focus, limit);
        shortened++;
      }
    }
    const notebook = context.notebook;
    if (notebook?.last_output && notebook.last_output.length > limit) {
      notebook.last_output = truncateOutput(notebook.last_output, limit);
      shortened++;
    }
    shortened += shortenAttempts(context.cell_attempts, limit);
  }
  if (shortened > 0) {
    report.steps.push(`${shortened} long values shortened`);
  }

  const current = context.effects?.current;
  if (current && current.length > 1 && !fits()) {
    const dropped = dropOldest(current, 1);
    report.steps.push(`${dropped} older current effects dropped`);
  }

  if (!fits()) {
    let dropped = 0;
    for (const level of levels) {
      const completed = level?.completed;
      if (completed && completed.length > 0) {
        dropped += dropOldest(completed);
      }
    }
    if (dropped > 0) {
      report.steps.push(`${dropped} oldest completed items dropped`);
    }
  }

  report.fits = fits();
  const done = report.steps.length > 0 ? report.steps.join(', ') : 'nothing';
  report.note = report.fits
    ? `[context trimmed: ${done} to fit ${maxChars} characters]`
    : `[context trimmed: ${done}; still over ${maxChars} characters, sent as is]`;
  // Beside the effects, never among them: effects are what the code produced (docs/protocol.md#request-size).
  context.notices = [...(context.notices ?? []), report.note];
  report.finalLength = size(fitted);
  return { request: fitted, report };
}
