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
import { CONFIG_ROUTE, readLlmChoice } from './llmSettings';

/** The relay's route under the server's base URL. */
export const RELAY_ROUTE = 'notebook-bcc/relay';
export { CONFIG_ROUTE };

const RelayConfig = z.object({
  planner_url: z.string(),
  source: z.string(),
  token_configured: z.boolean().optional(),
  /** The LLM planner the relay serves in process, when it does. */
  llm: z
    .unknown()
    .optional()
    .transform(value => readLlmChoice(value))
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
 * Who wrote an answer (`X-Notebook-BCC-Relay`): `planner` for a relayed answer, `relay` for the relay's
 * own (its 502, a refused request); none when neither did (Jupyter without the relay, a proxy in front).
 */
export const ORIGIN_HEADER = 'X-Notebook-BCC-Relay';

/** The `message` of a short JSON error body (the relay's and Jupyter's own form), or ''. */
async function messageOf(response: Response): Promise<string> {
  try {
    // Only a short message matters: a long body is not read whole.
    const body: unknown = JSON.parse(
      await collectText(bodyChunks(response.clone()), ERROR_BODY)
    );
    return isRecord(body) && typeof body.message === 'string'
      ? body.message
      : '';
  } catch {
    return '';
  }
}

/**
 * An answer the planner did not write becomes an error that says who did, so the user is not sent to
 * check a planner that never saw the request: the relay's 502 (it could not reach the planner), Jupyter
 * refusing the request (an ended session, XSRF), a server without the relay, a proxy in front of
 * Jupyter. Null for the planner's own answers.
 */
async function notFromPlanner(
  request: IPlannerRequest,
  url: string,
  response: Response
): Promise<PlannerError | null> {
  const origin = response.headers.get(ORIGIN_HEADER);
  const status = response.status;
  if (origin === 'planner' || status < 400) {
    return null;
  }
  const what = `${request.method} ${url}`;
  // Read only for the answers whose message is shown (the relay's 502, a refusal).
  const message =
    (origin === 'relay' && status === 502) || status === 401 || status === 403
      ? await messageOf(response)
      : '';
  if (origin === 'relay' && status === 502 && message) {
    // No answer from the planner at all: a network failure, retried like one.
    return new PlannerError({
      kind: 'network',
      url,
      status,
      ...say('relayUnreachable', what, message)
    });
  }
  if (status === 401 || status === 403) {
    return new PlannerError({
      kind: 'http',
      url,
      status,
      needsAnswer: true,
      ...say('jupyterRefused', what, status, message ? `: ${message}` : '')
    });
  }
  if (origin === null && status === 404) {
    return new PlannerError({
      kind: 'http',
      url,
      status,
      needsAnswer: true,
      ...say('relayMissing', what)
    });
  }
  if (origin === null && status === 504) {
    // The proxy's limit will cut the same wait again: no status, so it is not retried.
    return new PlannerError({
      kind: 'http',
      url,
      needsAnswer: true,
      ...say('proxyTimedOut', what)
    });
  }
  if (origin === null && (status === 502 || status === 503)) {
    return new PlannerError({
      kind: 'http',
      url,
      status,
      ...say('proxyFailed', what, status)
    });
  }
  return null;
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
      const failure = await notFromPlanner(request, url, response);
      if (failure) {
        throw failure;
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
