import { DEFAULT_SETTINGS, IRunSettings } from '../../engine/settings';
import { msg, say } from '../../protocol/messages';
import { ServerConnection } from '@jupyterlab/services';
import { DslcAdapter, type IPlannerRequest } from '../../protocol';
import { PlannerConnection } from '../plannerConnection';
import {
  createPlannerTransport,
  fetchRelayConfig,
  isDemoConfig,
  ORIGIN_HEADER
} from '../relayTransport';
import { toRunSettings } from '../settings';
import {
  engineRequest,
  REFLECT_RUNNING,
  scripted
} from '../../protocol/dialects/__tests__/bccFixtures';
import { collect, text } from '../../protocol/dialects/__tests__/fakeTransport';

// JupyterLab's browsers have it; the test environment may not (the v1 adapter saves a copy of its state).
globalThis.structuredClone ??= <T>(value: T): T =>
  JSON.parse(JSON.stringify(value)) as T;

const ANSWER = JSON.stringify({ targetAchieved: true });
const request = () => ({ observation: { location: {} } });

function respond(status: number, headers: Record<string, string> = {}) {
  return {
    ok: status < 400,
    status,
    headers: new Headers(headers),
    text: async () => (status === 200 ? ANSWER : '{"error":"busy"}'),
    json: async () => JSON.parse(status === 200 ? ANSWER : '{}'),
    body: null
  } as unknown as Response;
}

describe('PlannerConnection', () => {
  let settings: IRunSettings;
  const calls: { url: string; headers: Record<string, string> }[] = [];
  let answers: Response[];
  const service = new PlannerConnection({
    settings: () => settings,
    notebookId: () => 'work/analysis.ipynb',
    fetch: async (url, init) => {
      calls.push({ url, headers: init.headers as Record<string, string> });
      return answers.shift() ?? respond(200);
    }
  });
  const request = { observation: { location: {} } };

  beforeEach(() => {
    settings = { ...DEFAULT_SETTINGS, baseUrl: 'http://planner.test' };
    calls.length = 0;
    answers = [];
    jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  });

  it('sends the notebook path as the session id, and the token', async () => {
    settings = { ...settings, token: 'secret' };
    await service.planning(request);
    expect(calls[0].url).toBe('http://planner.test/planning');
    const headers = new Headers(calls[0].headers);
    expect(headers.get('X-Notebook-Id')).toBe('work/analysis.ipynb');
    expect(headers.get('Authorization')).toBe('Bearer secret');
  });

  it('follows a changed base URL at the next request', async () => {
    await service.planning(request);
    settings = { ...settings, baseUrl: 'http://other.test' };
    await service.planning(request);
    expect(calls.map(c => c.url)).toEqual([
      'http://planner.test/planning',
      'http://other.test/planning'
    ]);
  });

  it('tells the run why it waits when the planner asks to retry later', async () => {
    answers = [respond(429, { 'Retry-After': '0' }), respond(200)];
    const warnings: string[] = [];
    const answer = await service.planning(request, {
      onWarning: warning => warnings.push(warning.message)
    });
    expect(answer.targetAchieved).toBe(true);
    expect(calls).toHaveLength(2);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/429.*retrying/);
  });
});

/** A planner on a root of its own (the dialect cache is per root), recording what it is sent. */
function planner(
  answer: (url: string, init: RequestInit) => Promise<Response> | Response
) {
  const root = `http://planner-${++roots}.test`;
  // The settings as JupyterLab holds them: the run's are read from them, the dialects' too.
  let composite: Record<string, unknown> = { baseUrl: root };
  const calls: { url: string; init: RequestInit }[] = [];
  const service = new PlannerConnection({
    settings: () => toRunSettings(composite),
    pluginSettings: () => composite,
    notebookId: () => '数据分析.ipynb',
    fetch: async (url, init) => {
      calls.push({ url, init });
      return answer(url, init);
    }
  });
  return {
    root,
    service,
    calls,
    set: (changes: Record<string, unknown>) => {
      composite = { ...composite, ...changes };
    }
  };
}
let roots = 0;

const planningAnswer = () =>
  new Response(JSON.stringify({ targetAchieved: true }), {
    status: 200,
    headers: { 'Content-Type': 'application/json' }
  });

