/**
 * What the `v1` adapter remembers between requests: the server's `state` (its only memory, stored by
 * the client and sent back), where the step stands, and the behavior whose answer may go unused
 * (docs/dialects.md#v1).
 */
import type { JsonObject } from '../../fields';
import { isRecord } from '../../fields';
import type { ObservationInput } from '../../schemas';
import { asString, DialectLog } from '../common';
import {
  describeData,
  emptyTodo,
  fullStepIndex,
  isMissing,
  IV1SavedState,
  NO_DATA_DESCRIPTION,
  NOTICE_PREFIXES,
  problemName,
  readV1Saved,
  sectionOf,
  TASK_VARIABLES
} from './state';

/**
 * Items of the engine's effects that are not exec outputs: its warnings and notices, and the note that
 * says the request was trimmed to fit (docs/dialects.md#v1-stream). The server reads `effect.current[0]`
 * as the last exec's output and saves it as a variable, so none of them is sent.
 */
const NOT_OUTPUTS = [...NOTICE_PREFIXES, '[context trimmed:'];

/** The adapter before a behavior's request, and the `effect` sent with it. */
export interface IBeforeBehavior {
  saved: IV1SavedState;
  effect: JsonObject;
}

export class V1Memory {
  constructor(
    private readonly _historyLimit: number,
    private readonly _log: DialectLog
  ) {}

  /** The saved fields of the server's memory and the step (never a snapshot of a behavior before). */
  savedCore(): IV1SavedState {
    return {
      dialect: 'v1',
      state: structuredClone(this.state),
      nextStep: this.nextStep,
      nextStepOf: this.nextStepOf,
      streamComplete: this.streamComplete,
      stepKey: this.stepKey,
      behaviors: this.behaviors,
      stepActed: this.stepActed,
      nextStageId: this.nextStageId,
      askedVariables: [...this.asked]
    };
  }

  restore(value: unknown): void {
    this.reset();
    const saved = readV1Saved(value);
    if (!saved) {
      return;
    }
    this.state = structuredClone(saved.state);
    this.nextStep = asString(saved.nextStep) ?? null;
    this.nextStepOf = asString(saved.nextStepOf) ?? null;
    this.streamComplete = saved.streamComplete !== false;
    this.stepKey = asString(saved.stepKey) ?? null;
    this.behaviors = typeof saved.behaviors === 'number' ? saved.behaviors : 0;
    this.stepActed =
      typeof saved.stepActed === 'boolean'
        ? saved.stepActed
        : this.behaviors > 0;
    this.nextStageId = asString(saved.nextStageId) ?? null;
    this.asked = new Set(
      Array.isArray(saved.askedVariables)
        ? saved.askedVariables.filter(
            (name): name is string => typeof name === 'string'
          )
        : []
    );
    // A resumed run goes on in the template it was saved with.
    this.entryDue = false;
    const before = saved.beforeBehavior;
    this.beforeBehavior =
      isRecord(before) && isRecord(before.saved) && isRecord(before.effect)
        ? (structuredClone(before) as unknown as IBeforeBehavior)
        : null;
    this.replayEffect = isRecord(saved.replayEffect)
      ? structuredClone(saved.replayEffect)
      : null;
  }

  reset(): void {
    this.state = {};
    this.nextStep = null;
    this.nextStepOf = null;
    this.streamComplete = true;
    this.stepKey = null;
    this.behaviors = 0;
    this.stepActed = false;
    this.nextStageId = null;
    this.missing = null;
    this.asked = new Set();
    this.entryDue = true;
    this.beforeBehavior = null;
    this.replayEffect = null;
  }

  /** The step's last answer broke off (Stop, a lost connection, a reload): its end state cannot be trusted. */
  cutOff(stageId: string, stepId: string): boolean {
    return !this.streamComplete && this.stepKey === `${stageId}/${stepId}`;
  }

  /** Starting, abandoning or resuming a step: `toDoList` is `[]` unless the same step resumes intact. */
  enterStep(stageId: string, stepId: string): void {
    const key = `${stageId}/${stepId}`;
    const resumes = key === this.stepKey && this.streamComplete;
    if (!resumes || this.missing) {
      if (!emptyTodo(this.state)) {
        this._log(
          `v1: toDoList ${JSON.stringify(this.state.toDoList)} reset at the start of step ${stepId}`
        );
      }
      this.state = { ...this.state, toDoList: [] };
      this.behaviors = 0;
      this.stepActed = false;
      this.streamComplete = true;
      this.missing = null;
    }
    this.stepKey = key;
  }

  /** Task variables from the engine's context fill names the server's state lacks (never kernel summaries). */
  adoptTaskVariables(observation: ObservationInput | undefined): void {
    const { state, described } = this.withTaskVariables(observation);
    this.state = state;
    if (described) {
      this.describedData = described;
    }
  }

  /** The stored state with the task variables it lacks (the adapter's state is left as it is). */
  withTaskVariables(observation: ObservationInput | undefined): {
    state: JsonObject;
    described: string | null;
  } {
    const source = observation?.context?.variables ?? {};
    const variables: JsonObject = isRecord(this.state.variables)
      ? { ...this.state.variables }
      : {};
    const task: JsonObject = {};
    for (const name of [...TASK_VARIABLES, ...this.asked]) {
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
      variables.context_description === this.describedData
    ) {
      variables.context_description = described;
    } else {
      described = null;
    }
    const state: JsonObject = { ...this.state, variables };
    if (!Array.isArray(state.toDoList)) {
      state.toDoList = [];
    }
    return { state, described };
  }

  /** The stored state with the client-owned `effect` (the engine's effects without its notices). */
  outgoingState(
    observation: ObservationInput | undefined,
    stored: JsonObject = this.state
  ): JsonObject {
    if (this.replayEffect) {
      return { ...stored, effect: structuredClone(this.replayEffect) };
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

  /** The full `<stage>_<section>` id (the spec's form), or the bare section id for a server that knows only that. */
  stepIndex(stageId: string, stepId: string): string {
    return this.bareStepIndex
      ? sectionOf(stageId, stepId)
      : fullStepIndex(stageId, stepId);
  }

  state: JsonObject = {};
  nextStep: string | null = null;
  /** The stage of the header that gave `nextStep`. */
  nextStepOf: string | null = null;
  streamComplete = true;
  stepKey: string | null = null;
  behaviors = 0;
  /** An action of the current step has arrived (its first behavior has begun). */
  stepActed = false;
  nextStageId: string | null = null;
  missing: string[] | null = null;
  /** Names the server said were missing: the user may set them ("Set Variables…"), and they are sent. */
  asked = new Set<string>();
  /** The server answered 400 to a full step id: it is sent the bare section id instead. */
  bareStepIndex = false;
  /** The `context_description` this adapter made, replaced as the run learns more. */
  describedData: string | null = null;
  /** A new run has not reached the entry step yet (set when a run starts: `reset`). */
  entryDue = false;
  /** The adapter before the last behavior's request: restored when that behavior is not run. */
  beforeBehavior: IBeforeBehavior | null = null;
  /** The `effect` of a behavior that did not run, sent again with the next request. */
  replayEffect: JsonObject | null = null;
}
