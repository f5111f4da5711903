/**
 * Every dialect reads a streamed body through `readLines` (actionStream.ts), and detection hands out
 * the adapter it chose, whose own stream reaches the engine.
 */
import { type GeneratingEvent, MAX_LINE_CHARS } from '../../actionStream';
import type { GeneratingRequestInput } from '../../schemas';
import { BccAdapter } from '../bcc/adapter';
import { emptyPlan, level } from '../bcc/plan';
import type { IDialectAdapter } from '../dialect';
import { DslcAdapter } from '../dslc/adapter';
import { type DialectName, DIALECTS } from '../registry';
import { createDialectSelector } from '../selector';
import { V1Adapter } from '../v1/adapter';
import { withAdapter } from './fakeDialects';
import { collect, FakeTransport, json, text } from './fakeTransport';
import { request as v1Request, STAGE, STEP, state } from './v1Fixtures';

/** A streamed body of these chunks, as they are given. */
function body(chunks: Uint8Array[]): Response {
  let next = 0;
  return new Response(
    new ReadableStream<Uint8Array>({
      pull(controller) {
        if (next < chunks.length) {
          controller.enqueue(chunks[next++]);
        } else {
          controller.close();
        }
      }
    }),
    { status: 200, headers: { 'Content-Type': 'application/x-ndjson' } }
  );
}

/** The bytes of `lines` (one per line), each byte a chunk of its own: every UTF-8 character is cut. */
function byteByByte(lines: string[]): Uint8Array[] {
  const bytes = new TextEncoder().encode(lines.map(l => `${l}\n`).join(''));
  return [...bytes].map(b => Uint8Array.of(b));
}

/** One add line as each dialect's server writes it. */
const ADD_LINE: Record<DialectName, (content: string) => string> = {
  dslc: content =>
    JSON.stringify({ action: 'add', shot_type: 'dialogue', content }),
  v1: content =>
    JSON.stringify({
      action: {
        action: 'add',
        shot_type: 'dialogue',
        content,
        state: state(['next'])
      }
    }),
  bcc: content => JSON.stringify({ type: 'add', content })
};

/** One behavior's events from each dialect's adapter, its answer's body made of `chunks`. */
async function eventsOf(
  dialect: DialectName,
  chunks: Uint8Array[]
): Promise<GeneratingEvent[]> {
  const transport = new FakeTransport(() => body(chunks));
  const generating: GeneratingRequestInput = v1Request(STAGE, STEP);
  if (dialect === 'dslc') {
    return collect(
      new DslcAdapter({
        transport,
        observer: { onWarning: () => undefined }
      }).generating(generating)
    );
  }
  if (dialect === 'v1') {
    return collect(new V1Adapter({ transport }).generating(generating));
  }
  const bcc = new BccAdapter({ transport });
  // A behavior already planned: the adapter goes straight to /generating.
  bcc.restoreState({
    plan: {
      ...emptyPlan(),
      behaviors: {
        ...level(),
        current: {
          behavior_id: 'b1',
          task: 'read',
          inputs: {},
          outputs: [],
          acceptance: []
        }
      },
      fsm: { state: 'STEP_RUNNING', last_transition: 'START_BEHAVIOR' }
    }
  });
  return collect(bcc.generating(generating));
}

/** Every dialect of the registry. */
const DIALECT_NAMES = DIALECTS.map(dialect => dialect.name);

/** Each event in words, the planner's address left out (each dialect has its own). */
function described(events: GeneratingEvent[]): string[] {
  return events.map(event =>
    event.kind === 'action'
      ? `${event.action.action}: ${String((event.action as { content?: unknown }).content)}`
      : `${event.kind}: ${event.message.replace(/POST http:\/\/planner\.test\/[\w/]+/, 'POST <url>')}`
  );
}

