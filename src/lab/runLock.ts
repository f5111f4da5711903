/**
 * One live run per notebook (docs/architecture.md#one-run-per-notebook). A runner holds its notebook's
 * lock while its run is live and renews it with a heartbeat; other views, tabs and collaborators see
 * who runs and where the run stands, and may take over only once the holder's lock expired.
 *
 * Two levels: `PageLocks` decides between views of one notebook in this page at once; the server
 * extension (`{base_url}notebook-bcc/locks/<path>`) decides between pages. Without the server extension
 * the page-level lock alone applies.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';
import type { IRunLock, RunLockState, RunLockStatus } from '../tokens';
import { TabOwner, tabOwner } from './tabOwner';

/** The lock route under the server's base URL. */
export const LOCK_ROUTE = 'notebook-bcc/locks';

/** How often the holder renews its lock, in ms. */
export const HEARTBEAT_MS = 3000;
/** A lock not renewed for this long (about three missed heartbeats) is free again. */
export const LOCK_TTL_MS = 10000;

/** The server keeps at most 4 KB of status per lock: each text is cut well below that. */
const MAX_STATUS_CHARS = 200;

function boundStatus(status: RunLockStatus): RunLockStatus {
  const cut = (text: string | null | undefined) =>
    typeof text === 'string' && text.length > MAX_STATUS_CHARS
      ? `${text.slice(0, MAX_STATUS_CHARS - 1)}…`
      : text;
  return {
    state: cut(status.state) ?? undefined,
    paused: status.paused,
    stage: cut(status.stage),
    step: cut(status.step),
    task: cut(status.task)
  };
}

