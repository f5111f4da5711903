/**
 * The browser tab's owner id for run locks (`runLock.ts`), kept across reloads in sessionStorage: a
 * reloaded page is the same window, so it holds its notebook's lock again at once. "Duplicate tab"
 * copies sessionStorage too, and two tabs with one id would both hold the lock. Each page holds a Web
 * Lock named after its id for as long as it lives; a page that finds an id in its storage takes that
 * lock, waiting briefly for a reloaded page before it to go, and takes a new id when a live page keeps
 * it: a busy or frozen tab holds its lock without answering anything. Where Web Locks are missing (a
 * page served over plain http from another machine), the page asks the other pages of this browser
 * over a BroadcastChannel instead, and takes a new id when one answers in time.
 */
import { UUID } from '@lumino/coreutils';

export const TAB_OWNER_KEY = 'notebook-bcc:run-lock-owner';
const CHANNEL_NAME = 'notebook-bcc:tab-owner';
/** How long a page waits for another page to say that its id is in use, in ms. */
const ANSWER_MS = 300;
/** How long a page waits for the page it reloads to let go of the id's Web Lock, in ms. */
const RELEASE_MS = 1500;
const LOCK_PREFIX = 'notebook-bcc:tab-owner:';

/** The part of the Web Locks API (`navigator.locks`) used here. */
export interface IOwnerLocks {
  request(
    name: string,
    options: { signal?: AbortSignal },
    callback: (lock: unknown) => Promise<unknown>
  ): Promise<unknown>;
}

/** The part of BroadcastChannel used here. */
export interface IOwnerChannel {
  onmessage: ((event: MessageEvent) => void) | null;
  postMessage(data: unknown): void;
  close(): void;
}

/** `claim`: a page starts with this id; `taken`: another page uses it (answering the claim `nonce`). */
type OwnerMessage = { kind: 'claim' | 'taken'; id: string; nonce: string };

function isOwnerMessage(data: unknown): data is OwnerMessage {
  const message = data as Partial<OwnerMessage> | null;
  return (
    typeof message === 'object' &&
    message !== null &&
    (message.kind === 'claim' || message.kind === 'taken') &&
    typeof message.id === 'string' &&
    typeof message.nonce === 'string'
  );
}

export class TabOwner {
  constructor(options: TabOwner.IOptions) {
    this._storage = options.storage;
    this._channel = options.channel;
    let stored: string | null = null;
    try {
      stored = this._storage?.getItem(TAB_OWNER_KEY) ?? null;
    } catch {
      stored = null;
    }
    this._id = stored ?? this._newId();
    if (options.locks) {
      this._channel?.close();
      this._channel = null;
      this.ready = this._claimByLock(
        options.locks,
        stored,
        options.releaseMs ?? RELEASE_MS
      );
      return;
    }
    if (!this._channel) {
      this.ready = Promise.resolve(this._id);
      return;
    }
    this._channel.onmessage = event => this._onMessage(event.data);
    if (stored === null) {
      this.ready = Promise.resolve(this._id);
      return;
    }
    this._claiming = true;
    this._channel.postMessage({
      kind: 'claim',
      id: this._id,
      nonce: this._nonce
    });
    this.ready = new Promise(resolve => {
      this._timer = setTimeout(() => {
        this._claiming = false;
        if (this._taken) {
          this._id = this._newId();
        }
        resolve(this._id);
      }, options.answerMs ?? ANSWER_MS);
    });
  }

  /** The id once no other page of this browser uses it. */
  readonly ready: Promise<string>;

  /** The id now (before `ready`, the one found in the tab's storage, which may still change). */
  get id(): string {
    return this._id;
  }

  dispose(): void {
    clearTimeout(this._timer);
    this._release();
    if (this._channel) {
      this._channel.onmessage = null;
      this._channel.close();
      this._channel = null;
    }
  }

  /** Holds the id's lock (the stored id if no live page holds it, else a new one); resolves the id. */
  private async _claimByLock(
    locks: IOwnerLocks,
    stored: string | null,
    releaseMs: number
  ): Promise<string> {
    if (stored !== null && (await this._hold(locks, stored, releaseMs))) {
      return this._id;
    }
    if (stored !== null) {
      this._id = this._newId();
    }
    await this._hold(locks, this._id, null);
    return this._id;
  }

  /** Takes the id's lock, waiting at most `waitMs` (null: as long as it takes); true once held. */
  private _hold(
    locks: IOwnerLocks,
    id: string,
    waitMs: number | null
  ): Promise<boolean> {
    return new Promise(resolve => {
      const abort = new AbortController();
      const timer =
        waitMs === null ? undefined : setTimeout(() => abort.abort(), waitMs);
      locks
        .request(LOCK_PREFIX + id, { signal: abort.signal }, () => {
          clearTimeout(timer);
          resolve(true);
          // Held for the page's life: the browser lets go when the page goes.
          return new Promise<void>(release => (this._release = release));
        })
        .catch(() => {
          clearTimeout(timer);
          resolve(false);
        });
    });
  }

  private _onMessage(data: unknown): void {
    if (!isOwnerMessage(data) || data.id !== this._id) {
      return;
    }
    if (data.kind === 'taken') {
      if (this._claiming && data.nonce === this._nonce) {
        this._taken = true;
      }
      return;
    }
    // Two copies that start at once: the claim with the smaller nonce keeps the id.
    if (this._claiming && data.nonce < this._nonce) {
      this._taken = true;
      return;
    }
    this._channel?.postMessage({
      kind: 'taken',
      id: this._id,
      nonce: data.nonce
    });
  }

  private _newId(): string {
    const id = UUID.uuid4();
    try {
      this._storage?.setItem(TAB_OWNER_KEY, id);
    } catch {
      // No session storage (e.g. blocked): the id lasts as long as the page.
    }
    return id;
  }

  private _storage: Storage | null;
  private _channel: IOwnerChannel | null;
  private _id: string;
  private _nonce = UUID.uuid4();
  private _claiming = false;
  private _taken = false;
  private _timer: ReturnType<typeof setTimeout> | undefined;
  private _release: () => void = () => undefined;
}

export namespace TabOwner {
  export interface IOptions {
    /** The tab's sessionStorage; null where there is none. */
    storage: Storage | null;
    /** The channel to the other pages of this browser; null where there is none. */
    channel: IOwnerChannel | null;
    /** How long to wait for another page's answer, in ms. */
    answerMs?: number;
    /** The browser's Web Locks (`navigator.locks`); null or absent where there are none. */
    locks?: IOwnerLocks | null;
    /** How long to wait for a reloaded page's lock, in ms. */
    releaseMs?: number;
  }
}

let pageOwner: TabOwner | null = null;

/** This page's owner, made on first use. */
export function tabOwner(): TabOwner {
  if (!pageOwner) {
    let storage: Storage | null = null;
    try {
      storage = window.sessionStorage;
    } catch {
      storage = null;
    }
    const locks = (navigator as { locks?: IOwnerLocks }).locks ?? null;
    pageOwner = new TabOwner({
      storage,
      locks,
      channel:
        typeof BroadcastChannel === 'function'
          ? new BroadcastChannel(CHANNEL_NAME)
          : null
    });
  }
  return pageOwner;
}
