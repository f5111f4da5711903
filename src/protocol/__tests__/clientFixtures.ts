/** Fakes shared by the DslcAdapter specs: a recording fetch, streamed and JSON answers. */
import {
  GeneratingEvent,
  IDslcAdapterOptions,
  DslcAdapter,
  PlannerError
} from '..';
import type { IMessageText } from '../messages';

export const BASE = 'http://planner.test';
export const REQUEST = {
  observation: { location: {} },
  options: { stream: true }
};
export const encoder = new TextEncoder();

export type Call = { url: string; init: RequestInit };

/** A fetch that answers with `respond(url, call index)` and records every call. */
export function fakeFetch(
  respond: (
    url: string,
    index: number,
    init: RequestInit
  ) => Promise<Response> | Response
) {
  const calls: Call[] = [];
  const fetch = async (url: string, init: RequestInit): Promise<Response> => {
    calls.push({ url, init });
    return respond(url, calls.length - 1, init);
  };
  return { fetch, calls };
}

/** A body the test feeds by hand. */
export function controlledBody() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    }
  });
  return {
    stream,
    push: (text: string) => controller.enqueue(encoder.encode(text)),
    close: () => controller.close()
  };
}

export function streamResponse(
  text: string,
  init: ResponseInit = {}
): Response {
  const bytes = encoder.encode(text);
  // Several chunks, cut inside multi-byte characters too, as a network would deliver them.
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < bytes.length; i += 5) {
        controller.enqueue(bytes.slice(i, i + 5));
      }
      controller.close();
    }
  });
  return new Response(stream, {
    status: 200,
    headers: { 'content-type': 'application/x-ndjson' },
    ...init
  });
}

export function jsonResponse(body: unknown, init: ResponseInit = {}): Response {
  return new Response(JSON.stringify(body), {
    status: 200,
    headers: { 'content-type': 'application/json' },
    ...init
  });
}

export function line(action: Record<string, unknown>): string {
  return `${JSON.stringify({ action })}\n`;
}

export function makeClient(
  fetch: IDslcAdapterOptions['fetch'],
  options: IDslcAdapterOptions = {}
) {
  const warnings: string[] = [];
  /** The warnings as told: English and the message id. */
  const reports: IMessageText[] = [];
  const sleeps: number[] = [];
  const client = new DslcAdapter({
    baseUrl: `${BASE}/`,
    fetch,
    retryBaseDelayMs: 10,
    sleep: async ms => {
      sleeps.push(ms);
    },
    ...options,
    observer: [
      ...(options.observer ? [options.observer].flat() : []),
      {
        onWarning: (_endpoint, warning) => {
          warnings.push(warning.message);
          reports.push(warning);
        }
      }
    ]
  });
  return { client, warnings, reports, sleeps };
}

export async function collect(
  events: AsyncIterable<GeneratingEvent>
): Promise<GeneratingEvent[]> {
  const out: GeneratingEvent[] = [];
  for await (const event of events) {
    out.push(event);
  }
  return out;
}

export function actionsOf(events: GeneratingEvent[]): unknown[] {
  return events.flatMap(event =>
    event.kind === 'action' ? [event.action] : []
  );
}

export function warningsOf(events: GeneratingEvent[]): string[] {
  return events.flatMap(event =>
    event.kind === 'warning' ? [event.message] : []
  );
}

export async function failureOf(work: Promise<unknown>): Promise<PlannerError> {
  try {
    await work;
  } catch (error) {
    expect(error).toBeInstanceOf(PlannerError);
    return error as PlannerError;
  }
  throw new Error('expected a PlannerError');
}
