/**
 * The action registry (docs/architecture.md#extension-points): each action type is a
 * handler registered by name, wrapped by pre- and post-hooks. The engine registers the built-in types;
 * other extensions may add or override types at run time. An action nobody handles is skipped with a
 * warning and an effect, and the run goes on.
 */
import { ISignal, Signal } from '@lumino/signaling';
import type {
  Action,
  ActionOf,
  ActionType,
  UnknownAction,
  WorkflowStep,
  WorkflowTemplate
} from '../../protocol';
import type { CellMapReader } from '../state/cells';
import type {
  CellRole,
  ICellProvenance,
  INotebookDriver,
  RewriteResult
} from '../ports/driver';
import {
  type IMessage,
  isMessageId,
  type MessageParam,
  msg
} from '../messages';
import type { IRunSettings } from '../settings';

export type AnyAction = Action | UnknownAction;

/** What `register` and the hook methods return: dispose to undo the registration. */
export interface IDisposableLike {
  readonly isDisposed: boolean;
  dispose(): void;
}

export interface INewCell {
  kind: 'markdown' | 'code';
  source: string;
  role: CellRole;
  storeId?: string;
  /** Merged under `notebook_bcc` in the cell metadata. */
  metadata?: Record<string, unknown>;
  /** Inserted right below this cell while it exists; at the end otherwise. */
  after?: string;
}

/** Run services a handler may use, beyond the notebook driver. */
export interface IRunControl {
  /** Adds a cell with this action's provenance and keeps `store_id` / `lastAddedCellId` up to date. */
  addCell(cell: INewCell): Promise<string>;
  /**
   * Rewrites a cell (`source` null: only its metadata); false when it is gone. A rewind can put back a
   * source written here, not one written through `driver.updateCell`.
   */
  updateCell(
    cellId: string,
    source: string | null,
    metadata?: Record<string, unknown>
  ): Promise<boolean>;
  /**
   * `rewrite_cell`: replaces the source of a code cell the run wrote, its code kept as an attempt
   * (`INotebookDriver.rewriteCell`); a rewind can put the earlier source back.
   */
  rewriteCell(cellId: string, source: string): Promise<RewriteResult>;
  /** Makes or rewrites the run's title cell (and the notebook's title); returns its id. */
  setTitle(title: string): Promise<string>;
  /** A live thinking cell, closing the one still open; returns its id. */
  openThinking(thinking: {
    title: string;
    body: string;
    agentName: string | null;
  }): Promise<string>;
  /** Closes the live thinking cell, if any. */
  closeThinking(): Promise<void>;
  /** Asks for a new workflow template (confirmation hook unless auto-accepted); true when applied. */
  updateWorkflow(template: WorkflowTemplate): Promise<boolean>;
  /** Replaces the steps of a stage (`null`: the current stage); false when there is no such stage. */
  replaceStageSteps(
    stageId: string | null,
    steps: WorkflowStep[]
  ): Promise<boolean>;
  /** `end_phase`: the current step completes once this behavior's actions are done. */
  endStep(stepId?: string): void;
  /** Pauses the run once this action finished, with a reason shown to the user. */
  pause(reason: string | IMessage, kind?: 'kernel' | 'action'): void;
  /** A visible warning (also logged in the run's warnings). */
  warn(message: string | IMessage): void;
}

export interface IActionContext {
  readonly driver: INotebookDriver;
  readonly settings: IRunSettings;
  /** Where the action runs; the provenance of every cell it creates. */
  readonly provenance: ICellProvenance;
  /** The engine's cell-id resolution state. */
  readonly cells: CellMapReader;
  /** Effects of the running behavior: what the planner will see; `archive` moves them into history now. */
  readonly effects: { add(text: string): void; archive(): void };
  /** Aborted when the run is stopped. */
  readonly signal: AbortSignal;
  /** The run's clock. */
  readonly now: () => Date;
  readonly run: IRunControl;
}

export interface IActionResult {
  /** False counts as a failed action in `behavior_feedback`. */
  ok: boolean;
  /** One line for the behavior's `actions_taken`. */
  summary?: string;
  /** A heading (chapter, section, step) was added: counts in `sections_added`. */
  sectionAdded?: boolean;
}

export type ActionHandler<A extends AnyAction = AnyAction> = (
  action: A,
  context: IActionContext
) => Promise<IActionResult | void> | IActionResult | void;

export type ActionPreHook = (
  action: AnyAction,
  context: IActionContext
) => Promise<void> | void;

export type ActionPostHook = (
  action: AnyAction,
  context: IActionContext,
  result: IActionResult
) => Promise<void> | void;

export interface IUnhandledAction {
  type: string;
  action: AnyAction;
  message: string;
}

