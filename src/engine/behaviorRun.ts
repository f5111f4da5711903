/**
 * One behavior: its `/generating` stream read into a queue, the user's approval (interactive mode),
 * each action applied through the registry with its context, the counters, and its feedback.
 */
import { isActionType, LAST_ADDED_CELL_ID, PlannerError } from '../protocol';
import type {
  Action,
  ExecAction,
  BehaviorFeedback,
  GeneratingEvent,
  GeneratingRequestInput
} from '../protocol';
import { plannerMayRunCell, unwrapCodeFence } from './actions';
import {
  ActionQueue,
  MAX_BEHAVIOR_ACTIONS,
  MAX_QUEUED_ACTIONS,
  MAX_QUEUED_CHARS
} from './actionQueue';
import { replaceStageSteps, proposeWorkflow } from './contextUpdate';
import type { ICellProvenance, INotebookSummary } from './driver';
import { englishText, msg, reported, say } from './messages';
import {
  AnyAction,
  errorMessage,
  errorText,
  IActionContext,
  INewCell
} from './registry';
import type { RunCore } from './runCore';
import { RunStopped } from './runControl';
import type { IOpenBehavior } from './runState';
import type { IExistingCellRun, IRunError } from './types';

type ActionEvent = Extract<GeneratingEvent, { kind: 'action' }>;

function codeOf(action: AnyAction): string | null {
  if (action.action === 'add') {
    const add = action as Extract<Action, { action: 'add' }>;
    return add.shot_type === 'action' ? unwrapCodeFence(add.content) : null;
  }
  return null;
}

function openBehavior(core: RunCore): IOpenBehavior {
  const behavior = core.state.behavior;
  if (!behavior) {
    throw new Error('No behavior is open.');
  }
  return behavior;
}

export function beginBehavior(core: RunCore): void {
  const { state } = core;
  const { fsm, progress } = state;
  fsm.dispatch(
    fsm.state === 'BEHAVIOR_COMPLETED' ? 'NEXT_BEHAVIOR' : 'START_BEHAVIOR'
  );
  const id = progress.startBehavior();
  state.behavior = {
    id,
    executed: 0,
    succeeded: 0,
    sectionsAdded: 0,
    lastResult: 'success',
    actionIndex: 0,
    rotated: false
  };
  state.endStepRequested = false;
  state.timings.push({
    behaviorId: id,
    iteration: progress.iteration,
    stageId: progress.currentStageId,
    stepId: progress.currentStepId,
    startedAt: core.now().toISOString(),
    endedAt: null,
    durationMs: null
  });
  state.trimTimings(core.settings().maxHistoryItems);
  core.emitProgress();
}

/**
 * Streams the behavior's actions and applies them in order. Returns the error that stopped it, if any;
 * throws `RunStopped` when the run is stopped.
 */
export async function runBehavior(
  core: RunCore,
  body: GeneratingRequestInput,
  notebook: INotebookSummary
): Promise<IRunError | null> {
  const { control, state } = core;
  const queue = new ActionQueue<ActionEvent>();
  state.buffer = queue.items;
  const interactive = core.settings().interactive;
  let cut: string | null = null;
  let ended = false;
  let failure: unknown = null;
  const stream = core.client.generating(body, {
    signal: control.signal,
    notebook
  });
  const reader = (async () => {
    try {
      for await (const event of stream) {
        if (control.stopRequested) {
          break;
        }
        if (event.kind === 'action') {
          if (event.typeOnly && !core.registry.has(event.action.action)) {
            core.warn(
              msg(
                'lineWithoutHandler',
                event.action.action,
                event.line.slice(0, 200)
              ),
              'planner'
            );
          } else {
            if (queue.spent || (interactive && queue.full)) {
              cut = stopReading(core, queue, interactive);
              break;
            }
            queue.push(event);
            if (control.pauseReason) {
              // The view shows what a paused run holds.
              core.emitProgress();
            }
            // The stream is not read until there is room: a paused run holds a bounded queue.
            while (queue.full && !interactive && !control.stopRequested) {
              control.wake();
              await control.waitWake();
            }
          }
        } else if (event.kind === 'notice') {
          // Shown and logged only: a heartbeat must not push real outputs out of the planner's view.
          core.warn(event.text ?? event.message, 'planner');
        } else {
          core.warn(event.text ?? event.message, 'planner');
          core.addEffect(`⚠️ WARN: ${event.message}`);
        }
        control.wake();
      }
    } catch (error) {
      failure = error;
    } finally {
      ended = true;
      control.wake();
    }
  })();

  if (interactive) {
    while (!ended && !control.stopRequested) {
      await control.waitWake();
    }
    control.throwIfStopped();
    // Nothing of an unapproved or broken behavior is applied; a retry asks again.
    if (failure !== null || !(await approve(core, queue.items))) {
      queue.clear();
    }
  }

  for (;;) {
    await core.pausePoint();
    control.throwIfStopped();
    const next = queue.shift();
    if (next) {
      control.wake();
      await applyAction(core, next.action);
      continue;
    }
    if (ended) {
      break;
    }
    await control.waitWake();
  }
  await reader;
  if (cut) {
    // After the behavior's own effects, so that the planner sees it.
    core.addEffect(`⚠️ ${cut}`);
  }
  // A stream that ends without `finish_thinking` leaves no live thinking cell behind.
  await core.closeThinking();
  if (failure === null) {
    return null;
  }
  control.throwIfStopped();
  const failed = say('generatingFailed', errorText(failure));
  const message = failed.message;
  const applied = openBehavior(core).actionIndex;
  if (applied === 0) {
    state.retry = { endpoint: 'generating', body };
  } else {
    // Re-sending the request would replay the actions already applied and add their cells twice:
    // the behavior ends with what it did, and a retry asks /planning what comes next.
    core.addEffect(
      `⚠️ ${message} after ${applied} action(s) were applied; they are kept and the behavior ends here.`
    );
    if (state.fsm.can('COMPLETE_BEHAVIOR')) {
      state.fsm.dispatch('COMPLETE_BEHAVIOR');
    }
    closeInterruptedBehavior(core, 'error');
    state.phase = 'plan';
  }
  const missing =
    failure instanceof PlannerError ? failure.missingVariables : undefined;
  return {
    endpoint: 'generating',
    ...failed,
    retryable: true,
    ...(missing?.length ? { missingVariables: [...missing] } : {})
  };
}

