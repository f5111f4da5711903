import { ServerConnection } from '@jupyterlab/services';
import {
  ILockService,
  LockAnswer,
  PageLocks,
  RunLock,
  ServerLockService
} from '../runLock';
import type { RunLockState, RunLockStatus } from '../../tokens';
import { tabOwner } from '../tabOwner';

/** The server's locks in memory, on a clock the test moves. */
class FakeLockService implements ILockService {
  now = 0;
  locks = new Map<
    string,
    { owner: string; expires: number; status: RunLockStatus }
  >();
  /** Every request, as `METHOD key owner`. */
  log: string[] = [];

  async get(key: string): Promise<LockAnswer> {
    this.log.push(`GET ${key}`);
    const lock = this._live(key);
    return lock ? { held: true, ...lock } : { held: false };
  }

  async acquire(
    key: string,
    owner: string,
    ttlMs: number,
    status: RunLockStatus
  ): Promise<LockAnswer> {
    this.log.push(`PUT ${key} ${owner}`);
    const lock = this._live(key);
    if (lock && lock.owner !== owner) {
      return { held: true, ...lock };
    }
    this.locks.set(key, { owner, expires: this.now + ttlMs, status });
    return { held: true, owner, status };
  }

  async release(key: string, owner: string): Promise<void> {
    this.log.push(`DELETE ${key} ${owner}`);
    if (this._live(key)?.owner === owner) {
      this.locks.delete(key);
    }
  }

  private _live(key: string) {
    const lock = this.locks.get(key);
    if (lock && lock.expires <= this.now) {
      this.locks.delete(key);
      return null;
    }
    return lock ?? null;
  }
}

/** A server without the extension: every request answers 404. */
const noServer: ILockService = {
  get: async () => null,
  acquire: async () => null,
  release: async () => undefined
};

function lockOf(
  service: ILockService,
  options: Partial<RunLock.IOptions> & { status?: () => RunLockStatus } = {}
): RunLock {
  return new RunLock({
    key: () => 'analysis.ipynb',
    service,
    page: new PageLocks(),
    status: () => ({ state: 'IDLE' }),
    watch: false,
    heartbeatMs: 0,
    ...options
  });
}

