import {
  BASE,
  REQUEST,
  encoder,
  fakeFetch,
  controlledBody,
  streamResponse,
  line,
  makeClient,
  collect,
  actionsOf,
  warningsOf,
  failureOf
} from './clientFixtures';
import { msg } from '../messages';

describe('DslcAdapter.generating', () => {
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
    expect(events[0]).toMatchObject({
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
        message: `POST ${BASE}/generating answered 404; trying ${BASE}/generate`,
        text: msg(
          'generatingNotFound',
          `POST ${BASE}/generating`,
          `${BASE}/generate`
        )
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
    expect(error.text).toEqual(
      msg('requestFailed', `POST ${BASE}/generate`, 'HTTP 404: nope')
    );
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
    expect(error.text).toEqual(
      msg('firstByteTimeout', `POST ${BASE}/generating`, 0.03)
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
