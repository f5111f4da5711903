/**
 * The last run trace of each notebook, kept in the browser (IndexedDB) so that a reload shows
 * "Export the run trace" again and exports the same file. One store holds every notebook's trace,
 * keyed by the server and the notebook's path; all of them together stay within the trace's own cap
 * (`DEFAULT_TRACE_MAX_CHARS`): the notebooks saved longest ago give way first.
 *
 * Not loaded at startup: `lazy.ts` imports this module with `import()` when a notebook first opens, so
 * webpack makes it a chunk of its own (docs/architecture.md#lazy-loading).
 */
import { DEFAULT_TRACE_MAX_CHARS, RunTrace } from '../engine/trace';
import type { ITraceDialectRecord, ITraceRewindRecord } from '../engine/trace';
import type { TraceRecord } from '../protocol/traceFormat';
import { TraceClock } from './traceClock';

export { TraceClock };

/** A key-value store of strings: IndexedDB in the page, a map in tests. */
export interface ITraceStorage {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
}

/** The index's key: not a notebook's (a notebook key starts with the server's URL). */
const INDEX_KEY = '#index';

interface IIndexEntry {
  key: string;
  chars: number;
  savedAt: number;
}

function readIndex(raw: string | undefined): IIndexEntry[] {
  if (!raw) {
    return [];
  }
  try {
    const parsed: unknown = JSON.parse(raw);
    return Array.isArray(parsed)
      ? parsed.filter(
          (e): e is IIndexEntry =>
            typeof e === 'object' &&
            e !== null &&
            typeof e.key === 'string' &&
            typeof e.chars === 'number' &&
            typeof e.savedAt === 'number'
        )
      : [];
  } catch {
    return [];
  }
}

/** The notebooks' traces in one storage, within one size; its operations run one after another. */
export class TraceStore {
  constructor(options: TraceStore.IOptions) {
    this._storage = options.storage;
    this._maxChars = options.maxChars ?? DEFAULT_TRACE_MAX_CHARS;
    this._now = options.now ?? (() => Date.now());
  }

  load(key: string): Promise<string | undefined> {
    return this._queue(() => this._storage.get(key));
  }

  /** Keeps `jsonl` as `key`'s trace; false (and nothing kept for `key`) when it alone exceeds the cap. */
  save(key: string, jsonl: string): Promise<boolean> {
    return this._queue(async () => {
      const others = readIndex(await this._storage.get(INDEX_KEY)).filter(
        e => e.key !== key
      );
      if (jsonl.length > this._maxChars) {
        await this._storage.delete(key);
        await this._writeIndex(others);
        return false;
      }
      const kept = [
        ...others,
        { key, chars: jsonl.length, savedAt: this._now() }
      ].sort((a, b) => b.savedAt - a.savedAt);
      let total = 0;
      const within: IIndexEntry[] = [];
      for (const entry of kept) {
        total += entry.chars;
        if (total <= this._maxChars || entry.key === key) {
          within.push(entry);
        } else {
          await this._storage.delete(entry.key);
        }
      }
      await this._storage.set(key, jsonl);
      await this._writeIndex(within);
      return true;
    });
  }

  remove(key: string): Promise<void> {
    return this._queue(async () => {
      const index = readIndex(await this._storage.get(INDEX_KEY));
      await this._storage.delete(key);
      await this._writeIndex(index.filter(e => e.key !== key));
    });
  }

  private _writeIndex(entries: IIndexEntry[]): Promise<void> {
    return this._storage.set(INDEX_KEY, JSON.stringify(entries));
  }

  private _queue<T>(operation: () => Promise<T>): Promise<T> {
    const next = this._last.then(operation, operation);
    this._last = next.catch(() => undefined);
    return next;
  }

  private _storage: ITraceStorage;
  private _maxChars: number;
  private _now: () => number;
  private _last: Promise<unknown> = Promise.resolve();
}

export namespace TraceStore {
  export interface IOptions {
    storage: ITraceStorage;
    /** Characters of every notebook's trace together; the trace's own cap by default. */
    maxChars?: number;
    now?: () => number;
  }
}

type StoredLine = TraceRecord | ITraceDialectRecord | ITraceRewindRecord;

/**
 * Records the lines of an exported trace (`RunTrace.toJSONL()`) in `trace`, emptied first, through its
 * own methods, so that it exports the same lines and a resumed run goes on after them. A trace whose
 * oldest requests were dropped (over its cap) has its requests numbered from 1 again.
 */
