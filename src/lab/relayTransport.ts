/**
 * The `server` transport: planner requests go to the Jupyter server's relay
 * (`{baseUrl}notebook-bcc/relay/<path>`) through `ServerConnection`, with JupyterLab's own auth and XSRF.
 * The relay chooses the planner URL and adds the administrator's token, so the browser never sends one.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';
import { z } from 'zod';
import type { IRunSettings } from '../engine/settings';
import {
  asciiHeaders,
  bodyChunks,
  collectText,
  createBrowserTransport,
  ERROR_BODY,
  FetchLike,
  IPlannerRequest,
  IPlannerTransport,
  isRecord,
  jsonBody,
  PlannerError
} from '../protocol';
import { normalizePlannerBaseUrl } from '../protocol/dialects';
import { say } from '../protocol/messages';
import {
  BUILTIN_LABEL,
  deferredTransport,
  loadBuiltinPlanner
} from './builtinPlanner';

/** The relay's route under the server's base URL. */
export const RELAY_ROUTE = 'notebook-bcc/relay';
/** What the server says about the planner it relays to (never the token). */
export const CONFIG_ROUTE = 'notebook-bcc/config';

const RelayConfig = z.object({
  planner_url: z.string(),
  source: z.string(),
  token_configured: z.boolean().optional()
});
export type RelayConfig = z.infer<typeof RelayConfig>;

/** `GET {base_url}notebook-bcc/config`: where the relay forwards, and who set it; null when unknown. */
export async function fetchRelayConfig(
  serverSettings: ServerConnection.ISettings
): Promise<RelayConfig | null> {
  const response = await ServerConnection.makeRequest(
    URLExt.join(serverSettings.baseUrl, CONFIG_ROUTE),
    { method: 'GET' },
    serverSettings
  );
  if (!response.ok) {
    return null;
  }
  const parsed = RelayConfig.safeParse(await response.json());
  return parsed.success ? parsed.data : null;
}

/**
 * The relay answers 502 with `{"message": ...}` when it cannot reach the planner: that is no answer from
 * the planner at all, so it becomes a network failure naming the planner URL and the cause.
 */
async function unreachable(
  request: IPlannerRequest,
  url: string,
  response: Response
): Promise<PlannerError | null> {
  let body: unknown;
  try {
    // Only the relay's own short message matters: a planner's long 502 body is not read whole.
    body = JSON.parse(
      await collectText(bodyChunks(response.clone()), ERROR_BODY)
    );
  } catch {
    return null;
  }
  if (!isRecord(body) || typeof body.message !== 'string') {
    return null;
  }
  return new PlannerError({
    kind: 'network',
    url,
    status: response.status,
    ...say('relayUnreachable', `${request.method} ${url}`, body.message)
  });
}

export function createServerTransport(
  serverSettings: ServerConnection.ISettings
): IPlannerTransport {
  const root = URLExt.join(serverSettings.baseUrl, RELAY_ROUTE);
  const urlOf = (path: string) => `${root}/${path.replace(/^\/+/, '')}`;
  const label = say('relayLabel', root);
  return {
    label: label.message,
    labelText: label.text,
    urlOf,
    async send(request: IPlannerRequest): Promise<Response> {
      const url = urlOf(request.path);
      const body = jsonBody(request, url);
      const headers = asciiHeaders(request.headers);
      if (body !== undefined) {
        headers['Content-Type'] = 'application/json';
      }
      const response = await ServerConnection.makeRequest(
        url,
        {
          method: request.method,
          headers,
          body,
          signal: request.signal,
          // `no-store` (the default) would add a cache-busting query the relay would pass on.
          cache: 'no-cache'
        },
        serverSettings
      );
      if (response.status === 502) {
        const failure = await unreachable(request, url, response);
        if (failure) {
          throw failure;
        }
      }
      return response;
    }
  };
}

/**
 * The transport the `transport` setting names: the server's relay, or straight to `baseUrl`. With no
 * planner configured (an empty `baseUrl`, and no administrator's URL on the server), the built-in demo
 * planner answers instead.
 */
export function createPlannerTransport(
  settings: Pick<IRunSettings, 'transport' | 'baseUrl' | 'token'>,
  options: {
    serverSettings?: ServerConnection.ISettings;
    fetch?: FetchLike;
    /** The demo planner; default: the built-in one, loaded on first use. */
    builtin?: () => Promise<IPlannerTransport>;
  } = {}
): IPlannerTransport {
  const builtin = options.builtin ?? loadBuiltinPlanner;
  const demo = {
    label: BUILTIN_LABEL.message,
    labelText: BUILTIN_LABEL.text,
    urlOf: (path: string) => `builtin://demo-planner/${path}`
  };
  if (settings.transport === 'browser') {
    if (!settings.baseUrl) {
      return deferredTransport(builtin, demo);
    }
    return createBrowserTransport({
      // A trailing `/v1` is the dialect's hint, not part of the root (docs/dialects.md#choosing).
      baseUrl: normalizePlannerBaseUrl(settings.baseUrl).root,
      token: settings.token,
      fetch: options.fetch
    });
  }
  const serverSettings =
    options.serverSettings ?? ServerConnection.makeSettings();
  const relay = createServerTransport(serverSettings);
  return deferredTransport(async () => {
    const config = await fetchRelayConfig(serverSettings).catch(() => null);
    return isDemoConfig(config) ? builtin() : relay;
  }, relay);
}

/** The relay serves no planner anyone chose: neither the administrator nor the user set a URL. */
export function isDemoConfig(config: RelayConfig | null): boolean {
  return config?.source === 'default';
}
