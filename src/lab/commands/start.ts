/**
 * The commands that start a run's loop under the notebook's run lock: Run (with its dialog and the
 * planner check before it), Retry, Set Variables and Retry, and Take Over.
 */
import { PathExt } from '@jupyterlab/coreutils';
import { Dialog, Notification, showDialog } from '@jupyterlab/apputils';
import type { NotebookPanel } from '@jupyterlab/notebook';
import { nullTranslator } from '@jupyterlab/translation';
import { refreshIcon, runIcon } from '@jupyterlab/ui-components';
import type { IStartOptions } from '../../engine/types';
import { CommandIDs, IRunModel, IStartProblem } from '../../tokens';
import { bccIcon } from '../../ui/icons';
import {
  describePlannerProblem,
  offeredActions,
  OPEN_SETTINGS,
  PlannerProblemAction,
  startArgs
} from '../../ui/problem';
import { continuesBelow } from '../../ui/runDialogModel';
import {
  showPlannerProblemDialog,
  showRunDialog,
  showVariablesDialog
} from '../lazy';
import type { CommandArgs, CommandContext, ICommandTarget } from './context';

function startOptionsFrom(args: CommandArgs): IStartOptions | null {
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
function variablesFrom(args: CommandArgs): Record<string, string> | null {
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

/** The planner answers, or what the user picked to do about it (the problem is on the panel). */
type PlannerCheck =
  'ready' | { action: PlannerProblemAction | null; problem: IStartProblem };

/** Carries out an action picked in the problem dialog or the panel. */
async function act(
  context: CommandContext,
  action: PlannerProblemAction,
  notebook: string,
  problem: IStartProblem
): Promise<void> {
  const { commands } = context;
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
}

/**
 * Whether the planner answers before a run starts; when it does not, the run's panel says why and a
 * dialog offers what may fix it. Resolves `ready` when the run may start, else what to do next
 * (`act` it once the Run command let go of the notebook).
 */
async function plannerReady(
  context: CommandContext,
  target: { panel: NotebookPanel; model: IRunModel },
  start: IStartOptions
): Promise<PlannerCheck> {
  const { trans } = context;
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
  context.openPanel();
  const described = describePlannerProblem(check, trans);
  const action = await showPlannerProblemDialog(described, trans, {
    title: trans.__(
      'The workflow in %1 did not start',
      PathExt.basename(target.panel.context.localPath)
    ),
    actions: offeredActions(
      described.actions,
      !!context.options.useBuiltinPlanner,
      target.model.plannerLocation
    )
  });
  return { action, problem };
}

/** The Run dialog for `target`; null when the user cancelled it. */
async function askStartOptions(
  context: CommandContext,
  target: ICommandTarget
): Promise<IStartOptions | null> {
  const { options, trans } = context;
  // The relay's LLM planner answers only runs sent through the relay.
  const relayed = options.runners.settings?.transport !== 'browser';
  const choice = relayed ? ((await options.llm?.choice()) ?? null) : null;
  return showRunDialog({
    llm: choice,
    notebookPath: target.panel.context.path,
    docManager: options.docManager ?? null,
    translator: options.translator ?? nullTranslator,
    trans,
    label: target.panel.context.localPath,
    demo: (await options.usesBuiltinPlanner?.().catch(() => false)) ?? false,
    continuesBelow: continuesBelow(
      target.panel.content?.model?.sharedModel.cells.map(cell =>
        cell.getSource()
      ) ?? []
    ),
    memory: options.runDialogMemory
  });
}

/** Run: asks what to do (unless `task` is given), checks the planner, and starts under the lock. */
function addRunCommand(context: CommandContext): void {
  const { commands, trans } = context;
  /** Notebooks whose Run dialog (and its planner check) is open. */
  const asking = new Set<string>();
  commands.addCommand(CommandIDs.run, {
    label: trans.__('Run Workflow'),
    caption: trans.__(
      'Describe a task; the planner writes and runs the analysis in this notebook'
    ),
    icon: args => (args.toolbar ? bccIcon : runIcon),
    isEnabled: args => context.available(args).run,
    isVisible: args => context.hasNotebook(args),
    execute: async args => {
      const target = context.targetOf(args);
      if (!target) {
        return;
      }
      let options = startOptionsFrom(args);
      const id = target.panel.id;
      let checked: PlannerCheck = 'ready';
      if (!options || args.check === true) {
        if (asking.has(id)) {
          // Its Run dialog (or the planner check after it) is already open: a second one would lose a task.
          return;
        }
        asking.add(id);
        try {
          if (!options) {
            options = await askStartOptions(context, target);
            if (
              options &&
              !(await (context.options.confirmLlmRun?.() ?? true))
            ) {
              options = null;
            }
            // Checked here, not in the dialog: a planner that does not answer gets its own dialog, with
            // what to do about it, and the panel says so too.
            if (options && !target.runner.isRunning) {
              checked = await plannerReady(context, target, options);
            }
          } else {
            // A Retry from the problem dialog or the panel: the planner is checked again.
            checked = await plannerReady(context, target, options);
          }
        } finally {
          asking.delete(id);
        }
      }
      if (checked !== 'ready') {
        if (checked.action) {
          await act(context, checked.action, id, checked.problem);
        }
        return;
      }
      const start = options;
      if (!start || target.runner.isRunning) {
        return;
      }
      context.openPanel();
      context
        .withLock(target, () => target.runner.start(start))
        .catch(context.report(trans.__('Run Workflow')));
    }
  });
}

/** Retry, and Set Variables and Retry: the failed request again, with the variables the planner lacks. */
function addRetryCommands(context: CommandContext): void {
  const { commands, trans } = context;
  commands.addCommand(CommandIDs.retry, {
    label: trans.__('Retry Workflow Request'),
    caption: trans.__('Send the failed planner request again'),
    icon: refreshIcon,
    isEnabled: args => context.available(args).retry,
    isVisible: args => context.available(args).retry,
    execute: args => {
      const target = context.targetOf(args);
      if (target) {
        context
          .withLock(target, () => target.runner.retry())
          .catch(context.report(trans.__('Retry')));
      }
    }
  });

  /** The variables the current run's planner said it lacks, when a retry may give them. */
  const missingVariables = (args: CommandArgs): string[] => {
    const target = context.targetOf(args);
    return target && context.available(args).retry
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
      const target = context.targetOf(args);
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
      await context
        .withLock(target, () => target.runner.retry({ variables }))
        .catch(context.report(trans.__('Retry')));
    }
  });
}

/** Take Over: another window's run let its lock go; reload the notebook and continue that run here. */
function addTakeOverCommand(context: CommandContext): void {
  const { commands, trans } = context;
  commands.addCommand(CommandIDs.takeOver, {
    label: trans.__('Take Over Workflow Run'),
    caption: trans.__(
      'The window that ran this notebook stopped answering: reload the notebook from disk and continue its run here'
    ),
    icon: runIcon,
    isEnabled: args => !!context.targetOf(args)?.model.canTakeOver,
    isVisible: args => context.hasNotebook(args),
    execute: async args => {
      const target = context.targetOf(args);
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
      context.openPanel();
      await context
        .withLock(target, async () => {
          // The other window saved its cells and run state to disk; a shared (collaborative) model has them.
          if (reverts) {
            await panel.context.revert();
          }
          return runner.resumeFromSaved();
        })
        .catch(context.report(trans.__('Take Over Workflow Run')));
    }
  });
}

/** The commands that start a run's loop. */
export function addStartCommands(context: CommandContext): void {
  addRunCommand(context);
  addRetryCommands(context);
  addTakeOverCommand(context);
}
