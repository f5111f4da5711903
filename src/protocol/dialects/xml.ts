/**
 * A lenient XML reader for planner answers written by language models (docs/dialects.md#bcc):
 * plain TypeScript, so it runs in Node and in the browser alike. It repairs what such answers get wrong
 * instead of failing: valueless attributes, HTML inside `<variable>`, mismatched closing tags, stray `<`,
 * `&` and `>` in text, a truncated document (marked partial), several root elements.
 */
import { unwrapCodeFence } from '../codeFence';

export interface IXmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlNode[];
}

export type XmlNode = IXmlElement | string;

export interface IXmlDocument {
  /**
   * The first root element with a known name (or the first root when no names are given); with none,
   * the outermost known element inside the roots (an LLM's `<response>` wrapper).
   */
  root: IXmlElement | null;
  /** Every top-level element, in order (several roots are wrapped as if in a synthetic root). */
  roots: IXmlElement[];
  /** The document ended inside an element or a tag: what was read is kept, closed. */
  partial: boolean;
  /** What was repaired, in words (for the log). */
  repairs: string[];
}

/** Attributes that LLM answers write without a value (`<stage optional>`). */
const FLAG_ATTRIBUTES = [
  'optional',
  'required',
  'disabled',
  'enabled',
  'hidden'
];

const ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'"
};

function decodeEntities(text: string): string {
  return text.replace(
    /&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g,
    (whole, code: string) => {
      if (code.startsWith('#')) {
        const point = code.startsWith('#x')
          ? parseInt(code.slice(2), 16)
          : parseInt(code.slice(1), 10);
        // Beyond Unicode: not a character, so the text stays as the planner wrote it.
        return point <= 0x10ffff ? String.fromCodePoint(point) : whole;
      }
      return ENTITIES[code] ?? whole;
    }
  );
}

const NAME_START = /[A-Za-z_]/;
const NAME_CHAR = /[A-Za-z0-9_.:-]/;

class Reader {
  constructor(private readonly _text: string) {}

  parse(known: readonly string[] | undefined): IXmlDocument {
    const top: IXmlElement = { name: '#root', attributes: {}, children: [] };
    this._stack = [top];
    while (this._pos < this._text.length) {
      const next = this._text.indexOf('<', this._pos);
      if (next === -1) {
        this._textRun(this._text.slice(this._pos));
        break;
      }
      if (next > this._pos) {
        this._textRun(this._text.slice(this._pos, next));
      }
      this._pos = next;
      this._tag();
    }
    if (this._stack.length > 1) {
      this._partial = true;
      this._repairs.push(
        `truncated document: closed ${this._stack
          .slice(1)
          .map(e => `<${e.name}>`)
          .join(', ')}`
      );
    }
    const roots = top.children.filter(
      (node): node is IXmlElement => typeof node !== 'string'
    );
    if (top.children.some(node => typeof node === 'string' && node.trim())) {
      this._repairs.push('text outside the root element ignored');
    }
    if (roots.length > 1) {
      this._repairs.push(
        `${roots.length} root elements (${roots.map(r => `<${r.name}>`).join(', ')})`
      );
    }
    const wanted = known?.map(name => name.toLowerCase());
    let root =
      (wanted
        ? roots.find(r => wanted.includes(r.name.toLowerCase()))
        : roots[0]) ?? null;
    if (!root && wanted) {
      root = outermostNamed(roots, wanted);
      if (root) {
        this._repairs.push(`<${root.name}> found inside a wrapper element`);
      }
    }
    return { root, roots, partial: this._partial, repairs: this._repairs };
  }

  private get _open(): IXmlElement {
    return this._stack[this._stack.length - 1];
  }

  private _textRun(raw: string): void {
    if (raw.includes('>')) {
      this._note('stray ">" in text kept as text');
    }
    this._append(decodeEntities(raw));
  }

  private _append(text: string): void {
    const children = this._open.children;
    const last = children[children.length - 1];
    if (typeof last === 'string') {
      children[children.length - 1] = last + text;
    } else if (text) {
      children.push(text);
    }
  }