export function restoreTrace(
  trace: RunTrace,
  clock: TraceClock,
  jsonl: string
): void {
  const lines: StoredLine[] = jsonl
    .split('\n')
    .filter(line => line.length > 0)
    .map(line => JSON.parse(line) as StoredLine);
  const last = lines.length ? lines[lines.length - 1].t : 0;
  const start = Date.now() - last;
  const variableTypes = trace.variableTypes;
  // Recorded bodies already hold types, not values.
  trace.variableTypes = () => ({});
  const seqs = new Map<number, number>();
  const seqOf = (seq: number) => seqs.get(seq) ?? seq;
  try {
    clock.hold(start);
    trace.clear();
    for (const line of lines) {
      clock.hold(start + line.t);
      switch (line.kind) {
        case 'request':
          seqs.set(line.seq, trace.request(line.endpoint, line.body));
          break;
        case 'response':
          trace.response(seqOf(line.seq), line.endpoint, line.status, {
            body: line.body,
            stream: line.stream
          });
          break;
        case 'line':
          trace.line(seqOf(line.seq), line.endpoint, line.line);
          break;
        case 'end':
          trace.end(seqOf(line.seq), line.endpoint, line.error);
          break;
        case 'dialect':
          trace.dialect(line.dialect);
          break;
        case 'rewind':
          trace.rewind(line.rewind);
          break;
      }
    }
  } finally {
    clock.hold(null);
    trace.variableTypes = variableTypes;
  }
}

function warn(reason: unknown): void {
  console.warn('Notebook-BCC: the run trace was not kept.', reason);
}

/** How long a changed trace waits before it is written, so a streaming run writes it a few times a minute. */
const SAVE_DELAY_MS = 3000;

/**
 * One notebook's trace and its copy in the store: restored once when the notebook opens, written a
 * moment after it changes (at once when a run finishes), dropped when the run is discarded.
 */
export class TraceKeeper {
  constructor(private _options: TraceKeeper.IOptions) {}

  /** Restores the stored trace into an empty trace; true when it did (not when forgotten meanwhile). */
  async restore(): Promise<boolean> {
    const { store, key, trace, clock, busy } = this._options;
    const forgets = this._forgets;
    const jsonl = await store.load(key());
    if (
      !jsonl ||
      trace.length > 0 ||
      busy() ||
      this._disposed ||
      this._forgets !== forgets
    ) {
      return false;
    }
    restoreTrace(trace, clock, jsonl);
    return true;
  }

  /** The trace changed: write it soon. */
  changed(): void {
    if (this._timer === null && !this._disposed) {
      this._timer = setTimeout(
        () => void this.flush(),
        this._options.delayMs ?? SAVE_DELAY_MS
      );
    }
  }

  /** Writes the trace now (an empty one removes the stored copy); a failure is only logged. */
  flush(): Promise<void> {
    this._cancel();
    const { store, key, trace } = this._options;
    const done =
      trace.length === 0
        ? store.remove(key())
        : store.save(key(), trace.toJSONL());
    return done.then(() => undefined, warn);
  }

  /** The run was discarded: its stored trace goes too. */
  forget(): Promise<void> {
    this._forgets++;
    this._cancel();
    return this._options.store.remove(this._options.key()).catch(warn);
  }

  /** The notebook closes: a write still waiting is done now. */
  dispose(): void {
    if (this._timer !== null) {
      void this.flush();
    }
    this._disposed = true;
  }

  private _cancel(): void {
    if (this._timer !== null) {
      clearTimeout(this._timer);
      this._timer = null;
    }
  }

  private _timer: ReturnType<typeof setTimeout> | null = null;
  private _disposed = false;
  private _forgets = 0;
}

export namespace TraceKeeper {
  export interface IOptions {
    store: TraceStore;
    /** The notebook's key in the store, read at each use (a notebook can be renamed). */
    key: () => string;
    trace: RunTrace;
    /** The clock `trace` was built with. */
    clock: TraceClock;
    /** A run is under way: a stored trace is not restored into it. */
    busy: () => boolean;
    delayMs?: number;
  }
}

const DATABASE = 'jupyterlab-notebook-bcc';
const STORE = 'run-traces';

function request<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

/** The page's IndexedDB as an `ITraceStorage`; null where the browser has none (or a test). */
export function indexedDbTraceStorage(): ITraceStorage | null {
  if (typeof indexedDB === 'undefined') {
    return null;
  }
  let database: Promise<IDBDatabase> | null = null;
  const open = () => {
    if (!database) {
      const req = indexedDB.open(DATABASE, 1);
      req.onupgradeneeded = () => req.result.createObjectStore(STORE);
      database = request(req);
      database.catch(() => {
        database = null;
      });
    }
    return database;
  };
  const write = async (action: (store: IDBObjectStore) => void) => {
    const transaction = (await open()).transaction(STORE, 'readwrite');
    action(transaction.objectStore(STORE));
    // Written once the transaction completes, not when its request succeeds: a reload may follow.
    await new Promise<void>((resolve, reject) => {
      transaction.oncomplete = () => resolve();
      transaction.onerror = () => reject(transaction.error);
      transaction.onabort = () => reject(transaction.error);
    });
  };
  return {
    get: async key => {
      const store = (await open())
        .transaction(STORE, 'readonly')
        .objectStore(STORE);
      const value: unknown = await request(store.get(key));
      return typeof value === 'string' ? value : undefined;
    },
    set: (key, value) => write(store => store.put(value, key)),
    delete: key => write(store => store.delete(key))
  };
}

let pageStore: TraceStore | null | undefined;

/** The page's one trace store, shared by its notebooks; null without IndexedDB. */
export function pageTraceStore(): TraceStore | null {
  if (pageStore === undefined) {
    const storage = indexedDbTraceStorage();
    pageStore = storage ? new TraceStore({ storage }) : null;
  }
  return pageStore;
}
