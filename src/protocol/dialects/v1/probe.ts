/**
 * How detection recognises a v1 server (docs/dialects.md#choosing): it has no `/planning`, and answers
 * `GET /v2/health` or a harmless `POST /v1/reflection`; a configured URL ending in `/v1` names it.
 */
import { isRecord } from '../../fields';
import type { PlannerError } from '../../errors';
import { parseJson, readText, send } from '../common';
import type { IDialectProbe } from '../dialect';
import { V1_ENTRY_STAGE_ID, V1_ENTRY_STEP_ID } from './state';

/** Sends one probe and describes it in `probes`: the parsed JSON of a 200 answer, else null. */
async function probeJson(
  context: Parameters<NonNullable<IDialectProbe['routes']>>[0],
  probes: string[],
  method: 'GET' | 'POST',
  path: string,
  body?: unknown
): Promise<unknown> {
  const { transport, signal } = context;
  const answer = await send(transport, method, path, body, signal).catch(
    (error: unknown) => error as PlannerError
  );
  if (!(answer instanceof Response)) {
    probes.push(`${method} ${transport.urlOf(path)} → ${answer.message}`);
    return null;
  }
  const parsed = parseJson(await readText(answer));
  probes.push(`${method} ${transport.urlOf(path)} → HTTP ${answer.status}`);
  return answer.status === 200 && parsed.ok ? parsed.value : null;
}

export const v1Probe: IDialectProbe = {
  urlSuffix: '/v1',
  async routes(context, probes) {
    const health = await probeJson(context, probes, 'GET', 'v2/health');
    if (isRecord(health) && health.status === 'ok') {
      return true;
    }
    // A v1 server only computes this and changes nothing.
    const reflection = await probeJson(
      context,
      probes,
      'POST',
      'v1/reflection',
      { stage_id: V1_ENTRY_STAGE_ID, step_index: V1_ENTRY_STEP_ID, state: {} }
    );
    return (
      isRecord(reflection) && typeof reflection.targetAchieved === 'boolean'
    );
  }
};
