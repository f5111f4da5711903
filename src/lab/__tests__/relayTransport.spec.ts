import { ServerConnection } from '@jupyterlab/services';
import { DEFAULT_SETTINGS } from '../../engine/settings';
import { PlannerClient, PlannerError } from '../../protocol';
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
    const client = new PlannerClient({
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
    await new PlannerClient({ transport }).planning({
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
          headers: { 'Content-Type': 'application/json' }
        })
    );
    const client = new PlannerClient({
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
      () => new Response('<html>Bad Gateway</html>', { status: 502 })
    );
    const client = new PlannerClient({
      transport: createServerTransport(settings),
      planningRetries: 0
    });
    const error = await client
      .planning({ observation: { location: {} } })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'http', status: 502 });
  });

  it('reads a streamed answer through the relay', async () => {
    const { settings } = server(
      () =>
        new Response(
          '{"action": {"action": "add", "content": "数据"}}\n{"action": {"action": "exec", "codecell_id": "lastAddedCellId"}}\n',
          { status: 200 }
        )
    );
    const client = new PlannerClient({
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
    await new PlannerClient({ transport }).planning({
      observation: { location: {} }
    });
    expect(urls).toEqual(['http://planner.test/planning']);
  });
});
