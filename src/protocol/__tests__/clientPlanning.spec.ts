import {
  MAX_ERROR_BODY_CHARS,
  MAX_PLANNING_BODY_CHARS,
  parseRetryAfter
} from '..';
import { msg } from '../messages';
import {
  BASE,
  REQUEST,
  fakeFetch,
  controlledBody,
  jsonResponse,
  line,
  makeClient,
  collect,
  failureOf
} from './clientFixtures';

describe('DslcAdapter.planning', () => {
  it('posts to /planning and returns the normalised answer', async () => {
    const { fetch, calls } = fakeFetch(() =>
      jsonResponse({
        target_achieved: true,
        contextUpdate: { variables: { a: 1 } }
      })
    );
    const { client } = makeClient(fetch, { token: 't0k' });
    const response = await client.planning(REQUEST);
    expect(calls[0].url).toBe(`${BASE}/planning`);
    expect(calls[0].init.headers).toMatchObject({
      Authorization: 'Bearer t0k',
      'Content-Type': 'application/json'
    });
    expect(response).toEqual({
      targetAchieved: true,
      transition: { target_achieved: true },
      context_update: { variables: { a: 1 } }
    });
  });

  it("passes normalisation warnings to the call's and the client's observers", async () => {
    const { fetch } = fakeFetch(() => jsonResponse({ context_update: {} }));
    const { client, warnings } = makeClient(fetch);
    const seen: string[] = [];
    const response = await client.planning(REQUEST, {
      observer: {
        onWarning: (_endpoint, warning) => seen.push(warning.message)
      }
    });
    expect(response.targetAchieved).toBe(false);
    const expected = [
      `POST ${BASE}/planning: planning response has no targetAchieved; assuming false`
    ];
    expect(seen).toEqual(expected);
    expect(warnings).toEqual(expected);
  });

  it('retries on 500 with exponential backoff, then succeeds', async () => {
    const { fetch, calls } = fakeFetch((_url, index) =>
      index < 2
        ? new Response('{"error":"boom"}', {
            status: 500,
            statusText: 'Internal Server Error'
          })
        : jsonResponse({ targetAchieved: false })
    );
    const { client, sleeps, warnings, reports } = makeClient(fetch);
    const response = await client.planning(REQUEST);
    expect(response.targetAchieved).toBe(false);
    expect(calls).toHaveLength(3);
    expect(sleeps).toEqual([10, 20]);
    expect(warnings[0]).toBe(
      `POST ${BASE}/planning failed: HTTP 500 Internal Server Error: {"error":"boom"}; retrying in 0.01 s (retry 1 of 3)`
    );
    // The same words as ids for the UI: the retry around the failure, each translated in turn.
    expect(reports[0].text).toEqual(
      msg(
        'retrying',
        msg(
          'requestFailed',
          `POST ${BASE}/planning`,
          'HTTP 500 Internal Server Error: {"error":"boom"}'
        ),
        0.01,
        1,
        3
      )
    );
  });

  it('retries after network errors', async () => {
    const { fetch, calls } = fakeFetch((_url, index) => {
      if (index === 0) {
        throw new TypeError('fetch failed');
      }
      return jsonResponse({ targetAchieved: true });
    });
    const { client } = makeClient(fetch);
    expect((await client.planning(REQUEST)).targetAchieved).toBe(true);
    expect(calls).toHaveLength(2);
  });

  it('honours Retry-After in seconds on 429', async () => {
    const { fetch } = fakeFetch((_url, index) =>
      index === 0
        ? new Response('slow down', {
            status: 429,
            headers: { 'Retry-After': '7' }
          })
        : jsonResponse({ targetAchieved: true })
    );
    const { client, sleeps } = makeClient(fetch);
    await client.planning(REQUEST);
    expect(sleeps).toEqual([7000]);
  });

  it('honours Retry-After as an HTTP date', async () => {
    const when = new Date(Date.now() + 5000).toUTCString();
    const { fetch } = fakeFetch((_url, index) =>
      index === 0
        ? new Response('', { status: 503, headers: { 'Retry-After': when } })
        : jsonResponse({ targetAchieved: true })
    );
    const { client, sleeps } = makeClient(fetch);
    await client.planning(REQUEST);
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThan(3000);
    expect(sleeps[0]).toBeLessThanOrEqual(5000);
  });

  it('gives up after the configured retries with a message naming URL, status and body', async () => {
    const { fetch, calls } = fakeFetch(
      () =>
        new Response('{"error":"boom"}', {
          status: 500,
          statusText: 'Internal Server Error'
        })
    );
    const { client } = makeClient(fetch);
    const error = await failureOf(client.planning(REQUEST));
    expect(calls).toHaveLength(4);
    expect(error).toMatchObject({
      kind: 'http',
      status: 500,
      url: `${BASE}/planning`,
      bodyExcerpt: '{"error":"boom"}'
    });
    expect(error.message).toBe(
      `POST ${BASE}/planning failed: HTTP 500 Internal Server Error: {"error":"boom"}`
    );
  });

  it('cuts the body excerpt to 200 characters', async () => {
    const { fetch } = fakeFetch(
      () => new Response('x'.repeat(5000), { status: 502 })
    );
    const { client } = makeClient(fetch, { planningRetries: 0 });
    const error = await failureOf(client.planning(REQUEST));
    expect(error.bodyExcerpt).toHaveLength(200);
    expect(error.message.length).toBeLessThan(300);
  });

  it('does not retry client errors', async () => {
    const { fetch, calls } = fakeFetch(
      () => new Response('bad request', { status: 400 })
    );
    const { client } = makeClient(fetch);
    const error = await failureOf(client.planning(REQUEST));
    expect(error).toMatchObject({ kind: 'http', status: 400 });
    expect(calls).toHaveLength(1);
  });

  it('reports a body that is not JSON as invalid', async () => {
    const { fetch } = fakeFetch(
      () => new Response('<html>oops</html>', { status: 200 })
    );
    const { client } = makeClient(fetch);
    const error = await failureOf(client.planning(REQUEST));
    expect(error.kind).toBe('invalid');
    expect(error.message).toMatch(
      /^POST http:\/\/planner\.test\/planning answered HTTP 200 with an invalid response: the body is not JSON \(.+\): <html>oops<\/html>$/
    );
  });

  it('stops retrying when aborted during the backoff', async () => {
    const controller = new AbortController();
    const { fetch, calls } = fakeFetch(() => new Response('', { status: 500 }));
    const { client } = makeClient(fetch, {
      sleep: async () => {
        controller.abort();
        throw new Error('sleep aborted');
      }
    });
    const error = await failureOf(
      client.planning(REQUEST, { signal: controller.signal })
    );
    expect(error.kind).toBe('abort');
    expect(calls).toHaveLength(1);
  });

  it('times out a planning answer that never comes', async () => {
    const { fetch } = fakeFetch(
      (_url, _index, init) =>
        new Promise<Response>((_resolve, reject) => {
          init.signal?.addEventListener('abort', () =>
            reject(new Error('aborted'))
          );
        })
    );
    const { client, sleeps } = makeClient(fetch, {
      firstByteTimeoutMs: 20,
      planningRetries: 0
    });
    const error = await failureOf(client.planning(REQUEST));
    expect(error.kind).toBe('timeout');
    expect(sleeps).toEqual([]);
  });

  it('retries a planning answer that timed out, and the step gets its plan', async () => {
    const { fetch, calls } = fakeFetch((_url, index, init) =>
      index === 0
        ? new Promise<Response>((_resolve, reject) => {
            init.signal?.addEventListener('abort', () =>
              reject(new Error('aborted'))
            );
          })
        : jsonResponse({ targetAchieved: true })
    );
    const { client, sleeps, warnings } = makeClient(fetch, {
      firstByteTimeoutMs: 20
    });
    expect((await client.planning(REQUEST)).targetAchieved).toBe(true);
    expect(calls).toHaveLength(2);
    expect(sleeps).toEqual([10]);
    expect(warnings[0]).toBe(
      `POST ${BASE}/planning timed out: no data from the planner for 0.02 s after the request was sent; retrying in 0.01 s (retry 1 of 3)`
    );
  });

  it('reports waiting since the first attempt until the answer comes', async () => {
    const waits: [string, number | null][] = [];
    const { fetch } = fakeFetch((_url, index) =>
      index === 0
        ? new Response('busy', { status: 503 })
        : jsonResponse({ targetAchieved: true })
    );
    const { client } = makeClient(fetch, {
      observer: { onWaiting: (url, since) => waits.push([url, since]) }
    });
    const before = Date.now();
    await client.planning(REQUEST);
    const url = `${BASE}/planning`;
    expect(waits.map(([u, since]) => [u, since === null])).toEqual([
      [url, false],
      [url, true],
      [url, false],
      [url, true]
    ]);
    const since = waits[0][1] ?? 0;
    expect(since).toBeGreaterThanOrEqual(before);
    expect(waits[2][1]).toBe(since);
  });

  it('tells the observer about every attempt', async () => {
    const log: unknown[][] = [];
    const { fetch } = fakeFetch((_url, index) =>
      index === 0
        ? new Response('{"error":1}', { status: 500 })
        : jsonResponse({ targetAchieved: true })
    );
    const { client } = makeClient(fetch, {
      observer: {
        onRequest: (...args) => log.push(['request', ...args]),
        onResponse: (...args) => log.push(['response', ...args]),
        onEnd: (url, error) => log.push(['end', url, error?.kind])
      }
    });
    await client.planning(REQUEST);
    const url = `${BASE}/planning`;
    expect(log).toEqual([
      ['request', url, REQUEST],
      ['response', url, 500, { error: 1 }, false],
      ['end', url, 'http'],
      ['request', url, REQUEST],
      ['response', url, 200, { targetAchieved: true }, false],
      ['end', url, undefined]
    ]);
  });

  it('survives an observer that throws', async () => {
    const { fetch } = fakeFetch(() => jsonResponse({ targetAchieved: true }));
    const { client, warnings } = makeClient(fetch, {
      observer: {
        onRequest: () => {
          throw new Error('trace disk full');
        }
      }
    });
    expect((await client.planning(REQUEST)).targetAchieved).toBe(true);
    expect(warnings).toEqual([
      'planner client observer failed: trace disk full'
    ]);
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates', () => {
    const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:27:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});

describe('DslcAdapter.generating waiting', () => {
  it('reports waiting until the first line arrives, not just the headers', async () => {
    const body = controlledBody();
    const waits: (number | null)[] = [];
    const { fetch } = fakeFetch(() => new Response(body.stream));
    const { client } = makeClient(fetch, {
      observer: { onWaiting: (_url, since) => waits.push(since) }
    });
    const events = client.generating(REQUEST);
    const first = events.next();
    await new Promise(resolve => setTimeout(resolve, 10));
    expect(waits).toHaveLength(1);
    expect(waits[0]).toEqual(expect.any(Number));
    body.push(line({ action: 'finish_thinking' }));
    await first;
    expect(waits).toEqual([waits[0], null]);
    body.close();
    await collect(events);
    expect(waits).toHaveLength(2);
  });
});

describe('DslcAdapter bodies are bounded', () => {
  const MiB = 1024 * 1024;

  /** A body of `total` bytes of `byte`, made in 1 MiB chunks as they are read; counts what was read. */
  function hugeBody(total: number, byte = 0x78) {
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= total) {
          controller.close();
          return;
        }
        controller.enqueue(new Uint8Array(MiB).fill(byte));
        pulled += MiB;
      }
    });
    return { stream, pulled: () => pulled };
  }

  it('stops reading a /planning answer over the limit and says so', async () => {
    const body = hugeBody(64 * MiB);
    const { fetch } = fakeFetch(
      () => new Response(body.stream, { status: 200 })
    );
    const { client } = makeClient(fetch, { planningRetries: 0 });
    const error = await failureOf(client.planning(REQUEST));
    expect(error.kind).toBe('invalid');
    expect(error.message).toMatch(
      /answered HTTP 200 with an invalid response: the body is over 8,388,608 characters; the rest was not read/
    );
    expect(body.pulled()).toBeLessThanOrEqual(
      MAX_PLANNING_BODY_CHARS + 2 * MiB
    );
  });

  it('reads only the start of an error body', async () => {
    const body = hugeBody(64 * MiB);
    const { fetch } = fakeFetch(
      () => new Response(body.stream, { status: 500 })
    );
    const { client } = makeClient(fetch, { planningRetries: 0 });
    const error = await failureOf(client.planning(REQUEST));
    expect(error).toMatchObject({ kind: 'http', status: 500 });
    expect(error.bodyExcerpt).toHaveLength(200);
    expect(body.pulled()).toBeLessThanOrEqual(MAX_ERROR_BODY_CHARS + 2 * MiB);
  });

  it('reads only the start of a /generating error body', async () => {
    const body = hugeBody(64 * MiB);
    const { fetch } = fakeFetch(
      () => new Response(body.stream, { status: 400 })
    );
    const { client } = makeClient(fetch);
    const error = await failureOf(collect(client.generating(REQUEST)));
    expect(error).toMatchObject({ kind: 'http', status: 400 });
    expect(body.pulled()).toBeLessThanOrEqual(MAX_ERROR_BODY_CHARS + 2 * MiB);
  });
});
