import { IOwnerChannel, IOwnerLocks, TabOwner } from '../tabOwner';

/** BroadcastChannel between the tabs of one browser, in memory: a message reaches every other member. */
class ChannelHub {
  open(): IOwnerChannel {
    const member: IOwnerChannel = {
      onmessage: null,
      postMessage: (data: unknown) => {
        for (const other of this._members) {
          if (other !== member) {
            // Delivered as a task, as a browser does.
            setTimeout(() => other.onmessage?.({ data } as MessageEvent), 1);
          }
        }
      },
      close: () => {
        this._members.delete(member);
      }
    };
    this._members.add(member);
    return member;
  }

  private _members = new Set<IOwnerChannel>();
}

/** A browser's Web Locks, in memory: one holder per name, the others wait in turn or give up. */
class LockHub implements IOwnerLocks {
  request(
    name: string,
    options: { signal?: AbortSignal },
    callback: (lock: unknown) => Promise<unknown>
  ): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const grant = () => {
        this._held.add(name);
        callback({})
          .finally(() => {
            this._held.delete(name);
            this._queue(name).shift()?.();
          })
          .then(resolve, reject);
      };
      if (!this._held.has(name)) {
        grant();
        return;
      }
      const queue = this._queue(name);
      const onAbort = () => {
        queue.splice(queue.indexOf(waiter), 1);
        reject(new Error('AbortError'));
      };
      const waiter = () => {
        options.signal?.removeEventListener('abort', onAbort);
        grant();
      };
      options.signal?.addEventListener('abort', onAbort);
      queue.push(waiter);
    });
  }

  private _queue(name: string): Array<() => void> {
    const queue = this._waiting.get(name) ?? [];
    this._waiting.set(name, queue);
    return queue;
  }

  private _held = new Set<string>();
  private _waiting = new Map<string, Array<() => void>>();
}

/** One tab's sessionStorage. */
function storage(initial: Record<string, string> = {}): Storage {
  const values = new Map(Object.entries(initial));
  return {
    getItem: (key: string) => values.get(key) ?? null,
    setItem: (key: string, value: string) => void values.set(key, value),
    removeItem: (key: string) => void values.delete(key),
    clear: () => values.clear(),
    key: (index: number) => [...values.keys()][index] ?? null,
    get length() {
      return values.size;
    }
  };
}

function copyOf(tab: Storage): Storage {
  const values: Record<string, string> = {};
  for (let i = 0; i < tab.length; i++) {
    const key = tab.key(i)!;
    values[key] = tab.getItem(key)!;
  }
  return storage(values);
}

describe('TabOwner', () => {
  const owners: TabOwner[] = [];
  const open = (hub: ChannelHub, tab: Storage) => {
    const owner = new TabOwner({
      storage: tab,
      channel: hub.open(),
      answerMs: 50
    });
    owners.push(owner);
    return owner;
  };
  afterEach(() => {
    owners.splice(0).forEach(owner => owner.dispose());
  });

  it('keeps its id across a reload of the tab (the page before it is gone)', async () => {
    const hub = new ChannelHub();
    const tab = storage();
    const first = open(hub, tab);
    const id = await first.ready;
    first.dispose();
    const reloaded = open(hub, tab);
    expect(await reloaded.ready).toBe(id);
    expect(reloaded.id).toBe(id);
  });

  it('takes a new id in a duplicated tab, whose session storage is a copy of a live tab', async () => {
    const hub = new ChannelHub();
    const tab = storage();
    const original = open(hub, tab);
    const id = await original.ready;
    const duplicateTab = copyOf(tab);
    const duplicate = open(hub, duplicateTab);
    const duplicateId = await duplicate.ready;
    expect(duplicateId).not.toBe(id);
    expect(duplicate.id).toBe(duplicateId);
    expect(original.id).toBe(id);
    // The duplicate keeps its new id when it reloads.
    duplicate.dispose();
    const reloaded = open(hub, duplicateTab);
    expect(await reloaded.ready).toBe(duplicateId);
  });

  it('tells two copies that open at once apart: one keeps the id, the other takes a new one', async () => {
    const hub = new ChannelHub();
    const tab = storage({ 'notebook-bcc:run-lock-owner': 'shared-id' });
    const a = open(hub, copyOf(tab));
    const b = open(hub, copyOf(tab));
    const ids = await Promise.all([a.ready, b.ready]);
    expect(ids[0]).not.toBe(ids[1]);
    expect(ids).toContain('shared-id');
  });

  describe('with Web Locks', () => {
    const page = (locks: LockHub, tab: Storage) => {
      // A tab that never answers on the channel (busy, frozen in the background) still holds its lock.
      const owner = new TabOwner({
        storage: tab,
        channel: null,
        locks,
        releaseMs: 100
      });
      owners.push(owner);
      return owner;
    };

    it('takes a new id in a duplicated tab even when the live tab cannot answer', async () => {
      const locks = new LockHub();
      const tab = storage();
      const original = page(locks, tab);
      const id = await original.ready;
      const duplicateTab = copyOf(tab);
      const duplicate = page(locks, duplicateTab);
      const duplicateId = await duplicate.ready;
      expect(duplicateId).not.toBe(id);
      expect(duplicateTab.getItem('notebook-bcc:run-lock-owner')).toBe(
        duplicateId
      );
      // And a third copy, of either, is a third window.
      const third = page(locks, copyOf(duplicateTab));
      expect([id, duplicateId]).not.toContain(await third.ready);
    });

    it('keeps its id across a reload, also when the page before lets go a moment late', async () => {
      const locks = new LockHub();
      const tab = storage();
      const first = page(locks, tab);
      const id = await first.ready;
      const reloaded = page(locks, tab);
      setTimeout(() => first.dispose(), 30);
      expect(await reloaded.ready).toBe(id);
      reloaded.dispose();
      expect(await page(locks, tab).ready).toBe(id);
    });

    it('tells two copies that open at once apart', async () => {
      const locks = new LockHub();
      const tab = storage({ 'notebook-bcc:run-lock-owner': 'shared-id' });
      const ids = await Promise.all([
        page(locks, copyOf(tab)).ready,
        page(locks, copyOf(tab)).ready
      ]);
      expect(ids[0]).not.toBe(ids[1]);
      expect(ids).toContain('shared-id');
    });
  });

  it('works without session storage or a channel (a new id each page)', async () => {
    const owner = new TabOwner({ storage: null, channel: null });
    owners.push(owner);
    expect(await owner.ready).toBe(owner.id);
    expect(owner.id).toMatch(/^[0-9a-f-]{36}$/);
  });
});
