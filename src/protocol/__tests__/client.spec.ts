import {
  GeneratingEvent,
  IPlannerClientOptions,
  PlannerClient,
  PlannerError,
  parseRetryAfter
} from '..';

const BASE = 'http://planner.test';
const REQUEST = { observation: { location: {} }, options: { stream: true } };
const encoder = new TextEncoder();

type Call = { url: string; init: RequestInit };

/** A fetch that answers with `respond(url, call index)` and records every call. */
function fakeFetch(
  respond: (
    url: string,
    index: number,
    init: RequestInit
  ) => Promise<Response> | Response
) {
  const calls: Call[] = [];
  const fetch = async (url: string, init: RequestInit): Promise<Response> => {
    calls.push({ url, init });
    return respond(url, calls.length - 1, init);
  };
  return { fetch, calls };
}

/** A body the test feeds by hand. */
function controlledBody() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    }
  });
  return {
    stream,
    push: (text: string) => controller.enqueue(encoder.encode(text)),
    close: () => controller.close()
  };
}

function streamResponse(text: string, init: ResponseInit = {}): Response {
  const bytes = encoder.encode(text);
  // Several chunks, cut inside multi-byte characters too, as a network would deliver them.
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < bytes.length; i += 5) {
        controller.enqueue(bytes.slice(i, i + 5));
      }
      controller.close();
    }
  });
  return new Response(stream, {
    status: 200,
    headers: { 'content-type': 'application/x-ndjson' },
    ...init
  });
}

function jsonResponse(body: unknown, init: ResponseInit = {}): Response {
  return new Response(JSON.stringify(body), {
    status: 200,
    headers: { 'content-type': 'application/json' },
    ...init
  });
}

function line(action: Record<string, unknown>): string {
  return `${JSON.stringify({ action })}\n`;
}

function makeClient(
  fetch: IPlannerClientOptions['fetch'],
  options: IPlannerClientOptions = {}
) {
  const warnings: string[] = [];
  const sleeps: number[] = [];
  const client = new PlannerClient({
    baseUrl: `${BASE}/`,
    fetch,
    retryBaseDelayMs: 10,
    sleep: async ms => {
      sleeps.push(ms);
    },
    ...options,
    observer: [
      ...(options.observer ? [options.observer].flat() : []),
      { onWarning: (_endpoint, message) => warnings.push(message) }
    ]
  });
  return { client, warnings, sleeps };
}

async function collect(
  events: AsyncIterable<GeneratingEvent>
): Promise<GeneratingEvent[]> {
  const out: GeneratingEvent[] = [];
  for await (const event of events) {
    out.push(event);
  }
  return out;
}

function actionsOf(events: GeneratingEvent[]): unknown[] {
  return events.flatMap(event =>
    event.kind === 'action' ? [event.action] : []
  );
}

function warningsOf(events: GeneratingEvent[]): string[] {
  return events.flatMap(event =>
    event.kind === 'warning' ? [event.message] : []
  );
}

async function failureOf(work: Promise<unknown>): Promise<PlannerError> {
  try {
    await work;
  } catch (error) {
    expect(error).toBeInstanceOf(PlannerError);
    return error as PlannerError;
  }
  throw new Error('expected a PlannerError');
}

