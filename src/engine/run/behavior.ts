/**
 * One behavior's `/generating` stream: read into its queue, approved by the user (interactive mode),
 * each action applied through the registry with its context, counted. It owns its stream, queue and
 * counters, and tells the run what happened through a narrow sink; it writes nothing of the run state.
 */
import { isActionType, LAST_ADDED_CELL_ID } from '../../protocol';
import type {
  Action,
  ExecAction,
  GeneratingEvent,
  RewriteCellAction,
  WorkflowStep,
  WorkflowTemplate
} from '../../protocol';
import { plannerMayRunCell, unwrapCodeFence } from '../actions/builtins';
import { type ApprovalReason, approvalNeed, heldEffect } from '../approval';
import { flagCode } from '../codeRisk';
import { englishText, type IMessage, msg, reported } from '../messages';
import type { ICellProvenance } from '../ports/driver';
import {
  type ActionRegistry,
  type AnyAction,
  errorMessage,
  type IActionContext,
  type IActionResult
} from '../actions/registry';
import type { IRunSettings } from '../settings';
import type {
  BehaviorDecision,
  IExistingCellRun,
  IPauseReason,
  IRunnerHooks,
  IRunWarning
} from '../types';
import {
  ActionQueue,
  MAX_BEHAVIOR_ACTIONS,
  MAX_QUEUED_ACTIONS,
  MAX_QUEUED_CHARS
} from './actionQueue';
import { type RunControl, RunStopped } from './runControl';
import type { RunNotebook } from './runNotebook';
import {
  applyEdits,
  type IReviewNotebook,
  rejectedNote,
  rewritesToReview
} from './rewriteReview';

export type ActionEvent = Extract<GeneratingEvent, { kind: 'action' }>;

/** A behavior's counters, saved with the run while the behavior is open. */
export interface IBehaviorCounters {
  executed: number;
  succeeded: number;
  sectionsAdded: number;
  lastResult: string;
  /** Index of the next action within the behavior. */
  actionIndex: number;
}

/** What a behavior tells the run, and the little it asks of it. */
export interface IBehaviorSink {
  warn(message: string | IMessage, source: IRunWarning['source']): void;
  /** An effect the planner will read. */
  effect(text: string): void;
  /** `archive_effects`: the current effects move into history now. */
  archiveEffects(): void;
  /** An action of `behaviorId` starts. */
  actionStarted(): void;
  /** An action was applied; the run may collect the kernel's variables before the next. */
  actionApplied(
    action: AnyAction,
    index: number,
    result: IActionResult
  ): Promise<void>;
  /** The queue grew while the run is paused (the view shows what a paused run holds). */
  queueChanged(): void;
  /** An action boundary: a requested pause takes effect here. */
  pausePoint(): Promise<void>;
  pause(reason: IPauseReason): void;
  endStep(stepId?: string): void;
  updateWorkflow(template: WorkflowTemplate): Promise<boolean>;
  replaceStageSteps(
    stageId: string | null,
    steps: WorkflowStep[]
  ): Promise<boolean>;
}

/** How a behavior's stream ended. */
export interface IBehaviorOutcome {
  /** Why the stream failed, or null when it ended. */
  failure: unknown;
  /** The behavior was cut short: the planner is told why, in English. */
  cut: string | null;
}

/** The code an action writes into a cell: a code cell's (`add`) or a fix (`rewrite_cell`). */
function codeOf(action: AnyAction): string | null {
  if (action.action === 'add') {
    const add = action as Extract<Action, { action: 'add' }>;
    return add.shot_type === 'action' ? unwrapCodeFence(add.content) : null;
  }
  if (action.action === 'rewrite_cell') {
    const fix = action as Extract<Action, { action: 'rewrite_cell' }>;
    return unwrapCodeFence(fix.content);
  }
  return null;
}

export class BehaviorRun {
  constructor(options: BehaviorRun.IOptions) {
    const { executed, succeeded, sectionsAdded, lastResult, actionIndex } =
      options.counters;
    this.id = options.id;
    // Its own copy: the behavior counts; the run keeps what the behavior counted when it saves.
    this.counters = {
      executed,
      succeeded,
      sectionsAdded,
      lastResult,
      actionIndex
    };
    this._options = options;
  }

