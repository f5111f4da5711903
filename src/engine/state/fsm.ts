/**
 * The workflow state machine (docs/protocol.md#state-machine): one explicit transition table. An event the table
 * does not allow in the current state throws `FsmTransitionError`.
 */
import { ISignal, Signal } from '@lumino/signaling';

export const WORKFLOW_STATES = [
  'IDLE',
  'STAGE_RUNNING',
  'STEP_RUNNING',
  'BEHAVIOR_RUNNING',
  'ACTION_RUNNING',
  'ACTION_COMPLETED',
  'BEHAVIOR_COMPLETED',
  'STEP_COMPLETED',
  'STAGE_COMPLETED',
  'WORKFLOW_COMPLETED',
  'WORKFLOW_UPDATE_PENDING',
  'STEP_UPDATE_PENDING',
  'PAUSED',
  'ERROR'
] as const;
export type WorkflowState = (typeof WORKFLOW_STATES)[number];

export const WORKFLOW_EVENTS = [
  'START_WORKFLOW',
  'START_STEP',
  'START_BEHAVIOR',
  'START_ACTION',
  'COMPLETE_ACTION',
  'COMPLETE_BEHAVIOR',
  'COMPLETE_STEP',
  'COMPLETE_STAGE',
  'COMPLETE_WORKFLOW',
  'NEXT_ACTION',
  'NEXT_BEHAVIOR',
  'NEXT_STEP',
  'NEXT_STAGE',
  'UPDATE_WORKFLOW',
  'UPDATE_WORKFLOW_CONFIRMED',
  'UPDATE_WORKFLOW_REJECTED',
  'UPDATE_STEP',
  'UPDATE_STEP_CONFIRMED',
  'UPDATE_STEP_REJECTED',
  'FAIL',
  'CANCEL',
  'RESET',
  'PAUSE',
  'RESUME'
] as const;
export type WorkflowEvent = (typeof WORKFLOW_EVENTS)[number];

/**
 * `RETURN` goes back to the state remembered when the interrupting state was entered (PAUSED,
 * ERROR and the two *_UPDATE_PENDING states interrupt whatever was running and come back to it).
 */
export const RETURN = 'RETURN' as const;
type Target = WorkflowState | typeof RETURN;

/** States in which work is in progress: they may be paused, interrupted by an update, or fail. */
const ACTIVE: readonly WorkflowState[] = [
  'STAGE_RUNNING',
  'STEP_RUNNING',
  'BEHAVIOR_RUNNING',
  'ACTION_RUNNING',
  'ACTION_COMPLETED',
  'BEHAVIOR_COMPLETED',
  'STEP_COMPLETED',
  'STAGE_COMPLETED'
];

const INTERRUPTING: readonly WorkflowState[] = [
  'PAUSED',
  'ERROR',
  'WORKFLOW_UPDATE_PENDING',
  'STEP_UPDATE_PENDING'
];

function forEach(
  states: readonly WorkflowState[],
  target: Target
): Partial<Record<WorkflowState, Target>> {
  const rows: Partial<Record<WorkflowState, Target>> = {};
  for (const state of states) {
    rows[state] = target;
  }
  return rows;
}

/** event -> (from state -> to state). The single source of truth for what may happen when. */
export const TRANSITIONS: Readonly<
  Record<WorkflowEvent, Readonly<Partial<Record<WorkflowState, Target>>>>
> = {
  START_WORKFLOW: { IDLE: 'STAGE_RUNNING' },
  START_STEP: { STAGE_RUNNING: 'STEP_RUNNING' },
  START_BEHAVIOR: { STEP_RUNNING: 'BEHAVIOR_RUNNING' },
  START_ACTION: { BEHAVIOR_RUNNING: 'ACTION_RUNNING' },
  COMPLETE_ACTION: { ACTION_RUNNING: 'ACTION_COMPLETED' },
  NEXT_ACTION: { ACTION_COMPLETED: 'ACTION_RUNNING' },
  COMPLETE_BEHAVIOR: {
    BEHAVIOR_RUNNING: 'BEHAVIOR_COMPLETED',
    ACTION_COMPLETED: 'BEHAVIOR_COMPLETED'
  },
  NEXT_BEHAVIOR: { BEHAVIOR_COMPLETED: 'BEHAVIOR_RUNNING' },
  COMPLETE_STEP: {
    STEP_RUNNING: 'STEP_COMPLETED',
    BEHAVIOR_COMPLETED: 'STEP_COMPLETED'
  },
  NEXT_STEP: { STEP_COMPLETED: 'STEP_RUNNING' },
  COMPLETE_STAGE: { STEP_COMPLETED: 'STAGE_COMPLETED' },
  NEXT_STAGE: { STAGE_COMPLETED: 'STAGE_RUNNING' },
  COMPLETE_WORKFLOW: { STAGE_COMPLETED: 'WORKFLOW_COMPLETED' },
  UPDATE_WORKFLOW: forEach(ACTIVE, 'WORKFLOW_UPDATE_PENDING'),
  UPDATE_WORKFLOW_CONFIRMED: { WORKFLOW_UPDATE_PENDING: RETURN },
  UPDATE_WORKFLOW_REJECTED: { WORKFLOW_UPDATE_PENDING: RETURN },
  UPDATE_STEP: forEach(ACTIVE, 'STEP_UPDATE_PENDING'),
  UPDATE_STEP_CONFIRMED: { STEP_UPDATE_PENDING: RETURN },
  UPDATE_STEP_REJECTED: { STEP_UPDATE_PENDING: RETURN },
  FAIL: forEach(
    [...ACTIVE, 'WORKFLOW_UPDATE_PENDING', 'STEP_UPDATE_PENDING', 'PAUSED'],
    'ERROR'
  ),
  CANCEL: forEach([...ACTIVE, ...INTERRUPTING], 'IDLE'),
  RESET: forEach(WORKFLOW_STATES, 'IDLE'),
  PAUSE: forEach(ACTIVE, 'PAUSED'),
  RESUME: { PAUSED: RETURN, ERROR: RETURN }
};

