/**
 * Rewind (docs/architecture.md#rewind): a checkpoint of the run at the start of every step and behavior,
 * kept compact (progress and outputs tracking, positions in the effects, the cell map's names; never the
 * notebook's contents), the sources the run overwrote in cells it had made earlier, and the rewinds
 * done. Taking and rolling back checkpoints on a live run is `rewindRun.ts`.
 */
import { z } from 'zod';
import type { ContextFilter, WorkflowTemplate } from '../../protocol';
import type { ICellMapMark } from './cells';
import { type ICellRecord, sourceHash } from '../ports/driver';
import type { IEffectsMark, IEffectsPosition } from './effects';
import type { IProgressState } from './progressState';
import { stepKey } from '../rewindView';

/** Checkpoints kept; older ones are dropped, and their steps can no longer be redone. */
export const MAX_CHECKPOINTS = 100;
/** Rewinds remembered (for the panel, the saved run and the trace). */
export const MAX_REWIND_RECORDS = 20;

/** The user changed the cell since the run wrote it (or the run never stamped it: it is left alone). */
export function editedByUser(cell: ICellRecord): boolean {
  return (
    cell.sourceHash === null || cell.sourceHash !== sourceHash(cell.source)
  );
}

export interface IRunCheckpoint {
  /** Increasing over the run. */
  seq: number;
  /** Taken when a step starts (before its first /planning) or before a behavior's /generating. */
  kind: 'step' | 'behavior';
  stageId: string | null;
  stepId: string | null;
  /** The behavior that started right after (kind `behavior`), once it has an id. */
  behaviorId: string | null;
  /** ISO 8601. */
  at: string;
  /** Index into `IRewindState.templates`; null when the run had none. */
  template: number | null;
  /** The progress without its template. */
  progress: IProgressState;
  effects: IEffectsMark;
  cells: ICellMapMark;
  contextVariables: Record<string, unknown>;
  filter: ContextFilter | null;
  templateFromPlanner: boolean;
  /** The newest behavior timing then; later ones go on rollback. */
  lastTiming: { behaviorId: string; startedAt: string } | null;
  /** The planner service's state (`IPlannerService.saveState`), when it keeps one. */
  planner?: unknown;
}

/** The source a cell had before the run overwrote it, after checkpoint `afterSeq`. */
export interface IRewrittenCell {
  cellId: string;
  source: string;
  afterSeq: number;
}

/** The notebook's title (null: none) before the run changed it, after checkpoint `afterSeq`. */
export interface IRetitled {
  title: string | null;
  afterSeq: number;
}

export type RewindTarget =
  | { kind: 'behavior' }
  | { kind: 'step'; stageId: string | null; stepId: string };

/** One rewind, as the saved run, the trace and the panel tell it. */
export interface IRewindRecord {
  kind: 'undo_behavior' | 'redo_from_step';
  /** ISO 8601. */
  at: string;
  stageId: string | null;
  stepId: string | null;
  /** The behavior undone (`undo_behavior`). */
  behaviorId: string | null;
  /** The steps whose cells were removed, in run order. */
  steps: string[];
  removed: number;
  /** Cells of the run the user had edited: left in the notebook. */
  kept: number;
  /** Cells whose earlier source was put back. */
  restored: number;
  /** The kernel was really restarted (asked for, and done). */
  kernelRestarted: boolean;
  /** Code cells run again after the restart. */
  rerun: number;
  /**
   * Why re-running stopped early (the first error), or, with `kernelRestarted` false, why the kernel
   * asked to restart was not; null when nothing went wrong.
   */
  rerunError: string | null;
  /** The text the planner gets as an effect (docs/protocol.md#rewind). */
  effect: string;
}

export interface IRewindOptions {
  /** Restart the kernel and run the code cells left in the notebook, top to bottom. */
  restartKernel?: boolean;
}

/** A cell in the rewind dialog. */
export interface IRewindCell {
  cellId: string;
  kind: string;
  stepId: string | null;
  behaviorId: string | null;
  /** The source's first line, shortened. */
  summary: string;
}

/** What a rewind would do, for the confirmation dialog. */
export interface IRewindPlan {
  target: RewindTarget;
  /** The checkpoint rolled back to. */
  seq: number;
  stageId: string | null;
  stepId: string | null;
  /** The behavior undone (`behavior` target). */
  behaviorId: string | null;
  /** Steps whose cells go, in run order. */
  steps: string[];
  remove: IRewindCell[];
  /** Cells of the run the user edited since: they stay. */
  keep: IRewindCell[];
  /** Earlier cells the run rewrote since: their earlier source comes back. */
  restore: IRewindCell[];
  /** Every other cell stays (the user's own and the earlier ones). */
  untouched: number;
}

