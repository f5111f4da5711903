/**
 * Rewind on a run (docs/architecture.md#rewind): checkpoints taken as the loop goes, what a rewind
 * would remove, keep and restore, and the rollback itself, which tells the planner (an effect), the
 * saved run and the trace what happened. The run's fields change through the runner (`IRewindHost`).
 */
import {
  type ICellRecord,
  type IExecResult,
  type INotebookDriver,
  type IRewindEdit,
  KernelNotRestarted
} from '../ports/driver';
import { errorMessage } from '../actions/registry';
import { englishText, msg, refusal } from '../messages';
import {
  editedByUser,
  IRewindCell,
  IRewindOptions,
  IRewindPlan,
  IRewindRecord,
  IRunCheckpoint,
  RewindTarget
} from '../state/rewind';
import type { IRunHost } from './host';
import type { RunState } from '../state/runState';

/** What a rewind reads of the run and changes through the runner, and how the run is saved. */
export type IRewindHost = Pick<
  IRunHost,
  | 'state'
  | 'driver'
  | 'client'
  | 'trace'
  | 'settings'
  | 'now'
  | 'change'
  | 'signals'
> & { saveState(): Promise<void> };

const SUMMARY_CHARS = 80;

/** Records where the run stands, before a step's first /planning or a behavior's /generating. */
export function takeCheckpoint(
  host: Pick<IRewindHost, 'state' | 'client' | 'now'>,
  kind: IRunCheckpoint['kind']
): IRunCheckpoint {
  const { state } = host;
  const progress = state.progress.toJSON();
  const template = progress.template;
  progress.template = null;
  const last = state.timings[state.timings.length - 1];
  const checkpoint: Omit<IRunCheckpoint, 'seq' | 'template'> = {
    kind,
    stageId: state.progress.currentStageId,
    stepId: state.progress.currentStepId,
    behaviorId: null,
    at: host.now().toISOString(),
    progress,
    effects: state.effects.mark(),
    cells: state.cells.mark(),
    contextVariables: { ...state.contextVariables },
    filter: state.filter,
    templateFromPlanner: state.templateFromPlanner,
    lastTiming: last
      ? { behaviorId: last.behaviorId, startedAt: last.startedAt }
      : null
  };
  if (host.client.saveState) {
    try {
      checkpoint.planner = host.client.saveState();
    } catch {
      // The planner's memory is then not rolled back; the observation still says where the run is.
    }
  }
  return state.rewind.add(checkpoint, template);
}

/** At the top of the loop: a step that has no checkpoint yet gets one. */
export function checkpointStepStart(
  host: Pick<IRewindHost, 'state' | 'client' | 'now'>
): void {
  const { state } = host;
  const latest = state.rewind.latest;
  const stepId = state.progress.currentStepId;
  const stageId = state.progress.currentStageId;
  if (
    state.behavior === null &&
    (latest === null || latest.stepId !== stepId || latest.stageId !== stageId)
  ) {
    takeCheckpoint(host, 'step');
  }
}

/** Before a behavior: its checkpoint, named after the behavior once `beginBehavior` gave it an id. */
export function checkpointBehavior(
  host: Pick<IRewindHost, 'state' | 'client' | 'now'>,
  begin: () => void
): void {
  const checkpoint = takeCheckpoint(host, 'behavior');
  begin();
  checkpoint.behaviorId = host.state.progress.currentBehaviorId;
}

function summary(cell: ICellRecord): string {
  const line =
    cell.source
      .split('\n')
      .map(l => l.trim())
      .find(l => l !== '') ?? '';
  return line.length > SUMMARY_CHARS
    ? `${line.slice(0, SUMMARY_CHARS - 1)}…`
    : line;
}

function describe(cell: ICellRecord): IRewindCell {
  return {
    cellId: cell.id,
    kind: cell.kind,
    stepId: cell.provenance?.step_id ?? null,
    behaviorId: cell.provenance?.behavior_id ?? null,
    summary: summary(cell)
  };
}

