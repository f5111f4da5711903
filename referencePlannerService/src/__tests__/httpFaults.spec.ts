/**
 * The faults the reference planner service injects on the wire (docs/reference-planner.md), as a
 * client sees them.
 */

import { normalizeAction, DslcAdapter } from '../../../src/protocol';
import { FLOOD_DELAY_MS } from '../answer';
import { parseFault } from '../faults';
import { IPlannerServerOptions } from '../server';
import {
  actionsOf,
  linesOf,
  postJson,
  rawRequest,
  requestBody,
  servedPlanner,
  LOAD_STEP
} from './helpers';

describe('planner HTTP service', () => {
  const served = servedPlanner();

  describe('faults on the wire', () => {
    async function generatingWith(
      fault: string,
      extra: IPlannerServerOptions = {}
    ) {
      await served.start({ faults: [parseFault(fault)], ...extra });
      return rawRequest(`${served.server.url}/generating`, {
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
      await served.start({ faults: [parseFault('paused-flood=200000')] });
      const started = Date.now();
      const res = await rawRequest(`${served.server.url}/generating`, {
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
      await served.start({ faults: [parseFault('bad-pattern')] });
      const res = await postJson(
        `${served.server.url}/planning`,
        requestBody()
      );
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
      await served.start({
        faults: [parseFault('http-500@2'), parseFault('http-429=7@3')]
      });
      const statuses: number[] = [];
      let retryAfter: unknown;
      for (let i = 0; i < 4; i++) {
        const res = await postJson(
          `${served.server.url}/planning`,
          requestBody()
        );
        statuses.push(res.status);
        if (res.status === 429) {
          retryAfter = res.headers['retry-after'];
        }
      }
      expect(statuses).toEqual([200, 500, 429, 200]);
      expect(retryAfter).toBe('7');
    });

    it('slow-first-byte: nothing arrives before the delay', async () => {
      await served.start({
        faults: [parseFault('slow-first-byte=300@planning:1')]
      });
      const slow = await postJson(
        `${served.server.url}/planning`,
        requestBody()
      );
      const fast = await postJson(
        `${served.server.url}/planning`,
        requestBody()
      );
      expect(slow.status).toBe(200);
      expect(slow.headersAfterMs).toBeGreaterThanOrEqual(290);
      expect(fast.headersAfterMs).toBeLessThan(slow.headersAfterMs);
    });

    it('a stream fault on a non-streamed answer breaks the JSON body', async () => {
      await served.start({ faults: [parseFault('truncated-line')] });
      const res = await postJson(
        `${served.server.url}/generating`,
        requestBody({ ...LOAD_STEP, stream: false })
      );
      expect(() => JSON.parse(res.text)).toThrow();
    });

    it('the shared DslcAdapter reads a split character intact and reports the unknown action', async () => {
      await served.start({
        faults: [parseFault('split-utf8'), parseFault('unknown-action')]
      });
      const client = new DslcAdapter({
        baseUrl: served.server.url,
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
});