describe('RunLock between two pages', () => {
  it('lets one window run and shows the other where that run stands', async () => {
    const server = new FakeLockService();
    let step = 'Load the data';
    const a = lockOf(server, {
      owner: 'window-a',
      status: () => ({ state: 'ACTION_RUNNING', stage: 'Explore', step })
    });
    const b = lockOf(server, { owner: 'window-b' });
    const seen: RunLockState[] = [];
    b.stateChanged.connect((_, state) => seen.push(state));

    expect(await a.acquire()).toBe(true);
    expect(a.state).toEqual({ kind: 'mine' });
    expect(await b.acquire()).toBe(false);
    expect(b.state).toEqual({
      kind: 'other',
      samePage: false,
      status: { state: 'ACTION_RUNNING', stage: 'Explore', step }
    });

    step = 'Clean the data';
    expect(await a.heartbeat()).toBe(true);
    await b.refresh();
    expect(b.state).toMatchObject({ status: { step: 'Clean the data' } });
    expect(seen.map(state => state.kind)).toEqual(['other', 'other']);
  });

  it('frees the lock of a window that stopped heartbeating once it expired, and then takes it', async () => {
    const server = new FakeLockService();
    const a = lockOf(server, { owner: 'window-a', ttlMs: 10000 });
    const b = lockOf(server, { owner: 'window-b', ttlMs: 10000 });
    await a.acquire();
    await b.refresh();
    expect(b.state.kind).toBe('other');

    server.now = 9999;
    await b.refresh();
    expect(b.state.kind).toBe('other');
    expect(await b.acquire()).toBe(false);

    server.now = 10000;
    await b.refresh();
    // The page that held it saved a newer run than this page's copy.
    expect(b.state).toEqual({ kind: 'free', stale: true });
    b.markFresh();
    expect(b.state).toEqual({ kind: 'free', stale: false });
    expect(await b.acquire()).toBe(true);
    expect(server.locks.get('analysis.ipynb')?.owner).toBe('window-b');
  });

  it('tells the old holder it lost the lock when its heartbeat comes too late', async () => {
    const server = new FakeLockService();
    const a = lockOf(server, { owner: 'window-a', ttlMs: 1000 });
    const b = lockOf(server, { owner: 'window-b', ttlMs: 1000 });
    await a.acquire();
    server.now = 5000;
    await b.acquire();
    let lost = 0;
    a.lost.connect(() => lost++);

    expect(await a.heartbeat()).toBe(false);
    expect(lost).toBe(1);
    expect(a.state.kind).toBe('other');
    expect(server.locks.get('analysis.ipynb')?.owner).toBe('window-b');
  });

  it('releases only its own lock', async () => {
    const server = new FakeLockService();
    const a = lockOf(server, { owner: 'window-a' });
    const b = lockOf(server, { owner: 'window-b' });
    await a.acquire();
    await b.acquire();
    await b.release();
    expect(server.log).not.toContain('DELETE analysis.ipynb window-b');
    await a.release();
    expect(a.state).toEqual({ kind: 'free', stale: false });
    expect(server.locks.size).toBe(0);
    await b.refresh();
    expect(b.state).toEqual({ kind: 'free', stale: true });
  });

  it('renews its lock on a timer while it holds it, and polls while another holds it', async () => {
    const server = new FakeLockService();
    const a = lockOf(server, { owner: 'window-a', heartbeatMs: 5 });
    const b = lockOf(server, { owner: 'window-b', heartbeatMs: 5 });
    a.dispose();
    const live = lockOf(server, {
      owner: 'window-a',
      heartbeatMs: 5,
      watch: true
    });
    const watcher = lockOf(server, {
      owner: 'window-b',
      heartbeatMs: 5,
      watch: true
    });
    await live.acquire();
    await new Promise(resolve => setTimeout(resolve, 60));
    const puts = server.log.filter(
      line => line === 'PUT analysis.ipynb window-a'
    );
    expect(puts.length).toBeGreaterThan(2);
    expect(watcher.state.kind).toBe('other');
    expect(
      server.log.filter(line => line === 'GET analysis.ipynb').length
    ).toBeGreaterThan(2);
    live.dispose();
    watcher.dispose();
    b.dispose();
    expect(server.log).toContain('DELETE analysis.ipynb window-a');
  });

  it('asks nothing while the page is hidden, so an idle server can be culled; the holder still renews', async () => {
    const visibility = jest
      .spyOn(document, 'visibilityState', 'get')
      .mockReturnValue('hidden');
    try {
      const server = new FakeLockService();
      const live = lockOf(server, {
        owner: 'window-a',
        heartbeatMs: 5,
        watch: true
      });
      const watcher = lockOf(server, {
        owner: 'window-b',
        heartbeatMs: 5,
        watch: true
      });
      await live.acquire();
      await new Promise(resolve => setTimeout(resolve, 60));
      expect(server.log.filter(line => line.startsWith('GET'))).toEqual([]);
      expect(
        server.log.filter(line => line === 'PUT analysis.ipynb window-a').length
      ).toBeGreaterThan(2);

      visibility.mockReturnValue('visible');
      document.dispatchEvent(new Event('visibilitychange'));
      await new Promise(resolve => setTimeout(resolve, 30));
      expect(watcher.state.kind).toBe('other');
      live.dispose();
      watcher.dispose();
    } finally {
      visibility.mockRestore();
    }
  });

  it('sends no second heartbeat within half an interval of the last', async () => {
    const server = new FakeLockService();
    const a = lockOf(server, { owner: 'window-a', heartbeatMs: 60000 });
    await a.acquire();
    expect(await a.heartbeat()).toBe(true);
    expect(await a.heartbeat()).toBe(true);
    expect(server.log).toEqual(['PUT analysis.ipynb window-a']);
  });

  it('carries its held lock to the new path when the notebook is renamed', async () => {
    const server = new FakeLockService();
    let path = 'before.ipynb';
    const a = lockOf(server, { owner: 'window-a', key: () => path });
    await a.acquire();
    path = 'after.ipynb';
    await a.heartbeat();
    expect([...server.locks.keys()]).toEqual(['after.ipynb']);
  });
});

