/**
 * The browser tab's owner id for run locks (`runLock.ts`), kept across reloads in sessionStorage: a
 * reloaded page is the same window, so it holds its notebook's lock again at once. "Duplicate tab"
 * copies sessionStorage too, and two tabs with one id would both hold the lock: a page that finds an id
 * there first asks the other pages of this browser (a BroadcastChannel) whether one of them uses it,
 * and takes a new id when one does.
 */
import { UUID } from '@lumino/coreutils';

export const TAB_OWNER_KEY = 'notebook-bcc:run-lock-owner';
const CHANNEL_NAME = 'notebook-bcc:tab-owner';
/** How long a page waits for another page to say that its id is in use, in ms. */
const ANSWER_MS = 300;

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
    if (this._channel) {
      this._channel.onmessage = null;
      this._channel.close();
      this._channel = null;
    }
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
}

export namespace TabOwner {
  export interface IOptions {
    /** The tab's sessionStorage; null where there is none. */
    storage: Storage | null;
    /** The channel to the other pages of this browser; null where there is none. */
    channel: IOwnerChannel | null;
    /** How long to wait for another page's answer, in ms. */
    answerMs?: number;
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
    pageOwner = new TabOwner({
      storage,
      channel:
        typeof BroadcastChannel === 'function'
          ? new BroadcastChannel(CHANNEL_NAME)
          : null
    });
  }
  return pageOwner;
}