/**
 * The cells already in the notebook that `actions` would run, with their code: an `exec` of a cell the
 * same behavior adds is shown as that new code instead, and one that would be refused or find no cell
 * runs nothing.
 */
function existingCellsRun(
  core: RunCore,
  actions: AnyAction[]
): IExistingCellRun[] {
  const addedStoreIds = new Set<string>();
  let addsCode = false;
  const runs = new Map<string, IExistingCellRun>();
  const context = {
    cells: core.state.cells,
    driver: core.driver,
    settings: core.settings()
  };
  for (const action of actions) {
    if (action.action === 'add') {
      addsCode = addsCode || codeOf(action) !== null;
      if (typeof action.store_id === 'string') {
        addedStoreIds.add(action.store_id);
      }
      continue;
    }
    if (action.action !== 'exec') {
      continue;
    }
    const reference = (action as ExecAction).codecell_id;
    if (
      addedStoreIds.has(reference) ||
      (reference === LAST_ADDED_CELL_ID && addsCode)
    ) {
      continue;
    }
    const resolved = context.cells.resolve(reference);
    if (!resolved.ok || runs.has(resolved.cellId)) {
      continue;
    }
    const source = core.driver.cellSource(resolved.cellId);
    if (source !== null && plannerMayRunCell(resolved.cellId, context)) {
      runs.set(resolved.cellId, { cellId: resolved.cellId, source });
    }
  }
  return [...runs.values()];
}

/** The behavior sent more than the queue bounds allow: the rest of its answer is not read; returns why, in English for the planner. */
function stopReading(
  core: RunCore,
  queue: ActionQueue<ActionEvent>,
  interactive: boolean
): string {
  const kept = queue.received.toLocaleString('en-US');
  const message = interactive
    ? msg(
        'answerCutToApprove',
        MAX_QUEUED_ACTIONS.toLocaleString('en-US'),
        MAX_QUEUED_CHARS.toLocaleString('en-US'),
        kept
      )
    : msg(
        'answerCutInBehavior',
        MAX_BEHAVIOR_ACTIONS.toLocaleString('en-US'),
        kept
      );
  core.warn(message, 'engine');
  return englishText(message);
}

/** Interactive mode; false when the behavior is to be skipped. Throws when the user stops the run. */
async function approve(core: RunCore, queue: ActionEvent[]): Promise<boolean> {
  const { control, state } = core;
  const actions = queue.map(event => event.action);
  const codeCells = actions
    .map(codeOf)
    .filter((code): code is string => code !== null);
  const runsCode = actions.some(a => a.action === 'exec');
  const approveHook = core.hooks.approveBehavior;
  if (!approveHook || (codeCells.length === 0 && !runsCode)) {
    return true;
  }
  const behavior = openBehavior(core);
  let decision: string;
  try {
    decision = await control.untilStopped(
      approveHook.call(
        core.hooks,
        {
          behaviorId: behavior.id,
          stageId: state.progress.currentStageId,
          stepId: state.progress.currentStepId,
          codeCells,
          existingCells: existingCellsRun(core, actions),
          actions
        },
        control.signal
      )
    );
  } catch (error) {
    control.throwIfStopped();
    core.warn(msg('approvalFailed', errorMessage(error)), 'hook');
    decision = 'skip';
  }
  if (decision === 'stop') {
    control.stop();
    throw new RunStopped();
  }
  if (decision === 'skip') {
    core.addEffect(
      `Behavior ${behavior.id} was skipped by the user: its ${actions.length} actions were not applied.`
    );
    behavior.lastResult = 'skipped';
    return false;
  }
  return true;
}

