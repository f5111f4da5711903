/**
 * Splits a byte stream into NDJSON lines. Bytes are decoded in streaming mode so that a UTF-8
 * character cut between two chunks survives; the unfinished last line is kept until more bytes (or
 * `flush()`) arrive. `\r\n` endings are accepted and blank lines are skipped.
 */
export class NdjsonLineSplitter {
  /** Complete lines found in `chunk`, in order. */
  push(chunk: Uint8Array): string[] {
    this._pending += this._decoder.decode(chunk, { stream: true });
    return this._takeLines();
  }

  /** The lines left when the stream ends, including a last line without a newline. */
  flush(): string[] {
    this._pending += this._decoder.decode();
    const lines = this._takeLines();
    const last = this._pending.trim();
    this._pending = '';
    if (last) {
      lines.push(last);
    }
    return lines;
  }

  private _takeLines(): string[] {
    const parts = this._pending.split('\n');
    this._pending = parts.pop() ?? '';
    return parts.map(line => line.trim()).filter(line => line.length > 0);
  }

  private _decoder = new TextDecoder('utf-8');
  private _pending = '';
}
