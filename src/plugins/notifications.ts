import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { Notification } from '@jupyterlab/apputils';
import { PathExt } from '@jupyterlab/coreutils';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import type { IRunFinished } from '../engine/types';
import {
  CommandIDs,
  IRunnerEntry,
  IWorkflowRunnerRegistry,
  PluginIDs
} from '../tokens';
import { TRANSLATION_DOMAIN } from '../translation';
import { completedNotice } from '../ui/outcome';
import { translateMessage } from '../ui/present';
import { describePlannerProblem } from '../ui/problem';

/**
 * A notification when a run completes (a warning when it ended with steps given up or deliverables
 * missing), fails or reaches its step limit (not for every step).
 */
export const notificationsPlugin: JupyterFrontEndPlugin<void> = {
  id: PluginIDs.notifications,
  description: 'Notifications of finished workflow runs.',
  autoStart: true,
  requires: [IWorkflowRunnerRegistry],
  optional: [ITranslator],
  activate: (
    app: JupyterFrontEnd,
    runners: IWorkflowRunnerRegistry,
    translator: ITranslator | null
  ) => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const watch = ({ panel, runner }: IRunnerEntry) => {
      // The run's own notebook, wherever the user is now.
      const showPanel = {
        label: trans.__('Show'),
        caption: trans.__('Open the workflow panel'),
        callback: () => {
          void app.commands.execute(CommandIDs.open, { notebook: panel.id });
        }
      };
      // The failure's notice, with its Retry, while the run stays failed: gone once the run goes on.
      let failure: string | null = null;
      const dismissFailure = () => {
        if (failure !== null) {
          Notification.dismiss(failure);
          failure = null;
        }
      };
      runner.stateChanged.connect((_, transition) => {
        if (transition.from === 'ERROR' && transition.to !== 'ERROR') {
          dismissFailure();
        }
      });
      runner.finished.connect((_, finished: IRunFinished) => {
        const name = PathExt.basename(panel.context.localPath);
        dismissFailure();
        switch (finished.reason) {
          case 'completed': {
            const notice = completedNotice(finished, name, trans);
            if (notice.type === 'success') {
              Notification.success(notice.message, {
                autoClose: 5000,
                actions: [showPanel]
              });
            } else {
              Notification.warning(notice.message, {
                autoClose: false,
                actions: [showPanel]
              });
            }
            break;
          }
          case 'error':
            failure = Notification.error(
              // A notification shows about 140 characters: the cause first, the chain in the panel.
              trans.__(
                'Workflow failed in %1: %2',
                name,
                describePlannerProblem(finished, trans).summary
              ),
              {
                autoClose: false,
                actions: [
                  // The planner lacks variables: retrying without them fails the same way.
                  app.commands.isEnabled(CommandIDs.setVariables, {
                    notebook: panel.id
                  })
                    ? {
                        label: trans.__('Set Variables…'),
                        caption: trans.__(
                          'Give the planner the variables it lacks, then retry'
                        ),
                        displayType: 'accent',
                        callback: () => {
                          void app.commands.execute(CommandIDs.setVariables, {
                            notebook: panel.id
                          });
                        }
                      }
                    : {
                        label: trans.__('Retry'),
                        caption: trans.__('Send the failed request again'),
                        displayType: 'accent',
                        callback: () => {
                          void app.commands.execute(CommandIDs.retry, {
                            notebook: panel.id
                          });
                        }
                      },
                  showPanel
                ]
              }
            );
            break;
          case 'max_steps':
            Notification.warning(
              trans.__(
                'Workflow paused in %1: %2',
                name,
                translateMessage(finished, trans)
              ),
              { autoClose: 8000, actions: [showPanel] }
            );
            break;
          default:
            break;
        }
      });
    };
    runners.runnerAdded.connect((_, entry) => watch(entry));
    runners.entries().forEach(watch);
  }
};
