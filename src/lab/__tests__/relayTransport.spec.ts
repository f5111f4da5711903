import { ServerConnection } from '@jupyterlab/services';
import { DEFAULT_SETTINGS } from '../../engine/settings';
import { DslcAdapter, PlannerError } from '../../protocol';
import {
  createPlannerTransport,
  createServerTransport
} from '../relayTransport';

const NOTEBOOK = '数据分析 📈.ipynb';

/** Server settings under a non-default base URL whose fetch records each request. */
function server(respond: (request: Request) => Response) {
  const requests: Request[] = [];
  const settings = ServerConnection.makeSettings({
    baseUrl: 'http://localhost:8888/user/alice/',
    token: 'jupyter-session-token',
    fetch: async (input: RequestInfo | URL) => {
      const request = input as Request;
      requests.push(request);
      return respond(request);
    }
  });
  return { settings, requests };
}

const planning = () =>
  new Response(JSON.stringify({ targetAchieved: true }), {
    status: 200,
    headers: { 'Content-Type': 'application/json' }
  });

describe('createServerTransport', () => {
  it('posts to the relay under the base URL with the notebook id in a safe header and in the body', async () => {
    const { settings, requests } = server(planning);
    const client = new DslcAdapter({
      transport: createServerTransport(settings),
      notebookId: NOTEBOOK,
      planningRetries: 0
    });
    const answer = await client.planning({ observation: { location: {} } });
    expect(answer.targetAchieved).toBe(true);
    const request = requests[0];
    expect(request.method).toBe('POST');
    expect(request.url).toBe(
      'http://localhost:8888/user/alice/notebook-bcc/relay/planning'
    );
    const header = request.headers.get('X-Notebook-Id') ?? '';
    expect(header).toMatch(/^[\x21-\x7E]+$/);
    expect(decodeURIComponent(header)).toBe(NOTEBOOK);
    expect(await request.json()).toEqual({
      observation: { location: {} },
      notebook_id: NOTEBOOK
    });
  });

  it("sends JupyterLab's auth and never a planner token", async () => {
    const { settings, requests } = server(planning);
    const transport = createPlannerTransport(
      { ...DEFAULT_SETTINGS, transport: 'server', token: 'planner-secret' },
      { serverSettings: settings }
    );
    await new DslcAdapter({ transport }).planning({
      observation: { location: {} }
    });
    expect(requests[0].headers.get('Authorization')).toBe(
      'token jupyter-session-token'
    );
    const all = [...requests[0].headers.entries()].flat().join(' ');
    expect(all).not.toContain('planner-secret');
  });

  it("turns the relay's 502 into a network error naming the planner and the cause", async () => {
    const message =
      'cannot reach the planner at http://localhost:28600/planning: connection refused';
    const { settings, requests } = server(
      () =>
        new Response(JSON.stringify({ message }), {
          status: 502,
          headers: {
            'Content-Type': 'application/json',
            'X-Notebook-BCC-Relay': 'relay'
          }
        })
    );
    const client = new DslcAdapter({
      transport: createServerTransport(settings),
      planningRetries: 0
    });
    const error = await client
      .planning({ observation: { location: {} } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlannerError);
    expect(error).toMatchObject({ kind: 'network', status: 502 });
    expect((error as PlannerError).message).toBe(
      `POST http://localhost:8888/user/alice/notebook-bcc/relay/planning failed: the Jupyter server could not reach the planner: ${message}`
    );
    expect(requests).toHaveLength(1);
  });

  it("passes a planner's own 502 on as an HTTP error", async () => {
    const { settings } = server(
      () =>
        new Response('<html>Bad Gateway</html>', {
          status: 502,
          headers: { 'X-Notebook-BCC-Relay': 'planner' }
        })
    );
    const client = new DslcAdapter({
      transport: createServerTransport(settings),
      planningRetries: 0
    });
    const error = await client
      .planning({ observation: { location: {} } })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'http', status: 502 });
  });

  /** The error a planning request through the relay fails with, and how many requests it made. */
  async function failure(answer: () => Response) {
    const { settings, requests } = server(answer);
    const client = new DslcAdapter({
      transport: createServerTransport(settings),
      planningRetries: 2,
      retryBaseDelayMs: 0
    });
    const error = await client
      .planning({ observation: { location: {} } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlannerError);
    return { error: error as PlannerError, requests: requests.length };
  }

  const json = (status: number, body: unknown, origin?: string) => () =>
    new Response(JSON.stringify(body), {
      status,
      headers: {
        'Content-Type': 'application/json',
        ...(origin ? { 'X-Notebook-BCC-Relay': origin } : {})
      }
    });
  const URL_ =
    'POST http://localhost:8888/user/alice/notebook-bcc/relay/planning';

  it("keeps a planner's own 502 with a message (an API gateway's) as the planner's HTTP error", async () => {
    const { error } = await failure(
      json(502, { message: 'Internal server error' }, 'planner')
    );
    expect(error).toMatchObject({ kind: 'http', status: 502 });
    expect(error.message).not.toContain('could not reach');
  });

  it('says an expired Jupyter session or a refused XSRF check is not the planner refusing', async () => {
    const { error, requests } = await failure(
      json(403, { message: "'_xsrf' argument missing from POST" }, 'relay')
    );
    expect(error).toMatchObject({
      kind: 'http',
      status: 403,
      needsAnswer: true
    });
    expect(error.message).toBe(
      `${URL_} failed: the Jupyter server refused it (HTTP 403: '_xsrf' argument missing from POST), so the planner never saw it. Your Jupyter session may have ended: reload the page, sign in again, then Retry.`
    );
    expect(requests).toBe(1);
  });

  it("keeps a planner's own 403 as the planner's", async () => {
    const { error } = await failure(
      json(403, { message: 'bad token' }, 'planner')
    );
    expect(error).toMatchObject({ kind: 'http', status: 403 });
    expect(error.message).not.toContain('Jupyter server refused');
  });

  it('says so when the Jupyter server has no relay (its own 404, without the mark)', async () => {
    const { error } = await failure(
      () => new Response('<html>404: Not Found</html>', { status: 404 })
    );
    expect(error).toMatchObject({
      kind: 'http',
      status: 404,
      needsAnswer: true
    });
    expect(error.message).toContain(
      'this Jupyter server has no Notebook-BCC relay (HTTP 404). Enable it with "jupyter server extension enable jupyterlab_notebook_bcc"'
    );
  });

  it("names a proxy's 504 in front of Jupyter and does not ask the planner again", async () => {
    const { error, requests } = await failure(
      () => new Response('<html>504 Gateway Time-out</html>', { status: 504 })
    );
    expect(error.message).toContain(
      'a proxy in front of the Jupyter server stopped waiting (HTTP 504) before the planner answered'
    );
    expect(requests).toBe(1);
  });

  it("retries a proxy's 502 in front of Jupyter and then names it", async () => {
    const { error, requests } = await failure(
      () => new Response('<html>Bad Gateway</html>', { status: 502 })
    );
    expect(error).toMatchObject({ kind: 'http', status: 502 });
    expect(error.message).toContain(
      'HTTP 502 from a proxy in front of the Jupyter server, not from the planner'
    );
    expect(requests).toBe(3);
  });

  it("keeps the planner's own 504 retryable", async () => {
    const { error, requests } = await failure(json(504, {}, 'planner'));
    expect(error).toMatchObject({ kind: 'http', status: 504 });
    expect(requests).toBe(3);
  });

  it('reads a streamed answer through the relay', async () => {
    const { settings } = server(
      () =>
        new Response(
          '{"action": {"action": "add", "content": "数据"}}\n{"action": {"action": "exec", "codecell_id": "lastAddedCellId"}}\n',
          { status: 200 }
        )
    );
    const client = new DslcAdapter({
      transport: createServerTransport(settings)
    });
    const kinds: string[] = [];
    for await (const event of client.generating({
      observation: { location: {} }
    })) {
      kinds.push(event.kind === 'action' ? event.action.action : event.kind);
    }
    expect(kinds).toEqual(['add', 'exec']);
  });
});

