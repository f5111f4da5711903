/**
 * The `browser` transport: requests go straight from the page to the planner (today's direct mode, for a
 * planner only the user's machine can reach). The planner must answer CORS for the page's origin.
 */
import {
  asciiHeaders,
  IPlannerRequest,
  IPlannerTransport,
  jsonBody
} from './transport';

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

const DEFAULT_PLANNER_URL = 'http://localhost:28600';

export interface IBrowserTransportOptions {
  /** The planner root; default `http://localhost:28600`. */
  baseUrl?: string;
  /** Sent as `Authorization: Bearer <token>` when not empty. */
  token?: string | null;
  /** Default: the global `fetch`. */
  fetch?: FetchLike;
}

export function createBrowserTransport(
  options: IBrowserTransportOptions = {}
): IPlannerTransport {
  const root = (options.baseUrl?.trim() || DEFAULT_PLANNER_URL).replace(
    /\/+$/,
    ''
  );
  const token = options.token?.trim() || undefined;
  const fetch: FetchLike =
    options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const urlOf = (path: string) => `${root}/${path.replace(/^\/+/, '')}`;
  return {
    label: root,
    urlOf,
    async send(request: IPlannerRequest): Promise<Response> {
      const url = urlOf(request.path);
      const body = jsonBody(request, url);
      const headers = asciiHeaders(request.headers);
      if (body !== undefined) {
        headers['Content-Type'] = 'application/json';
      }
      if (token) {
        headers.Authorization = `Bearer ${token}`;
      }
      return fetch(url, {
        method: request.method,
        headers,
        body,
        signal: request.signal
      });
    }
  };
}
