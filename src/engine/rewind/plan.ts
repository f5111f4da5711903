/**
 * What a rewind would do (docs/architecture.md#rewind): which cells of the run go, which the user edited
 * and keep, which earlier sources come back; and the words the planner is told. Reads only.
 */
import type { ICellRecord, INotebookDriver } from '../ports/driver';
import {
  editedByUser,
  type IRewindCell,
  type IRewindPlan,
  type RewindTarget
} from '../state/rewind';
import type { RunStateView } from '../state/runState';

const SUMMARY_CHARS = 80;

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
  state: RunStateView,
  driver: Pick<INotebookDriver, 'listCells'>,
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
