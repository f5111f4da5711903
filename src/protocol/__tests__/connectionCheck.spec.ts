/**
 * Whether a planner answers at its root, whatever its dialect (the Run dialog, Test connection): what
 * each answer means to a user, in words they can act on.
 */

import { checkConnection } from '../connectionCheck';
import { msg } from '../messages';
import { BASE, fakeFetch, jsonResponse, makeClient } from './clientFixtures';

describe('checkConnection, on the planner root', () => {
  it('says the planner answers', async () => {
    const { fetch, calls } = fakeFetch(() => jsonResponse({ ok: true }));
    const { client } = makeClient(fetch);
    expect(await checkConnection(client.transport)).toEqual({
      ok: true,
      status: 200,
      message: `The planner (${BASE}) answers (HTTP 200).`,
      text: msg('connectionOk', BASE, 200)
    });
    expect(calls[0].url).toBe(`${BASE}/`);
    expect(calls[0].init.method).toBe('GET');
  });

  it.each([
    ['a 404 at the root counts as reachable', 404, '', true],
    ['a server error at the root is not ready', 500, 'boom', false]
  ])('%s', async (_case, status, body, ok) => {
    const { fetch } = fakeFetch(() => new Response(body, { status }));
    const { client } = makeClient(fetch);
    expect(await checkConnection(client.transport)).toMatchObject({
      ok,
      status
    });
  });

  it('tells how to fix an unreachable planner', async () => {
    const { fetch } = fakeFetch(() => {
      throw new TypeError('fetch failed', {
        cause: new Error('connect ECONNREFUSED 127.0.0.1:28600')
      });
    });
    const { client } = makeClient(fetch);
    const check = await checkConnection(client.transport);
    expect(check.ok).toBe(false);
    expect(check.status).toBeUndefined();
    expect(check.message).toBe(
      `The planner (${BASE}) cannot be reached: GET ${BASE}/ failed: fetch failed (connect ECONNREFUSED 127.0.0.1:28600). Start the planner, or set its URL in Settings > Notebook-BCC.`
    );
    // The cause stays as the system said it; the sentences around it are ids.
    expect(check.text).toEqual(
      msg(
        'connectionUnreachable',
        BASE,
        msg(
          'requestFailed',
          `GET ${BASE}/`,
          'fetch failed (connect ECONNREFUSED 127.0.0.1:28600)'
        )
      )
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
    const check = await checkConnection(client.transport, { timeoutMs: 20 });
    expect(check.ok).toBe(false);
    expect(check.message).toContain('timed out');
    expect(check.message).toContain('Start the planner');
  });

  it('names the token when the planner refuses', async () => {
    const { fetch } = fakeFetch(
      () => new Response('missing or wrong bearer token', { status: 401 })
    );
    const { client } = makeClient(fetch);
    expect(await checkConnection(client.transport)).toEqual({
      ok: false,
      status: 401,
      message: `The planner (${BASE}) refused the request (HTTP 401: missing or wrong bearer token). Check the token in Settings > Notebook-BCC.`,
      text: msg(
        'connectionRefused',
        BASE,
        'HTTP 401: missing or wrong bearer token'
      )
    });
  });
});