/** What the panel offers. */
export interface IRewindView {
  /** The last behavior can be undone: it and its step. */
  undo: { behaviorId: string | null; stepId: string | null } | null;
  /** Steps that can be redone (a checkpoint at their start is kept), as `stageId/stepId`. */
  redoSteps: string[];
  /** The latest rewind. */
  last: IRewindRecord | null;
}

/** The serialised log, saved with the run. */
export interface IRewindState {
  checkpoints: IRunCheckpoint[];
  templates: WorkflowTemplate[];
  rewritten: IRewrittenCell[];
  /** Absent in older saves. */
  titles?: IRetitled[];
  records: IRewindRecord[];
  /** What the effect marks are measured against (`EffectsStore.position`). */
  effects: IEffectsPosition;
  nextSeq: number;
}

const RewindStateSchema = z.looseObject({
  checkpoints: z.array(
    z.looseObject({
      seq: z.number(),
      kind: z.enum(['step', 'behavior']),
      progress: z.looseObject({}),
      effects: z.looseObject({
        epoch: z.number(),
        historyEnd: z.number(),
        end: z.number()
      }),
      cells: z.looseObject({
        createdCount: z.number(),
        storeIds: z.record(z.string(), z.string())
      }),
      contextVariables: z.record(z.string(), z.unknown())
    })
  ),
  templates: z.array(z.looseObject({})),
  rewritten: z.array(
    z.looseObject({
      cellId: z.string(),
      source: z.string(),
      afterSeq: z.number()
    })
  ),
  titles: z
    .array(
      z.looseObject({ title: z.string().nullable(), afterSeq: z.number() })
    )
    .optional(),
  records: z.array(z.looseObject({ effect: z.string() })),
  effects: z.looseObject({ dropped: z.number(), epoch: z.number() }),
  nextSeq: z.number()
});

/** A saved rewind log, or null when absent or unreadable (the run is then kept without it). */
export function readRewindState(value: unknown): IRewindState | null {
  return RewindStateSchema.safeParse(value).success
    ? (value as IRewindState)
    : null;
}

/** The methods that change the rewind log: only the run state's transactions call them. */
export type RewindWrite =
  | 'add'
  | 'rewriting'
  | 'retitling'
  | 'truncate'
  | 'record'
  | 'amend'
  | 'restore'
  | 'clear';

/** The rewind log as the parts of the loop see it: read only. */
export type RewindReader = Omit<RewindLog, RewindWrite>;

export class RewindLog {
  get checkpoints(): readonly IRunCheckpoint[] {
    return this._checkpoints;
  }

  get records(): readonly IRewindRecord[] {
    return this._records;
  }

  get latest(): IRunCheckpoint | null {
    return this._checkpoints[this._checkpoints.length - 1] ?? null;
  }

  /** Adds a checkpoint (its `seq` and template index are set here). */
  add(
    checkpoint: Omit<IRunCheckpoint, 'seq' | 'template'>,
    template: WorkflowTemplate | null
  ): IRunCheckpoint {
    const full: IRunCheckpoint = {
      ...checkpoint,
      seq: this._nextSeq++,
      template: this._templateIndex(template)
    };
    this._checkpoints.push(full);
    if (this._checkpoints.length > MAX_CHECKPOINTS) {
      this._checkpoints.splice(0, this._checkpoints.length - MAX_CHECKPOINTS);
      this._prune();
    }
    return full;
  }

  template(checkpoint: IRunCheckpoint): WorkflowTemplate | null {
    return checkpoint.template === null
      ? null
      : (this._templates[checkpoint.template] ?? null);
  }

  /** Where `target` rolls back to, or null when no checkpoint is kept for it. */
  find(target: RewindTarget): IRunCheckpoint | null {
    const found = [...this._checkpoints]
      .reverse()
      .find(c =>
        target.kind === 'behavior'
          ? c.kind === 'behavior'
          : c.kind === 'step' &&
            c.stepId === target.stepId &&
            (target.stageId === null || c.stageId === target.stageId)
      );
    return found ?? null;
  }

  /** The run is about to overwrite a cell it made before the latest checkpoint. */
  rewriting(cellId: string, source: string): void {
    const after = this.latest?.seq;
    if (after === undefined) {
      return;
    }
    const known = this._rewritten.some(
      r => r.cellId === cellId && r.afterSeq === after
    );
    if (!known) {
      this._rewritten.push({ cellId, source, afterSeq: after });
    }
  }

  /** The run is about to change the notebook's title, which is `title` now. */
  retitling(title: string | null): void {
    const after = this.latest?.seq;
    if (after !== undefined && !this._titles.some(t => t.afterSeq === after)) {
      this._titles.push({ title, afterSeq: after });
    }
  }

