/**
 * The commands about what a run leaves behind: Discard the Saved Workflow Run (the notebook's metadata)
 * and Export Workflow Run Trace (the planner exchanges, as JSONL beside the notebook).
 */
import { Dialog, Notification, showDialog } from '@jupyterlab/apputils';
import { downloadIcon } from '@jupyterlab/ui-components';
import { discardRunState, saveFromPage } from '../../notebook/saving';
import { CommandIDs } from '../../tokens';
import { tracePath } from '../../ui/trace';
import type { CommandContext } from './context';

function addDiscardCommand(context: CommandContext): void {
  const { commands, trans } = context;
  commands.addCommand(CommandIDs.discardSavedRun, {
    label: trans.__('Discard the Saved Workflow Run'),
    caption: trans.__(
      "Remove the run saved in this notebook's metadata; the cells stay"
    ),
    isEnabled: args => !!context.targetOf(args)?.model.canDiscardSaved,
    isVisible: args => context.hasNotebook(args),
    execute: async args => {
      const target = context.targetOf(args);
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
      const report = context.report(trans.__('Discard the Saved Workflow Run'));
      // A run still in this session's memory would otherwise stay on show, and a rewind would save it back.
      try {
        target.runner.forgetRun();
      } catch (error) {
        report(error);
        return;
      }
      discardRunState(panel.context.model.sharedModel);
      await saveFromPage(panel).catch(report);
    }
  });
}

function addExportTraceCommand(context: CommandContext): void {
  const { commands, trans } = context;
  commands.addCommand(CommandIDs.exportTrace, {
    label: trans.__('Export Workflow Run Trace'),
    caption: trans.__(
      'Save the planner requests and answers of this run as JSONL beside the notebook'
    ),
    icon: downloadIcon,
    isEnabled: args => (context.targetOf(args)?.runner.trace.length ?? 0) > 0,
    isVisible: args => context.hasNotebook(args),
    execute: async args => {
      const target = context.targetOf(args);
      if (!target) {
        return;
      }
      const path = tracePath(target.panel.context.path);
      try {
        await context.options.contents.save(path, {
          type: 'file',
          format: 'text',
          content: target.runner.trace.toJSONL()
        });
        Notification.success(trans.__('Run trace saved to %1', path), {
          autoClose: 5000
        });
      } catch (reason) {
        context.report(trans.__('Export Workflow Run Trace'))(reason);
      }
    }
  });
}

export function addSavedRunCommands(context: CommandContext): void {
  addDiscardCommand(context);
  addExportTraceCommand(context);
}
