/**
 * How a run is shown: its state in plain words, which commands apply, durations, and engine messages
 * in the user's language. Pure functions of a snapshot, so they are tested without a notebook. The
 * progress tree is in `tree.ts`, the planner line and usage in `plannerText.ts`.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import {
  type IMessage,
  type IMessageText,
  isMessageId,
  MESSAGES
} from '../engine/messages';
import type { IRunFinished, IRunSnapshot } from '../engine/types';
import type { ICommandAvailability } from '../tokens';
import { describeCompleted } from './outcome';

/** What a planner's error asks the user to do when the LLM planner's model settings are wrong. */
export const OPEN_LLM_SETTINGS = 'open-llm-settings';

/** What the view knows beyond the snapshot. */
export interface IRunContext {
  /** Interactive mode: the running behavior waits for the user's approval. */
  awaitingApproval?: boolean;
  /** How the last run of this notebook ended, in this session. */
  finished?: IRunFinished | null;
}

/** An engine message in the user's language; a text from elsewhere (the planner's) as it is. */
export function translateMessage(
  report: IMessageText,
  trans: TranslationBundle
): string {
  return report.text && isTranslatable(report.text)
    ? translateText(report.text, trans)
    : report.message;
}

/** How a planner's requests leave (the transport's label), in the user's language. */
export function translateVia(
  location: { via: string; viaText?: IMessage },
  trans: TranslationBundle
): string {
  return translateMessage(
    { message: location.via, text: location.viaText },
    trans
  );
}

function isTranslatable(text: IMessage): boolean {
  return (
    isMessageId(text.id) &&
    text.params.every(p => typeof p !== 'object' || isTranslatable(p))
  );
}

function translateText(text: IMessage, trans: TranslationBundle): string {
  return trans.__(
    MESSAGES[text.id],
    ...text.params.map(p =>
      typeof p === 'object' ? translateText(p, trans) : p
    )
  );
}

/** A step's name as the panel and dialogs show it; its id only when the run does not name it. */
export function stepNameOf(
  snapshot: Pick<IRunSnapshot, 'stages'>,
  stepId: string | null
): string {
  for (const stage of snapshot.stages) {
    const step = stage.steps.find(s => s.id === stepId);
    if (step) {
      return step.name;
    }
  }
  return stepId ?? '';
}

function stepLabel(snapshot: IRunSnapshot): string {
  return snapshot.step.name ?? snapshot.step.id ?? '?';
}

/** The run's state in one short sentence, e.g. "Running behavior 3 of step Handle missing values". */
export function describeRun(
  snapshot: IRunSnapshot,
  trans: TranslationBundle,
  context: IRunContext = {}
): string {
  if (snapshot.state === 'ERROR' || snapshot.error) {
    // What happened, in the user's words: the box below says why.
    if (snapshot.error?.action === OPEN_LLM_SETTINGS) {
      return trans.__('Stopped: the language model could not be used');
    }
    switch (snapshot.error?.endpoint) {
      case 'generating':
        return trans.__(
          'Stopped by an error: the planner could not write the next cells'
        );
      case 'planning':
        return trans.__(
          'Stopped by an error: the planner could not plan the next step'
        );
      default:
        return trans.__('Stopped by an error in the run');
    }
  }
  if (snapshot.state === 'WORKFLOW_COMPLETED') {
    // A run with steps given up or deliverables missing does not say "Completed" as if all were well.
    return describeCompleted(snapshot.outcome, trans);
  }
  if (snapshot.running) {
    if (snapshot.rewinding) {
      return trans.__('Rewinding…');
    }
    if (snapshot.paused) {
      const reason = snapshot.pauseReason;
      switch (reason?.kind ?? 'user') {
        case 'step':
          return trans.__('Paused (step mode)');
        case 'user':
          return trans.__('Paused');
        default:
          return trans.__(
            'Paused: %1',
            reason ? translateMessage(reason, trans) : ''
          );
      }
    }
    if (snapshot.pausing) {
      return trans.__('Pausing after the current action…');
    }
    switch (snapshot.state) {
      case 'WORKFLOW_UPDATE_PENDING':
        return trans.__('Waiting for you to confirm a workflow update');
      case 'STEP_UPDATE_PENDING':
        return trans.__('Updating the steps of stage %1', snapshot.stage.name);
      case 'ACTION_RUNNING':
      case 'ACTION_COMPLETED':
        return trans.__(
          'Running behavior %1 of step %2',
          snapshot.behavior.iteration,
          stepLabel(snapshot)
        );
      case 'BEHAVIOR_RUNNING':
        if (context.awaitingApproval) {
          return trans.__(
            'Waiting for your approval of behavior %1',
            snapshot.behavior.iteration
          );
        }
        return trans.__(
          'Running behavior %1 of step %2',
          snapshot.behavior.iteration,
          stepLabel(snapshot)
        );
      default:
        break;
    }
    return trans.__('Waiting for the planner…');
  }
  if (context.finished?.reason === 'max_steps') {
    return trans.__(
      'Stopped after %1 behaviors (maximum execution steps)',
      snapshot.behaviorsRun
    );
  }
  if (snapshot.task !== null && snapshot.stages.length > 0) {
    return trans.__('Stopped at step %1', stepLabel(snapshot));
  }
  if (snapshot.task !== null) {
    return trans.__('Stopped');
  }
  return trans.__('Not started');
}

/** The run has something to resume: it stopped (or the page was reloaded) before completing. */
export function isResumable(snapshot: IRunSnapshot): boolean {
  return (
    !snapshot.running &&
    snapshot.task !== null &&
    snapshot.state !== 'WORKFLOW_COMPLETED' &&
    snapshot.state !== 'ERROR' &&
    snapshot.error === null
  );
}

export function commandAvailability(
  snapshot: IRunSnapshot | null
): ICommandAvailability {
  if (!snapshot) {
    return {
      run: false,
      pause: false,
      resume: false,
      step: false,
      stop: false,
      retry: false
    };
  }
  const { paused, pausing } = snapshot;
  const failed = snapshot.state === 'ERROR' || snapshot.error !== null;
  // A completed workflow's loop only saves before it ends: nothing is left to pause or step.
  const active = snapshot.running && snapshot.state !== 'WORKFLOW_COMPLETED';
  return {
    run: !snapshot.running,
    pause: active && !paused && !pausing,
    resume: (active && (paused || pausing)) || isResumable(snapshot),
    step: active,
    stop: snapshot.running || failed,
    retry: !snapshot.running && failed && (snapshot.error?.retryable ?? true)
  };
}

/** `1234` -> `1.2 s`, `75000` -> `1 min 15 s`. */
export function formatDuration(ms: number, trans: TranslationBundle): string {
  if (Math.round(ms) < 1000) {
    return trans.__('%1 ms', Math.round(ms));
  }
  const tenths = Math.round(ms / 100);
  if (tenths < 600) {
    return trans.__('%1 s', (tenths / 10).toFixed(1));
  }
  const seconds = Math.round(ms / 1000);
  return trans.__('%1 min %2 s', Math.floor(seconds / 60), seconds % 60);
}

/** A ticking wait in whole seconds: `12000` -> `12 s`, `72000` -> `1 min 12 s`. */
export function formatElapsed(ms: number, trans: TranslationBundle): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) {
    return trans.__('%1 s', seconds);
  }
  return trans.__('%1 min %2 s', Math.floor(seconds / 60), seconds % 60);
}
