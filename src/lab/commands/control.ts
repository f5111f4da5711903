/**
 * The commands that steer a run under way: Pause, Resume (a paused run, or a stopped or saved one under
 * the run lock), Pause or Resume, Step and Stop.
 */
import {
  pauseIcon,
  runIcon,
  stepOverIcon,
  stopIcon
} from '@jupyterlab/ui-components';
import { CommandIDs } from '../../tokens';
import { showStopDialog } from '../lazy';
import type { CommandArgs, CommandContext } from './context';

/** Stop: asks whether to interrupt the kernel too (unless `interruptKernel` is given). */
function addStopCommand(context: CommandContext): void {
  const { commands, trans } = context;
  commands.addCommand(CommandIDs.stop, {
    label: trans.__('Stop Workflow…'),
    caption: trans.__('Stop the run; it can be resumed later'),
    icon: stopIcon,
    isEnabled: args => context.available(args).stop,
    isVisible: args => context.hasNotebook(args),
    execute: async args => {
      const target = context.targetOf(args);
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
}

export function addControlCommands(context: CommandContext): void {
  const { commands, trans } = context;
  const hasNotebook = (args: CommandArgs) => context.hasNotebook(args);

  commands.addCommand(CommandIDs.pause, {
    label: trans.__('Pause Workflow'),
    caption: trans.__('Pause the run after the current action'),
    icon: pauseIcon,
    isEnabled: args => context.available(args).pause,
    isVisible: hasNotebook,
    execute: args => context.targetOf(args)?.runner.pause()
  });

  const resume = (args: CommandArgs) => {
    const target = context.targetOf(args);
    if (!target) {
      return;
    }
    if (target.runner.isRunning) {
      target.runner.resume();
    } else if (target.model.canResumeSaved) {
      context.openPanel();
      context
        .withLock(target, () => target.runner.resumeFromSaved())
        .catch(context.report(trans.__('Resume Workflow')));
    }
  };

  commands.addCommand(CommandIDs.resume, {
    label: trans.__('Resume Workflow'),
    caption: trans.__('Continue the paused or stopped run'),
    icon: runIcon,
    isEnabled: args => context.available(args).resume,
    isVisible: hasNotebook,
    execute: resume
  });

  commands.addCommand(CommandIDs.togglePause, {
    label: trans.__('Pause or Resume Workflow'),
    caption: trans.__('Pause the run, or resume it when paused'),
    isEnabled: args =>
      context.available(args).pause || context.available(args).resume,
    isVisible: hasNotebook,
    execute: args => {
      if (context.available(args).pause) {
        context.targetOf(args)?.runner.pause();
      } else {
        resume(args);
      }
    }
  });

  commands.addCommand(CommandIDs.step, {
    label: trans.__('Step Workflow'),
    caption: trans.__('Run one behavior, then pause'),
    icon: stepOverIcon,
    isEnabled: args => context.available(args).step,
    isVisible: hasNotebook,
    execute: args => context.targetOf(args)?.runner.step()
  });

  addStopCommand(context);
}
