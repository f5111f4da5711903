import { stripAnsi } from '../ansi';
import { imageNote, outputsToText } from '../outputText';

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

/** Base64 of `header` followed by zero bytes up to `size`. */
function base64Of(header: number[], size: number): string {
  const bytes = new Uint8Array(size);
  bytes.set(header);
  let binary = '';
  for (const byte of bytes) {
    binary += String.fromCharCode(byte);
  }
  return btoa(binary);
}

const be32 = (n: number): number[] => [
  n >>> 24,
  (n >>> 16) & 255,
  (n >>> 8) & 255,
  n & 255
];
const PNG_640x480 = [
  0x89,
  0x50,
  0x4e,
  0x47,
  0x0d,
  0x0a,
  0x1a,
  0x0a,
  ...be32(13),
  ...[0x49, 0x48, 0x44, 0x52],
  ...be32(640),
  ...be32(480)
];

describe('image outputs as effect text', () => {
  it('gives kind, dimensions and size of a figure, never its data', () => {
    const png = base64Of(PNG_640x480, 38 * 1024);
    const { text } = outputsToText([
      {
        output_type: 'display_data',
        data: {
          'text/plain': '<Figure size 640x480 with 1 Axes>',
          'image/png': png
        },
        metadata: {}
      }
    ]);
    expect(text).toBe(
      '<Figure size 640x480 with 1 Axes>\n[image/png 640×480, 38 KB]'
    );
    expect(text).not.toContain(png.slice(0, 40));
  });

  it('reads JPEG and GIF headers, SVG attributes, and falls back to the metadata size', () => {
    const jpeg = base64Of(
      [
        0xff,
        0xd8,
        0xff,
        0xe0,
        0x00,
        0x04,
        0,
        0,
        0xff,
        0xc0,
        0x00,
        0x11,
        0x08,
        ...[0x01, 0x2c],
        ...[0x01, 0x90]
      ],
      2048
    );
    expect(imageNote('image/jpeg', jpeg)).toBe('[image/jpeg 400×300, 2 KB]');
    const gif = base64Of(
      [0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x20, 0x00, 0x10, 0x00],
      100
    );
    expect(imageNote('image/gif', gif)).toBe('[image/gif 32×16, 100 B]');
    expect(
      imageNote(
        'image/svg+xml',
        '<svg xmlns="http://www.w3.org/2000/svg" width="300pt" height="200pt"></svg>'
      )
    ).toBe('[image/svg+xml 300×200, 75 B]');
    expect(
      imageNote('image/webp', base64Of([1, 2, 3], 3000), {
        width: 120,
        height: 80
      })
    ).toBe('[image/webp 120×80, 3 KB]');
    expect(imageNote('image/webp', base64Of([1, 2, 3], 3000))).toBe(
      '[image/webp, 3 KB]'
    );
  });

  it('names only the kind when the data is not an image of that kind', () => {
    expect(imageNote('image/png', 'AAAA')).toBe('[image/png]');
    expect(imageNote('image/png', 'not base64 at all!')).toBe('[image/png]');
    expect(imageNote('image/jpeg', base64Of(PNG_640x480, 100))).toBe(
      '[image/jpeg]'
    );
  });

  it('takes the base64 as a list of lines too', () => {
    const png = base64Of(PNG_640x480, 1000);
    const lines = [png.slice(0, 76) + '\n', png.slice(76)];
    expect(imageNote('image/png', lines)).toBe('[image/png 640×480, 1000 B]');
  });
});
