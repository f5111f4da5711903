import type { IPlannerRequest, IPlannerTransport } from '../../transport';

export type Reply = (request: IPlannerRequest) => Response | Promise<Response>;

/** A transport that answers from a script and records every request. */
export class FakeTransport implements IPlannerTransport {
  constructor(
    private readonly _reply: Reply,
    readonly root = 'http://planner.test'
  ) {}

  readonly label = 'fake planner';
  readonly requests: IPlannerRequest[] = [];

  urlOf(path: string): string {
    return `${this.root}/${path}`;
  }

  async send(request: IPlannerRequest): Promise<Response> {
    this.requests.push(request);
    return this._reply(request);
  }

  paths(): string[] {
    return this.requests.map(r => `${r.method} ${r.path}`);
  }

  bodies(path: string): Record<string, unknown>[] {
    return this.requests
      .filter(r => r.path === path)
      .map(r => r.body as Record<string, unknown>);
  }
}

export function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json' }
  });
}

export function text(
  body: string,
  status = 200,
  type = 'text/plain'
): Response {
  return new Response(body, { status, headers: { 'Content-Type': type } });
}

/** A chunked body: the text cut into pieces of `size` bytes (lines are split across chunks). */
export function chunked(
  body: string,
  type = 'application/json',
  size = 7
): Response {
  const bytes = new TextEncoder().encode(body);
  let offset = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.length) {
        controller.close();
        return;
      }
      controller.enqueue(bytes.slice(offset, offset + size));
      offset += size;
    }
  });
  return new Response(stream, {
    status: 200,
    headers: { 'Content-Type': type }
  });
}

export function ndjson(lines: unknown[], type = 'application/json'): Response {
  return chunked(lines.map(line => `${JSON.stringify(line)}\n`).join(''), type);
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) {
    items.push(item);
  }
  return items;
}

/** An answer whose body gives `lines` (as NDJSON), then breaks off with a network error. */
export function breaksAfter(lines: unknown[]): Response {
  const head = new TextEncoder().encode(
    lines.map(line => JSON.stringify(line) + '\n').join('')
  );
  let sent = false;
  return new Response(
    new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent) {
          controller.error(new TypeError('network error'));
        } else {
          sent = true;
          controller.enqueue(head);
        }
      }
    }),
    { status: 200, headers: { 'Content-Type': 'application/json' } }
  );
}
