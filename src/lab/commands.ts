/**
 * The run commands. Each acts on the notebook given as `notebook` (a panel id, e.g. from a toolbar
 * button) or else on the active notebook; enabled and visible states follow that notebook's run model.
 */
import type { IMessageText } from '../engine/messages';
import { PathExt } from '@jupyterlab/coreutils';
import type { IDocumentManager } from '@jupyterlab/docmanager';
import { Dialog, Notification, showDialog } from '@jupyterlab/apputils';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import type { Contents } from '@jupyterlab/services';
import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import {
  downloadIcon,
  linkIcon,
  pauseIcon,
  refreshIcon,
  runIcon,
  redoIcon,
  stepOverIcon,
  stopIcon,
  undoIcon
} from '@jupyterlab/ui-components';
import type { CommandRegistry } from '@lumino/commands';
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import type { IStartOptions, IWorkflowRunner } from '../engine/types';
import { discardRunState, saveFromPage } from '../notebook/saving';
import { stepKey } from '../engine/rewindView';
import type { RewindTarget } from '../engine/rewind';
import {
  CommandIDs,
  IRunModel,
  IRunModelRegistry,
  IStartProblem,
  IWorkflowRunnerRegistry
} from '../tokens';
import { showRewindDialog } from '../ui/rewindDialog';
import { bccIcon } from '../ui/icons';
import {
  commandAvailability,
  stepNameOf,
  translateMessage
} from '../ui/present';
import {
  describePlannerProblem,
  offeredActions,
  OPEN_SETTINGS,
  PlannerProblemAction,
  startArgs
} from '../ui/problem';
import { showPlannerProblemDialog } from '../ui/problemDialog';
import { tracePath } from '../ui/trace';
import { continuesBelow, IRunDialogMemoryStore } from '../ui/runDialogModel';
import {
  loadRuntime,
  showRunDialog,
  showStopDialog,
  showVariablesDialog
} from './lazy';
import type { LlmSettingsService } from './llmSettings';

/** The run commands, in palette order; `CommandIDs.open` belongs to the sidebar. */
export const RUN_COMMANDS: readonly string[] = [
  CommandIDs.run,
  CommandIDs.pause,
  CommandIDs.resume,
  CommandIDs.togglePause,
  CommandIDs.step,
  CommandIDs.stop,
  CommandIDs.retry,
  CommandIDs.setVariables,
  CommandIDs.exportTrace,
  CommandIDs.testConnection,
  CommandIDs.takeOver,
  CommandIDs.discardSavedRun,
  CommandIDs.undoBehavior,
  CommandIDs.redoFromStep
];

function startOptionsFrom(
  args: ReadonlyPartialJSONObject
): IStartOptions | null {
  if (typeof args.task !== 'string' || !args.task.trim()) {
    return null;
  }
  const files = Array.isArray(args.dataFiles)
    ? args.dataFiles.filter((f): f is string => typeof f === 'string')
    : [];
  return {
    task: args.task.trim(),
    dataFiles: files,
    stepMode: args.stepMode === true,
    ...(typeof args.llmModel === 'string' && args.llmModel.trim()
      ? { llmModel: args.llmModel.trim() }
      : {}),
    ...(typeof args.targetColumn === 'string' && args.targetColumn.trim()
      ? { targetColumn: args.targetColumn.trim() }
      : {})
  };
}

/** `variables` from a command's args (text values only), or null when there are none. */
function variablesFrom(
  args: ReadonlyPartialJSONObject
): Record<string, string> | null {
  const given = args.variables;
  if (!given || typeof given !== 'object' || Array.isArray(given)) {
    return null;
  }
  const variables = Object.fromEntries(
    Object.entries(given).filter(
      (entry): entry is [string, string] =>
        typeof entry[1] === 'string' && entry[1].trim() !== ''
    )
  );
  return Object.keys(variables).length > 0 ? variables : null;
}

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
}

