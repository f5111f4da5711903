/**
 * How detection recognises a dslc planner (docs/dialects.md#choosing): its body is the base of the
 * superset probe, and any other JSON planning answer is its first answer.
 */
import { isRecord, type JsonObject } from '../../fields';
import { say } from '../../messages';
import { normalizePlanningResponse } from '../../normalizeResponse';
import type { PlanningRequestInput } from '../../schemas';
import { parseJson, unquotedBody } from '../common';
import type { IDialectProbe } from '../dialect';

/** The run's first planning request as a dslc planner takes it at `IDLE`: not streamed. */
export function seedProbeBody(request: PlanningRequestInput): JsonObject {
  const observation = request.observation;
  const context = observation.context ?? {};
  const fsm = { ...(context.FSM ?? {}), state: 'IDLE' };
  return {
    ...request,
    observation: { ...observation, context: { ...context, FSM: fsm } },
    options: { ...(request.options ?? {}), stream: false }
  };
}

export const dslcProbe: IDialectProbe = {
  ownBody: {
    label: 'seed body',
    build: ({ request }) => seedProbeBody(request)
  },
  claim(answer, { url, onWarning }) {
    const parsed = parseJson(unquotedBody(answer.text));
    if (!parsed.ok || !isRecord(parsed.value)) {
      return null;
    }
    const normalized = normalizePlanningResponse(parsed.value);
    if (!normalized.ok) {
      return null;
    }
    for (const warning of normalized.warnings) {
      onWarning?.(say('requestProblem', `POST ${url}`, warning));
    }
    return { firstAnswer: normalized.response };
  }
};
