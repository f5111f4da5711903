/**
 * What the reference planner service lets through (docs/transport.md#the-reference-planner): CORS,
 * the token, the size limit, and what a web page cannot make it do.
 */

import { request as httpRequest } from 'http';
import { postJson, rawRequest, requestBody, servedPlanner } from './helpers';

describe('planner HTTP service', () => {
  const served = servedPlanner();

  describe('CORS, token and size limit', () => {
    it('answers a preflight and marks every answer for cross-origin use', async () => {
      await served.start({
        token: 'secret',
        corsOrigins: ['http://localhost:8888']
      });
      const preflight = await fetch(`${served.server.url}/planning`, {
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

      const denied = await fetch(`${served.server.url}/health`, {
        headers: { Origin: 'http://localhost:8888' }
      });
      expect(denied.headers.get('access-control-allow-origin')).toBe(
        'http://localhost:8888'
      );
    });

    it('sends no CORS headers unless an origin is named, and then only to that origin', async () => {
      const preflightFrom = (origin: string) =>
        fetch(`${served.server.url}/generating`, {
          method: 'OPTIONS',
          headers: {
            Origin: origin,
            'Access-Control-Request-Method': 'POST',
            'Access-Control-Request-Headers': 'content-type, x-notebook-id'
          }
        });
      await served.start();
      const closed = await preflightFrom('http://localhost:8888');
      expect(closed.status).toBe(204);
      expect(closed.headers.get('access-control-allow-origin')).toBeNull();
      expect(closed.headers.get('access-control-allow-headers')).toBeNull();
      const plain = await postJson(
        `${served.server.url}/planning`,
        requestBody(),
        {
          Origin: 'http://localhost:8888'
        }
      );
      expect(plain.status).toBe(200);
      expect(plain.headers['access-control-allow-origin']).toBeUndefined();
      await served.server.close();

      await served.start({ corsOrigins: ['http://localhost:8888/'] });
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
        `${served.server.url}/planning`,
        requestBody(),
        {
          Origin: 'http://evil.example'
        }
      );
      expect(otherPost.headers['access-control-allow-origin']).toBeUndefined();
      expect(otherPost.headers.vary).toBe('Origin');
    });

    it('listens on 127.0.0.1 unless told otherwise', async () => {
      await served.start();
      expect(new URL(served.server.url).hostname).toBe('127.0.0.1');
    });

    it('requires the bearer token when one is set', async () => {
      await served.start({ token: 'secret' });
      const missing = await postJson(
        `${served.server.url}/planning`,
        requestBody()
      );
      expect(missing.status).toBe(401);
      expect(missing.headers['www-authenticate']).toBe('Bearer');
      const wrong = await postJson(
        `${served.server.url}/planning`,
        requestBody(),
        {
          Authorization: 'Bearer nope'
        }
      );
      expect(wrong.status).toBe(401);
      const right = await postJson(
        `${served.server.url}/planning`,
        requestBody(),
        {
          Authorization: 'Bearer secret'
        }
      );
      expect(right.status).toBe(200);
    });

    it('answers 413 for a body over the limit', async () => {
      await served.start({ maxBodyBytes: 2000 });
      const body = requestBody({ variables: { padding: 'x'.repeat(5000) } });
      const res = await postJson(`${served.server.url}/planning`, body);
      expect(res.status).toBe(413);
      expect(JSON.parse(res.text).error).toMatch(/limit of 2000 bytes/);
      const small = await postJson(
        `${served.server.url}/planning`,
        requestBody()
      );
      expect(small.status).toBe(200);
    });
  });

  describe('what a web page cannot make it do', () => {
    it('refuses a request whose Host is not one of its names (DNS rebinding), before anything else', async () => {
      await served.start();
      const port = served.server.port;
      for (const host of [
        `evil.example:${port}`,
        `127.0.0.1.evil.example:${port}`,
        `localhost.evil.example:${port}`,
        '10.0.0.7'
      ]) {
        const rebound = await rawRequest(`${served.server.url}/planning`, {
          body: JSON.stringify(requestBody()),
          headers: { Host: host }
        });
        expect(rebound.status).toBe(403);
        expect(JSON.parse(rebound.text).error).toBe(
          `Host "${host}" is not a name of this planner (DNS rebinding protection): ` +
            'use a loopback address (localhost, 127.0.0.1, [::1]) or the address it listens on, ' +
            'or start the planner with --allowed-host NAME'
        );
        const health = await rawRequest(`${served.server.url}/health`, {
          method: 'GET',
          headers: { Host: host }
        });
        expect(health.status).toBe(403);
      }
      // The session was never touched: the refused requests planned nothing.
      await new Promise(resolve => setTimeout(resolve, 20));
      expect(served.logLines.every(line => / 403 \d+ms$/.test(line))).toBe(
        true
      );
    });

    it('answers loopback names, the Host the relay sends (its netloc) and --allowed-host names', async () => {
      await served.start({ allowedHosts: ['planner.internal'] });
      const port = served.server.port;
      for (const host of [
        `127.0.0.1:${port}`,
        `localhost:${port}`,
        `LOCALHOST.:${port}`,
        `[::1]:${port}`,
        `planner.internal:${port}`,
        'planner.internal'
      ]) {
        const res = await rawRequest(`${served.server.url}/planning`, {
          body: JSON.stringify(requestBody()),
          headers: { Host: host }
        });
        expect([host, res.status]).toEqual([host, 200]);
      }
    });

    it('refuses a cross-site form or text/plain POST with 415, before reading it', async () => {
      await served.start();
      const body = JSON.stringify(requestBody());
      for (const type of [
        'text/plain;charset=UTF-8',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x'
      ]) {
        const res = await rawRequest(`${served.server.url}/planning`, {
          body,
          headers: { 'Content-Type': type }
        });
        expect(res.status).toBe(415);
        expect(JSON.parse(res.text).error).toBe(
          `send the request body as JSON (Content-Type: application/json), not ${type}`
        );
      }
      // What a browser's fetch sends for a string body without headers.
      const plain = await fetch(`${served.server.url}/generating`, {
        method: 'POST',
        body
      });
      expect(plain.status).toBe(415);
      const untyped = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          `${served.server.url}/planning`,
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
      const charset = await rawRequest(`${served.server.url}/planning`, {
        body,
        headers: { 'Content-Type': 'Application/JSON; charset=utf-8' }
      });
      expect(charset.status).toBe(200);
    });
  });
});
