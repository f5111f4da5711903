/** Planners of a test's own, on free ports (stopped after it), and recording proxies in front of them. */
import {
  createServer,
  IncomingHttpHeaders,
  request as httpRequest
} from 'http';
import type { AddressInfo, Socket } from 'net';
import { IPlannerProcess, startPlanner } from '../../../bench/src/processes';

const planners: IPlannerProcess[] = [];

/** Starts a planner for this test (stopped by `stopPlanners` after it); `args` as on its command line. */
export async function planner(args: string[]): Promise<IPlannerProcess> {
  const started = await startPlanner(args);
  planners.push(started);
  return started;
}

/** Stops the planners and recording proxies this test started. */
export async function stopPlanners(): Promise<void> {
  await Promise.all([
    ...planners.splice(0).map(p => p.stop()),
    ...proxies.splice(0).map(p => p.close())
  ]);
}

/** One request as a recording proxy received it. */
export interface IRecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface IRecordingProxy {
  url: string;
  /** Every request received so far, in order. */
  requests: IRecordedRequest[];
  close(): Promise<void>;
}

const proxies: IRecordingProxy[] = [];

/**
 * An HTTP proxy in front of `target` (a planner) that records each request, head and body, and streams
 * the answer back unchanged: what the planner received, which its own log does not show. Closed by
 * `stopPlanners`.
 */
export async function recordingProxy(target: string): Promise<IRecordingProxy> {
  const upstream = new URL(target);
  const requests: IRecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (chunk: Buffer) => parts.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(parts);
      requests.push({
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: req.headers,
        body: body.toString('utf8')
      });
      const forward = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host }
        },
        answer => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        }
      );
      forward.on('error', error => {
        if (!res.headersSent) {
          res.writeHead(502);
        }
        res.end(String(error));
      });
      // The client went away: so does the request to the planner.
      res.on('close', () => forward.destroy());
      forward.end(body);
    });
  });
  server.on('connection', socket => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const proxy: IRecordingProxy = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>(resolve => {
        for (const socket of sockets) {
          socket.destroy();
        }
        server.close(() => resolve());
      })
  };
  proxies.push(proxy);
  return proxy;
}

/** The planner's request log, e.g. `POST /planning 429 3ms`, with when each line was read. */
export function requestLog(
  p: IPlannerProcess
): Array<{ line: string; at: number }> {
  return p.requests();
}
