/**
 * What every group of run commands shares: the options `addCommands` was given, the notebook a
 * command acts on (`notebook`: a panel id, e.g. from a toolbar button; else the active notebook), how
 * a failure is told, and the run lock around anything that starts a loop.
 */
import type { IDocumentManager } from '@jupyterlab/docmanager';
import { Notification } from '@jupyterlab/apputils';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import type { Contents } from '@jupyterlab/services';
import type { ITranslator, TranslationBundle } from '@jupyterlab/translation';
import type { CommandRegistry } from '@lumino/commands';
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import type { IMessageText } from '../../engine/messages';
import type { IWorkflowRunner } from '../../engine/types';
import type { IRewindPlan } from '../../engine/state/rewind';
import {
  CommandIDs,
  ICommandAvailability,
  IRunModel,
  IRunModelRegistry,
  IWorkflowRunnerRegistry
} from '../../tokens';
import { commandAvailability } from '../../ui/present';
import { describePlannerProblem } from '../../ui/problem';
import type { IRunDialogMemoryStore } from '../../ui/runDialogModel';
import type { LlmSettingsService } from '../llmSettings';

export interface ICommandsOptions {
  /** Finds the notebook a command acts on. */
  tracker: Pick<INotebookTracker, 'currentWidget' | 'find'>;
  /** `settings`: a run through the relay (not `browser`) may pick the LLM planner's model. */
  runners: Pick<IWorkflowRunnerRegistry, 'get'> &
    Partial<Pick<IWorkflowRunnerRegistry, 'settings'>>;
  models: Pick<IRunModelRegistry, 'model' | 'currentChanged'>;
  /** Where run traces are saved. */
  contents: Pick<Contents.IManager, 'save'>;
  trans: TranslationBundle;
  /** For the data file picker of the run dialog. */
  docManager?: IDocumentManager | null;
  translator?: ITranslator;
  /** The LLM planner's settings on the server: the Run dialog's model choice and the settings dialog. */
  llm?: Pick<
    LlmSettingsService,
    'choice' | 'get' | 'save' | 'remove' | 'test'
  > | null;
  /**
   * Clears the user's planner URL so runs use the built-in demo planner ("Use the built-in demo");
   * without it the action is not offered.
   */
  useBuiltinPlanner?: () => Promise<void>;
  /** Whether a run started now gets the built-in demo planner (the Run dialog says so); default: no. */
  usesBuiltinPlanner?: () => Promise<boolean>;
  /** Where the Run dialog remembers the last task, data files and target column. */
  runDialogMemory?: IRunDialogMemoryStore | null;
  /** Brings a widget to the front (the shell's `activateById`). */
  activate?: (id: string) => void;
  /**
   * After the Run dialog: the LLM planner's first run asks whether its code may run without approval
   * (`approvalPolicy.ts`); false when the user closed the question, and the run does not start.
   */
  confirmLlmRun?: () => Promise<boolean>;
  /**
   * The cell node the latest context menu was opened on (JupyterLab's `contextMenuHitTest`); read only
   * by a command the context menu runs (`args.contextMenu`).
   */
  contextMenuCell?: () => HTMLElement | null;
}

/** A notebook with its runner and run model: what a command acts on. */
export interface ICommandTarget {
  panel: NotebookPanel;
  runner: IWorkflowRunner;
  model: IRunModel;
}

export type CommandArgs = ReadonlyPartialJSONObject;

/** The options and the helpers of one `addCommands` call, handed to each group of commands. */
export class CommandContext {
  constructor(
    readonly commands: CommandRegistry,
    readonly options: ICommandsOptions
  ) {
    this.trans = options.trans;
  }

  readonly trans: TranslationBundle;

  /**
   * Called with a rewind's plan once it is confirmed, before it runs. The notes' chunk (`keep.ts`)
   * sets it: the notes on the cells the rewind removes move onto their steps.
   */
  beforeRewind: ((panel: NotebookPanel, plan: IRewindPlan) => void) | null =
    null;

  /** The notebook named by `args.notebook`, else the active one. */
  panelOf(args: CommandArgs): NotebookPanel | null {
    const { tracker } = this.options;
    return typeof args.notebook === 'string'
      ? (tracker.find(panel => panel.id === args.notebook) ?? null)
      : tracker.currentWidget;
  }

  /** The notebook with its runner and model, or null while either does not exist. */
  targetOf(args: CommandArgs): ICommandTarget | null {
    const panel = this.panelOf(args);
    const runner = panel ? this.options.runners.get(panel) : null;
    const model = panel ? this.options.models.model(panel) : null;
    return panel && runner && model ? { panel, runner, model } : null;
  }

  available(args: CommandArgs): ICommandAvailability {
    return this.targetOf(args)?.model.availability ?? commandAvailability(null);
  }

  hasNotebook(args: CommandArgs): boolean {
    return this.panelOf(args) !== null;
  }

  /** Opens the workflow panel, without waiting. */
  openPanel(): void {
    void this.commands.execute(CommandIDs.open);
  }

  /** Tells the user that `what` failed, and why. */
  report(what: string): (reason: unknown) => void {
    const trans = this.trans;
    return (reason: unknown) => {
      // A refusal of the run carries its words as a message id; other errors are shown as they are.
      // A planner's failure says its cause first: a notification shows about 140 characters.
      const why =
        reason instanceof Error
          ? describePlannerProblem(
              reason as Error & Partial<IMessageText>,
              trans
            ).summary
          : String(reason);
      Notification.error(trans.__('%1 failed: %2', what, why), {
        actions: [
          {
            label: trans.__('Show'),
            caption: trans.__('Open the workflow panel'),
            callback: () => this.openPanel()
          }
        ]
      });
    };
  }

  /**
   * Starts a run while holding the notebook's run lock (docs/architecture.md#one-run-per-notebook):
   * refused when another window runs the notebook; the lock is let go when no run follows.
   */
  async withLock(
    { model, runner }: { model: IRunModel; runner: IWorkflowRunner },
    start: () => Promise<unknown>
  ): Promise<void> {
    const lock = model.lock;
    if (lock && !(await lock.acquire())) {
      Notification.warning(
        this.trans.__(
          'This notebook is running in another window; its run was not started here.'
        ),
        { autoClose: 5000 }
      );
      return;
    }
    try {
      await start();
    } finally {
      if (!runner.isRunning) {
        void lock?.release();
      }
    }
  }
}
