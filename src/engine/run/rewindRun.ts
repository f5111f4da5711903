/**
 * A rewind on a live runner (docs/architecture.md#rewind): the notebook edit, then the rollback
 * (`rewind/rollback.ts`) with its record and effect in one transaction, saved at once; then, when
 * asked, the kernel restart and the kept cells run again, and the record as it ended.
 */
import {
  type IExecResult,
  type IRewindEdit,
  KernelNotRestarted
} from '../ports/driver';
import { errorMessage } from '../actions/registry';
import { englishText, msg, refusal } from '../messages';
import { rewindEffect } from '../rewind/plan';
import { rewindRecord, rollback } from '../rewind/rollback';
import type {
  IRewindOptions,
  IRewindPlan,
  IRewindRecord
} from '../state/rewind';
import { op, transaction } from '../state/transaction';
import type { IRunHost } from './host';

/** What a rewind reads of the run, and how it changes it. */
export type IRewindHost = Pick<
  IRunHost,
  'state' | 'driver' | 'client' | 'trace' | 'settings' | 'now' | 'dispatch'
>;

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
  if (checkpoint.planner !== undefined) {
    host.client.restoreState?.(checkpoint.planner);
  }
  const effect = rewindEffect(plan, done.removed.length);
  const record = rewindRecord(
    plan,
    { removed: done.removed.length, restored: done.restored.length },
    effect,
    host.now()
  );
  // The notebook's next save writes the cells as rewound: the run state on disk must say so before.
  await host.dispatch(
    transaction(
      'rewind.rollback',
      [
        ...rollback(state, checkpoint),
        op.journal('record', record),
        op.effects('add', effect)
      ],
      { save: 'now', show: true }
    )
  );
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
  await host.dispatch(
    transaction(
      'rewind.rerun',
      [
        op.journal('amend', record, ended),
        ...(told !== null ? [op.effects('add', told)] : [])
      ],
      { save: 'now', show: true }
    )
  );
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
  await host.dispatch(
    transaction('rewind.kernelRestarted', [
      op.set({
        kernelVariables: {},
        kernelVariableTypes: {},
        codeRanSinceCollection: true
      })
    ])
  );
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