describe('RunLock across a reload of the page', () => {
  it("uses the tab's owner id, so the reloaded page finds its lock its own and can take it at once", async () => {
    const server = new FakeLockService();
    const before = lockOf(server);
    expect(before.owner).toBe(tabOwner().id);
    expect(await before.acquire()).toBe(true);
    // The page reloads: its objects are gone, the tab keeps its owner id (tabOwner.spec.ts).
    const after = lockOf(server, { owner: before.owner });
    await after.refresh();
    expect(after.state).toEqual({ kind: 'free', stale: false });
    expect(await after.acquire()).toBe(true);
    // Another tab has another owner id.
    const otherTab = lockOf(server, { owner: 'another-tab' });
    expect(await otherTab.acquire()).toBe(false);
  });
});

describe('RunLock between two views of one page', () => {
  it('decides in the page even without the server extension', async () => {
    const page = new PageLocks();
    let step = 'Load';
    const first = lockOf(noServer, {
      page,
      owner: 'view-1',
      status: () => ({ state: 'ACTION_RUNNING', step })
    });
    const second = lockOf(noServer, { page, owner: 'view-2' });
    expect(await first.acquire()).toBe(true);
    expect(second.state).toEqual({
      kind: 'other',
      samePage: true,
      status: { state: 'ACTION_RUNNING', step: 'Load' }
    });
    expect(await second.acquire()).toBe(false);

    step = 'Clean';
    await first.heartbeat();
    expect(second.state).toMatchObject({ status: { step: 'Clean' } });

    await first.release();
    // Both views share one notebook model: nothing is stale.
    expect(second.state).toEqual({ kind: 'free', stale: false });
    expect(await second.acquire()).toBe(true);
    expect(first.state.kind).toBe('other');
  });
});

describe('ServerLockService', () => {
  function server(status: number, body: unknown) {
    const requests: Request[] = [];
    const settings = ServerConnection.makeSettings({
      baseUrl: 'http://localhost:8888/user/alice/',
      fetch: async (input: RequestInfo | URL) => {
        requests.push(input as Request);
        return new Response(JSON.stringify(body), { status });
      }
    });
    return { service: new ServerLockService(settings), requests };
  }

  it('puts the owner, time to live and status to the lock of the encoded path', async () => {
    const { service, requests } = server(200, {
      held: true,
      owner: 'w',
      expires_in_ms: 10000,
      status: { step: 'Load' }
    });
    const answer = await service.acquire('数据 分析/a#b.ipynb', 'w', 10000, {
      step: 'Load'
    });
    expect(answer).toEqual({
      held: true,
      owner: 'w',
      expires_in_ms: 10000,
      status: { step: 'Load' }
    });
    expect(requests[0].method).toBe('PUT');
    const url = new URL(requests[0].url);
    expect(url.origin + url.pathname).toBe(
      'http://localhost:8888/user/alice/notebook-bcc/locks/%E6%95%B0%E6%8D%AE%20%E5%88%86%E6%9E%90/a%23b.ipynb'
    );
    expect(await requests[0].json()).toEqual({
      owner: 'w',
      ttl_ms: 10000,
      status: { step: 'Load' }
    });
  });

  it('reads a refusal (409) as the holder, and a missing extension (404) as no answer', async () => {
    const refused = server(409, { held: true, owner: 'other' });
    expect(await refused.service.acquire('a.ipynb', 'w', 1000, {})).toEqual({
      held: true,
      owner: 'other'
    });
    expect(await server(404, {}).service.get('a.ipynb')).toBeNull();
    await expect(server(500, {}).service.get('a.ipynb')).rejects.toThrow(
      'HTTP 500'
    );
  });

  it('releases with the owner in the query', async () => {
    const { service, requests } = server(200, { held: false });
    await service.release('a.ipynb', 'window a');
    expect(requests[0].method).toBe('DELETE');
    const url = new URL(requests[0].url);
    expect(url.pathname).toBe('/user/alice/notebook-bcc/locks/a.ipynb');
    expect(url.searchParams.get('owner')).toBe('window a');
  });
});
