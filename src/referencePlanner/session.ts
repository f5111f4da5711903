/**
 * What the planner remembers per notebook between requests. It is only a memory aid: every decision
 * can also be derived from the observation alone (see `planner.ts`), so losing a session, or a client
 * resuming against a restarted planner, still gives a sensible next step.
 */
import type { Decision } from './decision';

export interface IStepMemory {
  /** Behaviors of this step that ended without reaching the target (ids, so a repeated request counts once). */
  failedBehaviors: string[];
  /** Approach ids already sent for this step, in order. */
  tried: string[];
  lastError: string | null;
  /** The last failure was an error the step's code raised (a traceback), not a fault of the run. */
  codeFailed: boolean;
  /** The explanatory "giving up" behavior was sent. */
  gaveUp: boolean;
  /** For the findings step: the report cell was sent. */
  published: boolean;
  /** For the findings step: the report text as printed by the kernel. */
  report: string | null;
  /** `/planning` has judged this step at least once since it (re)started. */
  planned: boolean;
  /** The decision of the last `/planning` answer, which `/generating` carries out. */
  next: Decision | null;
  /** An attempt showed that the kernel cannot import pandas, so no step can run. */
  noPandas: boolean;
  /** The user's notes on this step quoted since it (re)started (`notes.ts`). */
  quotedNotes: string[];
}

export interface INotebookSession {
  id: string;
  steps: Map<string, IStepMemory>;
  /** The data's columns, once the load step printed them, and the data file they belong to. */
  columns: { dataPath: string | null; names: string[] } | null;
  /** The user's notes quoted in this session (`notes.ts`). */
  quotedNotes: Set<string>;
}

export function emptyStepMemory(): IStepMemory {
  return {
    failedBehaviors: [],
    tried: [],
    lastError: null,
    codeFailed: false,
    gaveUp: false,
    published: false,
    report: null,
    planned: false,
    next: null,
    noPandas: false,
    quotedNotes: []
  };
}

export class SessionStore {
  constructor(private readonly _limit = 256) {}

  get(notebookId: string): INotebookSession {
    let session = this._sessions.get(notebookId);
    if (session) {
      // Re-insert so the Map's order is least recently used first.
      this._sessions.delete(notebookId);
    } else {
      session = {
        id: notebookId,
        steps: new Map(),
        columns: null,
        quotedNotes: new Set()
      };
    }
    this._sessions.set(notebookId, session);
    while (this._sessions.size > this._limit) {
      const oldest = this._sessions.keys().next().value;
      if (oldest === undefined) {
        break;
      }
      this._sessions.delete(oldest);
    }
    return session;
  }

  private _sessions = new Map<string, INotebookSession>();
}

export function stepMemory(
  session: INotebookSession,
  stepId: string
): IStepMemory {
  let memory = session.steps.get(stepId);
  if (!memory) {
    memory = emptyStepMemory();
    session.steps.set(stepId, memory);
  }
  return memory;
}