  /** The title to put back when rolling back to `checkpoint`; undefined when the run kept it since. */
  titleSince(checkpoint: IRunCheckpoint): string | null | undefined {
    return this._titles.find(t => t.afterSeq >= checkpoint.seq)?.title;
  }

  /** The sources to put back when rolling back to `checkpoint`: each cell's earliest one since. */
  rewrittenSince(checkpoint: IRunCheckpoint): IRewrittenCell[] {
    const first = new Map<string, IRewrittenCell>();
    for (const entry of this._rewritten) {
      if (entry.afterSeq >= checkpoint.seq && !first.has(entry.cellId)) {
        first.set(entry.cellId, entry);
      }
    }
    return [...first.values()];
  }

  /** Forgets `checkpoint` and everything after it (the run goes on from there and takes them again). */
  truncate(checkpoint: IRunCheckpoint): void {
    this._checkpoints = this._checkpoints.filter(c => c.seq < checkpoint.seq);
    this._rewritten = this._rewritten.filter(r => r.afterSeq < checkpoint.seq);
    this._titles = this._titles.filter(t => t.afterSeq < checkpoint.seq);
    this._prune();
  }

  record(record: IRewindRecord): void {
    this._records.push(record);
    if (this._records.length > MAX_REWIND_RECORDS) {
      this._records.splice(0, this._records.length - MAX_REWIND_RECORDS);
    }
  }

  /** `record`, told before its kernel restart, as it ended. */
  amend(record: IRewindRecord, ended: IRewindRecord): void {
    const index = this._records.indexOf(record);
    if (index >= 0) {
      this._records[index] = ended;
    }
  }

  view(completedSteps: ReadonlySet<string>): IRewindView {
    const undo = this.find({ kind: 'behavior' });
    const redoSteps: string[] = [];
    for (const c of this._checkpoints) {
      if (c.kind !== 'step' || c.stepId === null) {
        continue;
      }
      const key = stepKey(c.stageId, c.stepId);
      if (completedSteps.has(key) && !redoSteps.includes(key)) {
        redoSteps.push(key);
      }
    }
    return {
      undo: undo ? { behaviorId: undo.behaviorId, stepId: undo.stepId } : null,
      redoSteps,
      last: this._records[this._records.length - 1] ?? null
    };
  }

  toJSON(effects: IEffectsPosition): IRewindState {
    return {
      checkpoints: this._checkpoints.map(c => ({ ...c })),
      templates: [...this._templates],
      rewritten: this._rewritten.map(r => ({ ...r })),
      titles: this._titles.map(t => ({ ...t })),
      records: this._records.map(r => ({ ...r })),
      effects: { ...effects },
      nextSeq: this._nextSeq
    };
  }

  restore(state: IRewindState): void {
    this._checkpoints = state.checkpoints.map(c => ({ ...c }));
    this._templates = [...state.templates];
    this._rewritten = state.rewritten.map(r => ({ ...r }));
    this._titles = (state.titles ?? []).map(t => ({ ...t }));
    this._records = state.records.map(r => ({ ...r }));
    this._nextSeq = state.nextSeq;
  }

  clear(): void {
    this._checkpoints = [];
    this._templates = [];
    this._rewritten = [];
    this._titles = [];
    this._records = [];
    this._nextSeq = 1;
  }

  private _templateIndex(template: WorkflowTemplate | null): number | null {
    if (template === null) {
      return null;
    }
    const last = this._templates.length - 1;
    if (
      last >= 0 &&
      JSON.stringify(this._templates[last]) === JSON.stringify(template)
    ) {
      return last;
    }
    this._templates.push(template);
    return this._templates.length - 1;
  }

  /** Drops templates and rewritten sources no kept checkpoint needs. */
  private _prune(): void {
    const oldest = this._checkpoints[0]?.seq ?? this._nextSeq;
    this._rewritten = this._rewritten.filter(r => r.afterSeq >= oldest);
    this._titles = this._titles.filter(t => t.afterSeq >= oldest);
    const used = [
      ...new Set(
        this._checkpoints
          .map(c => c.template)
          .filter((t): t is number => t !== null)
      )
    ].sort((a, b) => a - b);
    const remap = new Map(used.map((old, index) => [old, index]));
    this._templates = used.map(index => this._templates[index]);
    for (const c of this._checkpoints) {
      c.template = c.template === null ? null : (remap.get(c.template) ?? null);
    }
  }

  private _checkpoints: IRunCheckpoint[] = [];
  private _templates: WorkflowTemplate[] = [];
  private _rewritten: IRewrittenCell[] = [];
  private _titles: IRetitled[] = [];
  private _records: IRewindRecord[] = [];
  private _nextSeq = 1;
}