describe('PlannerConnection: the dialect façade', () => {
  beforeEach(() => {
    jest.spyOn(console, 'debug').mockImplementation(() => undefined);
  });

  it('detects the dialect with the notebook id on the probe, and keeps it', async () => {
    const { service, calls, root } = planner(planningAnswer);
    expect(service.dialect).toBeNull();
    await service.planning(request());
    expect(service.dialect).toBe('dslc');
    expect(calls[0].url).toBe(`${root}/planning`);
    const header = new Headers(calls[0].init.headers).get('X-Notebook-Id');
    expect(decodeURIComponent(header ?? '')).toBe('数据分析.ipynb');
    // The probe is a planning request like any other: the id is in its body too.
    expect(JSON.parse(String(calls[0].init.body)).notebook_id).toBe(
      '数据分析.ipynb'
    );
    await service.planning(request());
    expect(calls).toHaveLength(2);
  });

  it('keeps the dialect when a timeout changes, and detects again for another planner', async () => {
    const { service, set } = planner(planningAnswer);
    await service.planning(request());
    set({ firstByteTimeout: 42 });
    expect(service.dialect).toBe('dslc');
    set({ protocol: 'v1' });
    expect(service.saveState()).toMatchObject({ dialect: null });
    expect(service.dialect).toBeNull();
  });

  it('hands the engine the dslc adapter once detection chose it, the current one after a timeout changes', async () => {
    const { service, set } = planner(planningAnswer);
    expect(service.adapter()).toBeNull();
    await service.planning(request());
    const adapter = service.adapter();
    expect(adapter).toBeInstanceOf(DslcAdapter);
    expect(service.adapter()).toBe(adapter);
    set({ firstByteTimeout: 42 });
    expect(service.adapter()).toBeInstanceOf(DslcAdapter);
    expect(service.adapter()).not.toBe(adapter);
  });

  it('saves, restores and resets the dialect state through the façade', () => {
    const { service, set, root } = planner(planningAnswer);
    set({ protocol: 'v1' });
    service.restoreState({ dialect: 'v1', root, adapter: undefined });
    expect(service.dialect).toBe('v1');
    expect(service.saveState()).toMatchObject({ dialect: 'v1' });
    service.resetState();
    expect(service.dialect).toBeNull();
  });

  it('starts a v1 run without a template at the entry point of the settings', async () => {
    const { service, set, calls } = planner(planningAnswer);
    set({ protocol: 'v1', v1EntryStage: 'intro', v1EntryStep: 'plan_it' });
    const answer = await service.planning(request());
    expect(service.dialect).toBe('v1');
    expect(
      answer.context_update?.workflow_update?.workflowTemplate?.stages
    ).toMatchObject([{ id: 'intro', steps: [{ id: 'plan_it' }] }]);
    expect(calls).toHaveLength(0);
  });
});

describe('PlannerConnection: what the views see', () => {
  it('reports the wait for the first byte, then its end', async () => {
    let release: (response: Response) => void = () => undefined;
    const { service } = planner(
      () => new Promise<Response>(resolve => (release = resolve))
    );
    const seen: (number | null)[] = [];
    service.changed.connect(() => seen.push(service.waitingSince));
    const before = Date.now();
    const pending = service.planning(request());
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(service.waitingSince).toBeGreaterThanOrEqual(before);
    release(planningAnswer());
    await pending;
    expect(service.waitingSince).toBeNull();
    expect(seen.some(time => time !== null)).toBe(true);
    expect(seen[seen.length - 1]).toBeNull();
  });

  it('checks the connection: an answer is reachable, a refusal says what to do', async () => {
    const up = planner(() => new Response('{}', { status: 200 }));
    expect(await up.service.checkConnection()).toMatchObject({ ok: true });
    expect(up.calls[0].init.method).toBe('GET');
    const down = planner(() =>
      Promise.reject(new TypeError('Failed to fetch'))
    );
    const check = await down.service.checkConnection();
    expect(check.ok).toBe(false);
    expect(check.message).toContain(
      'Start the planner, or set its URL in Settings > Notebook-BCC'
    );
  });

  it('names the relay as a message the panel translates, in its location and in the connection check', async () => {
    const label = say('relayLabel', 'http://lab.test/notebook-bcc/relay');
    const service = new PlannerConnection({
      settings: () => DEFAULT_SETTINGS,
      notebookId: () => 'a.ipynb',
      transport: () => ({
        label: label.message,
        labelText: label.text,
        urlOf: path => `http://lab.test/notebook-bcc/relay/${path}`,
        send: () => Promise.reject(new TypeError('Failed to fetch'))
      })
    });
    expect(service.location).toMatchObject({
      via: label.message,
      viaText: label.text
    });
    const check = await service.checkConnection();
    expect(check.text).toEqual(
      msg(
        'connectionUnreachable',
        label.text,
        msg(
          'requestFailed',
          'GET http://lab.test/notebook-bcc/relay/',
          'Failed to fetch'
        )
      )
    );
  });

  it('says where the planner is: the transport, then what the relay answers', async () => {
    const where = jest.fn(async () => ({
      url: 'http://planner.internal:28600',
      source: 'server'
    }));
    const settings = { ...DEFAULT_SETTINGS, baseUrl: 'http://localhost:28600' };
    const service = new PlannerConnection({
      settings: () => settings,
      notebookId: () => 'a.ipynb',
      where
    });
    const changed = new Promise<void>(resolve =>
      service.changed.connect(() => resolve())
    );
    expect(service.location).toEqual({ via: settings.baseUrl });
    await changed;
    expect(service.location).toEqual({
      via: settings.baseUrl,
      url: 'http://planner.internal:28600',
      source: 'server'
    });
    expect(where).toHaveBeenCalledTimes(1);
  });
});