describe('createPlannerTransport', () => {
  it('goes straight to the planner with the bearer token in browser mode', async () => {
    const urls: string[] = [];
    const transport = createPlannerTransport(
      {
        ...DEFAULT_SETTINGS,
        transport: 'browser',
        baseUrl: 'http://planner.test',
        token: 't'
      },
      {
        fetch: async (url, init) => {
          urls.push(url);
          expect(new Headers(init.headers).get('Authorization')).toBe(
            'Bearer t'
          );
          return planning();
        }
      }
    );
    await new DslcAdapter({ transport }).planning({
      observation: { location: {} }
    });
    expect(urls).toEqual(['http://planner.test/planning']);
  });

  /** A stand-in for the built-in planner: answers every request itself and records it. */
  function demoPlanner() {
    const paths: string[] = [];
    const transport = {
      label: 'Demo planner (built in)',
      urlOf: (path: string) => `builtin://demo-planner/${path}`,
      send: async (request: { path: string }) => {
        paths.push(request.path);
        return planning();
      }
    };
    return { paths, builtin: async () => transport };
  }

  it('uses the built-in demo planner in browser mode when no URL is set', async () => {
    const demo = demoPlanner();
    const urls: string[] = [];
    const transport = createPlannerTransport(
      { ...DEFAULT_SETTINGS, transport: 'browser', baseUrl: '' },
      {
        builtin: demo.builtin,
        fetch: async url => {
          urls.push(url);
          return planning();
        }
      }
    );
    await new DslcAdapter({ transport }).planning({
      observation: { location: {} }
    });
    expect(demo.paths).toEqual(['planning']);
    expect(urls).toEqual([]);
    expect(transport.label).toBe('Demo planner (built in)');
  });

  it('uses the built-in demo planner when the relay serves no configured planner', async () => {
    const demo = demoPlanner();
    const { settings, requests } = server(request =>
      new URL(request.url).pathname.endsWith('/notebook-bcc/config')
        ? new Response(
            JSON.stringify({
              planner_url: 'http://localhost:28600',
              source: 'default',
              token_configured: false
            }),
            { status: 200, headers: { 'Content-Type': 'application/json' } }
          )
        : planning()
    );
    const transport = createPlannerTransport(
      { ...DEFAULT_SETTINGS, transport: 'server', baseUrl: '' },
      { serverSettings: settings, builtin: demo.builtin }
    );
    const client = new DslcAdapter({ transport });
    await client.planning({ observation: { location: {} } });
    await client.planning({ observation: { location: {} } });
    expect(demo.paths).toEqual(['planning', 'planning']);
    // The server was asked once, and nothing went to the relay.
    expect(requests.map(r => new URL(r.url).pathname)).toEqual([
      '/user/alice/notebook-bcc/config'
    ]);
  });

  it('goes through the relay when the user or the administrator set a planner', async () => {
    for (const source of ['user', 'server']) {
      const demo = demoPlanner();
      const { settings, requests } = server(request =>
        new URL(request.url).pathname.endsWith('/notebook-bcc/config')
          ? new Response(
              JSON.stringify({ planner_url: 'http://p.test', source }),
              { status: 200 }
            )
          : planning()
      );
      const transport = createPlannerTransport(
        { ...DEFAULT_SETTINGS, transport: 'server' },
        { serverSettings: settings, builtin: demo.builtin }
      );
      await new DslcAdapter({ transport }).planning({
        observation: { location: {} }
      });
      expect(demo.paths).toEqual([]);
      expect(requests.map(r => new URL(r.url).pathname)).toEqual([
        '/user/alice/notebook-bcc/config',
        '/user/alice/notebook-bcc/relay/planning'
      ]);
    }
  });
});
