/**
 * The commands about the planner rather than one run: Test Planner Connection, Use the Built-in Demo
 * Planner, LLM Planner Settings.
 */
import { Notification } from '@jupyterlab/apputils';
import { linkIcon } from '@jupyterlab/ui-components';
import { CommandIDs } from '../../tokens';
import { translateMessage } from '../../ui/present';
import { describePlannerProblem, OPEN_SETTINGS } from '../../ui/problem';
import { loadRuntime, showPlannerProblemDialog } from '../lazy';
import type { CommandContext } from './context';

/** Test Planner Connection: the result is a notification, with the whole cause under Details. */
function addTestConnectionCommand(context: CommandContext): void {
  const { commands, trans } = context;
  const openSettings = () => {
    void commands.execute(OPEN_SETTINGS.id, OPEN_SETTINGS.args);
  };
  commands.addCommand(CommandIDs.testConnection, {
    label: trans.__('Test Planner Connection'),
    caption: trans.__(
      "Check that this notebook's planner answers, with the settings in use"
    ),
    icon: linkIcon,
    isEnabled: args => !!context.targetOf(args)?.model.planner,
    isVisible: args => context.hasNotebook(args),
    execute: async args => {
      const planner = context.targetOf(args)?.model.planner;
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
                    openSettings();
                  }
                });
              }
            },
            {
              label: trans.__('Open Settings'),
              displayType: 'accent',
              callback: openSettings
            }
          ]
        });
      }
      return check.ok;
    }
  });
}

export function addPlannerCommands(context: CommandContext): void {
  const { commands, trans, options } = context;
  addTestConnectionCommand(context);

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
          context.report(trans.__('Use the Built-in Demo Planner'))(reason);
        }
      }
    });
  }

  const llm = options.llm ?? null;
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
          context.report(trans.__('LLM Planner Settings'))(reason);
        }
      }
    });
  }
}