describe('PlannerClient.generating', () => {
  it('yields the first action before the stream ends', async () => {
    const body = controlledBody();
    const { fetch } = fakeFetch(
      () => new Response(body.stream, { status: 200 })
    );
    const { client } = makeClient(fetch);
    const events = client.generating(REQUEST)[Symbol.asyncIterator]();

    body.push(line({ action: 'new_chapter', content: '数据分析 📊' }));
    const first = await events.next();
    expect(first.value).toEqual({
      kind: 'action',
      action: { action: 'new_chapter', content: '数据分析 📊' },
      index: 0,
      line: '{"action":{"action":"new_chapter","content":"数据分析 📊"}}'
    });

    body.push(line({ action: 'finish_thinking' }));
    body.close();
    expect((await events.next()).value).toMatchObject({
      kind: 'action',
      action: { action: 'finish_thinking' },
      index: 1
    });
    expect((await events.next()).done).toBe(true);
  });

  it('posts JSON to /generating with the bearer token', async () => {
    const { fetch, calls } = fakeFetch(() =>
      streamResponse(line({ action: 'finish_thinking' }))
    );
    const { client } = makeClient(fetch, {
      token: 'secret',
      headers: { 'X-Notebook-Id': 'nb-1', 'X-Unset': undefined }
    });
    await collect(client.generating(REQUEST));
    expect(calls).toHaveLength(1);
    expect(calls[0].url).toBe(`${BASE}/generating`);
    expect(calls[0].init.method).toBe('POST');
    expect(JSON.parse(String(calls[0].init.body))).toEqual(REQUEST);
    expect(calls[0].init.headers).toMatchObject({
      Authorization: 'Bearer secret',
      'Content-Type': 'application/json',
      'X-Notebook-Id': 'nb-1'
    });
    expect(calls[0].init.headers).not.toHaveProperty('X-Unset');
  });

  it('sends no Authorization header without a token', async () => {
    const { fetch, calls } = fakeFetch(() => streamResponse(''));
    const { client } = makeClient(fetch, { token: '' });
    await collect(client.generating(REQUEST));
    expect(calls[0].init.headers).not.toHaveProperty('Authorization');
  });

  it('warns about a malformed line and goes on', async () => {
    const { fetch } = fakeFetch(() =>
      streamResponse(
        line({ action: 'add', content: 'a' }) +
          '{"action": {"action": "add", "content": \n' +
          line({ action: 'add', content: 'b' })
      )
    );
    const { client, warnings } = makeClient(fetch);
    const events = await collect(client.generating(REQUEST));
    expect(events.map(event => event.kind)).toEqual([
      'action',
      'warning',
      'action'
    ]);
    expect(actionsOf(events)).toEqual([
      { action: 'add', content: 'a' },
      { action: 'add', content: 'b' }
    ]);
    expect(warningsOf(events)[0]).toMatch(
      /^POST http:\/\/planner\.test\/generating: malformed JSON line ignored \(.+\): \{"action": \{"action": "add", "content":$/
    );
    expect(warnings).toEqual(warningsOf(events));
  });

  it('warns about a malformed first line and still yields the rest', async () => {
    const { fetch } = fakeFetch(() =>
      streamResponse(`not json\n${line({ action: 'add', content: 'b' })}`)
    );
    const { client } = makeClient(fetch);
    const events = await collect(client.generating(REQUEST));
    expect(actionsOf(events)).toEqual([{ action: 'add', content: 'b' }]);
    expect(warningsOf(events)).toHaveLength(1);
    expect(warningsOf(events)[0]).toContain('malformed JSON line ignored');
  });

  it('reads a final line without a newline', async () => {
    const { fetch } = fakeFetch(() =>
      streamResponse(
        `${line({ action: 'add', content: 'a' })}{"action":{"action":"end_phase"}}`
      )
    );
    const { client } = makeClient(fetch);
    const events = await collect(client.generating(REQUEST));
    expect(actionsOf(events)).toEqual([
      { action: 'add', content: 'a' },
      { action: 'end_phase' }
    ]);
  });

  it('ignores a line without an action, with a notice (never an effect)', async () => {
    const { fetch } = fakeFetch(() =>
      streamResponse(
        `{"status": "thinking"}\n${line({ action: 'finish_thinking' })}`
      )
    );
    const { client } = makeClient(fetch);
    const events = await collect(client.generating(REQUEST));
    expect(events[0]).toEqual({
      kind: 'notice',
      message: `POST ${BASE}/generating: ignored line without action: {"status": "thinking"}`,
      line: '{"status": "thinking"}'
    });
    expect(actionsOf(events)).toEqual([{ action: 'finish_thinking' }]);
  });

  it('warns about an action that fails normalisation, naming the problem', async () => {
    const { fetch } = fakeFetch(() =>
      streamResponse(
        line({ action: 'exec' }) + line({ action: 'finish_thinking' })
      )
    );
    const { client } = makeClient(fetch);
    const events = await collect(client.generating(REQUEST));
    expect(warningsOf(events)).toEqual([
      `POST ${BASE}/generating: action ignored: exec action is missing required field "codecell_id": {"action":{"action":"exec"}}`
    ]);
    expect(actionsOf(events)).toEqual([{ action: 'finish_thinking' }]);
  });

  it('normalises every action variant on the stream', async () => {
    const { fetch } = fakeFetch(() =>
      streamResponse(
        [
          '{"type": "add_content", "content_type": "code", "content": "x = 1"}',
          '{"action": {"type": "execute_code", "codecell_id": "c1"}}',
          '{"action": "custom_plot", "data": [1, 2]}'
        ].join('\n')
      )
    );
    const { client } = makeClient(fetch);
    const events = await collect(client.generating(REQUEST));
    expect(actionsOf(events)).toEqual([
      { action: 'add', shot_type: 'action', content: 'x = 1' },
      {
        action: 'exec',
        codecell_id: 'c1',
        need_output: true,
        auto_debug: false,
        keep_debug_button_visible: false
      },
      { action: 'custom_plot', data: [1, 2] }
    ]);
    expect(events.map(event => event.kind === 'action' && event.index)).toEqual(
      [0, 1, 2]
    );
  });

  it('yields each action of a non-streamed {"actions": [...]} answer', async () => {
    const batch = {
      actions: [
        { action: 'add', content: 'Hello', shot_type: 'dialogue' },
        { action: 'exec', codecell_id: 'code-1', shot_type: 'action' }
      ]
    };
    for (const body of [
      JSON.stringify(batch),
      JSON.stringify(batch, null, 2)
    ]) {
      const { fetch } = fakeFetch(
        () =>
          new Response(body, {
            status: 200,
            headers: { 'content-type': 'application/json' }
          })
      );
      const { client } = makeClient(fetch);
      const events = await collect(client.generating(REQUEST));
      expect(warningsOf(events)).toEqual([]);
      expect(actionsOf(events)).toEqual([
        { action: 'add', content: 'Hello', shot_type: 'dialogue' },
        {
          action: 'exec',
          codecell_id: 'code-1',
          shot_type: 'action',
          need_output: true,
          auto_debug: false,
          keep_debug_button_visible: false
        }
      ]);
    }
  });

  it('falls back to /generate when /generating answers 404', async () => {
    const { fetch, calls } = fakeFetch(url =>
      url.endsWith('/generating')
        ? new Response('Not Found', { status: 404 })
        : streamResponse(line({ action: 'finish_thinking' }))
    );
    const { client } = makeClient(fetch);
    const events = await collect(client.generating(REQUEST));
    expect(calls.map(call => call.url)).toEqual([
      `${BASE}/generating`,
      `${BASE}/generate`
    ]);
    expect(events).toEqual([
      {
        kind: 'warning',
        message: `POST ${BASE}/generating answered 404; trying ${BASE}/generate`
      },
      expect.objectContaining({
        kind: 'action',
        action: { action: 'finish_thinking' }
      })
    ]);
  });

  it('fails after /generate also answers 404, and does not retry other failures', async () => {
    const { fetch, calls } = fakeFetch(
      () => new Response('nope', { status: 404 })
    );
    const { client } = makeClient(fetch);
    const error = await failureOf(collect(client.generating(REQUEST)));
    expect(error.message).toBe(`POST ${BASE}/generate failed: HTTP 404: nope`);
    expect(calls).toHaveLength(2);

    const failing = fakeFetch(
      () => new Response('{"error":"boom"}', { status: 500 })
    );
    const second = makeClient(failing.fetch);
    const failure = await failureOf(collect(second.client.generating(REQUEST)));
    expect(failure).toMatchObject({
      kind: 'http',
      status: 500,
      url: `${BASE}/generating`
    });
    expect(failing.calls).toHaveLength(1);
  });

  it('times out when no byte arrives (response never sent)', async () => {
    const { fetch } = fakeFetch(
      (_url, _index, init) =>
        new Promise<Response>((_resolve, reject) => {
          init.signal?.addEventListener('abort', () =>
            reject(new Error('aborted by client'))
          );
        })
    );
    const { client } = makeClient(fetch, { firstByteTimeoutMs: 30 });
    const error = await failureOf(collect(client.generating(REQUEST)));
    expect(error.kind).toBe('timeout');
    expect(error.message).toBe(
      `POST ${BASE}/generating timed out: no data from the planner for 0.03 s after the request was sent`
    );
  });

  it('times out when headers arrive but the body never starts', async () => {
    const body = controlledBody();
    const { fetch } = fakeFetch(
      () => new Response(body.stream, { status: 200 })
    );
    const { client } = makeClient(fetch, {
      firstByteTimeoutMs: 30,
      stallTimeoutMs: 10_000
    });
    const error = await failureOf(collect(client.generating(REQUEST)));
    expect(error.kind).toBe('timeout');
    expect(error.message).toContain(
      'no data from the planner for 0.03 s after the request was sent'
    );
  });

  it('times out when the stream stalls, after yielding what arrived', async () => {
    const body = controlledBody();
    const { fetch } = fakeFetch(
      () => new Response(body.stream, { status: 200 })
    );
    const { client } = makeClient(fetch, {
      firstByteTimeoutMs: 10_000,
      stallTimeoutMs: 30
    });
    const events = client.generating(REQUEST)[Symbol.asyncIterator]();
    body.push(line({ action: 'finish_thinking' }));
    expect((await events.next()).value).toMatchObject({ kind: 'action' });
    const error = await failureOf(events.next());
    expect(error).toMatchObject({ kind: 'timeout', url: `${BASE}/generating` });
    expect(error.message).toBe(
      `POST ${BASE}/generating timed out: no data from the planner for 0.03 s since the last chunk (stream stalled)`
    );
  });

  it('resets the stall timer on every chunk', async () => {
    const body = controlledBody();
    const { fetch } = fakeFetch(
      () => new Response(body.stream, { status: 200 })
    );
    const { client } = makeClient(fetch, { stallTimeoutMs: 150 });
    const done = collect(client.generating(REQUEST));
    const text = line({ action: 'add', content: 'slow but steady' });
    // Six pieces 50 ms apart: 300 ms in all, twice the stall timeout.
    const size = Math.ceil(text.length / 6);
    for (let at = 0; at < text.length; at += size) {
      body.push(text.slice(at, at + size));
      await new Promise(resolve => setTimeout(resolve, 50));
    }
    body.close();
    expect(actionsOf(await done)).toEqual([
      { action: 'add', content: 'slow but steady' }
    ]);
  });

  it('stops with kind "abort" when the signal aborts mid-stream', async () => {
    const body = controlledBody();
    const { fetch } = fakeFetch(
      () => new Response(body.stream, { status: 200 })
    );
    const { client } = makeClient(fetch);
    const controller = new AbortController();
    const events = client
      .generating(REQUEST, { signal: controller.signal })
      [Symbol.asyncIterator]();
    body.push(line({ action: 'finish_thinking' }));
    await events.next();
    const pending = events.next();
    controller.abort();
    const error = await failureOf(pending);
    expect(error).toMatchObject({
      kind: 'abort',
      message: `POST ${BASE}/generating aborted`
    });
  });

  it('does not send a request when already aborted', async () => {
    const { fetch, calls } = fakeFetch(() => streamResponse(''));
    const { client } = makeClient(fetch);
    const controller = new AbortController();
    controller.abort();
    const error = await failureOf(
      collect(client.generating(REQUEST, { signal: controller.signal }))
    );
    expect(error.kind).toBe('abort');
    expect(calls).toHaveLength(0);
  });

  it('reports a network failure with the URL and the cause', async () => {
    const { fetch } = fakeFetch(() => {
      throw new TypeError('fetch failed', {
        cause: new Error('connect ECONNREFUSED 127.0.0.1:28600')
      });
    });
    const { client } = makeClient(fetch);
    const error = await failureOf(collect(client.generating(REQUEST)));
    expect(error).toMatchObject({ kind: 'network', url: `${BASE}/generating` });
    expect(error.message).toBe(
      `POST ${BASE}/generating failed: fetch failed (connect ECONNREFUSED 127.0.0.1:28600)`
    );
  });

  it('cancels the stream and ends the exchange when the consumer stops early', async () => {
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode(line({ action: 'finish_thinking' })));
      },
      cancel() {
        cancelled = true;
      }
    });
    const ends: unknown[] = [];
    const { fetch } = fakeFetch(() => new Response(stream, { status: 200 }));
    const { client } = makeClient(fetch, {
      observer: { onEnd: (url, error) => ends.push([url, error]) }
    });
    for await (const event of client.generating(REQUEST)) {
      expect(event.kind).toBe('action');
      break;
    }
    expect(cancelled).toBe(true);
    expect(ends).toEqual([[`${BASE}/generating`, undefined]]);
  });

  it('tells the observer about the request, the response, each line and the end', async () => {
    const log: unknown[][] = [];
    const { fetch } = fakeFetch(() =>
      streamResponse(line({ action: 'finish_thinking' }))
    );
    const { client } = makeClient(fetch, {
      observer: {
        onRequest: (...args) => log.push(['request', ...args]),
        onResponse: (...args) => log.push(['response', ...args]),
        onLine: (...args) => log.push(['line', ...args]),
        onEnd: (...args) => log.push(['end', ...args])
      }
    });
    await collect(client.generating(REQUEST));
    const url = `${BASE}/generating`;
    expect(log).toEqual([
      ['request', url, REQUEST],
      ['response', url, 200, undefined, true],
      ['line', url, '{"action":{"action":"finish_thinking"}}'],
      ['end', url]
    ]);
  });
});

