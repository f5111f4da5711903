/**
 * What the engine and the notebook adapter tell the user (warnings, pause reasons, errors, how a run
 * ended), as message ids with parameters that the UI translates (`translateMessage` in `ui/present.ts`).
 * The mechanism and the protocol's own templates live in `protocol/messages.ts`; a message of the engine
 * may carry one of the protocol's as a parameter (`/planning failed: <the client's error>`). The planner
 * only ever reads the English text.
 */
import {
  fillTemplate,
  messageCatalogue,
  PROTOCOL_MESSAGES
} from '../protocol/messages';
import type * as messages from '../protocol/messages';
import { NOTEBOOK_MESSAGES } from './ports/messages';

export { fillTemplate };

export const ENGINE_MESSAGES = {
  pausedByUser: 'Paused by the user',
  pausedStepMode: 'Step mode: paused after one behavior',
  savedStateReadFailed: 'The saved run state could not be read: %1',
  savedStateUnreadable:
    'The run state saved in this notebook is not readable; start a new run.',
  savedRunCompleted: 'The saved run had already completed.',
  interruptFailed: 'The kernel could not be interrupted: %1',
  runFailed: 'The run failed: %1',
  planningFailed: '/planning failed: %1',
  planningFailedInARow: '/planning failed: %1 (%2 times in a row)',
  planningFallback: '/planning failed: %1; falling back to /generating',
  stepEndedEarly:
    "The planner ended step '%1' without reaching its target; moving on.",
  variablesNotCollected: 'Kernel variables could not be collected: %1',
  kernelVariablesGone:
    'Variables no longer in the kernel since the run paused (was it restarted?): %1. The planner is told; to have them back at once, run the cells that define them again.',
  thinkingNotClosed: 'The thinking cell could not be closed: %1',
  plannerStateNotSaved: "The planner service's state could not be saved: %1",
  runStateNotSaved: 'The run state could not be saved in the notebook: %1',
  maxSteps:
    'Stopped after %1 behaviors: the maximum number of execution steps (%2) was reached. Raise it in the settings, or resume the run to go on.',
  runStopped: 'The run was stopped; it can be resumed from the current step.',
  workflowComplete: 'The workflow is complete: every stage and step is done.',
  workflowEndedWithProblems: 'The workflow ended with problems: %1.',
  stepGivenUp: "The planner gave up step '%1': %2",
  outputsNotChecked: 'The outputs could not be checked in the kernel: %1',
  lineWithoutHandler: "ignored line without action ('%1' has no handler): %2",
  generatingFailed: '/generating failed: %1',
  approvalFailed: 'The behavior approval failed (%1); the behavior is skipped.',
  unknownAction:
    "⚠️ WARN: Unknown action type '%1' skipped: no handler is registered for it",
  endPhaseOtherStep:
    "end_phase names step '%1' but step '%2' is running; the running step is completed.",
  planningActionsIgnored:
    'The /planning answer carried %1 actions; they are ignored (actions come from /generating).',
  workflowConfirmFailed:
    'Confirming the workflow update failed (%1); the current workflow is kept.',
  unknownNextStage:
    "The planner named an unknown next stage '%1'; the run goes on in order.",
  unknownNextStep:
    "The planner named an unknown next step '%1'; the run goes on in order.",
  stepNotInCurrentStage:
    "The planner named step '%1', which stage '%2' does not have; the run goes on in order.",
  stepNotInStage:
    "The planner named step '%1', which stage '%2' does not have; its first step is next.",
  summarizeFailed: 'Summarizing variables in the kernel failed: %1',
  requestTooLong:
    'The request is %1 characters, over the %2 limit even after trimming; it is sent as it is.',
  kernelUnusable: 'The kernel is not usable (dead or restarting).',
  kernelUnusableDetail: 'The kernel is not usable: %1',
  rewriteBelowEdited:
    "You edited cell %1, so the planner's fix was not written into it: it was added below it as a new cell.",
  rewriteAsNewCell:
    "The planner's fix of '%1' could not replace that cell (gone, not a code cell, or not the run's): it was added as a new cell.",
  noCellToMarkAsThinking:
    'set_effect_as_thinking: there is no code cell to mark; ignored.',
  postHookFailed: "A post-hook of action '%1' failed: %2",
  variableNotFound: "⚠️ WARN: Variable '%1' requested but not found",
  summarizedVariableNotFound:
    "⚠️ WARN: Variable '%1' to summarize (%2) requested but not found",
  invalidPattern: "⚠️ WARN: Invalid effects %1 pattern '%2' ignored: %3",
  tooManyPatterns:
    '⚠️ WARN: %1 effects %2 patterns sent; only the first %3 are applied',
  patternRefused: "⚠️ WARN: Effects %1 pattern '%2' refused: %3",
  patternsOverBudget:
    '⚠️ WARN: Effects patterns took over %1 ms; the remaining effects are sent unfiltered',
  answerCutToApprove:
    'The planner sent more than %1 actions or %2 characters to approve at once; the rest of its answer was not read (%3 actions kept).',
  answerCutInBehavior:
    'The planner sent more than %1 actions in one behavior; the rest of its answer was not read (%2 actions kept).',
  noFailedRequest: 'There is no failed request to retry.',
  pauseBeforeRewind: 'Pause the run before rewinding it.',
  noRunToRewind: 'There is no run to rewind in this notebook.',
  rewindPointGone: 'That point of the run is no longer kept.',
  runAlreadyActive: 'A run is already active in this notebook.'
} as const;

/** Every template the UI translates: the protocol's, the notebook's and the engine's (their ids never collide). */
export const MESSAGES = {
  ...PROTOCOL_MESSAGES,
  ...NOTEBOOK_MESSAGES,
  ...ENGINE_MESSAGES
} as const;

export type MessageId = keyof typeof MESSAGES;
export type MessageParam = messages.MessageParam<MessageId>;
export type IMessage = messages.IMessage<MessageId>;
export type IMessageText = messages.IMessageText<MessageId>;

export const { isMessageId, msg, englishText, say, reported } =
  messageCatalogue(MESSAGES);

/** An error that refuses what the user asked, in words the UI translates (`translateMessage`). */
export function refusal(
  id: MessageId,
  ...params: MessageParam[]
): Error & IMessageText {
  const said = say(id, ...params);
  return Object.assign(new Error(said.message), { text: said.text });
}
