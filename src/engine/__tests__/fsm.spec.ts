import {
  FsmTransitionError,
  TRANSITIONS,
  WORKFLOW_EVENTS,
  WORKFLOW_STATES,
  WorkflowEvent,
  WorkflowState,
  WorkflowStateMachine
} from '../state/fsm';

const clock = () => new Date('2025-01-15T10:23:45.000Z');

function machineIn(path: WorkflowEvent[]): WorkflowStateMachine {
  const machine = new WorkflowStateMachine({ now: clock });
  path.forEach(event => machine.dispatch(event));
  return machine;
}

/** A path of events from IDLE that reaches each state. */
const PATHS: Record<WorkflowState, WorkflowEvent[]> = {
  IDLE: [],
  STAGE_RUNNING: ['START_WORKFLOW'],
  STEP_RUNNING: ['START_WORKFLOW', 'START_STEP'],
  BEHAVIOR_RUNNING: ['START_WORKFLOW', 'START_STEP', 'START_BEHAVIOR'],
  ACTION_RUNNING: [
    'START_WORKFLOW',
    'START_STEP',
    'START_BEHAVIOR',
    'START_ACTION'
  ],
  ACTION_COMPLETED: [
    'START_WORKFLOW',
    'START_STEP',
    'START_BEHAVIOR',
    'START_ACTION',
    'COMPLETE_ACTION'
  ],
  BEHAVIOR_COMPLETED: [
    'START_WORKFLOW',
    'START_STEP',
    'START_BEHAVIOR',
    'COMPLETE_BEHAVIOR'
  ],
  STEP_COMPLETED: ['START_WORKFLOW', 'START_STEP', 'COMPLETE_STEP'],
  STAGE_COMPLETED: [
    'START_WORKFLOW',
    'START_STEP',
    'COMPLETE_STEP',
    'COMPLETE_STAGE'
  ],
  WORKFLOW_COMPLETED: [
    'START_WORKFLOW',
    'START_STEP',
    'COMPLETE_STEP',
    'COMPLETE_STAGE',
    'COMPLETE_WORKFLOW'
  ],
  WORKFLOW_UPDATE_PENDING: ['START_WORKFLOW', 'START_STEP', 'UPDATE_WORKFLOW'],
  STEP_UPDATE_PENDING: ['START_WORKFLOW', 'START_STEP', 'UPDATE_STEP'],
  PAUSED: ['START_WORKFLOW', 'START_STEP', 'PAUSE'],
  ERROR: ['START_WORKFLOW', 'START_STEP', 'FAIL']
};

/** The expected outcome of every (state, event) pair: a state, or null for refused. */
const ALLOWED: [WorkflowState, WorkflowEvent, WorkflowState][] = [
  ['IDLE', 'START_WORKFLOW', 'STAGE_RUNNING'],
  ['STAGE_RUNNING', 'START_STEP', 'STEP_RUNNING'],
  ['STEP_RUNNING', 'START_BEHAVIOR', 'BEHAVIOR_RUNNING'],
  ['BEHAVIOR_RUNNING', 'START_ACTION', 'ACTION_RUNNING'],
  ['ACTION_RUNNING', 'COMPLETE_ACTION', 'ACTION_COMPLETED'],
  ['ACTION_COMPLETED', 'NEXT_ACTION', 'ACTION_RUNNING'],
  ['ACTION_COMPLETED', 'COMPLETE_BEHAVIOR', 'BEHAVIOR_COMPLETED'],
  ['BEHAVIOR_RUNNING', 'COMPLETE_BEHAVIOR', 'BEHAVIOR_COMPLETED'],
  ['BEHAVIOR_COMPLETED', 'NEXT_BEHAVIOR', 'BEHAVIOR_RUNNING'],
  ['BEHAVIOR_COMPLETED', 'COMPLETE_STEP', 'STEP_COMPLETED'],
  ['STEP_RUNNING', 'COMPLETE_STEP', 'STEP_COMPLETED'],
  ['STEP_COMPLETED', 'NEXT_STEP', 'STEP_RUNNING'],
  ['STEP_COMPLETED', 'COMPLETE_STAGE', 'STAGE_COMPLETED'],
  ['STAGE_COMPLETED', 'NEXT_STAGE', 'STAGE_RUNNING'],
  ['STAGE_COMPLETED', 'COMPLETE_WORKFLOW', 'WORKFLOW_COMPLETED']
];

const ACTIVE: WorkflowState[] = [
  'STAGE_RUNNING',
  'STEP_RUNNING',
  'BEHAVIOR_RUNNING',
  'ACTION_RUNNING',
  'ACTION_COMPLETED',
  'BEHAVIOR_COMPLETED',
  'STEP_COMPLETED',
  'STAGE_COMPLETED'
];
for (const state of ACTIVE) {
  ALLOWED.push([state, 'UPDATE_WORKFLOW', 'WORKFLOW_UPDATE_PENDING']);
  ALLOWED.push([state, 'UPDATE_STEP', 'STEP_UPDATE_PENDING']);
  ALLOWED.push([state, 'PAUSE', 'PAUSED']);
  ALLOWED.push([state, 'FAIL', 'ERROR']);
  ALLOWED.push([state, 'CANCEL', 'IDLE']);
}
for (const state of [
  'WORKFLOW_UPDATE_PENDING',
  'STEP_UPDATE_PENDING',
  'PAUSED'
] as WorkflowState[]) {
  ALLOWED.push([state, 'FAIL', 'ERROR']);
  ALLOWED.push([state, 'CANCEL', 'IDLE']);
}
ALLOWED.push(['ERROR', 'CANCEL', 'IDLE']);
// Back to the state they interrupted: STEP_RUNNING in PATHS.
ALLOWED.push([
  'WORKFLOW_UPDATE_PENDING',
  'UPDATE_WORKFLOW_CONFIRMED',
  'STEP_RUNNING'
]);
ALLOWED.push([
  'WORKFLOW_UPDATE_PENDING',
  'UPDATE_WORKFLOW_REJECTED',
  'STEP_RUNNING'
]);
ALLOWED.push(['STEP_UPDATE_PENDING', 'UPDATE_STEP_CONFIRMED', 'STEP_RUNNING']);
ALLOWED.push(['STEP_UPDATE_PENDING', 'UPDATE_STEP_REJECTED', 'STEP_RUNNING']);
ALLOWED.push(['PAUSED', 'RESUME', 'STEP_RUNNING']);
ALLOWED.push(['ERROR', 'RESUME', 'STEP_RUNNING']);
for (const state of WORKFLOW_STATES) {
  ALLOWED.push([state, 'RESET', 'IDLE']);
}

