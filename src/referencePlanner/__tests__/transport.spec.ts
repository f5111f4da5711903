import { DEFAULT_NOTEBOOK_ID, notebookIdOf } from '../exchange';
import { paceDelays } from '../pace';
import {
  BUILTIN_PLANNER_LABEL,
  createBuiltinPlannerTransport,
  PaceSleep
} from '../transport';
import { LOAD, requestBody } from './fixture';

/** A sleep the test releases by hand, recording every requested delay. */
function heldSleep(): {
  sleep: PaceSleep;
  delays: number[];
  release(): void;
  waiting(): number;
} {
  const pending: Array<() => void> = [];
  const delays: number[] = [];
  return {
    delays,
    sleep: (ms, signal) =>
      new Promise((resolve, reject) => {
        delays.push(ms);
        signal?.addEventListener('abort', () => reject(signal.reason), {
          once: true
        });
        pending.push(resolve);
      }),
    release: () => pending.shift()?.(),
    waiting: () => pending.length
  };
}

const tick = (): Promise<void> => new Promise(r => setTimeout(r, 0));

describe('the built-in planner transport', () => {
  it('names itself and its URLs without a network address', () => {
    const transport = createBuiltinPlannerTransport();
    expect(transport.label).toBe('Demo planner (built in)');
    expect(transport.label).toBe(BUILTIN_PLANNER_LABEL);
    expect(transport.urlOf('planning')).toBe('builtin://demo-planner/planning');
  });

  it('answers planning with the workflow template as JSON', async () => {
    const transport = createBuiltinPlannerTransport({ paceMs: 0 });
    const res = await transport.send({
      method: 'POST',
      path: 'planning',
      body: requestBody()
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Type')).toMatch(/application\/json/);
    const answer = (await res.json()) as {
      context_update: { workflow_update: { workflowTemplate: unknown } };
    };
    expect(answer.context_update.workflow_update.workflowTemplate).toBeTruthy();
  });

  it('answers 404, 405 and 400 like the HTTP planner', async () => {
    const transport = createBuiltinPlannerTransport({ paceMs: 0 });
    const missing = await transport.send({
      method: 'POST',
      path: 'v1/actions'
    });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({
      error:
        'no such endpoint: /v1/actions (try POST /planning, POST /generating, GET /health)',
      status: 404
    });
    const wrongMethod = await transport.send({
      method: 'GET',
      path: 'planning'
    });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('Allow')).toBe('POST, OPTIONS');
    const invalid = await transport.send({
      method: 'POST',
      path: 'generating',
      body: { observation: 'not an object' }
    });
    expect(invalid.status).toBe(400);
    const health = await transport.send({ method: 'GET', path: 'health' });
    expect(await health.json()).toEqual({ status: 'ok', mode: 'builtin' });
  });

  it('streams generating one NDJSON line per read, each after its paced delay', async () => {
    const held = heldSleep();
    const transport = createBuiltinPlannerTransport({
      paceMs: 100,
      sleep: held.sleep
    });
    const res = await transport.send({
      method: 'POST',
      path: 'generating',
      body: requestBody({ ...LOAD, stream: true })
    });
    expect(res.headers.get('Content-Type')).toMatch(/application\/x-ndjson/);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const lines: string[] = [];
    for (;;) {
      const read = reader.read();
      await tick();
      // Nothing is produced until the pause before the line is over.
      if (held.waiting() === 0) {
        const { done } = await read;
        expect(done).toBe(true);
        break;
      }
      held.release();
      const { value, done } = await read;
      expect(done).toBe(false);
      const text = decoder.decode(value);
      expect(text.endsWith('\n')).toBe(true);
      expect(text.indexOf('\n')).toBe(text.length - 1);
      lines.push(text.trimEnd());
    }
    const actions = lines.map(
      line => (JSON.parse(line) as { action: { action: string } }).action
    );
    expect(actions.map(a => a.action)).toContain('exec');
    expect(held.delays).toEqual(
      paceDelays(actions as Parameters<typeof paceDelays>[0], 100)
    );
    // A planner that thinks: code waits longer than the line before it.
    const codeIndex = actions.findIndex(
      (a: { action: string; shot_type?: string }) =>
        a.action === 'add' && a.shot_type === 'action'
    );
    expect(held.delays[codeIndex]).toBeGreaterThan(held.delays[codeIndex - 1]);
  });

  it('stops the stream when the request is aborted', async () => {
    const transport = createBuiltinPlannerTransport({ paceMs: 10_000 });
    const controller = new AbortController();
    const res = await transport.send({
      method: 'POST',
      path: 'generating',
      body: requestBody({ ...LOAD, stream: true }),
      signal: controller.signal
    });
    const reader = res.body!.getReader();
    const read = reader.read();
    const started = Date.now();
    controller.abort();
    await expect(read).rejects.toMatchObject({ name: 'AbortError' });
    expect(Date.now() - started).toBeLessThan(1000);
    await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('rejects a request whose signal is already aborted, and a planning answer aborted while it thinks', async () => {
    const transport = createBuiltinPlannerTransport({ paceMs: 10_000 });
    const aborted = new AbortController();
    aborted.abort();
    await expect(
      transport.send({
        method: 'POST',
        path: 'planning',
        body: requestBody(),
        signal: aborted.signal
      })
    ).rejects.toMatchObject({ name: 'AbortError' });
    const controller = new AbortController();
    const pending = transport.send({
      method: 'POST',
      path: 'planning',
      body: requestBody(),
      signal: controller.signal
    });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('the session key of a request', () => {
  it('is the percent-decoded X-Notebook-Id header, else an id in the body, else one shared key', () => {
    expect(notebookIdOf(encodeURIComponent('数据分析 📈.ipynb'), {})).toBe(
      '数据分析 📈.ipynb'
    );
    expect(notebookIdOf('plain.ipynb', {})).toBe('plain.ipynb');
    expect(notebookIdOf('100%.ipynb', {})).toBe('100%.ipynb');
    expect(notebookIdOf(undefined, { notebook_id: 'body.ipynb' })).toBe(
      'body.ipynb'
    );
    expect(
      notebookIdOf(' ', {
        observation: { context: { notebook: { path: 'ctx.ipynb' } } }
      })
    ).toBe('ctx.ipynb');
    expect(notebookIdOf(undefined, null)).toBe(DEFAULT_NOTEBOOK_ID);
  });
});
