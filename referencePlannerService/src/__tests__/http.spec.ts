/**
 * The reference planner service over HTTP: its routes and status codes, its answers streamed as they
 * are ready, and the fault specs it takes.
 */

import {
  NdjsonLineSplitter,
  normalizeAction,
  normalizePlanningResponse
} from '../../../src/protocol';
import { parseFault } from '../faults';
import {
  deferred,
  linesOf,
  postJson,
  rawRequest,
  requestBody,
  servedPlanner,
  LOAD_STEP
} from './helpers';

describe('planner HTTP service', () => {
  const served = servedPlanner();

  describe('routes and status codes', () => {
    beforeEach(() => served.start());

    it('answers GET /health', async () => {
      const res = await fetch(`${served.server.url}/health`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ status: 'ok', mode: 'planner' });
    });

    it('answers 404 for an unknown path and 405 for a wrong method', async () => {
      const missing = await fetch(`${served.server.url}/nowhere`, {
        method: 'POST',
        body: '{}'
      });
      expect(missing.status).toBe(404);
      expect((await missing.json()).error).toMatch(/\/nowhere/);

      const wrong = await fetch(`${served.server.url}/planning`);
      expect(wrong.status).toBe(405);
      expect(wrong.headers.get('allow')).toContain('POST');
    });

    it('answers 400 naming the field for a body that does not match the schema', async () => {
      const notJson = await fetch(`${served.server.url}/planning`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{"observation":'
      });
      expect(notJson.status).toBe(400);
      expect((await notJson.json()).error).toMatch(/not valid JSON/);

      const empty = await postJson(`${served.server.url}/planning`, {});
      expect(empty.status).toBe(400);
      expect(JSON.parse(empty.text).error).toBe(
        'observation: expected an object, got nothing (the field is missing)'
      );

      const noLocation = await postJson(`${served.server.url}/planning`, {
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
      const res = await postJson(`${served.server.url}/planning`, badFeedback);
      expect(res.status).toBe(400);
      expect(JSON.parse(res.text).error).toMatch(
        /behavior_feedback\.actions_executed/
      );

      const badGenerating = await postJson(`${served.server.url}/generating`, {
        observation: { location: 'here' }
      });
      expect(badGenerating.status).toBe(400);
      expect(JSON.parse(badGenerating.text).error).toMatch(
        /observation\.location/
      );
    });

    it('logs one line per request with method, path, status and time', async () => {
      await fetch(`${served.server.url}/health`);
      await postJson(`${served.server.url}/planning`, requestBody());
      await new Promise(resolve => setTimeout(resolve, 20));
      expect(served.logLines).toHaveLength(2);
      expect(served.logLines[0]).toMatch(/^GET \/health 200 \d+ms$/);
      expect(served.logLines[1]).toMatch(/^POST \/planning 200 \d+ms$/);
    });
  });

  describe('answers', () => {
    beforeEach(() => served.start());

    it('answers /planning with a valid planning response', async () => {
      const res = await postJson(
        `${served.server.url}/planning`,
        requestBody()
      );
      expect(res.status).toBe(200);
      const normalized = normalizePlanningResponse(JSON.parse(res.text));
      expect(normalized.ok).toBe(true);
    });

    it('streams /generating as NDJSON, one valid {"action": ...} per line', async () => {
      const res = await postJson(
        `${served.server.url}/generating`,
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
        `${served.server.url}/generating`,
        requestBody({ ...LOAD_STEP, stream: false })
      );
      expect(batch.headers['content-type']).toMatch(/application\/json/);
      const { actions } = JSON.parse(batch.text) as { actions: unknown[] };
      expect(actions.length).toBeGreaterThan(3);
      const alias = await postJson(
        `${served.server.url}/generate`,
        requestBody({ ...LOAD_STEP, stream: false })
      );
      expect(alias.status).toBe(200);
      expect(JSON.parse(alias.text)).toEqual({ actions });
    });
  });

  it('flushes each action as it is ready: the first line arrives while the rest is held back', async () => {
    const gate = deferred();
    let heldAt = -1;
    await served.start({
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
    const res = await rawRequest(`${served.server.url}/generating`, {
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