async function applyAction(core: RunCore, action: AnyAction): Promise<void> {
  const { control, state } = core;
  const { fsm, progress } = state;
  const behavior = openBehavior(core);
  core.rotateEffects();
  fsm.dispatch(
    fsm.state === 'ACTION_COMPLETED' ? 'NEXT_ACTION' : 'START_ACTION'
  );
  const index = behavior.actionIndex++;
  const provenance: ICellProvenance = {
    stage_id: progress.currentStageId,
    step_id: progress.currentStepId,
    behavior_id: behavior.id,
    action_index: index,
    action: action.action
  };
  if (typeof action.store_id === 'string') {
    provenance.store_id = action.store_id;
  }
  if (!core.registry.has(action.action)) {
    core.warn(msg('unknownAction', action.action), 'action');
  }
  const result = await core.registry.execute(
    action,
    actionContext(core, provenance)
  );
  behavior.executed++;
  if (result.ok) {
    behavior.succeeded++;
  }
  if (result.sectionAdded) {
    behavior.sectionsAdded++;
  }
  behavior.lastResult = result.ok ? 'success' : 'error';
  if (result.summary) {
    progress.recordAction(result.summary);
  }
  if (action.action === 'exec' || !isActionType(action.action)) {
    state.variablesDirty = true;
    state.codeRanSinceCollection = true;
  }
  fsm.dispatch('COMPLETE_ACTION');
  core.events.actionApplied({ behaviorId: behavior.id, index, action, result });
  if (
    state.variablesDirty &&
    action.action === 'exec' &&
    tracksOutputs(core) &&
    !control.stopRequested &&
    !control.pauseRequested
  ) {
    await core.refreshVariables();
  }
}

function tracksOutputs(core: RunCore): boolean {
  return (['stages', 'steps', 'behaviors'] as const).some(
    level => core.state.progress.outputs(level).expected.length > 0
  );
}

function actionContext(
  core: RunCore,
  provenance: ICellProvenance
): IActionContext {
  const { control, state } = core;
  return {
    driver: core.driver,
    settings: core.settings(),
    provenance,
    cells: state.cells,
    effects: {
      add: text => core.addEffect(text),
      archive: () => {
        state.effects.rotate();
        core.effectsChanged();
      }
    },
    signal: control.signal,
    now: core.now,
    run: {
      addCell: cell => addCell(core, cell, provenance),
      updateWorkflow: template => proposeWorkflow(core, template),
      replaceStageSteps: (stageId, steps) =>
        replaceStageSteps(core, stageId, steps),
      endStep: stepId => {
        const current = state.progress.currentStepId;
        if (stepId && current && stepId !== current) {
          core.warn(msg('endPhaseOtherStep', stepId, current), 'action');
        }
        state.endStepRequested = true;
      },
      pause: (reason, kind = 'action') => {
        core.warn(reason, 'action');
        core.requestPause({ kind, ...reported(reason) });
      },
      warn: message => core.warn(message, 'action')
    }
  };
}

async function addCell(
  core: RunCore,
  cell: INewCell,
  provenance: ICellProvenance
): Promise<string> {
  const cellProvenance = cell.storeId
    ? { ...provenance, store_id: cell.storeId }
    : provenance;
  const cellId = await core.driver.addCell({
    kind: cell.kind,
    source: cell.source,
    role: cell.role,
    provenance: cellProvenance,
    metadata: cell.metadata
  });
  core.state.cells.cellAdded(cellId, cell.kind, cell.storeId, cell.role);
  core.events.cellAdded({
    cellId,
    kind: cell.kind,
    role: cell.role,
    provenance: cellProvenance
  });
  return cellId;
}

/** Records the open behavior as completed; returns its feedback. */
export function finishBehavior(core: RunCore, note?: string): BehaviorFeedback {
  const { state } = core;
  const behavior = openBehavior(core);
  state.progress.completeBehavior(state.presentVariables(), note);
  // A planner may give two behaviors the same id: the open timing is the latest.
  const timing = [...state.timings]
    .reverse()
    .find(t => t.behaviorId === behavior.id);
  if (timing && timing.endedAt === null) {
    const end = core.now();
    timing.endedAt = end.toISOString();
    timing.durationMs = end.getTime() - Date.parse(timing.startedAt);
  }
  state.behavior = null;
  return {
    behavior_id: behavior.id,
    actions_executed: behavior.executed,
    actions_succeeded: behavior.succeeded,
    sections_added: behavior.sectionsAdded,
    // Any failed action makes the behavior's result an error, not only the last one.
    last_action_result:
      note ??
      (behavior.succeeded < behavior.executed ? 'error' : behavior.lastResult)
  };
}

/** A behavior cut short (stop, reload): recorded as it is, its feedback kept for the next plan. */
export function closeInterruptedBehavior(core: RunCore, note: string): void {
  core.state.pendingFeedback = finishBehavior(core, note);
  core.state.endStepRequested = false;
}