/** What rolling back to `target` would do to the notebook; null when there is no checkpoint for it. */
export function planRewind(
  state: Readonly<RunState>,
  driver: INotebookDriver,
  target: RewindTarget
): IRewindPlan | null {
  const checkpoint = state.rewind.find(target);
  if (!checkpoint) {
    return null;
  }
  const cells = driver.listCells();
  const byId = new Map(cells.map(cell => [cell.id, cell]));
  const made = new Set(state.cells.createdSince(checkpoint.cells));
  const remove: IRewindCell[] = [];
  const keep: IRewindCell[] = [];
  for (const cell of cells) {
    if (!made.has(cell.id)) {
      continue;
    }
    (editedByUser(cell) ? keep : remove).push(describe(cell));
  }
  const restore: IRewindCell[] = [];
  for (const entry of state.rewind.rewrittenSince(checkpoint)) {
    const cell = byId.get(entry.cellId);
    if (
      cell &&
      !made.has(cell.id) &&
      !editedByUser(cell) &&
      cell.source !== entry.source
    ) {
      restore.push({
        ...describe(cell),
        summary: summary({ ...cell, source: entry.source })
      });
    }
  }
  const steps: string[] = [];
  const addStep = (stepId: string | null) => {
    if (stepId !== null && !steps.includes(stepId)) {
      steps.push(stepId);
    }
  };
  addStep(checkpoint.stepId);
  for (const cell of [...remove, ...keep]) {
    addStep(cell.stepId);
  }
  return {
    target,
    seq: checkpoint.seq,
    stageId: checkpoint.stageId,
    stepId: checkpoint.stepId,
    behaviorId: target.kind === 'behavior' ? checkpoint.behaviorId : null,
    steps,
    remove,
    keep,
    restore,
    untouched: cells.length - remove.length - keep.length - restore.length
  };
}

/** The effect the planner reads (docs/protocol.md#rewind). */
export function rewindEffect(plan: IRewindPlan, removed: number): string {
  const first = plan.steps[0] ?? plan.stepId ?? '(unnamed)';
  const last = plan.steps[plan.steps.length - 1] ?? first;
  const range = first === last ? first : `${first}..${last}`;
  const what =
    plan.target.kind === 'behavior'
      ? `The user rewound to step ${first}, before behavior ${plan.behaviorId ?? '(unnamed)'}`
      : `The user rewound to step ${first}`;
  const kept =
    plan.keep.length > 0
      ? ` ${plan.keep.length} cell(s) the user edited were kept.`
      : '';
  return `${what}; cells from steps ${range} were removed (${removed} cell(s)).${kept}`;
}

/** Puts the run's state back to `checkpoint` and forgets what came after it. */
function rollBack(host: IRewindHost, checkpoint: IRunCheckpoint): void {
  const { state } = host;
  state.progress.restore({
    ...checkpoint.progress,
    template: state.rewind.template(checkpoint)
  });
  state.effects.rollback(checkpoint.effects);
  state.cells.rollback(checkpoint.cells);
  // What the user typed in "Set Variables…" is theirs, not the run's: it stays.
  const typed = state.userVariables.filter(
    name => name in state.contextVariables
  );
  const last = checkpoint.lastTiming;
  const keep = last
    ? state.timings.findIndex(
        t => t.behaviorId === last.behaviorId && t.startedAt === last.startedAt
      ) + 1
    : 0;
  if (checkpoint.planner !== undefined) {
    host.client.restoreState?.(checkpoint.planner);
  }
  // The run is back inside the checkpoint's step, as a resumed run is.
  state.fsm.dispatch('RESET');
  state.fsm.dispatch('START_WORKFLOW');
  state.fsm.dispatch('START_STEP');
  state.rewind.truncate(checkpoint);
  host.change({
    contextVariables: {
      ...checkpoint.contextVariables,
      ...Object.fromEntries(
        typed.map(name => [name, state.contextVariables[name]])
      )
    },
    filter: checkpoint.filter,
    templateFromPlanner: checkpoint.templateFromPlanner,
    timings: state.timings.slice(0, keep),
    ...(checkpoint.planner !== undefined
      ? { planner: checkpoint.planner }
      : {}),
    phase: 'plan',
    pendingFeedback: null,
    behavior: null,
    endStepRequested: false,
    retry: null,
    error: null,
    buffer: [],
    planningFailures: 0,
    variablesDirty: true
  });
}

/**
 * Applies `plan`: the notebook edit, the rollback, the effect and the record, saved at once; then, when
 * asked, the kernel restart and the kept cells run again, and the record as it ended. Aborting `signal`
 * (Stop) ends the re-run between two cells and aborts the one running.
 */
