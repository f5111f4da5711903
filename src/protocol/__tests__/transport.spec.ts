import {
  asciiHeaderValue,
  createBrowserTransport,
  DslcAdapter,
  PlannerError
} from '..';

const NOTEBOOK = '数据分析 📈.ipynb';

describe('asciiHeaderValue', () => {
  it.each([
    NOTEBOOK,
    'Übersicht.ipynb',
    'my notebook 100%.ipynb',
    'work/analysis.ipynb'
  ])('makes %s ASCII and decodable', value => {
    const safe = asciiHeaderValue(value);
    expect(safe).toMatch(/^[\x21-\x7E]*$/);
    expect(decodeURIComponent(safe)).toBe(value);
    expect(() => new Headers({ 'X-Notebook-Id': safe })).not.toThrow();
  });

  it('leaves a plain id as it is', () => {
    expect(asciiHeaderValue('work/analysis.ipynb')).toBe('work/analysis.ipynb');
  });
});

describe('createBrowserTransport', () => {
  function recording() {
    const calls: { url: string; init: RequestInit }[] = [];
    const fetch = async (url: string, init: RequestInit) => {
      calls.push({ url, init });
      return new Response('{}', { status: 200 });
    };
    return { calls, fetch };
  }

  it('posts JSON with the bearer token and safe headers', async () => {
    const { calls, fetch } = recording();
    const transport = createBrowserTransport({
      baseUrl: 'http://planner.test/',
      token: ' t0k ',
      fetch
    });
    await transport.send({
      method: 'POST',
      path: 'v1/actions',
      body: { a: 1 },
      headers: { 'X-Notebook-Id': NOTEBOOK }
    });
    expect(calls[0].url).toBe('http://planner.test/v1/actions');
    expect(calls[0].init.method).toBe('POST');
    expect(calls[0].init.body).toBe('{"a":1}');
    const headers = calls[0].init.headers as Record<string, string>;
    expect(headers).toMatchObject({
      Authorization: 'Bearer t0k',
      'Content-Type': 'application/json'
    });
    expect(decodeURIComponent(headers['X-Notebook-Id'])).toBe(NOTEBOOK);
    expect(transport.label).toBe('http://planner.test');
    expect(transport.urlOf('planning')).toBe('http://planner.test/planning');
  });

  it('sends a GET without a body or a content type', async () => {
    const { calls, fetch } = recording();
    await createBrowserTransport({ fetch }).send({ method: 'GET', path: '' });
    expect(calls[0].url).toBe('http://localhost:28600/');
    expect(calls[0].init.body).toBeUndefined();
    expect(calls[0].init.headers).not.toHaveProperty('Content-Type');
    expect(calls[0].init.headers).not.toHaveProperty('Authorization');
  });

  it('never sends a body that cannot be serialized', async () => {
    const { calls, fetch } = recording();
    const body: Record<string, unknown> = {};
    body.self = body;
    const error = await createBrowserTransport({ fetch })
      .send({ method: 'POST', path: 'planning', body })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlannerError);
    expect(error).toMatchObject({ kind: 'invalid' });
    expect(calls).toHaveLength(0);
  });
});

describe('DslcAdapter with a notebook id', () => {
  it('sends it percent-encoded in X-Notebook-Id and as notebook_id in the body', async () => {
    const seen: { url: string; init: RequestInit }[] = [];
    const client = new DslcAdapter({
      baseUrl: 'http://planner.test',
      notebookId: NOTEBOOK,
      fetch: async (url, init) => {
        seen.push({ url, init });
        return new Response('{"targetAchieved": true}', { status: 200 });
      }
    });
    await client.planning({ observation: { location: {} } });
    const headers = new Headers(seen[0].init.headers);
    expect(decodeURIComponent(headers.get('X-Notebook-Id') ?? '')).toBe(
      NOTEBOOK
    );
    expect(JSON.parse(String(seen[0].init.body))).toEqual({
      observation: { location: {} },
      notebook_id: NOTEBOOK
    });
  });

  it('says how many characters the id adds to a body, so the engine can fit the rest', async () => {
    const bodies: string[] = [];
    const client = new DslcAdapter({
      baseUrl: 'http://planner.test',
      notebookId: NOTEBOOK,
      fetch: async (_, init) => {
        bodies.push(String(init.body));
        return new Response('{"targetAchieved": true}', { status: 200 });
      }
    });
    const request = { observation: { location: {} } };
    await client.planning(request);
    expect(bodies[0].length).toBeLessThanOrEqual(
      JSON.stringify(request).length + client.requestOverhead()
    );
    expect(new DslcAdapter({}).requestOverhead()).toBe(0);
  });
});