  private _tag(): void {
    const text = this._text;
    const at = this._pos;
    if (text.startsWith('<!--', at)) {
      this._skipTo('-->', 'comment');
      return;
    }
    if (text.startsWith('<![CDATA[', at)) {
      const end = text.indexOf(']]>', at);
      this._append(text.slice(at + 9, end === -1 ? text.length : end));
      this._pos = end === -1 ? text.length : end + 3;
      if (end === -1) {
        this._partial = true;
      }
      return;
    }
    if (text.startsWith('<?', at)) {
      this._skipTo('?>', 'declaration');
      return;
    }
    if (text.startsWith('<!', at)) {
      this._skipTo('>', 'declaration');
      return;
    }
    const after = text.charAt(at + 1);
    if (after === '/' && NAME_START.test(text.charAt(at + 2))) {
      this._closingTag();
      return;
    }
    if (!NAME_START.test(after)) {
      // `RMSE < 25000`: a `<` that cannot open a tag is text.
      this._note('stray "<" in text kept as text');
      this._append('<');
      this._pos = at + 1;
      return;
    }
    this._openingTag();
  }

  private _skipTo(end: string, what: string): void {
    const found = this._text.indexOf(end, this._pos);
    if (found === -1) {
      this._partial = true;
      this._repairs.push(`truncated ${what}`);
      this._pos = this._text.length;
      return;
    }
    this._pos = found + end.length;
  }

  private _name(): string {
    const start = this._pos;
    while (
      this._pos < this._text.length &&
      NAME_CHAR.test(this._text.charAt(this._pos))
    ) {
      this._pos++;
    }
    return this._text.slice(start, this._pos);
  }

  private _skipSpace(): void {
    while (/\s/.test(this._text.charAt(this._pos))) {
      this._pos++;
    }
  }

  private _closingTag(): void {
    this._pos += 2;
    const name = this._name();
    const end = this._text.indexOf('>', this._pos);
    if (end === -1) {
      this._pos = this._text.length;
      this._partial = true;
      return;
    }
    this._pos = end + 1;
    const lower = name.toLowerCase();
    let index = -1;
    for (let i = this._stack.length - 1; i > 0; i--) {
      if (this._stack[i].name.toLowerCase() === lower) {
        index = i;
        break;
      }
    }
    if (index > 0) {
      if (index < this._stack.length - 1) {
        this._repairs.push(
          `</${name}> also closed ${this._stack
            .slice(index + 1)
            .map(e => `<${e.name}>`)
            .join(', ')}`
        );
      }
      this._stack.length = index;
      return;
    }
    if (this._stack.length > 1) {
      this._repairs.push(`mismatched </${name}> closed <${this._open.name}>`);
      this._stack.pop();
      return;
    }
    this._repairs.push(`stray </${name}> ignored`);
  }

  private _openingTag(): void {
    this._pos += 1;
    const element: IXmlElement = {
      name: this._name(),
      attributes: {},
      children: []
    };
    for (;;) {
      this._skipSpace();
      if (this._pos >= this._text.length) {
        this._partial = true;
        this._repairs.push(`truncated tag <${element.name}> dropped`);
        return;
      }
      const c = this._text.charAt(this._pos);
      if (c === '>') {
        this._pos++;
        break;
      }
      if (c === '/' && this._text.charAt(this._pos + 1) === '>') {
        this._pos += 2;
        this._open.children.push(element);
        return;
      }
      if (!NAME_CHAR.test(c)) {
        this._pos++;
        continue;
      }
      const name = this._name();
      this._skipSpace();
      if (this._text.charAt(this._pos) !== '=') {
        element.attributes[name] = 'true';
        if (FLAG_ATTRIBUTES.includes(name.toLowerCase())) {
          this._note(`valueless attribute "${name}" read as "true"`);
        } else {
          this._repairs.push(`valueless attribute "${name}" read as "true"`);
        }
        continue;
      }
      this._pos++;
      this._skipSpace();
      element.attributes[name] = this._attributeValue();
    }
    this._open.children.push(element);
    if (
      element.name.toLowerCase() === 'variable' &&
      this._rawVariable(element)
    ) {
      return;
    }
    this._stack.push(element);
  }

  private _attributeValue(): string {
    const quote = this._text.charAt(this._pos);
    if (quote === '"' || quote === "'") {
      const end = this._text.indexOf(quote, this._pos + 1);
      const stop = end === -1 ? this._text.length : end;
      const value = this._text.slice(this._pos + 1, stop);
      this._pos = end === -1 ? stop : end + 1;
      return decodeEntities(value);
    }
    const start = this._pos;
    while (
      this._pos < this._text.length &&
      !/[\s>]/.test(this._text.charAt(this._pos)) &&
      !this._text.startsWith('/>', this._pos)
    ) {
      this._pos++;
    }
    return decodeEntities(this._text.slice(start, this._pos));
  }

