/**
 * Planner-written markdown made inert before a notebook cell holds it or the panel shows it
 * (docs/security.md#what-a-planner-writes): JupyterLab's sanitizer keeps `<img src="https://…">` and
 * command-linker attributes, so rendered text could load a URL or act without a click.
 *
 * - Fenced code keeps its text: each fence is written again at the start of a line after a blank
 *   line, its marker longer than any run inside, so every markdown parser sees the same code block;
 *   its info string keeps a language name only, and a `mermaid` block shows its source.
 * - Everywhere else: an image (`![alt](url)`, by reference, `<img>`, `srcset`, `<picture>`,
 *   `<video>`, `<audio>`, `<iframe>`, `<object>`, `<embed>`, `<link>`, …) becomes a link with its alt
 *   text (a `data:image/png|jpeg|gif|webp` image stays: it loads nothing); every other raw HTML tag,
 *   comment or declaration is escaped (`&lt;`), so it shows as the text it is; attributes such as
 *   `data-commandlinker-command` or a style's `url(…)` are then text too.
 * - Inline code keeps its text, except that a tag start or an image inside gets a space (`< img`,
 *   `! [`): a parser that disagrees on where inline code ends then still finds nothing to load.
 * - Math that holds a quote is written without math (see `mathHoldsQuote`).
 *
 * Linear in the text, and idempotent.
 */

import { removeMath } from '@jupyterlab/rendermime';
import {
  crossesBlank,
  DATA_IMAGE,
  decodeEntities,
  type IScan,
  link,
  readAngle
} from './inertHtml';