export async function applyRewind(
  host: IRewindHost,
  plan: IRewindPlan,
  options: IRewindOptions = {},
  signal?: AbortSignal
): Promise<IRewindRecord> {
  const { state, driver } = host;
  const checkpoint = state.rewind.checkpoints.find(c => c.seq === plan.seq);
  if (!checkpoint) {
    throw refusal('rewindPointGone');
  }
  const sources = new Map(
    state.rewind.rewrittenSince(checkpoint).map(r => [r.cellId, r.source])
  );
  const title = state.rewind.titleSince(checkpoint);
  const edit: IRewindEdit = {
    remove: plan.remove.map(c => c.cellId),
    restore: plan.restore.map(c => ({
      cellId: c.cellId,
      source: sources.get(c.cellId) ?? ''
    })),
    ...(title !== undefined ? { title } : {})
  };
  const done = await driver.rewindCells(edit);
  rollBack(host, checkpoint);
  const effect = rewindEffect(plan, done.removed.length);
  const record: IRewindRecord = {
    kind: plan.target.kind === 'behavior' ? 'undo_behavior' : 'redo_from_step',
    at: host.now().toISOString(),
    stageId: plan.stageId,
    stepId: plan.stepId,
    behaviorId: plan.behaviorId,
    steps: [...plan.steps],
    removed: done.removed.length,
    kept: plan.keep.length,
    restored: done.restored.length,
    kernelRestarted: false,
    rerun: 0,
    rerunError: null,
    effect
  };
  state.rewind.record(record);
  state.effects.add(effect);
  host.signals.effects(state.effects.toJSON());
  // The notebook's next save writes the cells as rewound: the run state on disk must say so before.
  await host.saveState();
  host.signals.progress();
  if (!options.restartKernel) {
    host.trace.rewind(record);
    return record;
  }
  const kernel = await rerunKeptCells(host, signal);
  const told = kernelEffect(kernel);
  const ended: IRewindRecord = {
    ...record,
    kernelRestarted: kernel.restarted,
    rerun: kernel.rerun,
    rerunError: kernel.error,
    effect: told === null ? effect : `${effect} ${told}`
  };
  state.rewind.amend(record, ended);
  if (told !== null) {
    state.effects.add(told);
    host.signals.effects(state.effects.toJSON());
  }
  await host.saveState();
  host.signals.progress();
  host.trace.rewind(ended);
  return ended;
}

/** What the kernel restart of a rewind did. */
interface IKernelRerun {
  restarted: boolean;
  rerun: number;
  /** Why the restart was not done (`restarted` false) or the re-run stopped; null when all went well. */
  error: string | null;
}

/** The planner's words for a restart that did not go as asked, or null. */
function kernelEffect(kernel: IKernelRerun): string | null {
  if (kernel.error === null) {
    return null;
  }
  return kernel.restarted
    ? `After a kernel restart, re-running the kept cells stopped: ${kernel.error}`
    : `The kernel was not restarted: ${kernel.error}`;
}

async function rerunKeptCells(
  host: IRewindHost,
  signal?: AbortSignal
): Promise<IKernelRerun> {
  const { driver } = host;
  const stopped = englishText(msg('runStopped'));
  if (signal?.aborted) {
    return { restarted: false, rerun: 0, error: stopped };
  }
  let error: string | null = null;
  try {
    await driver.restartKernel();
  } catch (reason) {
    if (reason instanceof KernelNotRestarted) {
      return { restarted: false, rerun: 0, error: errorMessage(reason) };
    }
    // Restarted, but not answering: the cells are already rewound, the run's next execution asks again.
    error = errorMessage(reason);
  }
  // The kernel's variables are gone: the next request must not send those the removed cells made, and
  // collects again even in interactive mode (the user asked for this restart and re-run).
  host.change({
    kernelVariables: {},
    kernelVariableTypes: {},
    codeRanSinceCollection: true
  });
  if (error !== null) {
    return { restarted: true, rerun: 0, error };
  }
  let rerun = 0;
  for (const cell of driver.listCells()) {
    if (cell.kind !== 'code' || cell.source.trim() === '') {
      continue;
    }
    if (signal?.aborted) {
      return { restarted: true, rerun, error: stopped };
    }
    let result: IExecResult;
    try {
      result = await driver.execCell({
        cellId: cell.id,
        timeoutMs: Math.max(0, host.settings().executionTimeout) * 1000,
        signal
      });
    } catch (reason) {
      return { restarted: true, rerun, error: errorMessage(reason) };
    }
    if (result.status === 'aborted') {
      return { restarted: true, rerun, error: stopped };
    }
    rerun++;
    if (result.status !== 'ok') {
      const why =
        result.status === 'error'
          ? `${result.ename ?? 'Error'}: ${result.evalue ?? ''}`
          : (result.message ?? result.status);
      return { restarted: true, rerun, error: `cell ${cell.id}: ${why}` };
    }
  }
  return { restarted: true, rerun, error: null };
}