export type LockAnswer = {
  held: boolean;
  owner?: string;
  expires_in_ms?: number;
  status?: RunLockStatus;
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Checked by hand, not with zod: this module loads at startup, before the runtime (lab/lazy.ts). */
function readStatus(value: unknown): RunLockStatus {
  if (!isRecord(value)) {
    return {};
  }
  const text = (key: string) => {
    const field = value[key];
    return typeof field === 'string' || field === null ? field : undefined;
  };
  const status: RunLockStatus = {
    stage: text('stage'),
    step: text('step'),
    task: text('task')
  };
  if (typeof value.state === 'string') {
    status.state = value.state;
  }
  if (typeof value.paused === 'boolean') {
    status.paused = value.paused;
  }
  return status;
}

/** The server's answer about a lock; throws when it is not one. */
export function readLockAnswer(value: unknown): LockAnswer {
  if (!isRecord(value) || typeof value.held !== 'boolean') {
    throw new Error('not a lock answer: "held" must be a boolean');
  }
  const answer: LockAnswer = { held: value.held };
  if (typeof value.owner === 'string') {
    answer.owner = value.owner;
  }
  if (typeof value.expires_in_ms === 'number') {
    answer.expires_in_ms = value.expires_in_ms;
  }
  if (value.status !== undefined) {
    answer.status = readStatus(value.status);
  }
  return answer;
}

/** The server side of the locks; `null` from a method: the server has no lock service. */
export interface ILockService {
  /** Who holds the lock of `key`. */
  get(key: string): Promise<LockAnswer | null>;
  /** Takes or renews the lock for `owner`; the answer names the holder (another owner when refused). */
  acquire(
    key: string,
    owner: string,
    ttlMs: number,
    status: RunLockStatus
  ): Promise<LockAnswer | null>;
  release(key: string, owner: string): Promise<void>;
}

/** The locks of the views in this page, by notebook key. */
export class PageLocks {
  /** A key's holder or status changed. */
  get changed(): ISignal<this, string> {
    return this._changed;
  }

  holder(key: string): RunLock | null {
    return this._holders.get(key) ?? null;
  }

  take(key: string, lock: RunLock): boolean {
    const holder = this._holders.get(key);
    if (holder && holder !== lock) {
      return false;
    }
    this._holders.set(key, lock);
    this._changed.emit(key);
    return true;
  }

  drop(key: string, lock: RunLock): void {
    if (this._holders.get(key) === lock) {
      this._holders.delete(key);
      this._changed.emit(key);
    }
  }

  /** The holder's status changed. */
  touch(key: string): void {
    this._changed.emit(key);
  }

  private _holders = new Map<string, RunLock>();
  private _changed = new Signal<this, string>(this);
}

/** The locks of every view in this page. */
export const pageLocks = new PageLocks();

/** The server extension's locks through `ServerConnection` (JupyterLab's auth and XSRF). */
export class ServerLockService implements ILockService {
  constructor(private _settings: ServerConnection.ISettings) {}

  get(key: string): Promise<LockAnswer | null> {
    return this._request(key, { method: 'GET' });
  }

  acquire(
    key: string,
    owner: string,
    ttlMs: number,
    status: RunLockStatus
  ): Promise<LockAnswer | null> {
    return this._request(key, {
      method: 'PUT',
      body: JSON.stringify({ owner, ttl_ms: ttlMs, status })
    });
  }

  async release(key: string, owner: string): Promise<void> {
    await this._request(key, { method: 'DELETE' }, { owner });
  }

  private async _request(
    key: string,
    init: RequestInit,
    query?: Record<string, string>
  ): Promise<LockAnswer | null> {
    let url = URLExt.join(
      this._settings.baseUrl,
      LOCK_ROUTE,
      URLExt.encodeParts(key)
    );
    if (query) {
      url += URLExt.objectToQueryString(query);
    }
    const response = await ServerConnection.makeRequest(
      url,
      init,
      this._settings
    );
    if (response.status === 404) {
      // The server extension is not enabled on this server.
      return null;
    }
    if (!response.ok && response.status !== 409) {
      throw new Error(`The run lock answered HTTP ${response.status}.`);
    }
    return readLockAnswer(await response.json());
  }
}

export class RunLock implements IRunLock {
  constructor(options: RunLock.IOptions) {
    this._key = options.key;
    this._service = options.service;
    this._page = options.page ?? pageLocks;
    this._status = options.status;
    this._heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
    this._ttlMs = options.ttlMs ?? LOCK_TTL_MS;
    if (options.owner) {
      this._owner = {
        id: options.owner,
        ready: Promise.resolve(options.owner)
      };
    } else {
      this._owner = tabOwner();
    }
    this._lastKey = this._key();
    this._page.changed.connect(this._onPage, this);
    this._timed = options.watch !== false;
    if (this._timed) {
      this._watch();
    }
  }

  /** One per browser tab, kept across reloads (`tabOwner.ts`); two views in one tab are told apart in the page. */
  get owner(): string {
    return this._owner.id;
  }

  get state(): RunLockState {
    return this._state;
  }

  get stateChanged(): ISignal<this, RunLockState> {
    return this._stateChanged;
  }

  get lost(): ISignal<this, void> {
    return this._lost;
  }

  /** The status this holder reports (read by the other views of this page too). */
  get status(): RunLockStatus {
    return boundStatus(this._status());
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  async acquire(): Promise<boolean> {
    await this._owner.ready;
    if (this._disposed) {
      return false;
    }
    const key = this._currentKey();
    const inPage = this._page.holder(key);
    if (inPage && inPage !== this) {
      this._set({ kind: 'other', status: inPage.status, samePage: true });
      return false;
    }
    const answer = await this._ask(() =>
      this._service.acquire(key, this.owner, this._ttlMs, this.status)
    );
    if (this._disposed) {
      return false;
    }
    if (answer && answer.held && answer.owner !== this.owner) {
      this._set({
        kind: 'other',
        status: answer.status ?? {},
        samePage: false
      });
      return false;
    }
    if (!this._page.take(key, this)) {
      // Another view of this page took it while the server answered.
      void this._service.release(key, this.owner).catch(() => undefined);
      return this.acquire();
    }
    this._lastBeat = Date.now();
    this._set({ kind: 'mine' });
    this._schedule();
    return true;
  }

  async heartbeat(): Promise<boolean> {
    if (this._state.kind !== 'mine') {
      return false;
    }
    const now = Date.now();
    if (now - this._lastBeat < this._heartbeatMs / 2) {
      // Renewed a moment ago (the run's own events renew too): nothing to send.
      return true;
    }
    this._lastBeat = now;
    const key = this._currentKey();
    this._page.touch(key);
    const answer = await this._ask(() =>
      this._service.acquire(key, this.owner, this._ttlMs, this.status)
    );
    if (!this._holds()) {
      return false;
    }
    if (answer && answer.held && answer.owner !== this.owner) {
      this._page.drop(key, this);
      this._set({
        kind: 'other',
        status: answer.status ?? {},
        samePage: false
      });
      this._lost.emit();
      this._schedule();
      return false;
    }
    return true;
  }

  async release(): Promise<void> {
    if (this._state.kind !== 'mine') {
      return;
    }
    const key = this._currentKey();
    this._page.drop(key, this);
    this._set({ kind: 'free', stale: false });
    this._schedule();
    await this._ask(() => this._service.release(key, this.owner));
  }

  async refresh(): Promise<void> {
    await this._owner.ready;
    if (this._state.kind === 'mine' || this._disposed) {
      return;
    }
    const key = this._currentKey();
    const inPage = this._page.holder(key);
    if (inPage && inPage !== this) {
      this._set({ kind: 'other', status: inPage.status, samePage: true });
      return;
    }
    const answer = await this._ask(() => this._service.get(key));
    if (this._holds() || this._disposed) {
      return;
    }
    if (answer && answer.held && answer.owner !== this.owner) {
      this._set({
        kind: 'other',
        status: answer.status ?? {},
        samePage: false
      });
      return;
    }
    const before = this._state;
    // A page elsewhere let the lock go: the run it saved is newer than this view's copy.
    const stale =
      (before.kind === 'other' && !before.samePage) ||
      (before.kind === 'free' && before.stale);
    this._set({ kind: 'free', stale });
  }

  /** This view's copy of the notebook was brought up to date (e.g. reloaded from disk). */
  markFresh(): void {
    if (this._state.kind === 'free' && this._state.stale) {
      this._set({ kind: 'free', stale: false });
    }
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    void this.release();
    this._disposed = true;
    clearTimeout(this._timer);
    document.removeEventListener('visibilitychange', this._onVisibility);
    Signal.clearData(this);
  }

  /** The key now; a renamed notebook carries its held lock to its new path. */
  private _currentKey(): string {
    const key = this._key();
    if (key !== this._lastKey) {
      const old = this._lastKey;
      this._lastKey = key;
      if (this._page.holder(old) === this) {
        this._page.drop(old, this);
        this._page.take(key, this);
        void this._ask(() => this._service.release(old, this.owner));
      }
    }
    return key;
  }

  /** Answers null when the server has no lock service or cannot be reached: the page lock then decides. */
  private async _ask<T>(request: () => Promise<T>): Promise<T | null> {
    try {
      return await request();
    } catch (reason) {
      if (!this._warned) {
        this._warned = true;
        console.warn(
          'Notebook-BCC: the run lock could not reach the server; only this page is checked.',
          reason
        );
      }
      return null;
    }
  }

  private _watch(): void {
    document.addEventListener('visibilitychange', this._onVisibility);
    void this._poll().finally(() => this._schedule());
  }

  /**
   * Who holds the lock, asked only while the page is visible: a hidden page's requests would count as
   * activity and keep an idle server from being culled (JupyterHub). JupyterLab's own pollers stand by
   * the same way.
   */
  private _poll(): Promise<void> {
    return document.visibilityState === 'hidden'
      ? Promise.resolve()
      : this.refresh();
  }

  private _onVisibility = (): void => {
    if (document.visibilityState !== 'hidden' && this._state.kind !== 'mine') {
      void this.refresh();
    }
  };

  /** The holder renews its lock (a live run, hidden or not); the others poll who holds it. */
  private _schedule(): void {
    clearTimeout(this._timer);
    if (this._disposed || !this._timed) {
      return;
    }
    this._timer = setTimeout(() => {
      const next =
        this._state.kind === 'mine' ? this.heartbeat() : this._poll();
      void next.finally(() => this._schedule());
    }, this._heartbeatMs);
  }

  private _onPage(_: PageLocks, key: string): void {
    if (key !== this._lastKey || this._state.kind === 'mine') {
      return;
    }
    const holder = this._page.holder(key);
    if (holder && holder !== this) {
      this._set({ kind: 'other', status: holder.status, samePage: true });
    } else if (this._state.kind === 'other' && this._state.samePage) {
      this._set({ kind: 'free', stale: false });
    }
  }

  /** Read after an await, where the compiler would keep an earlier narrowing. */
  private _holds(): boolean {
    return this._state.kind === 'mine';
  }

  private _set(state: RunLockState): void {
    const before = this._state;
    if (JSON.stringify(before) === JSON.stringify(state)) {
      return;
    }
    this._state = state;
    this._stateChanged.emit(state);
  }

  private _owner: Pick<TabOwner, 'id' | 'ready'>;
  private _key: () => string;
  private _lastKey: string;
  private _service: ILockService;
  private _page: PageLocks;
  private _status: () => RunLockStatus;
  private _heartbeatMs: number;
  private _ttlMs: number;
  private _state: RunLockState = { kind: 'free', stale: false };
  private _timer: ReturnType<typeof setTimeout> | undefined;
  private _lastBeat = 0;
  private _timed: boolean;
  private _warned = false;
  private _disposed = false;
  private _stateChanged = new Signal<this, RunLockState>(this);
  private _lost = new Signal<this, void>(this);
}

export namespace RunLock {
  export interface IOptions {
    /** The notebook's key (its path); read each time, so a rename moves the lock. */
    key: () => string;
    service: ILockService;
    /** The run's status, sent with each heartbeat. */
    status: () => RunLockStatus;
    /** The locks of this page; `pageLocks` when absent. */
    page?: PageLocks;
    owner?: string;
    heartbeatMs?: number;
    ttlMs?: number;
    /** Poll who holds the lock and renew it on timers; default true (false: only when asked). */
    watch?: boolean;
  }
}