  readonly id: string;
  /** Counted as the actions are applied; the run saves a copy while the behavior is open. */
  readonly counters: IBehaviorCounters;

  /** The actions received and not yet applied, oldest first. */
  get queued(): readonly ActionEvent[] {
    return this._queue.items;
  }

  /**
   * Reads the stream and applies its actions in order. The actions a read delivers together (one
   * network chunk) are applied in the same task: nothing between them waits for a timer or the
   * stream, so the notebook lays out once per chunk. A pause requested meanwhile takes effect before
   * the next action. Throws `RunStopped` when the run is stopped.
   */
  async run(): Promise<IBehaviorOutcome> {
    const { control, settings } = this._options;
    const interactive = settings().interactive;
    this._wholeAnswer = interactive;
    const reader = this._read();
    if (interactive) {
      await this._approveRest('interactive');
    }
    for (;;) {
      if (control.pauseRequested) {
        await this._options.sink.pausePoint();
      }
      control.throwIfStopped();
      const next = this._queue.items[0];
      // Without interactive mode, flagged code waits for the user before it is added or run.
      if (next && !this._decided && this._flagged(next.action)) {
        await this._approveRest('flagged');
        continue;
      }
      if (this._queue.shift()) {
        control.wake();
        await this._apply(next.action);
        continue;
      }
      if (this._ended) {
        break;
      }
      await control.waitWake();
    }
    await reader;
    return { failure: this._failure, cut: this._cut };
  }

  /** The rest of the answer, read whole, is shown for approval; nothing of it is applied unless approved. */
  private async _approveRest(reason: ApprovalReason): Promise<void> {
    const { control } = this._options;
    this._decided = true;
    this._wholeAnswer = true;
    control.wake();
    while (!this._ended && !control.stopRequested) {
      await control.waitWake();
    }
    control.throwIfStopped();
    // Nothing of an unapproved or broken behavior is applied; a retry asks again.
    if (this._failure !== null || !(await this._approve(reason))) {
      this._queue.clear();
    }
  }

  /** Whether `action` adds or runs code that reaches outside the notebook. */
  private _flagged(action: AnyAction): boolean {
    const code = codeOf(action);
    const allowedPaths = this._options.dataFiles?.() ?? [];
    if (code !== null) {
      return flagCode(code, { allowedPaths }).length > 0;
    }
    return (
      action.action === 'exec' &&
      this._existingCellsRun([action]).some(
        cell => flagCode(cell.source, { allowedPaths }).length > 0
      )
    );
  }

  private async _read(): Promise<void> {
    const { control, sink, registry } = this._options;
    try {
      for await (const event of this._options.stream) {
        if (control.stopRequested) {
          break;
        }
        if (event.kind === 'action') {
          if (event.typeOnly && !registry.has(event.action.action)) {
            sink.warn(
              msg(
                'lineWithoutHandler',
                event.action.action,
                event.line.slice(0, 200)
              ),
              'planner'
            );
          } else if (
            this._queue.spent ||
            (this._wholeAnswer && this._queue.full)
          ) {
            this._cut = this._stopReading(this._wholeAnswer);
            break;
          } else {
            this._queue.push(event);
            if (control.pauseReason) {
              sink.queueChanged();
            }
            // The stream is not read until there is room: a paused run holds a bounded queue.
            while (
              this._queue.full &&
              !this._wholeAnswer &&
              !control.stopRequested
            ) {
              control.wake();
              await control.waitWake();
            }
          }
        } else if (event.kind === 'notice') {
          // Shown and logged only: a heartbeat must not push real outputs out of the planner's view.
          sink.warn(event.text ?? event.message, 'planner');
        } else {
          sink.warn(event.text ?? event.message, 'planner');
          sink.effect(`⚠️ WARN: ${event.message}`);
        }
        control.wake();
      }
    } catch (error) {
      this._failure = error;
    } finally {
      this._ended = true;
      control.wake();
    }
  }

  /** The behavior sent more than the queue bounds allow: the rest is not read; returns why, in English. */
  private _stopReading(interactive: boolean): string {
    const kept = this._queue.received.toLocaleString('en-US');
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
    this._options.sink.warn(message, 'engine');
    return englishText(message);
  }