describe('one reader of a streamed body, for every dialect', () => {
  it.each(DIALECT_NAMES)(
    '%s: keeps a UTF-8 character cut between two chunks whole',
    async dialect => {
      const content = 'Données 数据 ✓ 📈';
      const events = await eventsOf(
        dialect,
        byteByByte([ADD_LINE[dialect](content)])
      );
      expect(described(events)).toEqual([`add: ${content}`]);
    }
  );

  it('drops an over-long line with the same warning in dslc, v1 and bcc, and reads on', async () => {
    const encoder = new TextEncoder();
    const long = `{"content":     "${'x'.repeat(MAX_LINE_CHARS)}"}\n`;
    const seen = await Promise.all(
      DIALECT_NAMES.map(async dialect =>
        described(
          await eventsOf(dialect, [
            encoder.encode(long.slice(0, 1000)),
            encoder.encode(long.slice(1000)),
            ...byteByByte([ADD_LINE[dialect]('after')])
          ])
        )
      )
    );
    expect(seen[0]).toEqual([
      expect.stringMatching(
        /^warning: POST <url>: .*4,194,3\d\d characters.*4,194,304/
      ),
      'add: after'
    ]);
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[2]).toEqual(seen[0]);
  });
});

describe('detection hands out the adapter it chose', () => {
  /** A dslc adapter whose stream is one object, to tell it from anything wrapped around it. */
  function ownStream() {
    const stream: AsyncIterable<GeneratingEvent> = {
      async *[Symbol.asyncIterator]() {
        yield* [];
      }
    };
    const calls: string[] = [];
    const dslc: IDialectAdapter = {
      dialect: 'dslc',
      async planning() {
        calls.push('planning');
        return { targetAchieved: false };
      },
      generating() {
        calls.push('generating');
        return stream;
      }
    };
    return { dslc, stream, calls };
  }

  it('probes once, then gives the adapter and its own stream, with nothing in between', async () => {
    const transport = new FakeTransport(() => json({ targetAchieved: false }));
    const { dslc, stream, calls } = ownStream();
    const service = createDialectSelector({
      protocol: 'auto',
      transport,
      dialects: withAdapter('dslc', dslc),
      cache: new Map<string, DialectName>()
    });
    expect(service.adapter()).toBeNull();
    await service.planning(v1Request(null, null));
    expect(service.adapter()).toBe(dslc);
    const generating = v1Request(STAGE, STEP);
    expect(service.generating(generating)).toBe(stream);
    expect(service.generating(generating)).toBe(stream);
    expect(transport.requests).toHaveLength(1);
    expect(calls).toEqual(['generating', 'generating']);
  });

  it('hands out one bcc adapter for the run, the one that got the probe’s answer', async () => {
    const transport = new FakeTransport(() =>
      text(
        '<stages><remaining><stage id="s" title="S"><goal>g</goal></stage></remaining></stages>'
      )
    );
    const service = createDialectSelector({
      protocol: 'auto',
      transport,
      dialects: withAdapter('dslc', ownStream().dslc),
      cache: new Map<string, DialectName>()
    });
    await service.planning(v1Request(null, null)).catch(() => undefined);
    const adapter = service.adapter();
    expect(adapter).toBeInstanceOf(BccAdapter);
    expect(service.adapter()).toBe(adapter);
    expect(transport.paths()[0]).toBe('POST planning');
    expect(
      transport.paths().filter(path => path === 'POST planning')
    ).toHaveLength(2);
  });

  it('waits for an answer before it trusts a dialect the cache remembers', async () => {
    const transport = new FakeTransport(() => json({ targetAchieved: false }));
    const { dslc } = ownStream();
    const service = createDialectSelector({
      protocol: 'auto',
      transport,
      dialects: withAdapter('dslc', dslc),
      cache: new Map<string, DialectName>([['http://planner.test', 'dslc']])
    });
    expect(service.adapter()).toBeNull();
    expect(service.dialect).toBe('dslc');
    await service.planning(v1Request(null, null));
    expect(service.adapter()).toBe(dslc);
    expect(transport.requests).toHaveLength(0);
  });
});
