import { request as httpRequest } from 'http';

import {
  NdjsonLineSplitter,
  normalizeAction,
  normalizePlanningResponse,
  DslcAdapter
} from '../../../src/protocol';
import { FLOOD_DELAY_MS } from '../answer';
import { parseFault } from '../faults';
import {
  IPlannerServerOptions,
  IRunningPlannerServer,
  startPlannerServer
} from '../server';
import {
  actionsOf,
  deferred,
  linesOf,
  postJson,
  rawRequest,
  requestBody
} from './helpers';

const LOAD_STEP = {
  stageId: 'data_loading',
  stepId: 'load_data',
  iteration: 1,
  stream: true
};

describe('planner HTTP service', () => {
  let server: IRunningPlannerServer;
  let logLines: string[];

  async function start(
    options: IPlannerServerOptions = {}
  ): Promise<IRunningPlannerServer> {
    logLines = [];
    server = await startPlannerServer({
      port: 0,
      lineDelayMs: 0,
      log: line => logLines.push(line),
      ...options
    });
    return server;
  }

  afterEach(async () => {
    await server?.close();
  });

  describe('routes and status codes', () => {
    beforeEach(() => start());

    it('answers GET /health', async () => {
      const res = await fetch(`${server.url}/health`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ status: 'ok', mode: 'planner' });
    });

    it('answers 404 for an unknown path and 405 for a wrong method', async () => {
      const missing = await fetch(`${server.url}/nowhere`, {
        method: 'POST',
        body: '{}'
      });
      expect(missing.status).toBe(404);
      expect((await missing.json()).error).toMatch(/\/nowhere/);

      const wrong = await fetch(`${server.url}/planning`);
      expect(wrong.status).toBe(405);
      expect(wrong.headers.get('allow')).toContain('POST');
    });

    it('answers 400 naming the field for a body that does not match the schema', async () => {
      const notJson = await fetch(`${server.url}/planning`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{"observation":'
      });
      expect(notJson.status).toBe(400);
      expect((await notJson.json()).error).toMatch(/not valid JSON/);

      const empty = await postJson(`${server.url}/planning`, {});
      expect(empty.status).toBe(400);
      expect(JSON.parse(empty.text).error).toBe(
        'observation: expected an object, got nothing (the field is missing)'
      );

      const noLocation = await postJson(`${server.url}/planning`, {
        observation: { context: {} }
      });
      expect(noLocation.status).toBe(400);
      expect(JSON.parse(noLocation.text).error).toMatch(
        /observation\.location/
      );

      const badFeedback = requestBody({
        stepId: 'load_data',
        iteration: 1,
        feedback: 'success'
      });
      (
        badFeedback.behavior_feedback as Record<string, unknown>
      ).actions_executed = 'five';
      const res = await postJson(`${server.url}/planning`, badFeedback);
      expect(res.status).toBe(400);
      expect(JSON.parse(res.text).error).toMatch(
        /behavior_feedback\.actions_executed/
      );

      const badGenerating = await postJson(`${server.url}/generating`, {
        observation: { location: 'here' }
      });
      expect(badGenerating.status).toBe(400);
      expect(JSON.parse(badGenerating.text).error).toMatch(
        /observation\.location/
      );
    });

    it('logs one line per request with method, path, status and time', async () => {
      await fetch(`${server.url}/health`);
      await postJson(`${server.url}/planning`, requestBody());
      await new Promise(resolve => setTimeout(resolve, 20));
      expect(logLines).toHaveLength(2);
      expect(logLines[0]).toMatch(/^GET \/health 200 \d+ms$/);
      expect(logLines[1]).toMatch(/^POST \/planning 200 \d+ms$/);
    });
  });

  describe('CORS, token and size limit', () => {
    it('answers a preflight and marks every answer for cross-origin use', async () => {
      await start({ token: 'secret', corsOrigins: ['http://localhost:8888'] });
      const preflight = await fetch(`${server.url}/planning`, {
        method: 'OPTIONS',
        headers: {
          Origin: 'http://localhost:8888',
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'authorization, content-type'
        }
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe(
        'http://localhost:8888'
      );
      expect(preflight.headers.get('access-control-allow-methods')).toContain(
        'POST'
      );
      const allowed = (
        preflight.headers.get('access-control-allow-headers') ?? ''
      ).toLowerCase();
      expect(allowed).toContain('authorization');
      expect(allowed).toContain('content-type');

      const denied = await fetch(`${server.url}/health`, {
        headers: { Origin: 'http://localhost:8888' }
      });
      expect(denied.headers.get('access-control-allow-origin')).toBe(
        'http://localhost:8888'
      );
    });

    it('sends no CORS headers unless an origin is named, and then only to that origin', async () => {
      const preflightFrom = (origin: string) =>
        fetch(`${server.url}/generating`, {
          method: 'OPTIONS',
          headers: {
            Origin: origin,
            'Access-Control-Request-Method': 'POST',
            'Access-Control-Request-Headers': 'content-type, x-notebook-id'
          }
        });
      await start();
      const closed = await preflightFrom('http://localhost:8888');
      expect(closed.status).toBe(204);
      expect(closed.headers.get('access-control-allow-origin')).toBeNull();
      expect(closed.headers.get('access-control-allow-headers')).toBeNull();
      const plain = await postJson(`${server.url}/planning`, requestBody(), {
        Origin: 'http://localhost:8888'
      });
      expect(plain.status).toBe(200);
      expect(plain.headers['access-control-allow-origin']).toBeUndefined();
      await server.close();

      await start({ corsOrigins: ['http://localhost:8888/'] });
      const named = await preflightFrom('http://localhost:8888');
      expect(named.headers.get('access-control-allow-origin')).toBe(
        'http://localhost:8888'
      );
      expect(
        (named.headers.get('access-control-allow-headers') ?? '').toLowerCase()
      ).toContain('x-notebook-id');
      const other = await preflightFrom('http://evil.example');
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
      const otherPost = await postJson(
        `${server.url}/planning`,
        requestBody(),
        {
          Origin: 'http://evil.example'
        }
      );
      expect(otherPost.headers['access-control-allow-origin']).toBeUndefined();
      expect(otherPost.headers.vary).toBe('Origin');
    });

    it('listens on 127.0.0.1 unless told otherwise', async () => {
      await start();
      expect(new URL(server.url).hostname).toBe('127.0.0.1');
    });

    it('requires the bearer token when one is set', async () => {
      await start({ token: 'secret' });
      const missing = await postJson(`${server.url}/planning`, requestBody());
      expect(missing.status).toBe(401);
      expect(missing.headers['www-authenticate']).toBe('Bearer');
      const wrong = await postJson(`${server.url}/planning`, requestBody(), {
        Authorization: 'Bearer nope'
      });
      expect(wrong.status).toBe(401);
      const right = await postJson(`${server.url}/planning`, requestBody(), {
        Authorization: 'Bearer secret'
      });
      expect(right.status).toBe(200);
    });

    it('answers 413 for a body over the limit', async () => {
      await start({ maxBodyBytes: 2000 });
      const body = requestBody({ variables: { padding: 'x'.repeat(5000) } });
      const res = await postJson(`${server.url}/planning`, body);
      expect(res.status).toBe(413);
      expect(JSON.parse(res.text).error).toMatch(/limit of 2000 bytes/);
      const small = await postJson(`${server.url}/planning`, requestBody());
      expect(small.status).toBe(200);
    });
  });

  describe('what a web page cannot make it do', () => {
    it('refuses a request whose Host is not one of its names (DNS rebinding), before anything else', async () => {
      await start();
      const port = server.port;
      for (const host of [
        `evil.example:${port}`,
        `127.0.0.1.evil.example:${port}`,
        `localhost.evil.example:${port}`,
        '10.0.0.7'
      ]) {
        const rebound = await rawRequest(`${server.url}/planning`, {
          body: JSON.stringify(requestBody()),
          headers: { Host: host }
        });
        expect(rebound.status).toBe(403);
        expect(JSON.parse(rebound.text).error).toBe(
          `Host "${host}" is not a name of this planner (DNS rebinding protection): ` +
            'use a loopback address (localhost, 127.0.0.1, [::1]) or the address it listens on, ' +
            'or start the planner with --allowed-host NAME'
        );
        const health = await rawRequest(`${server.url}/health`, {
          method: 'GET',
          headers: { Host: host }
        });
        expect(health.status).toBe(403);
      }
      // The session was never touched: the refused requests planned nothing.
      await new Promise(resolve => setTimeout(resolve, 20));
      expect(logLines.every(line => / 403 \d+ms$/.test(line))).toBe(true);
    });

    it('answers loopback names, the Host the relay sends (its netloc) and --allowed-host names', async () => {
      await start({ allowedHosts: ['planner.internal'] });
      const port = server.port;
      for (const host of [
        `127.0.0.1:${port}`,
        `localhost:${port}`,
        `LOCALHOST.:${port}`,
        `[::1]:${port}`,
        `planner.internal:${port}`,
        'planner.internal'
      ]) {
        const res = await rawRequest(`${server.url}/planning`, {
          body: JSON.stringify(requestBody()),
          headers: { Host: host }
        });
        expect([host, res.status]).toEqual([host, 200]);
      }
    });

    it('refuses a cross-site form or text/plain POST with 415, before reading it', async () => {
      await start();
      const body = JSON.stringify(requestBody());
      for (const type of [
        'text/plain;charset=UTF-8',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x'
      ]) {
        const res = await rawRequest(`${server.url}/planning`, {
          body,
          headers: { 'Content-Type': type }
        });
        expect(res.status).toBe(415);
        expect(JSON.parse(res.text).error).toBe(
          `send the request body as JSON (Content-Type: application/json), not ${type}`
        );
      }
      // What a browser's fetch sends for a string body without headers.
      const plain = await fetch(`${server.url}/generating`, {
        method: 'POST',
        body
      });
      expect(plain.status).toBe(415);
      const untyped = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          `${server.url}/planning`,
          { method: 'POST' },
          res => {
            res.resume();
            resolve(res.statusCode ?? 0);
          }
        );
        req.on('error', reject);
        req.end(body);
      });
      expect(untyped).toBe(415);
      const charset = await rawRequest(`${server.url}/planning`, {
        body,
        headers: { 'Content-Type': 'Application/JSON; charset=utf-8' }
      });
      expect(charset.status).toBe(200);
    });
  });

  describe('answers', () => {
    beforeEach(() => start());

    it('answers /planning with a valid planning response', async () => {
      const res = await postJson(`${server.url}/planning`, requestBody());
      expect(res.status).toBe(200);
      const normalized = normalizePlanningResponse(JSON.parse(res.text));
      expect(normalized.ok).toBe(true);
    });

    it('streams /generating as NDJSON, one valid {"action": ...} per line', async () => {
      const res = await postJson(
        `${server.url}/generating`,
        requestBody(LOAD_STEP)
      );
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/application\/x-ndjson/);
      const lines = linesOf(res.text);
      expect(lines.length).toBeGreaterThan(3);
      for (const line of lines) {
        const parsed = JSON.parse(line);
        expect(Object.keys(parsed)).toEqual(['action']);
        expect(normalizeAction(parsed.action).ok).toBe(true);
      }
    });

    it('answers {"actions": [...]} when stream is false, and under /generate too', async () => {
      const batch = await postJson(
        `${server.url}/generating`,
        requestBody({ ...LOAD_STEP, stream: false })
      );
      expect(batch.headers['content-type']).toMatch(/application\/json/);
      const { actions } = JSON.parse(batch.text) as { actions: unknown[] };
      expect(actions.length).toBeGreaterThan(3);
      const alias = await postJson(
        `${server.url}/generate`,
        requestBody({ ...LOAD_STEP, stream: false })
      );
      expect(alias.status).toBe(200);
      expect(JSON.parse(alias.text)).toEqual({ actions });
    });
  });

  it('flushes each action as it is ready: the first line arrives while the rest is held back', async () => {
    const gate = deferred();
    let heldAt = -1;
    await start({
      hooks: {
        beforeChunk: async index => {
          if (index === 1) {
            heldAt = Date.now();
            await gate.promise;
          }
        }
      }
    });
    let firstLineWhileHeld = false;
    const splitter = new NdjsonLineSplitter();
    const res = await rawRequest(`${server.url}/generating`, {
      body: JSON.stringify(requestBody(LOAD_STEP)),
      onChunk: chunk => {
        const lines = splitter.push(chunk);
        if (lines.length && heldAt >= 0 && !firstLineWhileHeld) {
          // The server is parked before line 2; this line can only have come from an earlier flush.
          firstLineWhileHeld = true;
          expect(JSON.parse(lines[0]).action.action).toBe('update_title');
          gate.resolve();
        }
      }
    });
    expect(firstLineWhileHeld).toBe(true);
    expect(res.outcome).toBe('end');
    expect(res.chunks.length).toBeGreaterThan(1);
  });

  describe('faults on the wire', () => {
    async function generatingWith(
      fault: string,
      extra: IPlannerServerOptions = {}
    ) {
      await start({ faults: [parseFault(fault)], ...extra });
      return rawRequest(`${server.url}/generating`, {
        body: JSON.stringify(requestBody(LOAD_STEP)),
        idleMs: 500
      });
    }

    it('malformed-line: one line is not JSON, the others are', async () => {
      const res = await generatingWith('malformed-line');
      const lines = linesOf(res.text);
      const bad = lines.filter(line => {
        try {
          JSON.parse(line);
          return false;
        } catch {
          return true;
        }
      });
      expect(bad).toHaveLength(1);
      expect(lines.length).toBeGreaterThan(5);
      expect(res.outcome).toBe('end');
    });

    it('split-utf8: a multibyte character arrives in two chunks and decodes intact', async () => {
      const res = await generatingWith('split-utf8');
      const boundaries: number[] = [];
      let offset = 0;
      for (const chunk of res.chunks.slice(0, -1)) {
        offset += chunk.length;
        boundaries.push(offset);
      }
      // A continuation byte (10xxxxxx) right after a boundary means the boundary cut a character.
      expect(boundaries.some(at => (res.body[at] & 0xc0) === 0x80)).toBe(true);
      expect(res.text).toContain('✓');
      expect(() => actionsOf(res.text)).not.toThrow();
    });

    it('truncated-line: the last line has no closing brace and the stream ends', async () => {
      const res = await generatingWith('truncated-line');
      expect(res.outcome).toBe('end');
      expect(res.text.endsWith('\n')).toBe(false);
      const lines = linesOf(res.text);
      expect(() => JSON.parse(lines[lines.length - 1])).toThrow();
      expect(() => actionsOf(lines.slice(0, -1).join('\n'))).not.toThrow();
    });

    it('reset: the connection breaks after part of the stream', async () => {
      const res = await generatingWith('reset');
      expect(res.status).toBe(200);
      expect(res.outcome).toBe('error');
      expect(linesOf(res.text).length).toBeGreaterThan(0);
    });

    it('stall: the first line arrives, then nothing, with the connection left open', async () => {
      const res = await generatingWith('stall');
      expect(res.outcome).toBe('timeout');
      expect(linesOf(res.text)).toHaveLength(1);
    });

    it('oversized-action: one action of about 2 MB', async () => {
      const res = await generatingWith('oversized-action');
      const actions = actionsOf(res.text);
      const big = actions.filter(
        a =>
          typeof a.content === 'string' &&
          (a.content as string).length >= 2 * 1024 * 1024
      );
      expect(big).toHaveLength(1);
    });

    it('many-warnings: 5,000 lines without an action', async () => {
      const lines = linesOf((await generatingWith('many-warnings')).text);
      const faulty = lines.filter(l => l.includes('bcc_fault_warning'));
      expect(faulty).toHaveLength(5000);
      expect(JSON.parse(faulty[0])).toEqual({
        action: null,
        bcc_fault_warning: 0
      });
    });

    it('long-line: one line of 16 MiB', async () => {
      const lines = linesOf((await generatingWith('long-line')).text);
      expect(Math.max(...lines.map(l => l.length))).toBeGreaterThan(
        16 * 1024 * 1024
      );
    });

    it('many-actions: 100,000 tiny actions', async () => {
      const actions = actionsOf((await generatingWith('many-actions')).text);
      expect(
        actions.filter(a => a.event_type === 'bcc_fault_tick')
      ).toHaveLength(100_000);
    });

    it('paused-flood: 10 MiB of actions after a pause', async () => {
      await start({ faults: [parseFault('paused-flood=200000')] });
      const started = Date.now();
      const res = await rawRequest(`${server.url}/generating`, {
        body: JSON.stringify(requestBody(LOAD_STEP)),
        idleMs: FLOOD_DELAY_MS + 2000
      });
      expect(Date.now() - started).toBeGreaterThanOrEqual(FLOOD_DELAY_MS);
      const flood = actionsOf(res.text).filter(
        a =>
          typeof a.event_type === 'string' &&
          a.event_type.startsWith('bcc_fault_flood')
      );
      expect(flood.length).toBe(20);
    });

    it('bad-pattern: a /planning answer with an exponential effects pattern', async () => {
      await start({ faults: [parseFault('bad-pattern')] });
      const res = await postJson(`${server.url}/planning`, requestBody());
      const body = JSON.parse(res.text) as {
        context_filter?: { effects_config?: { patterns?: unknown } };
      };
      expect(body.context_filter?.effects_config?.patterns).toEqual({
        include: ['(a+)+$', '.']
      });
    });

    it('unknown-action: an action type the protocol does not define', async () => {
      const actions = actionsOf((await generatingWith('unknown-action')).text);
      const unknown = actions.filter(
        a => a.action === 'bcc_fault_unknown_action'
      );
      expect(unknown).toHaveLength(1);
      expect(normalizeAction(unknown[0]).ok).toBe(true);
    });

    it('missing-field: an exec without its required codecell_id', async () => {
      const actions = actionsOf((await generatingWith('missing-field')).text);
      const broken = actions.filter(
        a => a.action === 'exec' && !('codecell_id' in a)
      );
      expect(broken).toHaveLength(1);
      expect(normalizeAction(broken[0]).ok).toBe(false);
    });

    it('http-500 and http-429 with Retry-After, on the Nth request only', async () => {
      await start({
        faults: [parseFault('http-500@2'), parseFault('http-429=7@3')]
      });
      const statuses: number[] = [];
      let retryAfter: unknown;
      for (let i = 0; i < 4; i++) {
        const res = await postJson(`${server.url}/planning`, requestBody());
        statuses.push(res.status);
        if (res.status === 429) {
          retryAfter = res.headers['retry-after'];
        }
      }
      expect(statuses).toEqual([200, 500, 429, 200]);
      expect(retryAfter).toBe('7');
    });

    it('slow-first-byte: nothing arrives before the delay', async () => {
      await start({ faults: [parseFault('slow-first-byte=300@planning:1')] });
      const slow = await postJson(`${server.url}/planning`, requestBody());
      const fast = await postJson(`${server.url}/planning`, requestBody());
      expect(slow.status).toBe(200);
      expect(slow.headersAfterMs).toBeGreaterThanOrEqual(290);
      expect(fast.headersAfterMs).toBeLessThan(slow.headersAfterMs);
    });

    it('a stream fault on a non-streamed answer breaks the JSON body', async () => {
      await start({ faults: [parseFault('truncated-line')] });
      const res = await postJson(
        `${server.url}/generating`,
        requestBody({ ...LOAD_STEP, stream: false })
      );
      expect(() => JSON.parse(res.text)).toThrow();
    });

    it('the shared DslcAdapter reads a split character intact and reports the unknown action', async () => {
      await start({
        faults: [parseFault('split-utf8'), parseFault('unknown-action')]
      });
      const client = new DslcAdapter({
        baseUrl: server.url,
        observer: { onWarning: () => undefined }
      });
      const texts: string[] = [];
      const types: string[] = [];
      for await (const event of client.generating(requestBody(LOAD_STEP))) {
        if (event.kind === 'action') {
          types.push(event.action.action);
          const content = (event.action as { content?: unknown }).content;
          if (typeof content === 'string') {
            texts.push(content);
          }
        }
      }
      expect(texts.some(text => text.includes('Données chargées — ✓'))).toBe(
        true
      );
      expect(types).toContain('bcc_fault_unknown_action');
      expect(types).toContain('exec');
    });
  });

  describe('fault specs', () => {
    it('parses NAME[=VALUE][@[ENDPOINT:]N] and rejects unknown names', () => {
      expect(parseFault('http-429=3@2')).toEqual({
        name: 'http-429',
        value: 3,
        scope: 'any',
        nth: 2
      });
      expect(parseFault('reset')).toEqual({
        name: 'reset',
        scope: 'generating',
        nth: null
      });
      expect(parseFault('malformed-line@planning:4')).toEqual({
        name: 'malformed-line',
        scope: 'planning',
        nth: 4
      });
      expect(() => parseFault('explode')).toThrow(/unknown fault/);
      expect(() => parseFault('reset@0')).toThrow(/counts from 1/);
    });
  });
});