  /** False when the rest of the behavior is to be skipped. Throws when the user stops the run. */
  private async _approve(reason: ApprovalReason): Promise<boolean> {
    const { control, hooks, sink } = this._options;
    const location = this._options.location();
    const actions = this._queue.items.map(event => event.action);
    const allowedPaths = this._options.dataFiles?.() ?? [];
    const codeCells = actions
      .filter(a => a.action === 'add')
      .map(codeOf)
      .filter((code): code is string => code !== null);
    const codeFlags = codeCells.map(code => flagCode(code, { allowedPaths }));
    // Each cell as the user finds it: its place in the notebook now.
    const position = this._positions();
    // A fix is new code too: flagged like an added cell's.
    const rewrites = rewritesToReview(
      actions,
      this._reviewNotebook(position)
    ).map(rewrite => {
      const flags = flagCode(rewrite.after, { allowedPaths });
      return flags.length > 0 ? { ...rewrite, flags } : rewrite;
    });
    const existingCells = this._existingCellsRun(actions).map(run => {
      const cell = { ...run, position: position(run.cellId) };
      const flags = flagCode(cell.source, { allowedPaths });
      return flags.length > 0 ? { ...cell, flags } : cell;
    });
    const flags = [
      ...codeFlags.flat(),
      ...rewrites.flatMap(rewrite => rewrite.flags ?? []),
      ...existingCells.flatMap(cell => cell.flags ?? [])
    ];
    const approveHook = hooks.approveBehavior;
    const need = approvalNeed({
      interactive: reason === 'interactive',
      runsCode:
        codeCells.length > 0 ||
        rewrites.length > 0 ||
        actions.some(a => a.action === 'exec'),
      flagged: flags.length > 0,
      canAsk: !!approveHook
    });
    if (need === 'apply') {
      return true;
    }
    let decision: BehaviorDecision = 'skip';
    if (approveHook && need === 'ask') {
      try {
        decision = await control.untilStopped(
          approveHook.call(
            hooks,
            {
              behaviorId: this.id,
              stageId: location.stageId,
              stepId: location.stepId,
              reason,
              codeCells,
              codeFlags,
              existingCells,
              rewrites,
              actions
            },
            control.signal
          )
        );
      } catch (error) {
        control.throwIfStopped();
        sink.warn(msg('approvalFailed', errorMessage(error)), 'hook');
      }
    }
    if (decision === 'stop') {
      control.stop();
      throw new RunStopped();
    }
    if (decision === 'skip') {
      sink.effect(
        (flags.length > 0
          ? heldEffect(this.id, flags, actions.length, need === 'ask')
          : `Behavior ${this.id} was skipped by the user: its ${actions.length} actions were not applied.`) +
          (need === 'ask' ? rejectedNote(rewrites) : '')
      );
      this.counters.lastResult = 'skipped';
      return false;
    }
    if (typeof decision === 'object') {
      applyEdits(actions, decision.edits).forEach(text => sink.effect(text));
    }
    return true;
  }

  private _reviewNotebook(
    position: IReviewNotebook['position']
  ): IReviewNotebook {
    const { cells, driver } = this._options.notebook;
    return {
      cells,
      source: cellId => driver.cellSource(cellId),
      status: cellId => driver.rewriteStatus(cellId),
      position
    };
  }

  /** Each cell's place in the notebook as it is now (1 for the first), looked up by id. */
  private _positions(): (cellId: string) => number | null {
    const order = new Map(
      this._options.notebook.driver
        .listCells()
        .map((cell, index) => [cell.id, index + 1])
    );
    return cellId => order.get(cellId) ?? null;
  }

