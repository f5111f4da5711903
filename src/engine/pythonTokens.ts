/**
 * The tokens of a notebook code cell, enough to tell a call from text: names, dotted access, strings
 * (with an f-string's expressions read as code), brackets, and IPython's own lines (`!cmd`, `%magic`,
 * `%%cell magic`, `x = !cmd`). Comments and string contents never look like code here. Pure.
 */

export type PythonToken =
  | { kind: 'name'; value: string; line: number }
  | { kind: 'op'; value: string; line: number }
  | { kind: 'string'; value: string; line: number }
  /** `!cmd` (or `x = !cmd`): the command. */
  | { kind: 'shell'; value: string; line: number }
  /** `%name args` (or `x = %name args`). */
  | { kind: 'magic'; value: string; args: string; line: number }
  /** `%%name args` and the cell's body, when it is not Python. */
  | {
      kind: 'cellMagic';
      value: string;
      args: string;
      body: string;
      line: number;
    }
  /** The end of a logical line. */
  | { kind: 'newline'; value: ''; line: number };

/** Cell magics whose body is Python: it is read on as code. */
const PYTHON_CELL_MAGICS = new Set([
  'time',
  'timeit',
  'capture',
  'prun',
  'debug',
  'memit',
  'python',
  'python3'
]);
/** Line magics whose arguments are a Python statement. */
const PYTHON_LINE_MAGICS = new Set(['time', 'timeit', 'prun', 'debug']);

