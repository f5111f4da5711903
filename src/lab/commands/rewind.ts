/**
 * The rewind commands (docs/architecture.md#rewind): Undo the last behavior, Redo from a completed
 * step. Each confirms with the rewind dialog (unless `confirm: false`) and holds the run lock, since a
 * rewind starts the loop again.
 */
import { Notification } from '@jupyterlab/apputils';
import { redoIcon, undoIcon } from '@jupyterlab/ui-components';
import type { RewindTarget } from '../../engine/state/rewind';
import { stepKey } from '../../engine/rewindView';
import type { IWorkflowRunner } from '../../engine/types';
import { CommandIDs } from '../../tokens';
import { stepNameOf } from '../../ui/present';
import { showRewindDialog } from '../lazy';
import type { CommandArgs, CommandContext } from './context';
/** The step named by `stageId`, `stepId`, or null without a `stepId`. */
function rewindTarget(args: CommandArgs): RewindTarget | null {
  return typeof args.stepId === 'string'
    ? {
        kind: 'step',
        stageId: typeof args.stageId === 'string' ? args.stageId : null,
        stepId: args.stepId
      }
    : null;
}

/**
 * Confirms (unless `confirm: false`), rewinds, and says what was done. A note on a cell the rewind
 * removes becomes a note of its step (`beforeRewind`, set by the notes' chunk), so the step's redo
 * still reads it.
 */
export async function rewind(
  context: CommandContext,
  args: CommandArgs,
  target: RewindTarget,
  what: string
) {
  const { trans } = context;
  const found = context.targetOf(args);
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
  context.beforeRewind?.(found.panel, plan);
  context.openPanel();
  try {
    // A rewind starts the loop again: it holds the run lock like Resume.
    let record: Awaited<ReturnType<IWorkflowRunner['rewind']>> | undefined;
    await context.withLock(found, async () => {
      record = await found.runner.rewind(target, options);
    });
    return record;
  } catch (reason) {
    context.report(what)(reason);
  }
}

export function addRewindCommands(context: CommandContext): void {
  const { commands, trans } = context;
  commands.addCommand(CommandIDs.undoBehavior, {
    label: trans.__('Undo Last Workflow Behavior…'),
    caption: trans.__(
      "Remove the last behavior's cells and go back before it, paused; your own cells stay"
    ),
    icon: undoIcon,
    isEnabled: args => {
      const model = context.targetOf(args)?.model;
      return !!model?.canRewind && !!model.snapshot.rewind?.undo;
    },
    isVisible: args => context.hasNotebook(args),
    execute: args =>
      rewind(
        context,
        args,
        { kind: 'behavior' },
        trans.__('Undo Last Behavior')
      )
  });

  commands.addCommand(CommandIDs.redoFromStep, {
    label: args => {
      if (typeof args.stepId !== 'string') {
        return trans.__('Redo Workflow from a Step…');
      }
      // The step's name, as the panel and the dialogs show it.
      const model = context.targetOf(args)?.model;
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
      const model = context.targetOf(args)?.model;
      const target = rewindTarget(args);
      return (
        !!model?.canRewind &&
        target?.kind === 'step' &&
        !!model.snapshot.rewind?.redoSteps.includes(
          stepKey(target.stageId, target.stepId)
        )
      );
    },
    isVisible: args => context.hasNotebook(args) && rewindTarget(args) !== null,
    execute: args => {
      const target = rewindTarget(args);
      return target
        ? rewind(context, args, target, trans.__('Redo from Step'))
        : undefined;
    }
  });
}
