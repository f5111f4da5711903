import { IOwnerChannel, TabOwner } from '../tabOwner';

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

  it('works without session storage or a channel (a new id each page)', async () => {
    const owner = new TabOwner({ storage: null, channel: null });
    owners.push(owner);
    expect(await owner.ready).toBe(owner.id);
    expect(owner.id).toMatch(/^[0-9a-f-]{36}$/);
  });
});