/** Adds the run commands to `commands`; they are re-evaluated whenever the current run changes. */
export function addCommands(
  commands: CommandRegistry,
  options: ICommandsOptions
): void {
  const { tracker, runners, models, contents, trans } = options;
  const translator = options.translator ?? nullTranslator;
  const docManager = options.docManager ?? null;
  const llm = options.llm ?? null;
  const { usesBuiltinPlanner, runDialogMemory } = options;

  const panelOf = (args: ReadonlyPartialJSONObject): NotebookPanel | null =>
    typeof args.notebook === 'string'
      ? (tracker.find(panel => panel.id === args.notebook) ?? null)
      : tracker.currentWidget;
  const targetOf = (args: ReadonlyPartialJSONObject) => {
    const panel = panelOf(args);
    const runner = panel ? runners.get(panel) : null;
    const model = panel ? models.model(panel) : null;
    return panel && runner && model ? { panel, runner, model } : null;
  };
  const available = (args: ReadonlyPartialJSONObject) =>
    targetOf(args)?.model.availability ?? commandAvailability(null);
  const hasNotebook = (args: ReadonlyPartialJSONObject) =>
    panelOf(args) !== null;
  const report = (what: string) => (reason: unknown) => {
    // A refusal of the run carries its words as a message id; other errors are shown as they are.
    // A planner's failure says its cause first: a notification shows about 140 characters.
    const why =
      reason instanceof Error
        ? describePlannerProblem(reason as Error & Partial<IMessageText>, trans)
            .summary
        : String(reason);
    Notification.error(trans.__('%1 failed: %2', what, why), {
      actions: [
        {
          label: trans.__('Show'),
          caption: trans.__('Open the workflow panel'),
          callback: () => {
            void commands.execute(CommandIDs.open);
          }
        }
      ]
    });
  };

  /** Carries out an action picked in the problem dialog or the panel. */
  const act = async (
    action: PlannerProblemAction,
    notebook: string,
    problem: IStartProblem
  ): Promise<void> => {
    switch (action) {
      case 'settings':
        await commands.execute(OPEN_SETTINGS.id, OPEN_SETTINGS.args);
        break;
      case 'test':
        await commands.execute(CommandIDs.testConnection, { notebook });
        break;
      case 'builtin':
        await commands.execute(CommandIDs.useBuiltinPlanner);
        await commands.execute(CommandIDs.run, startArgs(notebook, problem));
        break;
      case 'retry':
        await commands.execute(CommandIDs.run, startArgs(notebook, problem));
        break;
    }
  };

  /**
   * Whether the planner answers before a run starts; when it does not, the run's panel says why and a
   * dialog offers what may fix it. Resolves `ready` when the run may start, else what to do next
   * (`act` it once the Run command let go of the notebook).
   */
  const plannerReady = async (
    target: { panel: NotebookPanel; model: IRunModel },
    start: IStartOptions
  ): Promise<
    'ready' | { action: PlannerProblemAction | null; problem: IStartProblem }
  > => {
    const planner = target.model.planner;
    if (!planner) {
      return 'ready';
    }
    // Say what happens until the run starts (the check waits up to 10 s).
    const checking = Notification.emit(
      trans.__('Checking the planner for %1…', target.panel.context.localPath),
      'in-progress',
      { autoClose: false }
    );
    const check = await planner
      .checkConnection()
      .finally(() => Notification.dismiss(checking));
    if (check.ok) {
      target.model.setStartProblem(null);
      return 'ready';
    }
    const problem: IStartProblem = { message: check, options: start };
    target.model.setStartProblem(problem);
    void commands.execute(CommandIDs.open);
    const described = describePlannerProblem(check, trans);
    const action = await showPlannerProblemDialog(described, trans, {
      title: trans.__(
        'The workflow in %1 did not start',
        PathExt.basename(target.panel.context.localPath)
      ),
      actions: offeredActions(
        described.actions,
        !!options.useBuiltinPlanner,
        target.model.plannerLocation
      )
    });
    return { action, problem };
  };

  /**
   * Starts a run while holding the notebook's run lock (docs/architecture.md#one-run-per-notebook):
   * refused when another window runs the notebook; the lock is let go when no run follows.
   */
  const withLock = async (
    { model, runner }: { model: IRunModel; runner: IWorkflowRunner },
    start: () => Promise<unknown>
  ): Promise<void> => {
    const lock = model.lock;
    if (lock && !(await lock.acquire())) {
      Notification.warning(
        trans.__(
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
  };

  /** Notebooks whose Run dialog (and its planner check) is open. */
  const asking = new Set<string>();
  commands.addCommand(CommandIDs.run, {
    label: trans.__('Run Workflow'),
    caption: trans.__(
      'Describe a task; the planner writes and runs the analysis in this notebook'
    ),
    icon: args => (args.toolbar ? bccIcon : runIcon),
    isEnabled: args => available(args).run,
    isVisible: hasNotebook,
    execute: async args => {
      const target = targetOf(args);
      if (!target) {
        return;
      }
      let options = startOptionsFrom(args);
      const id = target.panel.id;
      let checked: Awaited<ReturnType<typeof plannerReady>> = 'ready';
      if (!options) {
        if (asking.has(id)) {
          // Its Run dialog (or the planner check after it) is already open: a second one would lose a task.
          return;
        }
        asking.add(id);
        try {
          // The relay's LLM planner answers only runs sent through the relay.
          const relayed = runners.settings?.transport !== 'browser';
          const choice = relayed ? ((await llm?.choice()) ?? null) : null;
          options = await showRunDialog({
            llm: choice,
            notebookPath: target.panel.context.path,
            docManager,
            translator,
            trans,
            label: target.panel.context.localPath,
            demo: (await usesBuiltinPlanner?.().catch(() => false)) ?? false,
            continuesBelow: continuesBelow(
              target.panel.content?.model?.sharedModel.cells.map(cell =>
                cell.getSource()
              ) ?? []
            ),
            memory: runDialogMemory
          });
          // Checked here, not in the dialog: a planner that does not answer gets its own dialog, with
          // what to do about it, and the panel says so too.
          if (options && !target.runner.isRunning) {
            checked = await plannerReady(target, options);
          }
        } finally {
          asking.delete(id);
        }
      } else if (args.check === true) {
        // A Retry from the problem dialog or the panel: the planner is checked again.
        if (asking.has(id)) {
          return;
        }
        asking.add(id);
        try {
          checked = await plannerReady(target, options);
        } finally {
          asking.delete(id);
        }
      }
      if (checked !== 'ready') {
        if (checked.action) {
          await act(checked.action, id, checked.problem);
        }
        return;
      }
      if (!options || target.runner.isRunning) {
        return;
      }
      void commands.execute(CommandIDs.open);
      withLock(target, () => target.runner.start(options)).catch(
        report(trans.__('Run Workflow'))
      );
    }
  });

  commands.addCommand(CommandIDs.pause, {
    label: trans.__('Pause Workflow'),
    caption: trans.__('Pause the run after the current action'),
    icon: pauseIcon,
    isEnabled: args => available(args).pause,
    isVisible: hasNotebook,
    execute: args => targetOf(args)?.runner.pause()
  });

  const resume = (args: ReadonlyPartialJSONObject) => {
    const target = targetOf(args);
    if (!target) {
      return;
    }
    if (target.runner.isRunning) {
      target.runner.resume();
    } else if (target.model.canResumeSaved) {
      void commands.execute(CommandIDs.open);
      withLock(target, () => target.runner.resumeFromSaved()).catch(
        report(trans.__('Resume Workflow'))
      );
    }
  };

  commands.addCommand(CommandIDs.resume, {
    label: trans.__('Resume Workflow'),
    caption: trans.__('Continue the paused or stopped run'),
    icon: runIcon,
    isEnabled: args => available(args).resume,
    isVisible: hasNotebook,
    execute: resume
  });

  commands.addCommand(CommandIDs.togglePause, {
    label: trans.__('Pause or Resume Workflow'),
    caption: trans.__('Pause the run, or resume it when paused'),
    isEnabled: args => available(args).pause || available(args).resume,
    isVisible: hasNotebook,
    execute: args => {
      if (available(args).pause) {
        targetOf(args)?.runner.pause();
      } else {
        resume(args);
      }
    }
  });

  commands.addCommand(CommandIDs.step, {
    label: trans.__('Step Workflow'),
    caption: trans.__('Run one behavior, then pause'),
    icon: stepOverIcon,
    isEnabled: args => available(args).step,
    isVisible: hasNotebook,
    execute: args => targetOf(args)?.runner.step()
  });

  commands.addCommand(CommandIDs.stop, {
    label: trans.__('Stop Workflow…'),
    caption: trans.__('Stop the run; it can be resumed later'),
    icon: stopIcon,
    isEnabled: args => available(args).stop,
    isVisible: hasNotebook,
    execute: async args => {
      const target = targetOf(args);
      if (!target) {
        return;
      }
      const { runner } = target;
      let options: { interruptKernel: boolean } | null;
      if (typeof args.interruptKernel === 'boolean') {
        options = { interruptKernel: args.interruptKernel };
      } else {
        // The run holds while the user decides: no cell lands behind the dialog; Cancel lets it go on.
        const holding = target.model.availability.pause;
        if (holding) {
          runner.pause();
        }
        options = await showStopDialog(trans, target.panel.context.localPath);
        if (!options && holding && runner.isRunning) {
          runner.resume();
        }
      }
      if (options) {
        // Interrupting while no cell runs can hit the runner's silent kernel inspection, which then
        // never answers: only interrupt a running action, or a rewind re-running the kept cells.
        const { state, rewinding } = target.runner.snapshot;
        const running = state === 'ACTION_RUNNING' || rewinding === true;
        await target.runner.stop({
          interruptKernel: options.interruptKernel && running
        });
      }
    }
  });

  commands.addCommand(CommandIDs.retry, {
    label: trans.__('Retry Workflow Request'),
    caption: trans.__('Send the failed planner request again'),
    icon: refreshIcon,
    isEnabled: args => available(args).retry,
    isVisible: args => available(args).retry,
    execute: args => {
      const target = targetOf(args);
      if (target) {
        withLock(target, () => target.runner.retry()).catch(
          report(trans.__('Retry'))
        );
      }
    }
  });

  /** The variables the current run's planner said it lacks, when a retry may give them. */
  const missingVariables = (args: ReadonlyPartialJSONObject): string[] => {
    const target = targetOf(args);
    return target && available(args).retry
      ? (target.model.snapshot.error?.missingVariables ?? [])
      : [];
  };

  commands.addCommand(CommandIDs.setVariables, {
    label: trans.__('Set Workflow Variables and Retry…'),
    caption: trans.__(
      'Give the planner the variables it says it lacks, then retry the failed step'
    ),
    icon: refreshIcon,
    isEnabled: args => missingVariables(args).length > 0,
    isVisible: args => missingVariables(args).length > 0,
    execute: async args => {
      const target = targetOf(args);
      const names = missingVariables(args);
      if (!target || names.length === 0) {
        return;
      }
      const variables =
        variablesFrom(args) ??
        (await showVariablesDialog(
          names,
          trans,
          target.panel.context.localPath
        ));
      if (!variables || target.runner.isRunning) {
        return;
      }
      await withLock(target, () => target.runner.retry({ variables })).catch(
        report(trans.__('Retry'))
      );
    }
  });

  commands.addCommand(CommandIDs.takeOver, {
    label: trans.__('Take Over Workflow Run'),
    caption: trans.__(
      'The window that ran this notebook stopped answering: reload the notebook from disk and continue its run here'
    ),
    icon: runIcon,
    isEnabled: args => !!targetOf(args)?.model.canTakeOver,
    isVisible: hasNotebook,
    execute: async args => {
      const target = targetOf(args);
      if (!target?.model.canTakeOver) {
        return;
      }
      const { panel, runner } = target;
      const reverts = !panel.context.model.collaborative;
      if (reverts && panel.context.model.dirty) {
        const answer = await showDialog({
          title: trans.__('Reload %1 from disk?', panel.context.localPath),
          body: trans.__(
            'This window has unsaved changes in the notebook. Taking over the run reloads the notebook as the other window saved it: these changes are lost.'
          ),
          buttons: [
            Dialog.cancelButton(),
            Dialog.warnButton({ label: trans.__('Reload and Take Over') })
          ]
        });
        if (!answer.button.accept) {
          return;
        }
      }
      void commands.execute(CommandIDs.open);
      await withLock(target, async () => {
        // The other window saved its cells and run state to disk; a shared (collaborative) model has them.
        if (reverts) {
          await panel.context.revert();
        }
        return runner.resumeFromSaved();
      }).catch(report(trans.__('Take Over Workflow Run')));
    }
  });

  commands.addCommand(CommandIDs.discardSavedRun, {
    label: trans.__('Discard the Saved Workflow Run'),
    caption: trans.__(
      "Remove the run saved in this notebook's metadata; the cells stay"
    ),
    isEnabled: args => !!targetOf(args)?.model.canDiscardSaved,
    isVisible: hasNotebook,
    execute: async args => {
      const target = targetOf(args);
      if (!target?.model.canDiscardSaved) {
        return;
      }
      const { panel } = target;
      if (target.model.savedRunProblems === null) {
        // A readable run could still be resumed; an unreadable one has nothing to lose.
        const answer = await showDialog({
          title: trans.__('Discard the saved workflow run?'),
          body: trans.__(
            'The run saved in %1 can no longer be resumed once it is discarded. The cells stay.',
            panel.context.localPath
          ),
          buttons: [
            Dialog.cancelButton(),
            Dialog.warnButton({ label: trans.__('Discard') })
          ]
        });
        if (!answer.button.accept) {
          return;
        }
      }
      // A run still in this session's memory would otherwise stay on show, and a rewind would save it back.
      try {
        target.runner.forgetRun();
      } catch (error) {
        report(trans.__('Discard the Saved Workflow Run'))(error);
        return;
      }
      discardRunState(panel.context.model.sharedModel);
      await saveFromPage(panel).catch(
        report(trans.__('Discard the Saved Workflow Run'))
      );
    }
  });

  commands.addCommand(CommandIDs.exportTrace, {
    label: trans.__('Export Workflow Run Trace'),
    caption: trans.__(
      'Save the planner requests and answers of this run as JSONL beside the notebook'
    ),
    icon: downloadIcon,
    isEnabled: args => (targetOf(args)?.runner.trace.length ?? 0) > 0,
    isVisible: hasNotebook,
    execute: async args => {
      const target = targetOf(args);
      if (!target) {
        return;
      }
      const path = tracePath(target.panel.context.path);
      try {
        await contents.save(path, {
          type: 'file',
          format: 'text',
          content: target.runner.trace.toJSONL()
        });
        Notification.success(trans.__('Run trace saved to %1', path), {
          autoClose: 5000
        });
      } catch (reason) {
        report(trans.__('Export Workflow Run Trace'))(reason);
      }
    }
  });

  commands.addCommand(CommandIDs.testConnection, {
    label: trans.__('Test Planner Connection'),
    caption: trans.__(
      "Check that this notebook's planner answers, with the settings in use"
    ),
    icon: linkIcon,
    isEnabled: args => !!targetOf(args)?.model.planner,
    isVisible: hasNotebook,
    execute: async args => {
      const planner = targetOf(args)?.model.planner;
      if (!planner) {
        return;
      }
      const check = await planner.checkConnection();
      if (check.ok) {
        Notification.success(
          trans.__('Test connection: %1', translateMessage(check, trans)),
          { autoClose: 5000 }
        );
      } else {
        // A notification shows about 140 characters: the cause first, the whole chain under Details.
        const problem = describePlannerProblem(check, trans);
        Notification.error(trans.__('Test connection: %1', problem.summary), {
          autoClose: false,
          actions: [
            {
              label: trans.__('Details'),
              callback: () => {
                void showPlannerProblemDialog(problem, trans, {
                  title: trans.__('Test Planner Connection'),
                  actions: ['settings']
                }).then(action => {
                  if (action === 'settings') {
                    void commands.execute(OPEN_SETTINGS.id, OPEN_SETTINGS.args);
                  }
                });
              }
            },
            {
              label: trans.__('Open Settings'),
              displayType: 'accent',
              callback: () => {
                void commands.execute(OPEN_SETTINGS.id, OPEN_SETTINGS.args);
              }
            }
          ]
        });
      }
      return check.ok;
    }
  });

  const useBuiltinPlanner = options.useBuiltinPlanner;
  if (useBuiltinPlanner) {
    commands.addCommand(CommandIDs.useBuiltinPlanner, {
      label: trans.__('Use the Built-in Demo Planner'),
      caption: trans.__(
        'Clear the planner URL in the settings: runs use the built-in demo planner, a fixed pandas analysis'
      ),
      execute: async () => {
        try {
          await useBuiltinPlanner();
        } catch (reason) {
          report(trans.__('Use the Built-in Demo Planner'))(reason);
        }
      }
    });
  }

  if (llm) {
    commands.addCommand(CommandIDs.llmSettings, {
      label: trans.__('LLM Planner Settings…'),
      caption: trans.__(
        'The model the LLM planner uses: base URL, model and API key, kept on the Jupyter server'
      ),
      execute: async () => {
        try {
          const { showLlmSettingsDialog } = await loadRuntime();
          return await showLlmSettingsDialog(llm, trans);
        } catch (reason) {
          report(trans.__('LLM Planner Settings'))(reason);
        }
      }
    });
  }

  const rewindTarget = (
    args: ReadonlyPartialJSONObject
  ): RewindTarget | null =>
    typeof args.stepId === 'string'
      ? {
          kind: 'step',
          stageId: typeof args.stageId === 'string' ? args.stageId : null,
          stepId: args.stepId
        }
      : null;

  /** Confirms (unless `confirm: false`), rewinds, and says what was done. */
  const rewind = async (
    args: ReadonlyPartialJSONObject,
    target: RewindTarget,
    what: string
  ) => {
    const found = targetOf(args);
    if (!found) {
      return;
    }
    const plan = await found.runner.rewindPlan(target);
    if (!plan) {
      Notification.warning(
        trans.__('%1: that point of the run is no longer kept.', what),
        { autoClose: 5000 }
      );
      return;
    }
    const options =
      args.confirm === false
        ? { restartKernel: args.restartKernel === true }
        : await showRewindDialog(plan, trans, {
            label: found.panel.context.localPath,
            stepName: stepNameOf(found.model.snapshot, plan.stepId)
          });
    if (!options) {
      return;
    }
    void commands.execute(CommandIDs.open);
    try {
      // A rewind starts the loop again: it holds the run lock like Resume.
      let record: Awaited<ReturnType<IWorkflowRunner['rewind']>> | undefined;
      await withLock(found, async () => {
        record = await found.runner.rewind(target, options);
      });
      return record;
    } catch (reason) {
      report(what)(reason);
    }
  };

  commands.addCommand(CommandIDs.undoBehavior, {
    label: trans.__('Undo Last Workflow Behavior…'),
    caption: trans.__(
      "Remove the last behavior's cells and go back before it, paused; your own cells stay"
    ),
    icon: undoIcon,
    isEnabled: args => {
      const model = targetOf(args)?.model;
      return !!model?.canRewind && !!model.snapshot.rewind?.undo;
    },
    isVisible: hasNotebook,
    execute: args =>
      rewind(args, { kind: 'behavior' }, trans.__('Undo Last Behavior'))
  });

  commands.addCommand(CommandIDs.redoFromStep, {
    label: args => {
      if (typeof args.stepId !== 'string') {
        return trans.__('Redo Workflow from a Step…');
      }
      // The step's name, as the panel and the dialogs show it.
      const model = targetOf(args)?.model;
      const name = model
        ? stepNameOf(model.snapshot, args.stepId)
        : args.stepId;
      return trans.__('Redo Workflow from Step %1…', name);
    },
    caption: trans.__(
      'Remove the cells of this step and the later ones, and run again from it; your own cells stay'
    ),
    icon: redoIcon,
    isEnabled: args => {
      const model = targetOf(args)?.model;
      const target = rewindTarget(args);
      return (
        !!model?.canRewind &&
        target?.kind === 'step' &&
        !!model.snapshot.rewind?.redoSteps.includes(
          stepKey(target.stageId, target.stepId)
        )
      );
    },
    isVisible: args => hasNotebook(args) && rewindTarget(args) !== null,
    execute: args => {
      const target = rewindTarget(args);
      return target
        ? rewind(args, target, trans.__('Redo from Step'))
        : undefined;
    }
  });

  // A run changes its model several times per action: the toolbar, menus and palette read the
  // commands again once per frame, not at each change.
  let notifying = false;
  models.currentChanged.connect(() => {
    if (notifying) {
      return;
    }
    notifying = true;
    requestAnimationFrame(() => {
      notifying = false;
      for (const id of RUN_COMMANDS) {
        commands.notifyCommandChanged(id);
      }
    });
  });
}
