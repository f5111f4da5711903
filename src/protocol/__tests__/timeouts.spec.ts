import { withTimeouts } from '../exchange';
import type { IPlannerRequest, IPlannerTransport } from '../transport';

const encode = (text: string) => new TextEncoder().encode(text);

/** A transport answering with `body` at once (headers), whatever the request. */
function answering(body: ReadableStream<Uint8Array>): IPlannerTransport {
  return {
    label: 'test planner',
    urlOf: path => `http://planner.test/${path}`,
    send: async (_: IPlannerRequest) =>
      new Response(body, {
        status: 200,
        headers: { 'Content-Type': 'application/json' }
      })
  };
}

const request: IPlannerRequest = {
  method: 'POST',
  path: 'v1/actions',
  body: {}
};

describe('withTimeouts', () => {
  it('times the wait for a chunk only while the reader waits for one, as the dslc adapter does', async () => {
    // The second chunk arrives 120 ms after the first, while the reader is busy for 200 ms.
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encode('a\n'));
        setTimeout(() => {
          controller.enqueue(encode('b\n'));
          controller.close();
        }, 120);
      }
    });
    const transport = withTimeouts(answering(body), () => ({
      firstByteTimeoutMs: 1000,
      stallTimeoutMs: 100
    }));
    const response = await transport.send(request);
    expect(response.url).toBe('');
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('a\n');
    await new Promise(resolve => setTimeout(resolve, 200));
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('b\n');
    expect((await reader.read()).done).toBe(true);
  });

  it('closes the answer at once when the reader gives up, without waiting for a timeout', async () => {
    let cancelled = -1;
    const started = Date.now();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encode('a\n'));
      },
      cancel() {
        cancelled = Date.now() - started;
      }
    });
    const transport = withTimeouts(answering(body), () => ({
      firstByteTimeoutMs: 10_000,
      stallTimeoutMs: 10_000
    }));
    const reader = (await transport.send(request)).body!.getReader();
    await reader.read();
    await reader.cancel();
    await new Promise(resolve => setTimeout(resolve, 20));
    expect(cancelled).toBeGreaterThanOrEqual(0);
    expect(cancelled).toBeLessThan(1000);
  });

  it('fails a silent answer with the first-byte timeout, naming the request', async () => {
    const body = new ReadableStream<Uint8Array>({
      pull: () => new Promise(() => undefined)
    });
    const transport = withTimeouts(answering(body), () => ({
      firstByteTimeoutMs: 30,
      stallTimeoutMs: 10_000
    }));
    const reader = (await transport.send(request)).body!.getReader();
    await expect(reader.read()).rejects.toMatchObject({
      kind: 'timeout',
      message:
        'POST http://planner.test/v1/actions timed out: no data from the planner for 0.03 s after the request was sent'
    });
  });
});
