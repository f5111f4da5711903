/**
 * A scripted planner service for tests: /planning answers and /generating streams are taken from queues.
 */
import { PlannerError } from '../../protocol';
import type {
  Action,
  GeneratingEvent,
  IPlannerObserver,
  GeneratingRequestInput,
  INotebookSummary,
  ObservationInput,
  PlanningRequestInput,
  PlanningResponse,
  UnknownAction
} from '../../protocol';
import type { IPlannerService } from '../types';

type AnyAction = Action | UnknownAction;

function abortError(): Error {
  const error = new Error('The request was aborted');
  error.name = 'AbortError';
  return error;
}

/** A /generating stream fed by the test while the runner reads it. */
export class ActionStream {
  push(...actions: AnyAction[]): void {
    for (const action of actions) {
      this._events.push({
        kind: 'action',
        action,
        index: this._index++,
        line: JSON.stringify({ action })
      });
    }
    this._notify();
  }

  warn(message: string): void {
    this._events.push({ kind: 'warning', message });
    this._notify();
  }

  /** A line without action, as the action stream reports it: shown, never an effect. */
  notice(message: string): void {
    this._events.push({ kind: 'notice', message });
    this._notify();
  }

  /** Events as a parser made them (e.g. `ActionLineParser` fed with raw lines). */
  pushEvents(...events: GeneratingEvent[]): void {
    this._events.push(...events);
    this._notify();
  }

  end(): void {
    this._ended = true;
    this._notify();
  }

  fail(error: Error): void {
    this._error = error;
    this._notify();
  }

  /** How many events the reader has taken. */
  get consumed(): number {
    return this._consumed;
  }

  async *read(signal?: AbortSignal): AsyncGenerator<GeneratingEvent> {
    for (;;) {
      if (signal?.aborted) {
        throw abortError();
      }
      const next = this._events.shift();
      if (next) {
        this._consumed++;
        yield next;
        continue;
      }
      if (this._error) {
        throw this._error;
      }
      if (this._ended) {
        return;
      }
      await new Promise<void>(resolve => {
        this._waiter = resolve;
        signal?.addEventListener('abort', () => resolve(), { once: true });
      });
    }
  }

  private _notify(): void {
    const waiter = this._waiter;
    this._waiter = null;
    waiter?.();
  }

  private _events: GeneratingEvent[] = [];
  private _index = 0;
  private _consumed = 0;
  private _ended = false;
  private _error: Error | null = null;
  private _waiter: (() => void) | null = null;
}

export type PlanningScript =
  | PlanningResponse
  | Error
  | ((
      request: PlanningRequestInput
    ) => PlanningResponse | Error | Promise<PlanningResponse | Error>);

export type GeneratingScript =
  | AnyAction[]
  | ActionStream
  | Error
  | { actions: AnyAction[]; thenFail: Error }
  | ((request: GeneratingRequestInput) => AnyAction[] | ActionStream | Error);

export interface IFakePlannerScript {
  planning?: PlanningScript[];
  generating?: GeneratingScript[];
  /** The answer when the planning queue is empty; `{ targetAchieved: true }` by default. */
  defaultPlanning?: PlanningResponse;
  /** Told about every exchange like the real client's observer (e.g. a `RunTrace`). */
  observer?: IPlannerObserver;
}

/** The base URL the fake pretends to talk to. */
export const FAKE_PLANNER_URL = 'http://planner.test';

function plannerError(url: string, error: unknown): PlannerError {
  return error instanceof PlannerError
    ? error
    : new PlannerError({
        kind: 'network',
        url,
        message: error instanceof Error ? error.message : String(error)
      });
}

export class FakePlannerService implements IPlannerService {
  constructor(script: IFakePlannerScript = {}) {
    this.planningScript = [...(script.planning ?? [])];
    this.generatingScript = [...(script.generating ?? [])];
    this.defaultPlanning = script.defaultPlanning ?? { targetAchieved: true };
    this.observer = script.observer ?? {};
  }

  observer: IPlannerObserver;

  planningScript: PlanningScript[];
  generatingScript: GeneratingScript[];
  defaultPlanning: PlanningResponse;
  planningRequests: PlanningRequestInput[] = [];
  generatingRequests: GeneratingRequestInput[] = [];
  /** The notebook given beside each request (`options.notebook`). */
  planningNotebooks: (INotebookSummary | undefined)[] = [];
  generatingNotebooks: (INotebookSummary | undefined)[] = [];
  /** Characters a real service adds to every body; tests set it. */
  requestOverhead?: () => number;
  /** The size of what a real service would send for a request; tests set it. */
  sentSize?: (request: { observation: ObservationInput }) => number | null;

  async planning(
    request: PlanningRequestInput,
    options: { signal?: AbortSignal; notebook?: INotebookSummary } = {}
  ): Promise<PlanningResponse> {
    const url = `${FAKE_PLANNER_URL}/planning`;
    this.planningRequests.push(JSON.parse(JSON.stringify(request)));
    this.planningNotebooks.push(options.notebook);
    this.observer.onRequest?.(url, request);
    try {
      if (options.signal?.aborted) {
        throw abortError();
      }
      const next = this.planningScript.shift() ?? this.defaultPlanning;
      const answer = typeof next === 'function' ? await next(request) : next;
      if (answer instanceof Error) {
        throw answer;
      }
      this.observer.onResponse?.(url, 200, answer, false);
      this.observer.onEnd?.(url);
      return answer;
    } catch (error) {
      this.observer.onEnd?.(url, plannerError(url, error));
      throw error;
    }
  }

  async *generating(
    request: GeneratingRequestInput,
    options: { signal?: AbortSignal; notebook?: INotebookSummary } = {}
  ): AsyncGenerator<GeneratingEvent> {
    const url = `${FAKE_PLANNER_URL}/generating`;
    this.generatingRequests.push(JSON.parse(JSON.stringify(request)));
    this.generatingNotebooks.push(options.notebook);
    this.observer.onRequest?.(url, request);
    try {
      const next = this.generatingScript.shift();
      if (next === undefined) {
        throw new Error('FakePlannerService: no /generating answer scripted');
      }
      const script = typeof next === 'function' ? next(request) : next;
      if (script instanceof Error) {
        throw script;
      }
      this.observer.onResponse?.(url, 200, undefined, true);
      const events =
        script instanceof ActionStream
          ? script.read(options.signal)
          : this._events(
              Array.isArray(script) ? script : script.actions,
              options.signal
            );
      for await (const event of events) {
        if (event.line !== undefined) {
          this.observer.onLine?.(url, event.line);
        }
        yield event;
      }
      if (!Array.isArray(script) && !(script instanceof ActionStream)) {
        throw script.thenFail;
      }
      this.observer.onEnd?.(url);
    } catch (error) {
      this.observer.onEnd?.(url, plannerError(url, error));
      throw error;
    }
  }

  private async *_events(
    actions: AnyAction[],
    signal?: AbortSignal
  ): AsyncGenerator<GeneratingEvent> {
    let index = 0;
    for (const action of actions) {
      if (signal?.aborted) {
        throw abortError();
      }
      yield {
        kind: 'action',
        action,
        index: index++,
        line: JSON.stringify({ action })
      };
    }
  }
}
