/**
 * The one channel through which the dslc adapter tells what it does besides answering: each exchange
 * (for the run's trace), each warning, and how long a call has waited for the planner's first byte.
 * Observers are given to the adapter, to one call, or both; each is shielded, so an observer cannot
 * break a run; without any `onWarning`, warnings go to `console.warn`.
 */
import { describeCause, type PlannerError } from '../../errors';
import type { IMessageText, ProtocolMessageId } from '../../messages';

/** Sees every exchange (e.g. to record a trace of the run) and hears every warning. */
export interface IPlannerObserver {
  onRequest?(endpoint: string, body: unknown): void;
  /** `body` is the parsed JSON (or text) of a non-streamed answer, undefined for a stream. */
  onResponse?(
    endpoint: string,
    status: number,
    body: unknown,
    stream: boolean
  ): void;
  onLine?(endpoint: string, line: string): void;
  onEnd?(endpoint: string, error?: PlannerError): void;
  /** Something the user should know that does not stop the request: a retry, an ignored line. */
  onWarning?(endpoint: string, warning: IMessageText<ProtocolMessageId>): void;
  /**
   * A call waits for the planner's first byte since `since` (ms since the epoch, kept across retries),
   * or no longer (`null`: bytes arrived, or the call ended). A view shows "Waiting for the planner… 1 min 12 s".
   */
  onWaiting?(endpoint: string, since: number | null): void;
}

/** One observer or several, each told everything. */
export type PlannerObservers = IPlannerObserver | readonly IPlannerObserver[];

export function observersOf(observers?: PlannerObservers): IPlannerObserver[] {
  if (!observers) {
    return [];
  }
  return Array.isArray(observers) ? [...observers] : [observers];
}

/** Tells the observers of one call. */
export interface ITeller {
  warning(endpoint: string, warning: IMessageText<ProtocolMessageId>): void;
  each(call: (observer: IPlannerObserver) => void): void;
}

/** The adapter's observers and the call's (and its `onWarning`), each shielded. */
export function teller(
  observers: readonly IPlannerObserver[],
  onWarning?: (warning: IMessageText<ProtocolMessageId>) => void
): ITeller {
  const all = [
    ...observers,
    ...(onWarning
      ? [
          {
            onWarning: (_: string, w: IMessageText<ProtocolMessageId>) =>
              onWarning(w)
          }
        ]
      : [])
  ];
  const shielded = (call: () => void, fallback: (message: string) => void) => {
    try {
      call();
    } catch (error) {
      fallback(`planner client observer failed: ${describeCause(error)}`);
    }
  };
  const warning = (
    endpoint: string,
    report: IMessageText<ProtocolMessageId>
  ) => {
    const hearing = all.filter(o => o.onWarning);
    if (hearing.length === 0) {
      console.warn(report.message);
    }
    for (const observer of hearing) {
      shielded(
        () => observer.onWarning?.(endpoint, report),
        text => console.warn(text)
      );
    }
  };
  return {
    warning,
    each(call: (observer: IPlannerObserver) => void): void {
      for (const observer of all) {
        shielded(
          () => call(observer),
          text => warning('', { message: text })
        );
      }
    }
  };
}

/** The "waiting since" of one call: shown when a request leaves, hidden at the first byte or the end. */
export class WaitReport {
  constructor(
    private readonly _tell: ITeller,
    private readonly _url: string
  ) {}

  start(): void {
    this._since ??= Date.now();
    if (!this._shown) {
      this._shown = true;
      const since = this._since;
      this._tell.each(o => o.onWaiting?.(this._url, since));
    }
  }

  stop(): void {
    if (this._shown) {
      this._shown = false;
      this._tell.each(o => o.onWaiting?.(this._url, null));
    }
  }

  private _since: number | undefined;
  private _shown = false;
}