const ASCII_PUNCTUATION = /[!-/:-@[-`{-~]/;
/** Nested images in alt text are read this deep; deeper, an image is escaped. */
const MAX_DEPTH = 4;

/** `source` with nothing that loads or acts by itself when rendered. */
export function inertMarkdown(source: string): string {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  for (const level of [0, 1, 2] as const) {
    const inert = transform(lines, level);
    if (!mathHoldsQuote(inert)) {
      return inert;
    }
  }
  // Unreachable while fences keep their math (JupyterLab skips `$` in them): all of it as code.
  const fence = '`'.repeat(longestRun(source, '`') + 3);
  return transform([fence, ...lines], 0);
}

/**
 * JupyterLab puts a math region back into the HTML as it was, even inside a link's `href`: a `"` in it
 * would end the attribute (`$" style="background:url(…)$`). Math that holds one is written without math
 * delimiters and quotes outside inline code (`level` 1), then in inline code too (2).
 */
function mathHoldsQuote(text: string): boolean {
  return removeMath(text).math.some(block => block.includes('"'));
}

function transform(lines: string[], level: 0 | 1 | 2): string {
  const blocks = splitFences(lines);
  const labels = referenceLabels(blocks);
  const out: string[] = [];
  for (const block of blocks) {
    if (block.kind === 'text') {
      const text = inertText(block.lines.join('\n'), labels, 0, level);
      out.push(...text.split('\n'));
      continue;
    }
    const longest = longestRun(block.lines.join('\n'), block.char);
    const marker = block.char.repeat(Math.max(3, block.length, longest + 1));
    if (out.length > 0 && out[out.length - 1].trim() !== '') {
      out.push('');
    }
    out.push(marker + block.info, ...block.lines, marker);
  }
  return out.join('\n');
}

type Block =
  | { kind: 'text'; lines: string[] }
  | {
      kind: 'fence';
      char: '`' | '~';
      length: number;
      info: string;
      lines: string[];
    };

const FENCE_OPEN = /^( {0,3})(`{3,}(?!`)|~{3,}(?!~))(.*)$/;

/** Text and fenced code, in order; an unclosed fence runs to the end (CommonMark). */
function splitFences(lines: string[]): Block[] {
  const blocks: Block[] = [];
  let text: string[] = [];
  let index = 0;
  while (index < lines.length) {
    const open = FENCE_OPEN.exec(lines[index]);
    const char = open?.[2][0] as '`' | '~' | undefined;
    if (!open || !char || (char === '`' && open[3].includes('`'))) {
      text.push(lines[index++]);
      continue;
    }
    if (text.length > 0) {
      blocks.push({ kind: 'text', lines: text });
      text = [];
    }
    const indent = open[1].length;
    const length = open[2].length;
    const code: string[] = [];
    index++;
    while (index < lines.length && !closesFence(lines[index], char, length)) {
      code.push(lines[index++].replace(new RegExp(`^ {0,${indent}}`), ''));
    }
    index++;
    blocks.push({
      kind: 'fence',
      char,
      length,
      info: fenceInfo(open[3]),
      lines: code
    });
  }
  if (text.length > 0) {
    blocks.push({ kind: 'text', lines: text });
  }
  return blocks;
}

/**
 * A fence's language: the first word of its info string, in the characters a language name has
 * (JupyterLab's highlighter writes it into HTML as it is). A `mermaid` block is shown as its source: a
 * diagram's image nodes load their URLs.
 */
function fenceInfo(raw: string): string {
  const language = /^[\w+#.-]*/.exec(raw.trim())?.[0] ?? '';
  return language.toLowerCase() === 'mermaid' ? 'mermaid-source' : language;
}

function closesFence(line: string, char: string, length: number): boolean {
  const close = /^ {0,3}(`+|~+)[ \t]*$/.exec(line);
  return !!close && close[1][0] === char && close[1].length >= length;
}

function longestRun(text: string, char: string): number {
  let longest = 0;
  let run = 0;
  for (const c of text) {
    run = c === char ? run + 1 : 0;
    longest = Math.max(longest, run);
  }
  return longest;
}

/** The labels of link reference definitions (`[label]: url`), normalised as CommonMark matches them. */
function referenceLabels(blocks: Block[]): Set<string> {
  const labels = new Set<string>();
  for (const block of blocks) {
    if (block.kind !== 'text') {
      continue;
    }
    for (const line of block.lines) {
      const definition = /^ {0,3}\[((?:\\.|[^\\\]])+)\]:/.exec(line);
      if (definition) {
        labels.add(normalLabel(definition[1]));
      }
    }
  }
  return labels;
}

function normalLabel(label: string): string {
  return label.trim().replace(/\s+/g, ' ').toLowerCase();
}

/** Where the code spans and brackets of a text are: found once, so each lookup is constant. */
interface ITextMap {
  /** Opening backtick run -> the index of its closing run. */
  code: Map<number, number>;
  /** `[` -> its matching `]`. */
  bracket: Map<number, number>;
  /** Where each blank line starts, in order. */
  blanks: number[];
}

function mapText(text: string): ITextMap {
  const blanks: number[] = [];
  const blank = /\n[ \t]*(?=\n)/g;
  for (let found = blank.exec(text); found; found = blank.exec(text)) {
    blanks.push(found.index + 1);
  }
  // Backtick runs, outside backslash escapes, with the paragraph each is in.
  const runs: { at: number; length: number; paragraph: number }[] = [];
  let paragraph = 0;
  for (let i = 0; i < text.length; i++) {
    while (paragraph < blanks.length && blanks[paragraph] <= i) {
      paragraph++;
    }
    if (text[i] === '\\' && ASCII_PUNCTUATION.test(text[i + 1] ?? '')) {
      i++;
    } else if (text[i] === '`') {
      let end = i;
      while (text[end] === '`') {
        end++;
      }
      runs.push({ at: i, length: end - i, paragraph });
      i = end - 1;
    }
  }
  // Each run's closer: the next run of the same length in the same paragraph, found from the end.
  const code = new Map<number, number>();
  const next = new Map<number, (typeof runs)[number]>();
  const closerOf = new Map<number, (typeof runs)[number]>();
  for (let r = runs.length - 1; r >= 0; r--) {
    const later = next.get(runs[r].length);
    if (later && later.paragraph === runs[r].paragraph) {
      closerOf.set(r, later);
    }
    next.set(runs[r].length, runs[r]);
  }
  // From the start: a run inside a span is code, not an opener.
  let after = 0;
  runs.forEach((run, r) => {
    const closer = closerOf.get(r);
    if (run.at >= after && closer) {
      code.set(run.at, closer.at);
      after = closer.at + closer.length;
    }
  });
  return { code, bracket: matchBrackets(text, code, blanks), blanks };
}

/** Matching brackets outside code spans and escapes, never across a blank line. */
function matchBrackets(
  text: string,
  code: Map<number, number>,
  blanks: number[]
): Map<number, number> {
  const bracket = new Map<number, number>();
  const open: number[] = [];
  let blank = 0;
  for (let i = 0; i < text.length; i++) {
    if (blank < blanks.length && blanks[blank] <= i) {
      open.length = 0;
      blank++;
    }
    const c = text[i];
    if (c === '\\' && ASCII_PUNCTUATION.test(text[i + 1] ?? '')) {
      i++;
    } else if (c === '`' && code.has(i)) {
      i = code.get(i)!;
    } else if (c === '[') {
      open.push(i);
    } else if (c === ']' && open.length > 0) {
      bracket.set(open.pop()!, i);
    }
  }
  return bracket;
}

/** Markdown text outside fenced code, made inert. */
function inertText(
  text: string,
  labels: Set<string>,
  depth: number,
  level: 0 | 1 | 2
): string {
  const map = mapText(text);
  const budget = { left: 4 * text.length + 4096 };
  const special = /[\\`!<]/g;
  const out: string[] = [];
  let done = 0;
  for (let found = special.exec(text); found; found = special.exec(text)) {
    const i = found.index;
    if (i < done) {
      special.lastIndex = done;
      continue;
    }
    out.push(level > 0 ? mathless(text.slice(done, i)) : text.slice(done, i));
    const piece = inertAt(text, i, {
      map,
      labels,
      depth,
      level,
      budget,
      blanks: map.blanks
    });
    // A link made of an image must not follow a `!`: together they would be an image again.
    if (piece.text.startsWith('[') && endsWithBang(out)) {
      out.push(`${out.pop()!.slice(0, -1)}\\!`);
    }
    out.push(piece.text);
    done = piece.end;
    special.lastIndex = done;
  }
  out.push(level > 0 ? mathless(text.slice(done)) : text.slice(done));
  return out.join('');
}

/** The text so far ends with a `!` that no backslash escapes. */
function endsWithBang(out: string[]): boolean {
  let last = out.length - 1;
  while (last >= 0 && out[last] === '') {
    out.splice(last--, 1);
  }
  const text = last >= 0 ? out[last] : '';
  if (!text.endsWith('!')) {
    return false;
  }
  let backslashes = 0;
  while (text[text.length - 2 - backslashes] === '\\') {
    backslashes++;
  }
  return backslashes % 2 === 0;
}

interface IContext extends IScan {
  map: ITextMap;
  labels: Set<string>;
  depth: number;
  /** Math with a quote was found: 1 writes text without math delimiters or quotes, 2 inline code too. */
  level: 0 | 1 | 2;
}

/** Text as it shows, without anything JupyterLab reads as a math delimiter, and without quotes. */
function mathless(text: string): string {
  return text.replace(/\$/g, '&#36;').replace(/"/g, '&quot;');
}

/** The inert form of what starts at `i` (a backslash, backtick, `!` or `<`), and where it ends. */
function inertAt(
  text: string,
  i: number,
  context: IContext
): { text: string; end: number } {
  const c = text[i];
  if (c === '\\') {
    // `\<` shows `<` as `&lt;` does; but a bare URL before it takes in the backslash (GFM's autolink).
    if (text[i + 1] === '<') {
      return { text: '&lt;', end: i + 2 };
    }
    if (context.level > 0) {
      const math = mathlessEscape(text, i);
      if (math) {
        return math;
      }
    }
    const length = ASCII_PUNCTUATION.test(text[i + 1] ?? '') ? 2 : 1;
    return { text: text.slice(i, i + length), end: i + length };
  }
  if (c === '`') {
    let end = i;
    while (text[end] === '`') {
      end++;
    }
    const close = context.map.code.get(i);
    if (close === undefined) {
      return { text: text.slice(i, end), end };
    }
    const length = end - i;
    return {
      text:
        text.slice(i, end) +
        (context.level > 1
          ? mathless(inertCode(text.slice(end, close)))
          : inertCode(text.slice(end, close))) +
        text.slice(close, close + length),
      end: close + length
    };
  }
  if (c === '!') {
    const image =
      text[i + 1] === '[' && context.depth < MAX_DEPTH
        ? readImage(text, i, context)
        : null;
    if (image) {
      return image;
    }
    return { text: text[i + 1] === '[' ? '\\!' : '!', end: i + 1 };
  }
  return readAngle(text, i, context);
}

/** The math delimiters and quotes a backslash starts (`\\(`, `\\[`, `\\begin{`, `\\"`), as entities. */
function mathlessEscape(
  text: string,
  i: number
): { text: string; end: number } | null {
  const next = text.slice(i + 1, i + 7);
  if (next.startsWith('\\(') || next.startsWith('\\[')) {
    return { text: `\\\\&#${next.charCodeAt(1)};`, end: i + 3 };
  }
  if (/^(?:begin|end)\{/.test(next)) {
    return { text: '&#92;', end: i + 1 };
  }
  if (next[0] === '"' || next[0] === '$') {
    return { text: mathless(next[0]), end: i + 2 };
  }
  return null;
}

/** Inline code: its text, but no tag start or image a parser could read there as markdown. */
function inertCode(code: string): string {
  return code
    .replace(/<(?=\/?[A-Za-z][\w:-]*[\s/>]|[!?])/g, '< ')
    .replace(/!\[/g, '! [');
}

/** An image at `i` as a link (or as itself, for a data image), or null when `![` starts none. */
function readImage(
  text: string,
  i: number,
  context: IContext
): { text: string; end: number } | null {
  const { map, labels, depth } = context;
  const close = map.bracket.get(i + 1);
  if (close === undefined) {
    return null;
  }
  const alt = () =>
    inertText(text.slice(i + 2, close), labels, depth + 1, context.level);
  if (text[close + 1] === '(') {
    const inline = readDestination(text, close + 2, context);
    if (inline) {
      const { url, end } = inline;
      return DATA_IMAGE.test(url)
        ? { text: `![${alt()}](${url.replace(/\s/g, '')})`, end }
        : { text: link(alt(), url), end };
    }
  }
  let label = text.slice(i + 2, close);
  let end = close + 1;
  const labelClose =
    text[close + 1] === '[' ? map.bracket.get(close + 1) : undefined;
  if (labelClose !== undefined) {
    const given = text.slice(close + 2, labelClose);
    label = given.trim() ? given : label;
    end = labelClose + 1;
  }
  return labels.has(normalLabel(label))
    ? { text: `[${alt()}]${text.slice(close + 1, end)}`, end }
    : null;
}

/** `(url "title")` after an image's alt text, from just after its `(`; null when it is not one. */
function readDestination(
  text: string,
  from: number,
  context: IContext
): { url: string; end: number } | null {
  let p = skipSpace(text, from);
  let raw: string;
  if (text[p] === '<') {
    const close = scan(
      text,
      p + 1,
      context,
      ch => ch === '>' || ch === '\n' || ch === '<'
    );
    if (text[close] !== '>') {
      return null;
    }
    raw = text.slice(p + 1, close);
    p = close + 1;
  } else {
    let parens = 0;
    const stop = scan(text, p, context, ch => {
      if (/[\s\p{Cc}]/u.test(ch) || (ch === ')' && parens === 0)) {
        return true;
      }
      parens += ch === '(' ? 1 : ch === ')' ? -1 : 0;
      return false;
    });
    if (parens !== 0) {
      return null;
    }
    raw = text.slice(p, stop);
    p = stop;
  }
  const beforeTitle = p;
  p = skipSpace(text, p);
  const quote = text[p];
  if (p > beforeTitle && (quote === '"' || quote === "'" || quote === '(')) {
    const closing = quote === '(' ? ')' : quote;
    const close = scan(text, p + 1, context, ch => ch === closing);
    if (text[close] !== closing) {
      return null;
    }
    p = skipSpace(text, close + 1);
  }
  if (text[p] !== ')' || crossesBlank(context.blanks, from, p)) {
    return null;
  }
  return { url: decodeEntities(unescapeMarkdown(raw)), end: p + 1 };
}

/**
 * The index of the first character from `from` that `stop` accepts (or the text's length), skipping
 * backslash escapes; each character read counts against the budget, and an empty budget stops at once.
 */
function scan(
  text: string,
  from: number,
  context: IContext,
  stop: (ch: string) => boolean
): number {
  let p = from;
  while (p < text.length && context.budget.left > 0) {
    context.budget.left--;
    const ch = text[p];
    if (ch === '\\' && ASCII_PUNCTUATION.test(text[p + 1] ?? '')) {
      p += 2;
      continue;
    }
    if (stop(ch)) {
      return p;
    }
    p++;
  }
  return context.budget.left > 0 ? p : text.length;
}

/** Spaces and tabs, and at most one line end among them. */
function skipSpace(text: string, from: number): number {
  let p = from;
  let newline = false;
  while (p < text.length) {
    if (text[p] === ' ' || text[p] === '\t') {
      p++;
    } else if (text[p] === '\n' && !newline) {
      newline = true;
      p++;
    } else {
      break;
    }
  }
  return p;
}

function unescapeMarkdown(text: string): string {
  return text.replace(/\\([!-/:-@[-`{-~])/g, '$1');
}
