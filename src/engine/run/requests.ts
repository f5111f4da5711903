/**
 * The bodies of `/planning` and `/generating`, built from what they are given: the observation's parts,
 * the planner's context filter and the variable summaries it asked for, fitted to the maximum context
 * length. Pure: what should be told to the user or the planner comes back as reports; the caller
 * gathers the inputs (the kernel's summaries included) and sends the body.
 */
import { OPTIONAL_ACTIONS } from '../../protocol';
import type {
  BehaviorFeedback,
  ContextFilter,
  GeneratingRequestInput,
  Observation,
  ObservationInput,
  PlanningRequestInput
} from '../../protocol';
import { applyContextFilter } from '../contextFilter';
import { type IMessage, msg } from '../messages';
import {
  buildObservation,
  fitRequest,
  type IObservationParts
} from '../observation';
import type { SummarizeRequest } from '../ports/driver';
import type { IPlannerService } from '../types';
import { redactVariables } from '../variables';

/** What a request body is made of. */
export interface IRequestInputs {
  /** The observation's parts but its variables. */
  parts: Omit<IObservationParts, 'variables'>;
  /** The run's variables by where they come from. */
  variables: {
    /** Given to the run or set by the planner (`context_update.variables`). */
    context: Record<string, unknown>;
    /** Collected from the kernel. */
    kernel: Record<string, unknown>;
    /** The task and what the user typed for the planner (`RunState.taskVariables`). */
    task: Record<string, unknown>;
  };
  /** Whether a variable's value is left out (`redactionTest` of the settings). */
  isRedacted: (name: string) => boolean;
  /** The settings' `maxContextLength`, in characters. */
  maxLength: number;
  /** How the planner service measures what it sends. */
  service: Pick<IPlannerService, 'requestOverhead' | 'sentSize'>;
}

/** Something the user should see (`source`), and the planner too when `effect` is set. */
export interface IRequestReport {
  message: string | IMessage;
  source: 'engine' | 'filter';
  /** The effect the planner reads, or null. */
  effect: string | null;
}

export interface IBuiltRequest<T> {
  request: T;
  reports: IRequestReport[];
}

const SUMMARIES_REFUSED =
  '⚠️ WARN: Variable summaries were not computed: in interactive mode nothing runs in the kernel before the user approves it.';

export function observationOf(inputs: IRequestInputs): Observation {
  const { context, kernel, task } = inputs.variables;
  return buildObservation({
    ...inputs.parts,
    // A kernel variable of the same name never hides the task, nor a value the user set; what the user
    // typed for the planner reaches it as typed, whatever its name.
    variables: {
      ...redactVariables({ ...context, ...kernel }, inputs.isRedacted),
      ...task
    }
  });
}

/** Every request offers the client's optional actions (docs/protocol.md#actions). */
function requestOptions(stream: boolean) {
  return { stream, optional_actions: [...OPTIONAL_ACTIONS] };
}

export function planningBody(
  inputs: IRequestInputs,
  feedback: BehaviorFeedback | null
): IBuiltRequest<PlanningRequestInput> {
  const request: PlanningRequestInput = {
    observation: observationOf(inputs),
    options: requestOptions(false)
  };
  if (feedback) {
    request.behavior_feedback = feedback;
  }
  return fitToContext(inputs, request);
}

/**
 * The summaries to compute in the kernel for `filter`, or why none are: in interactive mode the
 * planner's code runs only once the user approved it (docs/protocol.md#the-loop).
 */
export function summariesToCompute(
  filter: ContextFilter | null,
  interactive: boolean
): { ask: SummarizeRequest | null; refused: IRequestReport | null } {
  const toSummarize = filter?.variables_to_summarize;
  if (!toSummarize || Object.keys(toSummarize).length === 0) {
    return { ask: null, refused: null };
  }
  if (interactive) {
    return {
      ask: null,
      refused: {
        message: SUMMARIES_REFUSED,
        source: 'filter',
        effect: SUMMARIES_REFUSED
      }
    };
  }
  return { ask: toSummarize, refused: null };
}

/** The full observation cut down by the last `/planning` answer's `filter`, with the summaries it asked for. */
export function generatingBody(
  inputs: IRequestInputs,
  filter: ContextFilter | null,
  summaries: Record<string, unknown>
): IBuiltRequest<GeneratingRequestInput> {
  const { observation, warnings, notes } = applyContextFilter(
    observationOf(inputs),
    filter,
    redactVariables(summaries, inputs.isRedacted)
  );
  const reports: IRequestReport[] = warnings.map((warning, index) => ({
    message: notes[index] ?? warning,
    source: 'filter',
    effect: warning
  }));
  const fitted = fitToContext(inputs, {
    observation,
    options: requestOptions(true)
  });
  return {
    request: fitted.request,
    reports: [...reports, ...fitted.reports]
  };
}

export function fitToContext<T extends { observation: ObservationInput }>(
  inputs: Pick<IRequestInputs, 'maxLength' | 'service'>,
  request: T
): IBuiltRequest<T> {
  const { maxLength: max, service } = inputs;
  const room = max - (service.requestOverhead?.() ?? 0);
  const sent = service.sentSize?.(request) ?? null;
  if (sent !== null && sent <= room) {
    // The service sends less than the request, and that fits: trimming would only lose what it sends.
    return { request, reports: [] };
  }
  // What the service leaves out is not counted: the request is trimmed by what it sends too much.
  const unsent =
    sent === null ? 0 : Math.max(0, JSON.stringify(request).length - sent);
  const { request: fitted, report } = fitRequest(request, room + unsent);
  return {
    request: fitted,
    reports: report.fits
      ? []
      : [
          {
            message: msg('requestTooLong', report.finalLength, max),
            source: 'engine',
            effect: null
          }
        ]
  };
}
