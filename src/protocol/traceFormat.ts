/**
 * The run trace: one JSON object per line (JSONL). The engine writes it, the reference planner's
 * `--replay` reads it. `t` is milliseconds since the run started.
 */
export type TraceRecord =
  | {
      kind: 'request';
      seq: number;
      t: number;
      endpoint: string;
      body: unknown;
    }
  | {
      kind: 'response';
      seq: number;
      t: number;
      endpoint: string;
      status: number;
      /** Parsed JSON body for non-streamed answers; absent for a stream (see `line`). */
      body?: unknown;
      /** True when the answer is an NDJSON stream; its lines follow as `line` records. */
      stream?: boolean;
    }
  | {
      kind: 'line';
      seq: number;
      t: number;
      endpoint: string;
      /** The raw line as received, without its newline. */
      line: string;
    }
  | {
      kind: 'end';
      seq: number;
      t: number;
      endpoint: string;
      /** Set when the request failed (network error, abort, timeout). */
      error?: string;
    };
