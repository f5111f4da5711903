/**
 * Which planner a run started now would get, for the Run dialog: the built-in demo planner answers
 * when no planner is configured (`createPlannerTransport` makes the same choice at the first request).
 */
import type { ServerConnection } from '@jupyterlab/services';
import type { IRunSettings } from '../engine/settings';
import { fetchRelayConfig, isDemoConfig } from './relayTransport';

export async function usesBuiltinPlanner(
  settings: Pick<IRunSettings, 'transport' | 'baseUrl'>,
  serverSettings: ServerConnection.ISettings
): Promise<boolean> {
  if (settings.transport === 'browser') {
    return !settings.baseUrl;
  }
  const config = await fetchRelayConfig(serverSettings).catch(() => null);
  return isDemoConfig(config);
}
