import {
  ActionLineParser,
  actionEvents,
  actionsInMessage,
  GeneratingEvent,
  MAX_LINE_CHARS,
  NdjsonLineSplitter
} from '..';
import { msg } from '../messages';

const LINES = [
  '{"action": {"action": "new_chapter", "content": "数据分析 📊"}}',
  '{"action": {"action": "add", "shot_type": "dialogue", "content": "开始分析数据… ✅"}}',
  '{"action": {"action": "exec", "codecell_id": "lastAddedCellId"}}'
];
// CRLF, a blank line and a last line without a newline, as servers have sent them.
const STREAM = `${LINES[0]}\r\n\n${LINES[1]}\n${LINES[2]}`;
const BYTES = new TextEncoder().encode(STREAM);

function splitAll(chunks: Uint8Array[]): string[] {
  const splitter = new NdjsonLineSplitter();
  const lines = chunks.flatMap(chunk => splitter.push(chunk));
  return [...lines, ...splitter.flush()];
}

describe('NdjsonLineSplitter', () => {
  it('has multi-byte characters to split (the test would prove nothing otherwise)', () => {
    expect(BYTES.length).toBeGreaterThan(STREAM.length);
  });

  it('yields every line, in order, from one chunk', () => {
    expect(splitAll([BYTES])).toEqual(LINES);
  });

  it('yields identical lines whichever byte the stream is split at', () => {
    for (let at = 0; at <= BYTES.length; at++) {
      const lines = splitAll([BYTES.slice(0, at), BYTES.slice(at)]);
      expect({ at, lines }).toEqual({ at, lines: LINES });
    }
  });

  it('yields identical lines from single-byte chunks', () => {
    const chunks = Array.from(BYTES, byte => Uint8Array.of(byte));
    expect(splitAll(chunks)).toEqual(LINES);
  });

  it('yields identical lines split at every pair of points', () => {
    for (let first = 0; first <= BYTES.length; first += 7) {
      for (let second = first; second <= BYTES.length; second += 5) {
        const lines = splitAll([
          BYTES.slice(0, first),
          BYTES.slice(first, second),
          BYTES.slice(second)
        ]);
        expect(lines).toEqual(LINES);
      }
    }
  });

  it('gives a line as soon as its newline arrives and keeps the partial rest', () => {
    const splitter = new NdjsonLineSplitter();
    const encoder = new TextEncoder();
    expect(splitter.push(encoder.encode(`${LINES[0]}\n{"act`))).toEqual([
      LINES[0]
    ]);
    expect(splitter.push(encoder.encode('ion": 1}'))).toEqual([]);
    expect(splitter.push(encoder.encode('\r\n'))).toEqual(['{"action": 1}']);
    expect(splitter.flush()).toEqual([]);
  });

  it('skips blank and whitespace-only lines', () => {
    const encoder = new TextEncoder();
    expect(splitAll([encoder.encode('\n\n  \r\n{"a":1}\n\n')])).toEqual([
      '{"a":1}'
    ]);
  });

  it('drops a byte-order mark at the start', () => {
    const bom = Uint8Array.of(0xef, 0xbb, 0xbf);
    const body = new TextEncoder().encode('{"a":1}\n');
    expect(splitAll([bom, body])).toEqual(['{"a":1}']);
  });
});