describe('PlannerClient.planning', () => {
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
      observer: { onWarning: (_endpoint, message) => seen.push(message) }
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
    const { client, sleeps, warnings } = makeClient(fetch);
    const response = await client.planning(REQUEST);
    expect(response.targetAchieved).toBe(false);
    expect(calls).toHaveLength(3);
    expect(sleeps).toEqual([10, 20]);
    expect(warnings[0]).toBe(
      `POST ${BASE}/planning failed: HTTP 500 Internal Server Error: {"error":"boom"}; retrying in 0.01 s (retry 1 of 3)`
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

describe('PlannerClient.generating waiting', () => {
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

describe('PlannerClient.checkConnection', () => {
  it('says the planner answers', async () => {
    const { fetch, calls } = fakeFetch(() => jsonResponse({ ok: true }));
    const { client } = makeClient(fetch);
    expect(await client.checkConnection()).toEqual({
      ok: true,
      status: 200,
      message: `The planner (${BASE}) answers (HTTP 200).`
    });
    expect(calls[0].url).toBe(`${BASE}/`);
    expect(calls[0].init.method).toBe('GET');
  });

  it('counts a 404 at the root as reachable', async () => {
    const { fetch } = fakeFetch(() => new Response('', { status: 404 }));
    const { client } = makeClient(fetch);
    expect(await client.checkConnection()).toMatchObject({
      ok: true,
      status: 404
    });
  });

  it('tells how to fix an unreachable planner', async () => {
    const { fetch } = fakeFetch(() => {
      throw new TypeError('fetch failed', {
        cause: new Error('connect ECONNREFUSED 127.0.0.1:28600')
      });
    });
    const { client } = makeClient(fetch);
    const check = await client.checkConnection();
    expect(check.ok).toBe(false);
    expect(check.status).toBeUndefined();
    expect(check.message).toBe(
      `The planner (${BASE}) cannot be reached: GET ${BASE}/ failed: fetch failed (connect ECONNREFUSED 127.0.0.1:28600). Start the planner, or set its URL in Settings > Notebook-BCC.`
    );
  });

  it('times out a planner that never answers', async () => {
    const { fetch } = fakeFetch(
      (_url, _index, init) =>
        new Promise<Response>((_resolve, reject) => {
          init.signal?.addEventListener('abort', () =>
            reject(new Error('aborted'))
          );
        })
    );
    const { client } = makeClient(fetch);
    const check = await client.checkConnection({ timeoutMs: 20 });
    expect(check.ok).toBe(false);
    expect(check.message).toContain('timed out');
    expect(check.message).toContain('Start the planner');
  });

  it('names the token when the planner refuses', async () => {
    const { fetch } = fakeFetch(
      () => new Response('missing or wrong bearer token', { status: 401 })
    );
    const { client } = makeClient(fetch);
    expect(await client.checkConnection()).toEqual({
      ok: false,
      status: 401,
      message: `The planner (${BASE}) refused the request (HTTP 401: missing or wrong bearer token). Check the token in Settings > Notebook-BCC.`
    });
  });

  it('reports a server error at the root as not ready', async () => {
    const { fetch } = fakeFetch(() => new Response('boom', { status: 500 }));
    const { client } = makeClient(fetch);
    expect(await client.checkConnection()).toMatchObject({
      ok: false,
      status: 500
    });
  });
});