  /**
   * The cells already in the notebook that `actions` would run, with their code: an `exec` of a cell
   * the same behavior adds is shown as that new code instead, and one that would be refused or find no
   * cell runs nothing.
   */
  private _existingCellsRun(
    actions: AnyAction[]
  ): Omit<IExistingCellRun, 'position'>[] {
    const { notebook, settings } = this._options;
    const addedStoreIds = new Set<string>();
    // An exec of a cell the behavior rewrites runs the fix, shown as its diff.
    const rewritten = new Set<string>();
    let addsCode = false;
    const runs = new Map<string, Omit<IExistingCellRun, 'position'>>();
    const context = {
      cells: notebook.cells,
      driver: notebook.driver,
      settings: settings()
    };
    for (const action of actions) {
      if (action.action === 'add') {
        addsCode = addsCode || codeOf(action) !== null;
        if (typeof action.store_id === 'string') {
          addedStoreIds.add(action.store_id);
        }
        continue;
      }
      if (action.action === 'rewrite_cell') {
        const target = notebook.cells.resolve(
          (action as RewriteCellAction).codecell_id
        );
        rewritten.add(
          target.ok ? target.cellId : (action as RewriteCellAction).codecell_id
        );
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
      const resolved = notebook.cells.resolve(reference);
      if (
        !resolved.ok ||
        runs.has(resolved.cellId) ||
        rewritten.has(resolved.cellId)
      ) {
        continue;
      }
      const source = notebook.driver.cellSource(resolved.cellId);
      if (source !== null && plannerMayRunCell(resolved.cellId, context)) {
        runs.set(resolved.cellId, { cellId: resolved.cellId, source });
      }
    }
    return [...runs.values()];
  }

  private async _apply(action: AnyAction): Promise<void> {
    const { registry, sink } = this._options;
    // Read at each action: an `update_workflow` earlier in the behavior can give the run its place.
    const location = this._options.location();
    const counters = this.counters;
    sink.actionStarted();
    const index = counters.actionIndex++;
    const provenance: ICellProvenance = {
      stage_id: location.stageId,
      step_id: location.stepId,
      behavior_id: this.id,
      action_index: index,
      action: action.action
    };
    if (typeof action.store_id === 'string') {
      provenance.store_id = action.store_id;
    }
    if (!registry.has(action.action)) {
      sink.warn(msg('unknownAction', action.action), 'action');
    }
    const result = await registry.execute(action, this._context(provenance));
    counters.executed++;
    if (result.ok) {
      counters.succeeded++;
    }
    if (result.sectionAdded) {
      counters.sectionsAdded++;
    }
    counters.lastResult = result.ok ? 'success' : 'error';
    await sink.actionApplied(action, index, result);
  }

  private _context(provenance: ICellProvenance): IActionContext {
    const { control, notebook, settings, sink, now } = this._options;
    return {
      driver: notebook.driver,
      settings: settings(),
      provenance,
      cells: notebook.cells,
      effects: {
        add: text => sink.effect(text),
        archive: () => sink.archiveEffects()
      },
      signal: control.signal,
      now,
      run: {
        ...notebook.writerFor(provenance),
        updateWorkflow: template => sink.updateWorkflow(template),
        replaceStageSteps: (stageId, steps) =>
          sink.replaceStageSteps(stageId, steps),
        endStep: stepId => sink.endStep(stepId),
        pause: (reason, kind = 'action') => {
          sink.warn(reason, 'action');
          sink.pause({ kind, ...reported(reason) });
        },
        warn: message => sink.warn(message, 'action')
      }
    };
  }

  private readonly _options: BehaviorRun.IOptions;
  private readonly _queue = new ActionQueue<ActionEvent>();
  /** The rest of the answer is read whole before anything more is applied (it is to be approved). */
  private _wholeAnswer = false;
  /** The rest of this behavior was shown for approval (or did not need it): nothing more is asked. */
  private _decided = false;
  private _ended = false;
  private _failure: unknown = null;
  private _cut: string | null = null;
}

export namespace BehaviorRun {
  export interface IOptions {
    /** The behavior's id (its provenance in every cell it makes). */
    id: string;
    /** Where the run is now (stage and step), read for each action. */
    location: () => { stageId: string | null; stepId: string | null };
    /** Counters to go on from (a behavior whose stream is asked again after an error). */
    counters: IBehaviorCounters;
    /** The `/generating` answer. */
    stream: AsyncIterable<GeneratingEvent>;
    registry: ActionRegistry;
    notebook: RunNotebook;
    /** Stop, pause and wake; the signal of the request in flight. */
    control: RunControl;
    settings: () => IRunSettings;
    hooks: Pick<IRunnerHooks, 'approveBehavior'>;
    /** Paths the run was given (its data files): code that reads them is not flagged for them. */
    dataFiles?: () => readonly string[];
    now: () => Date;
    sink: IBehaviorSink;
  }
}

/** Whether an applied action may have changed the kernel's variables. */
export function ranCode(action: AnyAction): boolean {
  return action.action === 'exec' || !isActionType(action.action);
}