describe('PlannerConnection: the server changes the planner it relays to', () => {
  it('after reconfigure(), asks the relay again which planner answers and where it is', async () => {
    let config: Record<string, unknown> = {
      planner_url: '',
      source: 'default'
    };
    const relayed: string[] = [];
    const serverSettings = ServerConnection.makeSettings({
      baseUrl: 'http://lab.test/',
      fetch: async (input: RequestInfo | URL) => {
        const url = (input as Request).url;
        // ServerConnection adds a cache-busting query to a GET.
        if (new URL(url).pathname === '/notebook-bcc/config') {
          return new Response(JSON.stringify(config), { status: 200 });
        }
        relayed.push(url);
        return new Response(ANSWER, {
          status: 200,
          headers: { [ORIGIN_HEADER]: 'planner' }
        });
      }
    });
    const demo = jest.fn(async (request: IPlannerRequest) => {
      expect(request.path).toBe('planning');
      return new Response(ANSWER, { status: 200 });
    });
    const settings = { ...DEFAULT_SETTINGS, transport: 'server' as const };
    const where = jest.fn(async () => {
      const found = await fetchRelayConfig(serverSettings);
      return found && !isDemoConfig(found)
        ? { url: found.planner_url, source: found.source, llm: found.llm! }
        : { builtin: true };
    });
    const service = new PlannerConnection({
      settings: () => settings,
      notebookId: () => 'a.ipynb',
      transport: current =>
        createPlannerTransport(current, {
          serverSettings,
          builtin: async () => ({
            label: 'demo',
            urlOf: path => `builtin://demo/${path}`,
            send: demo
          })
        }),
      where
    });
    const located = () =>
      new Promise<void>(resolve => {
        const done = () => {
          service.changed.disconnect(done);
          resolve();
        };
        service.changed.connect(done);
      });

    let next = located();
    void service.location;
    await next;
    expect(service.location?.builtin).toBe(true);
    await service.planning(request());
    expect(demo).toHaveBeenCalledTimes(1);
    expect(relayed).toEqual([]);

    // The user saved their LLM settings: the relay now serves the LLM planner.
    config = {
      planner_url: 'in-process LLM planner',
      source: 'user',
      llm: {
        model: 'gemma',
        models: ['gemma'],
        base_url: 'http://localhost:8080/v1',
        readonly: false
      }
    };
    const told = jest.fn();
    service.changed.connect(told);
    service.reconfigure();
    expect(told).toHaveBeenCalled();
    next = located();
    void service.location;
    await next;
    expect(service.location).toMatchObject({
      source: 'user',
      llm: { model: 'gemma', models: ['gemma'] }
    });
    await service.planning(request());
    expect(demo).toHaveBeenCalledTimes(1);
    expect(relayed).toEqual(['http://lab.test/notebook-bcc/relay/planning']);
  });
});

describe('toRunSettings', () => {
  it('maps the composite settings, keeping defaults for what is invalid', () => {
    const mapped = toRunSettings({
      baseUrl: ' http://host:1234/ ',
      maxExecutionSteps: 5,
      interactive: true,
      startMode: 'generation',
      executionTimeout: -3,
      followNewCells: 'yes'
    });
    expect(mapped).toMatchObject({
      baseUrl: 'http://host:1234',
      maxExecutionSteps: 5,
      interactive: true,
      startMode: 'generation',
      executionTimeout: DEFAULT_SETTINGS.executionTimeout,
      followNewCells: DEFAULT_SETTINGS.followNewCells
    });
    expect(toRunSettings({})).toEqual(DEFAULT_SETTINGS);
  });
});

describe('PlannerConnection: the bcc dialect', () => {
  it('sends notebook_id with /planning and /reflecting but not with /generating (§3.2), through the planner connection', async () => {
    const sent: { path: string; body: Record<string, unknown> }[] = [];
    const server = scripted(() => text(REFLECT_RUNNING));
    const settings: IRunSettings = {
      ...DEFAULT_SETTINGS,
      baseUrl: 'http://bcc.test',
      transport: 'browser'
    };
    const service = new PlannerConnection({
      settings: () => settings,
      pluginSettings: () => ({ protocol: 'bcc' }),
      notebookId: () => 'sales.ipynb',
      fetch: async (url, init) => {
        const path = String(url).replace('http://bcc.test/', '');
        const body = JSON.parse(String(init?.body)) as Record<string, unknown>;
        sent.push({ path, body });
        return server.send({ method: 'POST', path, body });
      }
    });
    jest.spyOn(console, 'debug').mockImplementation(() => undefined);
    await service.planning(engineRequest(null, null));
    await collect(
      service.generating(engineRequest('sales_data_check', 'load_sales'))
    );
    await service.planning(
      engineRequest('sales_data_check', 'load_sales', true)
    );
    const ids = sent.map(s => [s.path, s.body.notebook_id]);
    expect(ids).toEqual([
      ['planning', 'sales.ipynb'],
      ['planning', 'sales.ipynb'],
      ['planning', 'sales.ipynb'],
      ['generating', undefined],
      ['reflecting', 'sales.ipynb'],
      ['planning', 'sales.ipynb']
    ]);
  });
});
