import {
  EffectsStore,
  processOutput,
  summarizeRepetitiveLogs,
  truncateOutput,
  MAX_CURRENT_EFFECTS,
  MAX_EFFECT_CHARS,
  truncationMarker
} from '../state/effects';

describe('summarizeRepetitiveLogs', () => {
  it('summarizes the epoch log of OBSERVATION_PROCESSING.md', () => {
    const losses = Array.from({ length: 100 }, (_, i) =>
      (0.5234 - i * 0.001).toFixed(4)
    );
    const lines = losses.map((loss, i) => `Epoch ${i + 1}/100 - loss: ${loss}`);
    const text = [...lines, 'Training complete!'].join('\n');
    expect(summarizeRepetitiveLogs(text)).toBe(
      '<Epoch 1/100 - loss: 0.5234 (repeated 100 times)>\nTraining complete!'
    );
  });

  it('summarizes the 1000-epoch log with two metrics', () => {
    const lines = Array.from(
      { length: 1000 },
      (_, i) =>
        `Epoch ${i + 1}/1000 - loss: 0.${5234 - i}, accuracy: 0.${7821 + i}`
    );
    expect(summarizeRepetitiveLogs(lines.join('\n'))).toBe(
      '<Epoch 1/1000 - loss: 0.5234, accuracy: 0.7821 (repeated 1000 times)>'
    );
  });

  it('needs three lines in a row', () => {
    expect(summarizeRepetitiveLogs('step 1\nstep 2\ndone')).toBe(
      'step 1\nstep 2\ndone'
    );
    expect(summarizeRepetitiveLogs('a\nstep 1\nstep 2\nstep 3\nb')).toBe(
      'a\n<step 1 (repeated 3 times)>\nb'
    );
  });

  it('treats identical lines as repeated and leaves blank lines alone', () => {
    expect(summarizeRepetitiveLogs('x\nx\nx\nx')).toBe(
      '<x (repeated 4 times)>'
    );
    expect(summarizeRepetitiveLogs('a\n\n\n\nb')).toBe('a\n\n\n\nb');
  });

  it('keeps lines that differ in more than numbers', () => {
    const text = 'loading a 1\nloading b 2\nloading c 3';
    expect(summarizeRepetitiveLogs(text)).toBe(text);
  });

  it('summarizes separate runs separately and keeps the trailing newline', () => {
    expect(summarizeRepetitiveLogs('i=1\ni=2\ni=3\nmid\nj=1\nj=2\nj=3\n')).toBe(
      '<i=1 (repeated 3 times)>\nmid\n<j=1 (repeated 3 times)>\n'
    );
  });
});

describe('truncateOutput', () => {
  it('keeps head and tail halves around the exact marker', () => {
    const text = Array.from({ length: 117894 }, (_, i) =>
      String.fromCharCode(97 + (i % 26))
    ).join('');
    expect(text.length).toBe(117894);
    const result = truncateOutput(text);
    const marker =
      '\n\n... [TRUNCATED: 101,894 characters omitted to prevent context overflow] ...\n\n';
    expect(truncationMarker(101894)).toBe(marker);
    expect(result).toBe(text.slice(0, 8000) + marker + text.slice(-8000));
    expect(result.length).toBe(16000 + marker.length);
  });

  it('leaves short text alone', () => {
    expect(truncateOutput('short', 10)).toBe('short');
    expect(truncateOutput('x'.repeat(16000))).toBe('x'.repeat(16000));
  });

  it('splits an odd limit with the larger half at the end', () => {
    const result = truncateOutput('abcdefghij', 5);
    expect(result).toBe(`ab${truncationMarker(5)}hij`);
  });

  it('does not truncate with a limit of 0', () => {
    const text = 'y'.repeat(50000);
    expect(truncateOutput(text, 0)).toBe(text);
  });
});

describe('processOutput', () => {
  it('summarizes before truncating', () => {
    const lines = Array.from({ length: 5000 }, (_, i) => `iter ${i} ok`);
    const text = `${lines.join('\n')}\n${'z'.repeat(30)}`;
    expect(processOutput(text, 100)).toBe(
      `<iter 0 ok (repeated 5000 times)>\n${'z'.repeat(30)}`
    );
    const long = 'q'.repeat(300);
    expect(processOutput(long, 100)).toBe(
      `${'q'.repeat(50)}${truncationMarker(200)}${'q'.repeat(50)}`
    );
  });
});

describe('EffectsStore', () => {
  it('moves current effects to a bounded history', () => {
    let limit = 3;
    const store = new EffectsStore(() => limit);
    store.add('a');
    store.add('b');
    store.rotate();
    store.add('c');
    store.add('d');
    store.rotate();
    expect(store.current).toEqual([]);
    expect(store.history).toEqual(['b', 'c', 'd']);
    store.rotate();
    expect(store.history).toEqual(['b', 'c', 'd']);
    limit = 1;
    store.add('e');
    store.rotate();
    expect(store.history).toEqual(['e']);
  });

  it('takes the planner lists from effects_update and round-trips', () => {
    const store = new EffectsStore(() => 50);
    store.add('local');
    store.replace({ current: ['server'] });
    expect(store.current).toEqual(['server']);
    store.replace({ history: ['h1', 'h2'] });
    const copy = new EffectsStore(() => 50);
    copy.restore(store.toJSON());
    expect(copy.toJSON()).toEqual({
      current: ['server'],
      history: ['h1', 'h2']
    });
  });

  it('keeps the newest current effects of a flood, with a marker counting the rest', () => {
    const store = new EffectsStore(() => 50);
    for (let i = 0; i < 5000; i++) {
      store.add(`warning ${i}`);
    }
    const current = store.current;
    expect(current.length).toBe(MAX_CURRENT_EFFECTS + 1);
    expect(current[0]).toBe(
      `[4,800 earlier effects of this behavior dropped: only the last ${MAX_CURRENT_EFFECTS} are kept]`
    );
    expect(current[1]).toBe('warning 4800');
    expect(current[current.length - 1]).toBe('warning 4999');
    store.rotate();
    expect(store.current).toEqual([]);
    expect(store.history.length).toBe(50);
  });

  it('cuts an effect longer than the limit to a head and a tail', () => {
    const store = new EffectsStore(() => 50);
    store.add('x'.repeat(MAX_EFFECT_CHARS * 4));
    expect(store.current[0].length).toBeLessThan(MAX_EFFECT_CHARS + 200);
    expect(store.current[0]).toContain('[TRUNCATED:');
  });
});