const STRING_START = /([rRbBuUfF]{0,2})('''|"""|'|")/y;
const NAME = /[\p{L}_][\p{L}\p{N}_]*/uy;
const NUMBER = /\d[\d_]*(?:\.\d*)?(?:[eE][+-]?\d+)?[jJ]?|\.\d+/y;
/** `x = !cmd`, `a, b = %sx cmd`: an assignment of a shell command's or a magic's output. */
const ASSIGNED =
  /[\p{L}_][\p{L}\p{N}_.]*(?:\s*,\s*[\p{L}_][\p{L}\p{N}_.]*)*\s*=\s*(?=[!%])/uy;
/** f-strings nest code in code: deeper than this, an f-string's expressions are not read. */
const MAX_FSTRING_DEPTH = 4;

export function pythonTokens(source: string, firstLine = 1): PythonToken[] {
  return new Lexer(source.replace(/\r\n?/g, '\n'), firstLine, 0).tokens();
}

class Lexer {
  constructor(
    private readonly _text: string,
    private _line: number,
    private readonly _depth: number
  ) {}

  tokens(): PythonToken[] {
    const text = this._text;
    let brackets = 0;
    let lineStart = true;
    while (this._at < text.length) {
      if (lineStart && brackets === 0 && this._ipythonLine()) {
        continue;
      }
      lineStart = false;
      const c = text[this._at];
      if (c === '\n') {
        this._at++;
        if (brackets === 0) {
          this._push({ kind: 'newline', value: '', line: this._line });
          lineStart = true;
        }
        this._line++;
      } else if (c === '\\' && text[this._at + 1] === '\n') {
        this._at += 2;
        this._line++;
      } else if (c === '#') {
        while (this._at < text.length && text[this._at] !== '\n') {
          this._at++;
        }
      } else if (/\s/.test(c)) {
        this._at++;
      } else if (!this._string() && !this._name() && !this._number()) {
        brackets += '([{'.includes(c) ? 1 : ')]}'.includes(c) ? -1 : 0;
        brackets = Math.max(0, brackets);
        this._push({ kind: 'op', value: c, line: this._line });
        this._at++;
      }
    }
    return this._out;
  }

  /** At a logical line's start: `!cmd`, `%magic`, `%%magic` or their assignment. */
  private _ipythonLine(): boolean {
    const text = this._text;
    let at = this._at;
    while (text[at] === ' ' || text[at] === '\t') {
      at++;
    }
    ASSIGNED.lastIndex = at;
    const assigned = ASSIGNED.exec(text);
    const start = assigned ? at + assigned[0].length : at;
    const c = text[start];
    if (c !== '!' && c !== '%') {
      return false;
    }
    const end = this._lineEnd(start);
    const body = text.slice(start, end);
    const line = this._line;
    if (c === '!') {
      this._push({ kind: 'shell', value: body.replace(/^!!?/, ''), line });
    } else {
      const magic = /^(%%?)([\w.]*)/.exec(body);
      const cell = magic?.[1] === '%%';
      const name = magic?.[2] ?? '';
      const args = body.slice(magic?.[0].length ?? 0).trim();
      if (cell && !PYTHON_CELL_MAGICS.has(name)) {
        // The rest of the cell is the magic's, not Python.
        const rest = text.slice(start + 2 + name.length);
        const lineEnd = rest.indexOf('\n');
        this._push({
          kind: 'cellMagic',
          value: name,
          args: (lineEnd < 0 ? rest : rest.slice(0, lineEnd)).trim(),
          body: lineEnd < 0 ? '' : rest.slice(lineEnd + 1),
          line
        });
        this._at = text.length;
        return true;
      }
      if (!cell && PYTHON_LINE_MAGICS.has(name)) {
        this._out.push(...new Lexer(args, line, this._depth).tokens());
      } else if (!cell) {
        this._push({ kind: 'magic', value: name, args, line });
      }
    }
    this._line += (body.match(/\n/g) ?? []).length;
    this._at = end;
    return true;
  }

  /** Where the physical lines joined by trailing backslashes end. */
  private _lineEnd(from: number): number {
    let at = from;
    for (;;) {
      const newline = this._text.indexOf('\n', at);
      if (newline < 0) {
        return this._text.length;
      }
      if (this._text[newline - 1] !== '\\') {
        return newline;
      }
      at = newline + 1;
    }
  }

  private _string(): boolean {
    STRING_START.lastIndex = this._at;
    const start = STRING_START.exec(this._text);
    if (!start) {
      return false;
    }
    const [, prefix, quote] = start;
    const line = this._line;
    const text = this._text;
    let at = this._at + start[0].length;
    let value = '';
    const formatted = /f/i.test(prefix);
    while (at < text.length && !text.startsWith(quote, at)) {
      const c = text[at];
      if (c === '\n' && quote.length === 1) {
        break;
      }
      if (c === '\\' && at + 1 < text.length) {
        value += text.slice(at, at + 2);
        this._line += text[at + 1] === '\n' ? 1 : 0;
        at += 2;
        continue;
      }
      if (formatted && c === '{' && text[at + 1] !== '{') {
        const close = this._expressionEnd(at + 1, quote);
        this._expression(text.slice(at + 1, close));
        value += '\u0000';
        at = close + 1;
        continue;
      }
      if (formatted && (c === '{' || c === '}') && text[at + 1] === c) {
        value += c;
        at += 2;
        continue;
      }
      this._line += c === '\n' ? 1 : 0;
      value += c;
      at++;
    }
    this._at = text.startsWith(quote, at) ? at + quote.length : at;
    this._push({ kind: 'string', value: unescape(value, prefix), line });
    return true;
  }

  /** The `}` that ends an f-string's expression (brackets and nested strings counted). */
  private _expressionEnd(from: number, quote: string): number {
    const text = this._text;
    let depth = 0;
    let at = from;
    while (at < text.length && !text.startsWith(quote, at)) {
      const c = text[at];
      if (c === '{' || c === '[' || c === '(') {
        depth++;
      } else if ((c === '}' || c === ']' || c === ')') && depth > 0) {
        depth--;
      } else if (c === '}') {
        return at;
      } else if ((c === '"' || c === "'") && !quote.startsWith(c)) {
        const close = text.indexOf(c, at + 1);
        at = close < 0 ? text.length : close;
      } else if (c === '\n' && quote.length === 1) {
        return at;
      }
      at++;
    }
    return at;
  }

  private _expression(code: string): void {
    if (this._depth < MAX_FSTRING_DEPTH) {
      const inner = new Lexer(code, this._line, this._depth + 1).tokens();
      this._out.push(...inner.filter(token => token.kind !== 'newline'));
    }
    this._line += (code.match(/\n/g) ?? []).length;
  }

  private _name(): boolean {
    NAME.lastIndex = this._at;
    const name = NAME.exec(this._text);
    if (!name) {
      return false;
    }
    this._push({ kind: 'name', value: name[0], line: this._line });
    this._at += name[0].length;
    return true;
  }

  private _number(): boolean {
    NUMBER.lastIndex = this._at;
    const number = NUMBER.exec(this._text);
    if (!number) {
      return false;
    }
    this._at += number[0].length;
    return true;
  }

  private _push(token: PythonToken): void {
    this._out.push(token);
  }

  private _at = 0;
  private readonly _out: PythonToken[] = [];
}

/** A string literal's text: escapes read (not in a raw string), so a path reads as Python reads it. */
function unescape(value: string, prefix: string): string {
  if (/r/i.test(prefix)) {
    return value;
  }
  return value.replace(
    /\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}|[\s\S])/g,
    (_, escape: string) => {
      const simple: Record<string, string> = {
        n: '\n',
        t: '\t',
        r: '\r',
        '\\': '\\',
        "'": "'",
        '"': '"',
        '\n': ''
      };
      if (escape in simple) {
        return simple[escape];
      }
      if (/^[xuU]/.test(escape)) {
        const code = parseInt(escape.slice(1), 16);
        return code <= 0x10ffff ? String.fromCodePoint(code) : '\ufffd';
      }
      if (/^[0-7]/.test(escape)) {
        return String.fromCharCode(parseInt(escape, 8));
      }
      return `\\${escape}`;
    }
  );
}