  /** HTML inside `<variable>` is the variable's text, as if wrapped in CDATA. */
  private _rawVariable(element: IXmlElement): boolean {
    const close = /<\/variable\s*>/i;
    const rest = this._text.slice(this._pos);
    const match = close.exec(rest);
    if (!match) {
      return false;
    }
    const inner = rest.slice(0, match.index);
    if (!/<[A-Za-z/]/.test(inner) || inner.includes('<![CDATA[')) {
      return false;
    }
    // A <variable> left open: the next </variable> belongs to a later one. The closing tag of an
    // element around it, or another <variable>, ends it instead (the mismatched-tag repair).
    const around = new Set(this._stack.map(e => e.name.toLowerCase()));
    const closesAround = [
      ...inner.matchAll(/<\/\s*([A-Za-z][\w:.-]*)\s*>/g)
    ].some(m => around.has(m[1].toLowerCase()));
    if (closesAround || /<variable[\s>/]/i.test(inner)) {
      return false;
    }
    element.children.push(inner);
    this._note('HTML inside <variable> read as text');
    this._pos += match.index + match[0].length;
    return true;
  }

  private _note(repair: string): void {
    if (!this._repairs.includes(repair)) {
      this._repairs.push(repair);
    }
  }

  private _pos = 0;
  private _stack: IXmlElement[] = [];
  private _partial = false;
  private readonly _repairs: string[] = [];
}

/** The first element named one of `names` (lower case), level by level below `roots`. */
function outermostNamed(
  roots: IXmlElement[],
  names: readonly string[]
): IXmlElement | null {
  let level = roots;
  while (level.length > 0) {
    const next: IXmlElement[] = [];
    for (const element of level) {
      const children = elements(element);
      const found = children.find(c => names.includes(c.name.toLowerCase()));
      if (found) {
        return found;
      }
      next.push(...children);
    }
    level = next;
  }
  return null;
}

/** Reads `text` (optionally inside a Markdown code fence) as leniently as possible. */
export function parseLenientXml(
  text: string,
  known?: readonly string[]
): IXmlDocument {
  return new Reader(unwrapCodeFence(text).trim()).parse(known);
}

// ---------------------------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------------------------

export function elements(
  element: IXmlElement | null | undefined
): IXmlElement[] {
  return (element?.children ?? []).filter(
    (node): node is IXmlElement => typeof node !== 'string'
  );
}

/** The first child with this name (case-insensitive). */
export function child(
  element: IXmlElement | null | undefined,
  ...names: string[]
): IXmlElement | undefined {
  const wanted = names.map(n => n.toLowerCase());
  return elements(element).find(e => wanted.includes(e.name.toLowerCase()));
}

export function childrenNamed(
  element: IXmlElement | null | undefined,
  name: string
): IXmlElement[] {
  const lower = name.toLowerCase();
  return elements(element).filter(e => e.name.toLowerCase() === lower);
}

/** Every element with this name below `element`, not looking inside a match. */
export function findAll(
  element: IXmlElement | null | undefined,
  name: string
): IXmlElement[] {
  const lower = name.toLowerCase();
  const found: IXmlElement[] = [];
  for (const item of elements(element)) {
    if (item.name.toLowerCase() === lower) {
      found.push(item);
    } else {
      found.push(...findAll(item, name));
    }
  }
  return found;
}

/** The first element with one of these names at any depth. */
export function find(
  element: IXmlElement | null | undefined,
  ...names: string[]
): IXmlElement | undefined {
  const wanted = names.map(n => n.toLowerCase());
  for (const item of elements(element)) {
    if (wanted.includes(item.name.toLowerCase())) {
      return item;
    }
    const deeper = find(item, ...names);
    if (deeper) {
      return deeper;
    }
  }
  return undefined;
}

/** All text below the element, whitespace trimmed. */
export function textOf(element: IXmlElement | null | undefined): string {
  if (!element) {
    return '';
  }
  const parts: string[] = [];
  const walk = (node: XmlNode) => {
    if (typeof node === 'string') {
      parts.push(node);
    } else {
      node.children.forEach(walk);
    }
  };
  element.children.forEach(walk);
  return parts.join('').trim();
}

export function attr(
  element: IXmlElement | null | undefined,
  name: string
): string | undefined {
  if (!element) {
    return undefined;
  }
  const lower = name.toLowerCase();
  const key = Object.keys(element.attributes).find(
    k => k.toLowerCase() === lower
  );
  return key === undefined ? undefined : element.attributes[key];
}
