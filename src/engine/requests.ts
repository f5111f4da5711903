/**
 * The bodies of `/planning` and `/generating`: the observation, the planner's context filter and
 * variable summaries, fitted to the maximum context length.
 */
import type {
  BehaviorFeedback,
  GeneratingRequestInput,
  Observation,
  ObservationInput,
  PlanningRequestInput
} from '../protocol';
import { applyContextFilter } from './contextFilter';
import type { INotebookSummary } from './driver';
import { msg } from './messages';
import { buildObservation, fitRequest } from './observation';
import { errorMessage } from './registry';
import type { RunCore } from './runCore';
import { RunStopped } from './runControl';
import type { RunState } from './runState';
import { redactedPatterns, redactionTest, redactVariables } from './variables';

export function observationOf(
  core: RunCore,
  notebook: INotebookSummary
): Observation {
  const { state } = core;
  return buildObservation({
    progress: state.progress,
    // A kernel variable of the same name never hides the task, nor a value the user set; what the user
    // typed for the planner reaches it as typed, whatever its name.
    variables: {
      ...redactVariables(
        { ...state.contextVariables, ...state.kernelVariables },
        redactionTest(core.settings())
      ),
      ...state.taskVariables()
    },
    effects: state.effects.toJSON(),
    notebook,
    fsm: state.fsm.toContext(),
    legacy: state.legacy
  });
}

export function planningRequest(
  core: RunCore,
  feedback: BehaviorFeedback | null,
  notebook: INotebookSummary
): PlanningRequestInput {
  const request: PlanningRequestInput = {
    observation: observationOf(core, notebook),
    options: { stream: false }
  };
  if (feedback) {
    request.behavior_feedback = feedback;
  }
  return fitToContext(core, request);
}

/** Applies (and consumes) the context filter of the last `/planning` answer. */
export async function generatingRequest(
  core: RunCore,
  notebook: INotebookSummary
): Promise<GeneratingRequestInput> {
  const full = observationOf(core, notebook);
  const filter = core.state.filter;
  core.state.filter = null;
  let summaries: Record<string, unknown> = {};
  const toSummarize = filter?.variables_to_summarize;
  if (
    toSummarize &&
    Object.keys(toSummarize).length > 0 &&
    core.settings().interactive
  ) {
    // Planner-chosen code in the kernel, and nobody has approved it (docs/protocol.md#the-loop).
    const message =
      '⚠️ WARN: Variable summaries were not computed: in interactive mode nothing runs in the kernel before the user approves it.';
    core.warn(message, 'filter');
    core.addEffect(message);
  } else if (toSummarize && Object.keys(toSummarize).length > 0) {
    try {
      summaries = await core.control.untilStopped(
        core.driver.summarizeVariables(
          toSummarize,
          redactedPatterns(core.settings())
        )
      );
    } catch (error) {
      if (error instanceof RunStopped) {
        throw error;
      }
      core.warn(msg('summarizeFailed', errorMessage(error)), 'driver');
    }
  }
  summaries = redactVariables(summaries, redactionTest(core.settings()));
  const { observation, warnings, notes } = applyContextFilter(
    full,
    filter,
    summaries
  );
  for (const [index, warning] of warnings.entries()) {
    core.warn(notes[index] ?? warning, 'filter');
    core.addEffect(warning);
  }
  return fitToContext(core, { observation, options: { stream: true } });
}

export function fitToContext<T extends { observation: ObservationInput }>(
  core: RunCore,
  request: T
): T {
  const max = core.settings().maxContextLength;
  const room = max - (core.client.requestOverhead?.() ?? 0);
  const sent = core.client.sentSize?.(request) ?? null;
  if (sent !== null && sent <= room) {
    // The service sends less than the request, and that fits: trimming would only lose what it sends.
    return request;
  }
  // What the service leaves out is not counted: the request is trimmed by what it sends too much.
  const unsent =
    sent === null ? 0 : Math.max(0, JSON.stringify(request).length - sent);
  const { request: fitted, report } = fitRequest(request, room + unsent);
  if (!report.fits) {
    core.warn(msg('requestTooLong', report.finalLength, max), 'engine');
  }
  return fitted;
}

/** The failed request kept for `retry()`, once. */
export function takeRetry(
  state: RunState,
  endpoint: 'planning'
): PlanningRequestInput | null;
export function takeRetry(
  state: RunState,
  endpoint: 'generating'
): GeneratingRequestInput | null;
export function takeRetry(
  state: RunState,
  endpoint: 'planning' | 'generating'
): PlanningRequestInput | GeneratingRequestInput | null {
  const retry = state.retry;
  if (!retry || retry.endpoint !== endpoint) {
    return null;
  }
  state.retry = null;
  return retry.body;
}
