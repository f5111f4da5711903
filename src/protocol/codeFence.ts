/** Code a planner wrapped in a Markdown fence: a leaf module (no zod), so the startup code can use it. */

/** The length of the run of `char` in `text` from `start`. */
function runLength(text: string, start: number, char: string): number {
  let end = start;
  while (text[end] === char) {
    end++;
  }
  return end - start;
}

/**
 * ```` ```python\ncode\n``` ```` -> `code`; anything not wholly fenced is returned as is. A scan of each
 * character at most twice: a backtracking regex took seconds on a long run of spaces.
 */
export function unwrapCodeFence(content: string): string {
  const text = content.trimEnd();
  const start = text.length - text.trimStart().length;
  const char = text[start];
  if (char !== '`' && char !== '~') {
    return content;
  }
  const opening = runLength(text, start, char);
  const newline = text.indexOf('\n', start + opening);
  if (opening < 3 || newline < 0) {
    return content;
  }
  const bodyStart = newline + 1;
  let closing = 0;
  while (
    closing < opening &&
    text.length - closing - 1 >= bodyStart &&
    text[text.length - closing - 1] === char
  ) {
    closing++;
  }
  // The closing fence repeats the opening one (or its first three or more characters).
  if (closing < 3) {
    return content;
  }
  let end = text.length - closing;
  while (end > bodyStart && (text[end - 1] === ' ' || text[end - 1] === '\t')) {
    end--;
  }
  if (end > bodyStart && text[end - 1] === '\n') {
    end--;
  }
  return text.slice(bodyStart, end);
}
