/**
 * The `server` transport: planner requests go to the Jupyter server's relay
 * (`{baseUrl}notebook-bcc/relay/<path>`) through `ServerConnection`, with JupyterLab's own auth and XSRF.
 * The relay chooses the planner URL and adds the administrator's token, so the browser never sends one.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';
import type { IRunSettings } from '../engine/settings';
import {
  asciiHeaders,
  createBrowserTransport,
  FetchLike,
  IPlannerRequest,
  IPlannerTransport,
  isRecord,
  jsonBody,
  PlannerError
} from '../protocol';

/** The relay's route under the server's base URL. */
export const RELAY_ROUTE = 'notebook-bcc/relay';

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
    body = await response.clone().json();
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
    message: `${request.method} ${url} failed: the Jupyter server could not reach the planner: ${body.message}`
  });
}

export function createServerTransport(
  serverSettings: ServerConnection.ISettings
): IPlannerTransport {
  const root = URLExt.join(serverSettings.baseUrl, RELAY_ROUTE);
  const urlOf = (path: string) => `${root}/${path.replace(/^\/+/, '')}`;
  return {
    label: `the Jupyter server's relay (${root})`,
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

/** The transport the `transport` setting names: the server's relay, or straight to `baseUrl`. */
export function createPlannerTransport(
  settings: Pick<IRunSettings, 'transport' | 'baseUrl' | 'token'>,
  options: {
    serverSettings?: ServerConnection.ISettings;
    fetch?: FetchLike;
  } = {}
): IPlannerTransport {
  if (settings.transport === 'browser') {
    return createBrowserTransport({
      baseUrl: settings.baseUrl,
      token: settings.token,
      fetch: options.fetch
    });
  }
  return createServerTransport(
    options.serverSettings ?? ServerConnection.makeSettings()
  );
}
