import type * as nbformat from '@jupyterlab/nbformat';
import { stripAnsi } from './ansi';

/** A cell's outputs as one text, and the first error among them. */
export interface ICellOutputText {
  text: string;
  error: { ename: string; evalue: string } | null;
}

/**
 * Joins a code cell's outputs in order: stream text as it came, `text/plain` of results and displays
 * (with a `[image/png]`-style note for each image), errors as `ename: evalue` and their traceback.
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
        append(mimeBundleText((output as nbformat.IDisplayData).data));
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

function mimeBundleText(data: nbformat.IMimeBundle | undefined): string {
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
      lines.push(`[${mime}]`);
    }
  }
  if (!lines.length) {
    lines.push(...Object.keys(data).map(mime => `[${mime}]`));
  }
  return lines.join('\n');
}
