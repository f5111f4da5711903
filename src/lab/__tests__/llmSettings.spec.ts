import { ServerConnection } from '@jupyterlab/services';
import {
  LlmSettingsError,
  LlmSettingsService,
  readLlmChoice,
  serverPlannerChanged
} from '../llmSettings';

interface ISeen {
  method: string;
  path: string;
  body: unknown;
  headers: Headers;
}

/** Server settings under a non-default base URL whose fetch records each request and answers `respond`. */
function server(respond: (seen: ISeen) => Response) {
  const seen: ISeen[] = [];
  const settings = ServerConnection.makeSettings({
    baseUrl: 'http://localhost:8888/user/alice/',
    token: 'jupyter-session-token',
    fetch: async (input: RequestInfo | URL) => {
      const request = input as Request;
      const text = await request.text();
      const one = {
        method: request.method,
        path: new URL(request.url).pathname,
        body: text ? JSON.parse(text) : undefined,
        headers: request.headers
      };
      seen.push(one);
      return respond(one);
    }
  });
  return { service: new LlmSettingsService(settings), seen };
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json' }
  });

const STORED = {
  source: 'user',
  readonly: false,
  base_url: 'http://localhost:8080/v1',
  model: 'gemma',
  models: ['gemma', 'qwen'],
  api_key_set: true
};

describe('LlmSettingsService', () => {
  it('reads the settings under the base URL, with JupyterLab auth', async () => {
    const { service, seen } = server(() => json(STORED));
    expect(await service.get()).toEqual(STORED);
    expect(seen[0].method).toBe('GET');
    expect(seen[0].path).toBe('/user/alice/notebook-bcc/llm/settings');
    expect(seen[0].headers.get('Authorization')).toBe(
      'token jupyter-session-token'
    );
  });

  it('reads what the server left out as empty, and an unknown source as none', async () => {
    const { service } = server(() => json({ source: 'elsewhere' }));
    expect(await service.get()).toEqual({
      source: 'none',
      readonly: false,
      base_url: '',
      model: '',
      models: [],
      api_key_set: false
    });
  });

  it('saves with PUT, the key only when given, and tells every planner that the server planner changed', async () => {
    const { service, seen } = server(() => json(STORED));
    const changed = jest.fn();
    const announced = jest.fn();
    service.changed.connect(changed);
    serverPlannerChanged.connect(announced);
    try {
      const saved = await service.save({
        base_url: 'http://localhost:8080/v1',
        model: 'gemma',
        api_key: 'sk-secret'
      });
      expect(saved).toEqual(STORED);
      expect(seen[0]).toMatchObject({
        method: 'PUT',
        path: '/user/alice/notebook-bcc/llm/settings',
        body: {
          base_url: 'http://localhost:8080/v1',
          model: 'gemma',
          api_key: 'sk-secret'
        }
      });
      expect(seen[0].headers.get('Content-Type')).toBe('application/json');
      expect(changed).toHaveBeenCalledWith(service, STORED);
      expect(announced).toHaveBeenCalledTimes(1);
    } finally {
      serverPlannerChanged.disconnect(announced);
    }
  });

  it("gives the server's message when it refuses, and announces nothing", async () => {
    const { service } = server(() =>
      json(
        {
          message:
            'The administrator configured the LLM planner: it cannot be changed here.'
        },
        403
      )
    );
    const announced = jest.fn();
    serverPlannerChanged.connect(announced);
    try {
      const saving = service.save({ base_url: 'http://x', model: 'm' });
      await expect(saving).rejects.toThrow(
        'The administrator configured the LLM planner: it cannot be changed here.'
      );
      await expect(saving).rejects.toBeInstanceOf(LlmSettingsError);
      await expect(saving).rejects.toMatchObject({ status: 403 });
      expect(announced).not.toHaveBeenCalled();
    } finally {
      serverPlannerChanged.disconnect(announced);
    }
  });

  it('says the status when the refusal has no message (a server without the routes)', async () => {
    const { service } = server(
      () =>
        new Response('<html>404</html>', {
          status: 404,
          statusText: 'Not Found'
        })
    );
    await expect(service.get()).rejects.toThrow('HTTP 404 Not Found');
  });

  it('removes with DELETE (204, no body) and announces it', async () => {
    const { service, seen } = server(() => new Response(null, { status: 204 }));
    const announced = jest.fn();
    serverPlannerChanged.connect(announced);
    try {
      await service.remove();
      expect(seen[0]).toMatchObject({
        method: 'DELETE',
        path: '/user/alice/notebook-bcc/llm/settings'
      });
      expect(announced).toHaveBeenCalledTimes(1);
    } finally {
      serverPlannerChanged.disconnect(announced);
    }
  });

  it("tests with POST and gives the server's sentence", async () => {
    const { service, seen } = server(() =>
      json({
        ok: false,
        message:
          'The endpoint refused the API key (HTTP 401): check the API key'
      })
    );
    expect(await service.test({ model: 'gemma' })).toEqual({
      ok: false,
      message: 'The endpoint refused the API key (HTTP 401): check the API key'
    });
    expect(seen[0]).toMatchObject({
      method: 'POST',
      path: '/user/alice/notebook-bcc/llm/test',
      body: { model: 'gemma' }
    });
  });

  it('gives the model that answered and whether the endpoint serves the one named', async () => {
    const { service } = server(() =>
      json({
        ok: false,
        message:
          'The endpoint at http://localhost:8080/v1 serves qwen, not gpt-4o: qwen answered',
        model: 'qwen',
        models: ['qwen'],
        served: false,
        action: 'open-llm-settings'
      })
    );
    expect(await service.test({ model: 'gpt-4o' })).toEqual({
      ok: false,
      message:
        'The endpoint at http://localhost:8080/v1 serves qwen, not gpt-4o: qwen answered',
      model: 'qwen',
      models: ['qwen'],
      served: false
    });
  });

  it("reads the models a run may pick from the relay's config", async () => {
    const { service, seen } = server(() =>
      json({
        planner_url: 'in process',
        source: 'server',
        llm: {
          model: 'gemma',
          models: ['qwen', 'gemma'],
          base_url: 'http://localhost:8080/v1',
          readonly: true
        }
      })
    );
    expect(await service.choice()).toEqual({
      model: 'gemma',
      models: ['qwen', 'gemma'],
      base_url: 'http://localhost:8080/v1',
      readonly: true
    });
    expect(seen[0].path).toBe('/user/alice/notebook-bcc/config');
  });

  it('has no choice without an LLM planner, or when the server cannot say', async () => {
    jest.spyOn(console, 'debug').mockImplementation(() => undefined);
    const none = server(() =>
      json({ planner_url: 'http://x', source: 'default' })
    );
    expect(await none.service.choice()).toBeNull();
    const down = server(() => json({ message: 'boom' }, 500));
    expect(await down.service.choice()).toBeNull();
  });
});

describe('readLlmChoice', () => {
  it('puts the default model among the models a run may pick', () => {
    expect(readLlmChoice({ model: 'gemma' })).toEqual({
      model: 'gemma',
      models: ['gemma'],
      base_url: '',
      readonly: false
    });
    expect(
      readLlmChoice({ model: 'gemma', models: ['qwen', 7] })?.models
    ).toEqual(['gemma', 'qwen']);
  });

  it('is null without a model', () => {
    expect(readLlmChoice(undefined)).toBeNull();
    expect(readLlmChoice({ models: ['qwen'] })).toBeNull();
  });
});
