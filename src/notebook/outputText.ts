import type * as nbformat from '@jupyterlab/nbformat';
import { stripAnsi } from './ansi';

/** A cell's outputs as one text, and the first error among them. */
export interface ICellOutputText {
  text: string;
  error: { ename: string; evalue: string } | null;
}

/**
 * Joins a code cell's outputs in order: stream text as it came, `text/plain` of results and displays
 * (with a `[image/png 640×480, 38 KB]`-style note for each image, never its data), errors as
 * `ename: evalue` and their traceback.
 */
export function outputsToText(
  outputs: ReadonlyArray<nbformat.IOutput>
): ICellOutputText {
  let text = '';
  let lastWasStream = false;
  let error: ICellOutputText['error'] = null;
  // Consecutive stream chunks join as printed; any other output starts on its own line.
  const append = (piece: string, isStream = false) => {
    if (!piece) {
      return;
    }
    if (!(isStream && lastWasStream) && text && !text.endsWith('\n')) {
      text += '\n';
    }
    text += piece;
    lastWasStream = isStream;
  };
  for (const output of outputs) {
    switch (output.output_type) {
      case 'stream':
        append(multiline((output as nbformat.IStream).text), true);
        break;
      case 'execute_result':
      case 'display_data':
      case 'update_display_data':
        append(
          mimeBundleText(
            (output as nbformat.IDisplayData).data,
            (output as nbformat.IDisplayData).metadata
          )
        );
        break;
      case 'error': {
        const { ename, evalue, traceback } = output as nbformat.IError;
        error ??= { ename, evalue };
        append([`${ename}: ${evalue}`, ...(traceback ?? [])].join('\n'));
        break;
      }
      default:
        break;
    }
  }
  return { text: stripAnsi(text).trimEnd(), error };
}

function multiline(value: nbformat.MultilineString | undefined): string {
  return Array.isArray(value) ? value.join('') : (value ?? '');
}

function mimeBundleText(
  data: nbformat.IMimeBundle | undefined,
  metadata: nbformat.OutputMetadata | undefined
): string {
  if (!data) {
    return '';
  }
  const lines: string[] = [];
  const plain = data['text/plain'];
  if (plain !== undefined) {
    lines.push(multiline(plain as nbformat.MultilineString));
  }
  for (const mime of Object.keys(data)) {
    if (mime.startsWith('image/')) {
      lines.push(imageNote(mime, data[mime], metadata?.[mime]));
    }
  }
  if (!lines.length) {
    lines.push(...Object.keys(data).map(mime => `[${mime}]`));
  }
  return lines.join('\n');
}

/**
 * `[image/png 640×480, 38 KB]`: what a planner can use of an image. The size is of the decoded bytes;
 * the dimensions come from the image's header, else from the output's metadata. Data that is not an
 * image of its declared type gets only `[image/png]`.
 */
export function imageNote(
  mime: string,
  value: unknown,
  metadata?: unknown
): string {
  const text =
    typeof value === 'string'
      ? value
      : multiline(value as nbformat.MultilineString);
  const isSvg = mime === 'image/svg+xml';
  const bytes = isSvg ? null : decodeBase64(text);
  const known = bytes ? binaryDimensions(mime, bytes) : undefined;
  if (known === null) {
    return `[${mime}]`;
  }
  const size = isSvg
    ? new TextEncoder().encode(text).length
    : (bytes?.length ?? 0);
  if (!size) {
    return `[${mime}]`;
  }
  const dimensions =
    known ??
    (isSvg ? svgDimensions(text) : null) ??
    metadataDimensions(metadata);
  return `[${mime}${dimensions ? ` ${dimensions.width}×${dimensions.height}` : ''}, ${formatBytes(size)}]`;
}

interface IDimensions {
  width: number;
  height: number;
}

function formatBytes(size: number): string {
  if (size < 1024) {
    return `${size} B`;
  }
  if (size < 1024 * 1024) {
    return `${Math.round(size / 1024)} KB`;
  }
  return `${(size / (1024 * 1024)).toFixed(1)} MB`;
}

function decodeBase64(text: string): Uint8Array | null {
  try {
    const binary = atob(text.replace(/\s+/g, ''));
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) {
      bytes[i] = binary.charCodeAt(i);
    }
    return bytes;
  } catch {
    return null;
  }
}

/** Dimensions from the header; null when the bytes are not of that type; undefined for types not read. */
function binaryDimensions(
  mime: string,
  bytes: Uint8Array
): IDimensions | null | undefined {
  const u32 = (at: number): number =>
    ((bytes[at] << 24) |
      (bytes[at + 1] << 16) |
      (bytes[at + 2] << 8) |
      bytes[at + 3]) >>>
    0;
  const u16 = (at: number): number => (bytes[at] << 8) | bytes[at + 1];
  switch (mime) {
    case 'image/png':
      // Signature, then the IHDR chunk: width and height as big-endian 32-bit integers.
      return bytes.length >= 24 &&
        u32(0) === 0x89504e47 &&
        u32(12) === 0x49484452
        ? { width: u32(16), height: u32(20) }
        : null;
    case 'image/gif':
      return bytes.length >= 10 &&
        String.fromCharCode(...bytes.subarray(0, 4)) === 'GIF8'
        ? {
            width: bytes[6] | (bytes[7] << 8),
            height: bytes[8] | (bytes[9] << 8)
          }
        : null;
    case 'image/jpeg': {
      if (bytes.length < 4 || u16(0) !== 0xffd8) {
        return null;
      }
      // Walk the segments to the first start-of-frame marker, which holds height then width.
      let at = 2;
      while (at + 9 < bytes.length && bytes[at] === 0xff) {
        const marker = bytes[at + 1];
        const isFrame =
          marker >= 0xc0 &&
          marker <= 0xcf &&
          marker !== 0xc4 &&
          marker !== 0xc8 &&
          marker !== 0xcc;
        if (isFrame) {
          return { width: u16(at + 7), height: u16(at + 5) };
        }
        at += 2 + u16(at + 2);
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

function svgDimensions(svg: string): IDimensions | null {
  const tag = /<svg\b[^>]*>/i.exec(svg)?.[0] ?? '';
  const width = /\bwidth="([\d.]+)(?:pt|px)?"/.exec(tag);
  const height = /\bheight="([\d.]+)(?:pt|px)?"/.exec(tag);
  return width && height
    ? {
        width: Math.round(Number(width[1])),
        height: Math.round(Number(height[1]))
      }
    : null;
}

function metadataDimensions(metadata: unknown): IDimensions | null {
  if (typeof metadata !== 'object' || metadata === null) {
    return null;
  }
  const { width, height } = metadata as { width?: unknown; height?: unknown };
  return typeof width === 'number' && typeof height === 'number'
    ? { width, height }
    : null;
}
