/* eslint-disable no-control-regex */
/** CSI sequences (colours, cursor moves), OSC sequences (titles, links) and lone two-byte escapes. */
const ANSI_PATTERN =
  /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

/** The text without ANSI escape codes, as a reader of the plain output would see it. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI_PATTERN, '');
}