export class FsmTransitionError extends Error {
  constructor(
    readonly state: WorkflowState,
    readonly event: WorkflowEvent
  ) {
    super(`Event ${event} is not allowed in state ${state}`);
    this.name = 'FsmTransitionError';
  }
}

export interface IFsmTransition {
  event: WorkflowEvent;
  from: WorkflowState;
  to: WorkflowState;
  /** ISO 8601. */
  timestamp: string;
}

/** `context.FSM` of the observation. */
export interface IFsmContext {
  state: WorkflowState;
  /** e.g. `"NEXT_BEHAVIOR -> BEHAVIOR_RUNNING"`, null before the first transition. */
  last_transition: string | null;
  timestamp: string | null;
  transition: string[];
}

export interface IFsmState {
  state: WorkflowState;
  /** Where RESUME / *_CONFIRMED / *_REJECTED go back to. */
  returnTo: WorkflowState | null;
  history: IFsmTransition[];
}

export interface IFsmOptions {
  /** How many transitions are kept; 100 when absent. */
  historyLimit?: number;
  now?: () => Date;
}

export function describeTransition(transition: IFsmTransition): string {
  return `${transition.event} -> ${transition.to}`;
}

/** The state machine as the parts of the loop see it: events go through the run state's transactions. */
export type FsmReader = Pick<
  WorkflowStateMachine,
  | 'state'
  | 'returnTo'
  | 'lastTransition'
  | 'history'
  | 'can'
  | 'toContext'
  | 'toJSON'
>;

/**
 * Where `event` leads from `state` (with `returnTo` remembered), without a machine: null when the
 * table does not allow it. `dispatch` and a transaction's check before it is applied both use it.
 */
export function nextState(
  state: WorkflowState,
  returnTo: WorkflowState | null,
  event: WorkflowEvent
): { to: WorkflowState; returnTo: WorkflowState | null } | null {
  const target = TRANSITIONS[event][state];
  if (target === undefined) {
    return null;
  }
  if (target === RETURN) {
    return { to: returnTo ?? 'IDLE', returnTo: null };
  }
  if (INTERRUPTING.includes(target) && !INTERRUPTING.includes(state)) {
    return { to: target, returnTo: state };
  }
  return { to: target, returnTo: target === 'IDLE' ? null : returnTo };
}

export class WorkflowStateMachine {
  constructor(options: IFsmOptions = {}) {
    this._historyLimit = Math.max(1, options.historyLimit ?? 100);
    this._now = options.now ?? (() => new Date());
  }

  /** Emitted after every transition. */
  get changed(): ISignal<this, IFsmTransition> {
    return this._changed;
  }

  get state(): WorkflowState {
    return this._state;
  }

  /** The state RESUME (or an update's answer) returns to, while interrupted. */
  get returnTo(): WorkflowState | null {
    return this._returnTo;
  }

  get lastTransition(): IFsmTransition | null {
    return this._history[this._history.length - 1] ?? null;
  }

  get history(): readonly IFsmTransition[] {
    return this._history;
  }

  can(event: WorkflowEvent): boolean {
    return TRANSITIONS[event][this._state] !== undefined;
  }

  /** Applies `event`; throws `FsmTransitionError` when the table does not allow it here. */
  dispatch(event: WorkflowEvent): IFsmTransition {
    const from = this._state;
    const next = nextState(from, this._returnTo, event);
    if (next === null) {
      throw new FsmTransitionError(from, event);
    }
    const to = next.to;
    this._returnTo = next.returnTo;
    this._state = to;
    const transition: IFsmTransition = {
      event,
      from,
      to,
      timestamp: this._now().toISOString()
    };
    this._history.push(transition);
    if (this._history.length > this._historyLimit) {
      this._history.splice(0, this._history.length - this._historyLimit);
    }
    this._changed.emit(transition);
    return transition;
  }

  toContext(): IFsmContext {
    const last = this.lastTransition;
    return {
      state: this._state,
      last_transition: last ? describeTransition(last) : null,
      timestamp: last ? last.timestamp : null,
      transition: this._history.map(t => `${t.from} --${t.event}--> ${t.to}`)
    };
  }

  toJSON(): IFsmState {
    return {
      state: this._state,
      returnTo: this._returnTo,
      history: this._history.map(t => ({ ...t }))
    };
  }

  restore(saved: IFsmState): void {
    this._state = saved.state;
    this._returnTo = saved.returnTo;
    this._history = saved.history
      .slice(-this._historyLimit)
      .map(t => ({ ...t }));
  }

  static fromJSON(
    saved: IFsmState,
    options: IFsmOptions = {}
  ): WorkflowStateMachine {
    const machine = new WorkflowStateMachine(options);
    machine.restore(saved);
    return machine;
  }

  private _state: WorkflowState = 'IDLE';
  private _returnTo: WorkflowState | null = null;
  private _history: IFsmTransition[] = [];
  private _historyLimit: number;
  private _now: () => Date;
  private _changed = new Signal<this, IFsmTransition>(this);
}

export function isWorkflowState(value: unknown): value is WorkflowState {
  return (
    typeof value === 'string' &&
    (WORKFLOW_STATES as readonly string[]).includes(value)
  );
}
