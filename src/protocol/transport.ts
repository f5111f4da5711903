/**
 * How planner requests leave the browser. The protocol code names a path relative to the planner's root
 * (`planning`, `v1/actions`, `v2/health`); a transport decides where that goes: straight to the planner
 * (`browser`) or through the Jupyter server's relay (`server`), which adds the admin's token itself.
 */

/** One HTTP request to the planner. */
export interface IPlannerRequest {
  method: 'GET' | 'POST';
  /** Relative to the planner root, without a leading slash: `planning`, `v1/actions`. */
  path: string;
  /** Sent as JSON (`Content-Type: application/json`); absent for GET. */
  body?: unknown;
  /** Extra headers; every value must be ASCII (the transport percent-encodes what is not). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export interface IPlannerTransport {
  /** Where requests go, for messages: the planner URL, or the relay's URL and the planner it serves. */
  readonly label: string;
  /** The URL a path is sent to, for messages and the trace. */
  urlOf(path: string): string;
  /**
   * Sends the request and resolves once the answer's headers arrive; the body is read as it streams.
   * Rejects only when no answer came (network failure, abort); any HTTP status resolves.
   */
  send(request: IPlannerRequest): Promise<Response>;
}