interface IHookEntry<H> {
  hook: H;
  /** Only for this action type; all types when absent. */
  type?: string;
}

/** One disposable for several: disposing it disposes them all. */
export function disposeTogether(parts: IDisposableLike[]): IDisposableLike {
  return {
    get isDisposed() {
      return parts.every(part => part.isDisposed);
    },
    dispose() {
      parts.forEach(part => part.dispose());
    }
  };
}

function disposable(undo: () => void): IDisposableLike {
  let disposed = false;
  return {
    get isDisposed() {
      return disposed;
    },
    dispose() {
      if (!disposed) {
        disposed = true;
        undo();
      }
    }
  };
}

export function unknownActionMessage(type: string): string {
  return `⚠️ WARN: Unknown action type '${type}' skipped: no handler is registered for it`;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** An error as a message parameter: the message id it carries (a `PlannerError`'s), so the view translates it; else its English. */
export function errorText(error: unknown): MessageParam {
  const text =
    error instanceof Error ? (error as { text?: IMessage }).text : undefined;
  return text && isMessageId(text.id) ? text : errorMessage(error);
}

export class ActionRegistry {
  /** An action type with no handler was met. */
  get unhandled(): ISignal<this, IUnhandledAction> {
    return this._unhandled;
  }

  /** A handler was registered or removed. */
  get changed(): ISignal<this, string> {
    return this._changed;
  }

  /** The registered types, newest registration last. */
  get types(): string[] {
    return [...this._handlers.keys()].filter(
      t => (this._handlers.get(t)?.length ?? 0) > 0
    );
  }

  has(type: string): boolean {
    return (this._handlers.get(type)?.length ?? 0) > 0;
  }

  /**
   * Registers the handler of an action type. A later registration of the same type takes over until it is
   * disposed, then the earlier one applies again.
   */
  register<T extends ActionType>(
    type: T,
    handler: ActionHandler<ActionOf<T>>
  ): IDisposableLike;
  register(
    type: string,
    handler: ActionHandler<UnknownAction>
  ): IDisposableLike;
  register(type: string, handler: ActionHandler<never>): IDisposableLike {
    // A handler is only ever called with actions of its own type, which the protocol validated.
    const entry = handler as unknown as ActionHandler;
    const stack = this._handlers.get(type) ?? [];
    stack.push(entry);
    this._handlers.set(type, stack);
    this._changed.emit(type);
    return disposable(() => {
      const current = this._handlers.get(type) ?? [];
      const index = current.lastIndexOf(entry);
      if (index >= 0) {
        current.splice(index, 1);
      }
      this._changed.emit(type);
    });
  }

  addPreHook(hook: ActionPreHook, type?: string): IDisposableLike {
    return this._addHook(this._preHooks, { hook, type });
  }

  addPostHook(hook: ActionPostHook, type?: string): IDisposableLike {
    return this._addHook(this._postHooks, { hook, type });
  }

  /**
   * Runs pre-hooks, the handler and post-hooks. Never throws: a failing handler or hook becomes an effect
   * and a failed result.
   */
  async execute(
    action: AnyAction,
    context: IActionContext
  ): Promise<IActionResult> {
    const type = action.action;
    const stack = this._handlers.get(type);
    const handler = stack?.[stack.length - 1];
    if (!handler) {
      const message = unknownActionMessage(type);
      context.effects.add(message);
      this._unhandled.emit({ type, action, message });
      return { ok: false, summary: `skipped unknown action '${type}'` };
    }
    let result: IActionResult;
    try {
      for (const entry of this._preHooks) {
        if (!entry.type || entry.type === type) {
          await entry.hook(action, context);
        }
      }
      result = (await handler(action, context)) ?? { ok: true };
    } catch (error) {
      const message = `⚠️ Action '${type}' failed: ${errorMessage(error)}`;
      context.effects.add(message);
      result = { ok: false, summary: message };
    }
    for (const entry of this._postHooks) {
      if (!entry.type || entry.type === type) {
        try {
          await entry.hook(action, context, result);
        } catch (error) {
          context.run.warn(msg('postHookFailed', type, errorMessage(error)));
        }
      }
    }
    return result;
  }

  private _addHook<H>(list: IHookEntry<H>[], entry: IHookEntry<H>) {
    list.push(entry);
    return disposable(() => {
      const index = list.indexOf(entry);
      if (index >= 0) {
        list.splice(index, 1);
      }
    });
  }

  private _handlers = new Map<string, ActionHandler[]>();
  private _preHooks: IHookEntry<ActionPreHook>[] = [];
  private _postHooks: IHookEntry<ActionPostHook>[] = [];
  private _unhandled = new Signal<this, IUnhandledAction>(this);
  private _changed = new Signal<this, string>(this);
}
