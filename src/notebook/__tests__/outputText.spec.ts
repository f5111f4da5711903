import { stripAnsi } from '../ansi';
import { outputsToText } from '../outputText';

describe('stripAnsi', () => {
  it('removes colours, cursor moves and terminal titles', () => {
    expect(stripAnsi('\x1b[0;31mred\x1b[0m \x1b[1;32;40mgreen\x1b[0m')).toBe(
      'red green'
    );
    expect(stripAnsi('a\x1b[2Kb\x1b[1Ac')).toBe('abc');
    expect(stripAnsi('\x1b]0;title\x07text\x1b]8;;http://x\x1b\\link')).toBe(
      'textlink'
    );
    expect(stripAnsi('plain [text] stays')).toBe('plain [text] stays');
  });
});

describe('outputsToText', () => {
  it('joins streams as printed and puts other outputs on their own lines', () => {
    const { text, error } = outputsToText([
      { output_type: 'stream', name: 'stdout', text: 'a' },
      { output_type: 'stream', name: 'stdout', text: ['b\n', 'c'] },
      {
        output_type: 'display_data',
        data: { 'text/plain': ['x', 'y'], 'image/png': 'AAAA' },
        metadata: {}
      },
      { output_type: 'stream', name: 'stderr', text: 'warn\n' },
      {
        output_type: 'execute_result',
        execution_count: 1,
        data: { 'text/html': '<b>only html</b>' },
        metadata: {}
      }
    ]);
    expect(text).toBe('ab\nc\nxy\n[image/png]\nwarn\n[text/html]');
    expect(error).toBeNull();
  });

  it('writes errors as ename: evalue and the traceback, without ANSI', () => {
    const { text, error } = outputsToText([
      { output_type: 'stream', name: 'stdout', text: 'before\n' },
      {
        output_type: 'error',
        ename: 'ValueError',
        evalue: 'bad',
        traceback: ['\x1b[0;31mTraceback\x1b[0m', 'ValueError: bad']
      }
    ]);
    expect(text).toBe('before\nValueError: bad\nTraceback\nValueError: bad');
    expect(error).toEqual({ ename: 'ValueError', evalue: 'bad' });
  });

  it('is empty for no outputs', () => {
    expect(outputsToText([])).toEqual({ text: '', error: null });
  });
});
