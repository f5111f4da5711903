/**
 * Which column of the data the task asks about. A name in the task counts only once the data's columns
 * are known (the load step prints them), and only as a column it matches: "What drives house prices"
 * never makes `house` the target. Tasks may be written in English or Chinese.
 */
import type { Observation } from '../protocol';
import { dataPathOf, effectTexts, targetVariableOf, taskOf } from './observe';
import type { INotebookSession } from './session';

/** The line the load code prints: `Columns: ["Id", "SalePrice"]`. */
const COLUMNS_LINE = /^Columns: (\[.*\])[ \t]*$/m;

/** The data's columns as the latest load output printed them; null when no output shows them. */
export function columnsIn(texts: readonly string[]): string[] | null {
  for (let i = texts.length - 1; i >= 0; i--) {
    const match = COLUMNS_LINE.exec(texts[i]);
    if (!match) {
      continue;
    }
    try {
      const value: unknown = JSON.parse(match[1]);
      if (Array.isArray(value) && value.every(v => typeof v === 'string')) {
        return value;
      }
    } catch {
      // A line cut short by the output limit names no column reliably.
    }
  }
  return null;
}

/** Full-width letters, brackets and colons as their ASCII forms, lower case. */
function fold(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

/** `Sale Price`, `sale_price` and `SalePrice` alike. */
function squeeze(text: string): string {
  return fold(text).replace(/[\s_\-.]+/g, '');
}

/** The column `name` designates: the same name, else in another case, else with other separators. */
export function matchColumn(
  name: string,
  columns: readonly string[]
): string | null {
  const trimmed = name.trim();
  if (!trimmed) {
    return null;
  }
  return (
    columns.find(column => column === trimmed) ??
    columns.find(column => fold(column) === fold(trimmed)) ??
    columns.find(column => squeeze(column) === squeeze(trimmed)) ??
    null
  );
}

/** Words after which a task names its target: "what drives X", "预测 X", "目标列：X". */
const NAME_FOLLOWS = [
  /\b(?:drives?|driving|predicts?|predicting|explains?|explaining|affects?|affecting|influences?|influencing|determines?|determining|impacts?|impacting)\b/g,
  /\b(?:drivers?|predictors?|determinants?|factors?)\s+(?:of|for|behind)\b/g,
  /\btarget(?:\s+(?:column|variable))?(?:\s+(?:is|=))?(?:\s*[:=])?/g,
  /(?:预测|影响|决定|驱动|解释)/g,
  /(?:目标|因变量)(?:列|变量|字段)?(?:是|为)?[:=]?/g
];

/** Words before which a task has named its target: "X 受哪些因素影响", "X 的影响因素". */
const NAME_PRECEDES = [
  /受(?:到)?[^,.?!;]{0,12}影响/g,
  /的(?:主要)?(?:影响|驱动|决定)?因素/g,
  /取决于/g,
  /(?:与|和|跟)(?:哪些|什么)/g
];

const OPENING = /^[\s`'"“‘「『:=]+/;
const CLOSING = /[\s`'"”’」』]+$/;
const DETERMINER = /^(?:the|a|an|its|their|this|that)\s+/;
const BRACKETED = /\(([^()]{1,200})\)/g;
const ASCII_WORD = /[a-z0-9_]/;

/** Where each match of `patterns` starts and ends in `text`. */
function matchesOf(
  text: string,
  patterns: readonly RegExp[]
): Array<{ start: number; end: number }> {
  const found: Array<{ start: number; end: number }> = [];
  for (const pattern of patterns) {
    for (const match of text.matchAll(pattern)) {
      found.push({ start: match.index, end: match.index + match[0].length });
    }
  }
  return found.sort((a, b) => a.start - b.start);
}

/** Columns longest first, so that `SalePrice` wins over `Price` at the same place. */
function byLength(columns: readonly string[]): string[] {
  return [...columns].sort((a, b) => fold(b).length - fold(a).length);
}

/** The column that `text` (folded) starts with, as a whole word where the name is ASCII. */
function columnStarting(text: string, columns: string[]): string | null {
  const rest = text.replace(OPENING, '').replace(DETERMINER, '');
  return (
    columns.find(column => {
      const name = fold(column);
      return (
        rest.startsWith(name) &&
        !(
          ASCII_WORD.test(name.slice(-1)) &&
          ASCII_WORD.test(rest[name.length] ?? '')
        )
      );
    }) ?? null
  );
}

/** The column that `text` (folded) ends with, as a whole word where the name is ASCII. */
function columnEnding(text: string, columns: string[]): string | null {
  const rest = text.replace(CLOSING, '');
  return (
    columns.find(column => {
      const name = fold(column);
      const before = rest[rest.length - name.length - 1] ?? '';
      return (
        rest.endsWith(name) &&
        !(ASCII_WORD.test(name[0]) && ASCII_WORD.test(before))
      );
    }) ?? null
  );
}

const PHRASE_END = new Set([
  'in',
  'of',
  'for',
  'on',
  'at',
  'per',
  'by',
  'with',
  'across',
  'among',
  'from',
  'and',
  'or',
  'given',
  'when',
  'where',
  'while',
  'to',
  'than',
  'vs',
  'versus',
  'over',
  'under',
  'most',
  'is',
  'are',
  'using',
  'between',
  'during',
  'the',
  'a',
  'an'
]);

/** The English words naming the target right after a cue: "house prices" in "drives house prices in ...". */
function phraseAfter(text: string): string[] {
  const rest = text.replace(OPENING, '').replace(DETERMINER, '');
  const word = /([a-z0-9][a-z0-9_-]*)(\s*)/y;
  const words: string[] = [];
  let match: RegExpExecArray | null;
  while (words.length < 4 && (match = word.exec(rest))) {
    if (PHRASE_END.has(match[1])) {
      break;
    }
    words.push(match[1]);
  }
  return words;
}

/** `SalePrice` → sale, price; `lot_area` → lot, area. */
function wordsOf(column: string): string[] {
  return column
    .normalize('NFKC')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

function singularForms(word: string): string[] {
  const forms = [word];
  if (word.endsWith('ies')) {
    forms.push(`${word.slice(0, -3)}y`);
  }
  if (word.endsWith('es')) {
    forms.push(word.slice(0, -2));
  }
  if (word.endsWith('s') && !word.endsWith('ss')) {
    forms.push(word.slice(0, -1));
  }
  return forms;
}

/**
 * The column a phrase describes without naming it: the phrase squeezed ("sale price" → `SalePrice`),
 * else the one column whose name holds the phrase's last word, its head noun ("house prices" → price →
 * `SalePrice`). Two columns holding that word are no choice between them.
 */
function columnDescribed(words: string[], columns: string[]): string | null {
  if (!words.length) {
    return null;
  }
  const named = matchColumn(words.join(' '), columns);
  if (named) {
    return named;
  }
  const head = singularForms(words[words.length - 1]);
  const holding = columns.filter(column =>
    wordsOf(column).some(word => head.includes(word))
  );
  return holding.length === 1 ? holding[0] : null;
}

/** Does the task ask about a target at all ("what drives ...", "预测 ...")? */
export function asksForTarget(task: string): boolean {
  const text = fold(task);
  return matchesOf(text, [...NAME_FOLLOWS, ...NAME_PRECEDES]).length > 0;
}

/**
 * The column the task names as its target, or null. In order: a column right after a cue or right
 * before a Chinese one; a column in brackets ("the sale price (SalePrice)", "房价（SalePrice）"); the
 * column an English phrase after a cue describes.
 */
export function targetColumnOf(
  task: string,
  columns: readonly string[]
): string | null {
  const text = fold(task);
  const follows = matchesOf(text, NAME_FOLLOWS);
  const precedes = matchesOf(text, NAME_PRECEDES);
  if (!columns.length || (!follows.length && !precedes.length)) {
    return null;
  }
  const ordered = byLength(columns);
  for (const cue of follows) {
    const column = columnStarting(text.slice(cue.end), ordered);
    if (column) {
      return column;
    }
  }
  for (const cue of precedes) {
    const column = columnEnding(text.slice(0, cue.start), ordered);
    if (column) {
      return column;
    }
  }
  for (const match of text.matchAll(BRACKETED)) {
    const column = matchColumn(
      match[1].replace(OPENING, '').replace(CLOSING, ''),
      columns
    );
    if (column) {
      return column;
    }
  }
  for (const cue of follows) {
    const column = columnDescribed(phraseAfter(text.slice(cue.end)), ordered);
    if (column) {
      return column;
    }
  }
  return null;
}

/** The data's columns: as the load step printed them for this data file, else as the effects show them. */
export function columnsOf(
  observation: Observation,
  session: INotebookSession
): string[] | null {
  const known = session.columns;
  if (known && known.dataPath === dataPathOf(observation)) {
    return known.names;
  }
  return columnsIn(effectTexts(observation, 'all'));
}

/**
 * The target column: the one the client set, else the one the task names, each checked against the
 * data's columns. Before they are known only a name already set counts (the planner sets
 * `target_column` once the load step has shown the columns); a name read from the task waits for them.
 */
export function targetOf(
  observation: Observation,
  columns: readonly string[] | null
): string | null {
  const variable = targetVariableOf(observation);
  if (!columns) {
    return variable;
  }
  return (
    (variable ? matchColumn(variable, columns) : null) ??
    targetColumnOf(taskOf(observation), columns)
  );
}