describe('NdjsonLineSplitter on long lines', () => {
  /** Characters String#split and String#indexOf scanned while `work` ran. */
  function scanned(work: () => void): number {
    const split = String.prototype.split as (
      this: string,
      separator: string,
      limit?: number
    ) => string[];
    const indexOf = String.prototype.indexOf;
    let chars = 0;
    const spies = [
      jest.spyOn(String.prototype, 'split').mockImplementation(function (
        this: string,
        separator: string,
        limit?: number
      ) {
        chars += this.length;
        return split.call(this, separator, limit);
      } as typeof String.prototype.split),
      jest.spyOn(String.prototype, 'indexOf').mockImplementation(function (
        this: string,
        search: string,
        from?: number
      ) {
        chars += this.length - (from ?? 0);
        return indexOf.call(this, search, from);
      })
    ];
    try {
      work();
    } finally {
      spies.forEach(spy => spy.mockRestore());
    }
    return chars;
  }

  const CHUNK = 64 * 1024;
  const LONG = 16 * 1024 * 1024;

  function longStream(): Uint8Array[] {
    const encoder = new TextEncoder();
    const chunks = [
      encoder.encode(`${LINES[0]}\n{"action": "add", "content": "`)
    ];
    const filler = encoder.encode('x'.repeat(CHUNK));
    for (let sent = 0; sent < LONG; sent += CHUNK) {
      chunks.push(filler);
    }
    chunks.push(encoder.encode(`"}\n${LINES[2]}\n`));
    return chunks;
  }

  it('scans a 16 MB line in 64 KiB chunks once, not once per chunk', () => {
    const chunks = longStream();
    const total = chunks.reduce((sum, c) => sum + c.length, 0);
    const splitter = new NdjsonLineSplitter();
    const chars = scanned(() => {
      chunks.forEach(chunk => splitter.pushItems(chunk));
      splitter.flushItems();
    });
    // Quadratic splitting scans about 2 GB here.
    expect(chars).toBeLessThan(2 * total);
  });

  it('drops a line over the limit, says how long it was, and goes on', () => {
    const splitter = new NdjsonLineSplitter();
    const items = [
      ...longStream().flatMap(chunk => splitter.pushItems(chunk)),
      ...splitter.flushItems()
    ];
    expect(items).toEqual([
      LINES[0],
      {
        overlong: LONG + 32,
        head: '{"action": "add", "content": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'
      },
      LINES[2]
    ]);
    expect(LONG).toBeGreaterThan(MAX_LINE_CHARS);
  });

  it('keeps a line just under the limit', () => {
    const splitter = new NdjsonLineSplitter({ maxLineChars: 10 });
    const encoder = new TextEncoder();
    expect(
      splitter.push(encoder.encode('0123456789\n01234567890\nab'))
    ).toEqual(['0123456789']);
    expect(splitter.flush()).toEqual(['ab']);
  });

  it('makes an over-long line a warning of the stream, and goes on', async () => {
    async function* chunks() {
      yield* longStream();
    }
    const events: GeneratingEvent[] = [];
    for await (const event of actionEvents(
      chunks(),
      'POST http://planner.test/generating'
    )) {
      events.push(event);
    }
    expect(events.map(e => e.kind)).toEqual(['action', 'warning', 'action']);
    expect(events[1]).toMatchObject({
      kind: 'warning',
      message: expect.stringMatching(
        /^POST http:\/\/planner\.test\/generating: line of 16,777,248 characters dropped \(the limit is 4,194,304\): \{"action"/
      )
    });
  });
});

describe('actionsInMessage', () => {
  it('reads the documented line, bare actions and batches', () => {
    const add = { action: 'add', content: 'a' };
    expect(actionsInMessage({ action: add })).toEqual({ actions: [add] });
    expect(actionsInMessage(add)).toEqual({ actions: [add] });
    expect(actionsInMessage({ type: 'add', content: 'a' })).toEqual({
      actions: [{ type: 'add', content: 'a' }]
    });
    expect(actionsInMessage({ actions: [{ action: add }, add] })).toEqual({
      actions: [add, add]
    });
    expect(actionsInMessage([{ action: add }])).toEqual({ actions: [add] });
  });

  it('reads null fields of a line as absent: a status line with action and error null is a notice', () => {
    expect(
      actionsInMessage({ status: 'thinking', action: null, error: null })
    ).toEqual({ ignored: msg('lineWithoutAction'), notice: true });
    expect(
      actionsInMessage({ type: 'show_table', error: null, action: null })
    ).toEqual({ actions: [{ type: 'show_table' }] });
  });

  it('says why a message holds no action', () => {
    expect(actionsInMessage('text')).toEqual({
      ignored: msg('lineNotAnObject')
    });
    expect(actionsInMessage({ error: 'overloaded' })).toEqual({
      ignored: msg('plannerReportedError', 'overloaded')
    });
    expect(actionsInMessage({ action: ['add'] })).toEqual({
      ignored: msg('lineWithoutAction')
    });
  });
});

describe('actionEvents', () => {
  async function* chunksOf(text: string, size: number) {
    const bytes = new TextEncoder().encode(text);
    for (let i = 0; i < bytes.length; i += size) {
      yield bytes.slice(i, i + size);
    }
  }

  it('turns chunks into lines and lines into numbered actions, in order', async () => {
    const seen: string[] = [];
    const events: GeneratingEvent[] = [];
    for await (const event of actionEvents(
      chunksOf(`${STREAM}\n{"note": 1}\n`, 7),
      'POST http://planner.test/generating',
      line => seen.push(line)
    )) {
      events.push(event);
    }
    expect(seen).toEqual([...LINES, '{"note": 1}']);
    expect(events.map(e => (e.kind === 'action' ? e.index : e.kind))).toEqual([
      0,
      1,
      2,
      'notice'
    ]);
    // The English text for logs and the planner, and the same as an id the UI translates.
    expect(events[3]).toEqual({
      kind: 'notice',
      message:
        'POST http://planner.test/generating: ignored line without action: {"note": 1}',
      text: msg(
        'lineProblem',
        'POST http://planner.test/generating',
        msg('lineWithoutAction'),
        '{"note": 1}'
      ),
      line: '{"note": 1}'
    });
  });
});

describe('lines without an action and custom actions keyed by type', () => {
  async function eventsOf(text: string): Promise<GeneratingEvent[]> {
    const events: GeneratingEvent[] = [];
    const bytes = new TextEncoder().encode(text);
    async function* one() {
      yield bytes;
    }
    for await (const event of actionEvents(one(), 'POST /generating')) {
      events.push(event);
    }
    return events;
  }

  it('makes a heartbeat a notice, and a broken action field or an error line a warning', async () => {
    const events = await eventsOf(
      '{"heartbeat": 1}\n{"action": ["add"]}\n{"error": "overloaded"}\n'
    );
    expect(events.map(e => e.kind)).toEqual(['notice', 'warning', 'warning']);
  });

  it('passes a custom action keyed by type on, marked as named by type only', async () => {
    const events = await eventsOf(
      '{"type": "show_chart", "url": "a.png"}\n{"type": "add", "content": "x"}\n'
    );
    expect(events).toEqual([
      {
        kind: 'action',
        action: { action: 'show_chart', url: 'a.png' },
        index: 0,
        line: '{"type": "show_chart", "url": "a.png"}',
        typeOnly: true
      },
      {
        kind: 'action',
        action: { action: 'add', content: 'x' },
        index: 1,
        line: '{"type": "add", "content": "x"}'
      }
    ]);
  });
});

describe('ActionLineParser: a first line that is not JSON', () => {
  const ADD = '{"action": {"action": "add", "content": "a"}}';

  it('applies each later action as its line arrives when the first line is a status text', () => {
    const parser = new ActionLineParser('POST http://planner.test/generating');
    const first = parser.line('INFO: generating the next behavior');
    expect(first).toEqual([
      expect.objectContaining({
        kind: 'warning',
        message: expect.stringContaining('INFO: generating the next behavior')
      })
    ]);
    expect(parser.line(ADD).map(e => e.kind)).toEqual(['action']);
    expect(parser.end()).toEqual([]);
  });

  it('warns that an ARCHITECTURE-style body loses its transition and context_update (they belong to /planning)', () => {
    const parser = new ActionLineParser('POST http://planner.test/generating');
    const body = {
      behavior: { id: 'behavior_004', iteration: 4 },
      actions: [
        { type: 'add_content', content_type: 'text', content: '## Section 2' }
      ],
      transition: { continue_behaviors: true, target_achieved: false },
      context_update: { variables: { data_shape: '(2930, 82)' } }
    };
    const events = [
      ...parser.line(JSON.stringify(body, null, 2).split('\n')[0]),
      ...JSON.stringify(body, null, 2)
        .split('\n')
        .slice(1)
        .flatMap(line => parser.line(line)),
      ...parser.end()
    ];
    expect(events.map(e => e.kind)).toEqual(['action', 'warning']);
    const warning = events[1];
    expect(warning.kind === 'warning' && warning.text).toMatchObject({
      id: 'lineProblem',
      params: [
        'POST http://planner.test/generating',
        msg('generatingFieldsIgnored', 'transition, context_update'),
        expect.any(String)
      ]
    });
    expect(warning.kind === 'warning' && warning.message).toMatch(
      /transition, context_update ignored: .*\/planning/
    );
    // A body of actions alone, or with null fields, says nothing more.
    expect(
      new ActionLineParser('POST x')
        .line(JSON.stringify({ actions: [], transition: null }))
        .map(e => e.kind)
    ).toEqual([]);
  });

  it('reads a pretty-printed JSON document whole, at the end', () => {
    const parser = new ActionLineParser('POST http://planner.test/generating');
    const lines = [
      '[',
      '  {"action": "add", "content": "a"},',
      '  {"action": "add", "content": "b"}',
      ']'
    ];
    expect(lines.flatMap(line => parser.line(line))).toEqual([]);
    expect(
      parser.end().map(e => (e.kind === 'action' ? e.action : e.kind))
    ).toEqual([
      { action: 'add', content: 'a' },
      { action: 'add', content: 'b' }
    ]);
  });
});
