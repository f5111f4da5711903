/**
 * What the notebook adapter tells the user (a cell that is gone, a kernel that died, an execution
 * stopped), as message ids with parameters: the notebook's part of the message port. The UI translates
 * them with every other template (`MESSAGES` in `engine/messages.ts` merges this catalogue); the planner
 * reads the English text.
 */
import { messageCatalogue } from '../../protocol/messages';
import type * as messages from '../../protocol/messages';

export const NOTEBOOK_MESSAGES = {
  notebookClosed: 'The notebook was closed.',
  notACodeCell: 'Cell %1 is a %2 cell; only code cells can be executed.',
  stoppedBeforeRun: 'Stopped before the cell ran.',
  executionFailed: 'The execution failed: %1',
  cellNotExecuted:
    'The cell was not executed (the kernel canceled it or waits for input).',
  executionTimedOut:
    'The execution exceeded the time limit of %1 s; the kernel was interrupted.',
  executionStopped: 'The execution was stopped; the kernel was interrupted.',
  kernelRestarted:
    'The kernel restarted during execution; all variables were lost. Run the cells that define them again.',
  kernelDied:
    'The kernel died during execution. Restart it, then resume the run.',
  kernelShutDown: 'The kernel was shut down during execution.',
  kernelChanged: 'The notebook switched to another kernel during execution.',
  cellGone: 'Cell %1 no longer exists (deleted?)',
  sessionClosed: 'The notebook session was closed.',
  kernelShuttingDown: 'The kernel is shutting down.',
  inputPending: 'Another cell waits for input; answer it, then resume the run.',
  noKernelToStart:
    'The notebook has no kernel and there is no default kernel to start.',
  kernelStartFailed: 'The kernel could not be started: %1',
  noKernel: 'The notebook has no kernel.',
  kernelDead: 'The kernel is dead. Restart it, then resume the run.',
  kernelNotAnswering:
    'The kernel did not answer for %1 s, even after reconnecting to it. Wait for it or use Kernel > Reconnect to Kernel, then resume the run.'
} as const;

export type NotebookMessageId = keyof typeof NOTEBOOK_MESSAGES;
export type INotebookMessage = messages.IMessage<NotebookMessageId>;
export type INotebookMessageText = messages.IMessageText<NotebookMessageId>;

export const { msg, say, englishText } = messageCatalogue(NOTEBOOK_MESSAGES);