const CASES = WORKFLOW_STATES.flatMap(state =>
  WORKFLOW_EVENTS.map(event => {
    const row = ALLOWED.find(([s, e]) => s === state && e === event);
    return [state, event, row ? row[2] : null] as const;
  })
);

describe('WorkflowStateMachine transition table', () => {
  it('has a row for exactly the allowed pairs', () => {
    const inTable = WORKFLOW_EVENTS.flatMap(event =>
      Object.keys(TRANSITIONS[event]).map(state => `${state} ${event}`)
    ).sort();
    const expected = ALLOWED.map(([s, e]) => `${s} ${e}`).sort();
    expect(inTable).toEqual(expected);
  });

  it.each(CASES)('%s + %s -> %s', (state, event, target) => {
    const machine = machineIn(PATHS[state]);
    expect(machine.state).toBe(state);
    if (target === null) {
      expect(machine.can(event)).toBe(false);
      expect(() => machine.dispatch(event)).toThrow(FsmTransitionError);
      expect(() => machine.dispatch(event)).toThrow(
        `Event ${event} is not allowed in state ${state}`
      );
      expect(machine.state).toBe(state);
    } else {
      expect(machine.can(event)).toBe(true);
      const transition = machine.dispatch(event);
      expect(machine.state).toBe(target);
      expect(transition).toEqual({
        event,
        from: state,
        to: target,
        timestamp: '2025-01-15T10:23:45.000Z'
      });
    }
  });
});

describe('WorkflowStateMachine', () => {
  it('remembers the state to resume to across a pause and a failure', () => {
    const machine = machineIn(PATHS.ACTION_COMPLETED);
    machine.dispatch('PAUSE');
    expect(machine.returnTo).toBe('ACTION_COMPLETED');
    machine.dispatch('FAIL');
    expect(machine.state).toBe('ERROR');
    machine.dispatch('RESUME');
    expect(machine.state).toBe('ACTION_COMPLETED');
    expect(machine.returnTo).toBeNull();
  });

  it('returns to the running action after a workflow update', () => {
    const machine = machineIn(PATHS.ACTION_RUNNING);
    machine.dispatch('UPDATE_WORKFLOW');
    machine.dispatch('UPDATE_WORKFLOW_CONFIRMED');
    expect(machine.state).toBe('ACTION_RUNNING');
  });

  it('describes itself for context.FSM', () => {
    const machine = machineIn([
      'START_WORKFLOW',
      'START_STEP',
      'START_BEHAVIOR',
      'COMPLETE_BEHAVIOR',
      'NEXT_BEHAVIOR'
    ]);
    const context = machine.toContext();
    expect(context.state).toBe('BEHAVIOR_RUNNING');
    expect(context.last_transition).toBe('NEXT_BEHAVIOR -> BEHAVIOR_RUNNING');
    expect(context.timestamp).toBe('2025-01-15T10:23:45.000Z');
    expect(context.transition).toHaveLength(5);
    expect(context.transition[0]).toBe(
      'IDLE --START_WORKFLOW--> STAGE_RUNNING'
    );
    expect(new WorkflowStateMachine().toContext()).toEqual({
      state: 'IDLE',
      last_transition: null,
      timestamp: null,
      transition: []
    });
  });

  it('keeps a bounded history', () => {
    const machine = new WorkflowStateMachine({ historyLimit: 3, now: clock });
    machine.dispatch('START_WORKFLOW');
    machine.dispatch('START_STEP');
    machine.dispatch('START_BEHAVIOR');
    machine.dispatch('START_ACTION');
    machine.dispatch('COMPLETE_ACTION');
    expect(machine.history.map(t => t.event)).toEqual([
      'START_BEHAVIOR',
      'START_ACTION',
      'COMPLETE_ACTION'
    ]);
  });

  it('signals every transition', () => {
    const machine = new WorkflowStateMachine({ now: clock });
    const seen: string[] = [];
    machine.changed.connect((_, t) => seen.push(`${t.from}>${t.to}`));
    machine.dispatch('START_WORKFLOW');
    expect(() => machine.dispatch('COMPLETE_ACTION')).toThrow();
    expect(seen).toEqual(['IDLE>STAGE_RUNNING']);
  });

  it('round-trips through JSON, paused state included', () => {
    const machine = machineIn(PATHS.BEHAVIOR_COMPLETED);
    machine.dispatch('PAUSE');
    const copy = WorkflowStateMachine.fromJSON(
      JSON.parse(JSON.stringify(machine.toJSON())),
      { now: clock }
    );
    expect(copy.state).toBe('PAUSED');
    expect(copy.history).toEqual(machine.history);
    copy.dispatch('RESUME');
    expect(copy.state).toBe('BEHAVIOR_COMPLETED');
  });
});
