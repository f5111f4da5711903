/**
 * Builds run traces (the engine's JSONL `TraceRecord`s) for the reference planner's `--replay`: a
 * scripted sequence of /planning answers and /generating streams, with the gaps between streamed
 * lines chosen by the script. The planner answers the requests in this order, whatever they contain.
 */
import type { TraceRecord } from '../traceFormat';

/** One streamed line: an action (sent as `{"action": ...}`) or a raw line sent as it is. */
export type StreamLine = { action: Record<string, unknown> } | { raw: string };

export interface IStreamOptions {
  /** Milliseconds before each line (default 0); a single number applies to every line. */
  gapMs?: number | number[];
  /** Milliseconds before the answer starts. */
  firstByteMs?: number;
}

export class ReplayTraceBuilder {
  /** Answers one /planning request with `answer` (a JSON body). */
  planning(answer: unknown, status = 200): this {
    const seq = this._open('/planning');
    this._push({
      kind: 'response',
      seq,
      t: this._t,
      endpoint: '/planning',
      status,
      body: answer
    });
    this._push({ kind: 'end', seq, t: this._t, endpoint: '/planning' });
    return this;
  }

  /** Answers one /generating request with an NDJSON stream of these lines. */
  generating(lines: StreamLine[], options: IStreamOptions = {}): this {
    const seq = this._open('/generating');
    this._t += options.firstByteMs ?? 0;
    this._push({
      kind: 'response',
      seq,
      t: this._t,
      endpoint: '/generating',
      status: 200,
      stream: true
    });
    lines.forEach((line, i) => {
      const gap = options.gapMs;
      this._t += (Array.isArray(gap) ? gap[i] : gap) ?? 0;
      this._push({
        kind: 'line',
        seq,
        t: this._t,
        endpoint: '/generating',
        line: 'raw' in line ? line.raw : JSON.stringify({ action: line.action })
      });
    });
    this._push({ kind: 'end', seq, t: this._t, endpoint: '/generating' });
    return this;
  }

  /** Shorthand: a stream of actions. */
  actions(actions: Record<string, unknown>[], options?: IStreamOptions): this {
    return this.generating(
      actions.map(action => ({ action })),
      options
    );
  }

  get requests(): number {
    return this._seq;
  }

  toJSONL(): string {
    return this._records.map(r => JSON.stringify(r) + '\n').join('');
  }

  /** Writes the trace with `writeFile` (Node's `fs.writeFileSync`: this module also builds for browsers). */
  write(file: string, writeFile: (file: string, text: string) => void): string {
    writeFile(file, this.toJSONL());
    return file;
  }

  private _open(endpoint: string): number {
    const seq = ++this._seq;
    this._push({ kind: 'request', seq, t: this._t, endpoint, body: {} });
    return seq;
  }

  private _push(record: TraceRecord): void {
    this._records.push(record);
  }

  private _records: TraceRecord[] = [];
  private _seq = 0;
  private _t = 0;
}

/** A workflow of one stage with the given steps. */
export function workflow(
  name: string,
  steps: Array<{ id: string; name: string; expected_outputs?: string[] }>
): Record<string, unknown> {
  return {
    name,
    stages: [{ id: 'main', name, steps }]
  };
}

/** The first /planning answer of a run: the workflow, and "go on with a behavior". */
export function startAnswer(
  template: Record<string, unknown>,
  extra: Record<string, unknown> = {}
): Record<string, unknown> {
  const update = (extra.context_update ?? {}) as Record<string, unknown>;
  return {
    ...extra,
    targetAchieved: false,
    transition: { continue_behaviors: true, target_achieved: false },
    context_update: {
      ...update,
      workflow_update: { workflowTemplate: template }
    }
  };
}

/** "Not there yet: another behavior." */
export function continueAnswer(
  extra: Record<string, unknown> = {}
): Record<string, unknown> {
  return {
    ...extra,
    targetAchieved: false,
    transition: { continue_behaviors: true, target_achieved: false }
  };
}

/** "The step's target is achieved." */
export function achievedAnswer(): Record<string, unknown> {
  return {
    targetAchieved: true,
    transition: { continue_behaviors: false, target_achieved: true }
  };
}
