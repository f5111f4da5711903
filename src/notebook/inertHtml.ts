/**
 * The HTML side of `inertMarkdown.ts`: a tag in planner-written markdown is escaped, a media element
 * becomes links to what it would load, an autolink stays. Pure (no JupyterLab, no DOM).
 */

/** Inline images that load nothing: a base64 raster image in the text itself. */
export const DATA_IMAGE =
  /^data:image\/(?:png|jpe?g|gif|webp);base64,[a-z0-9+/=\s]*$/i;
/** Elements that load what an attribute names: replaced by links to it. */
const MEDIA = new Set([
  'img',
  'image',
  'picture',
  'source',
  'video',
  'audio',
  'track',
  'iframe',
  'frame',
  'object',
  'embed',
  'link',
  'input',
  'use',
  'feimage',
  'portal',
  'fencedframe'
]);
/** Attributes whose value is a URL an element loads; `srcset`s and `style` are read apart. */
const URL_ATTRIBUTES = new Set([
  'src',
  'poster',
  'data',
  'href',
  'xlink:href',
  'background',
  'lowsrc',
  'dynsrc'
]);
/** Schemes an autolink (`<https://…>`) keeps; any other is escaped. */
const AUTOLINK = /<(?:https?|ftp|mailto):[^\s<>\p{Cc}]*>/iuy;
/** What one text's transform shares: its budget, and where its blank lines start. */
export interface IScan {
  /** Characters constructs that turn out not to be may still cost; beyond them, they are escaped. */
  budget: { left: number };
  blanks: number[];
}

/** What starts at a `<`: an autolink kept, a media element as links, any other tag start escaped. */
export function readAngle(
  text: string,
  i: number,
  context: IScan & { level: number }
): { text: string; end: number } {
  AUTOLINK.lastIndex = i;
  const kept = AUTOLINK.exec(text);
  // Without math, an autolink with a `$` or a quote is text.
  if (kept && !(context.level > 0 && /[$"]/.test(kept[0]))) {
    return { text: kept[0], end: i + kept[0].length };
  }
  const tag = readTag(text, i, context);
  if (tag && MEDIA.has(tag.name)) {
    return {
      text: tag.closing ? '' : mediaLinks(tag.attributes),
      end: tag.end
    };
  }
  return /[A-Za-z/!?]/.test(text[i + 1] ?? '')
    ? { text: '&lt;', end: i + 1 }
    : { text: '<', end: i + 1 };
}

interface ITag {
  name: string;
  closing: boolean;
  attributes: [string, string][];
  end: number;
}

/** A complete HTML tag at `i` (CommonMark's grammar, within a paragraph), or null. */
function readTag(text: string, i: number, context: IScan): ITag | null {
  const start = /<(\/?)([A-Za-z][A-Za-z0-9-]*)/y;
  start.lastIndex = i;
  const head = start.exec(text);
  if (!head || context.budget.left <= 0) {
    return null;
  }
  const tag: ITag = {
    name: head[2].toLowerCase(),
    closing: head[1] === '/',
    attributes: [],
    end: -1
  };
  const attribute =
    /(\s+)([A-Za-z_:][\w.:-]*)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?|\s*(\/?>)/y;
  attribute.lastIndex = i + head[0].length;
  for (;;) {
    const from = attribute.lastIndex;
    const part = attribute.exec(text);
    context.budget.left -= part ? part[0].length : 1;
    if (!part || context.budget.left <= 0 || (tag.closing && part[2])) {
      return null;
    }
    if (part[6] !== undefined) {
      if (tag.closing && part[6] !== '>') {
        return null;
      }
      tag.end = attribute.lastIndex;
      return crossesBlank(context.blanks, i, tag.end) ? null : tag;
    }
    const value = part[3] ?? part[4] ?? part[5] ?? '';
    tag.attributes.push([part[2].toLowerCase(), decodeEntities(value)]);
    if (attribute.lastIndex === from) {
      return null;
    }
  }
}

/** The URLs a media element would load, as links (a data image stays an image), with its alt text. */
function mediaLinks(attributes: [string, string][]): string {
  const found = new Map(attributes);
  const label = escapeText(found.get('alt') || found.get('title') || '');
  const urls: string[] = [];
  for (const [name, value] of attributes) {
    if (URL_ATTRIBUTES.has(name)) {
      urls.push(value.trim());
    } else if (name === 'srcset' || name === 'imagesrcset') {
      urls.push(...srcsetUrls(value));
    } else if (name === 'style') {
      urls.push(...cssUrls(value));
    }
  }
  return [...new Set(urls.filter(url => url))]
    .map(url =>
      DATA_IMAGE.test(url)
        ? `![${label}](${url.replace(/\s/g, '')})`
        : link(label, url)
    )
    .join(' ');
}

/** The URLs of a `srcset` (the HTML standard's candidates: a URL, then descriptors up to a comma). */
function srcsetUrls(srcset: string): string[] {
  const urls: string[] = [];
  let p = 0;
  while (p < srcset.length) {
    while (p < srcset.length && /[\s,]/.test(srcset[p])) {
      p++;
    }
    const start = p;
    while (p < srcset.length && !/\s/.test(srcset[p])) {
      p++;
    }
    let url = srcset.slice(start, p);
    if (url.endsWith(',')) {
      url = url.replace(/,+$/, '');
    } else {
      while (p < srcset.length && srcset[p] !== ',') {
        p++;
      }
    }
    if (url) {
      urls.push(url);
    }
  }
  return urls;
}

/** The `url(…)`s of a style attribute. */
function cssUrls(style: string): string[] {
  const urls: string[] = [];
  const pattern = /url\(([^)]*)\)/gi;
  for (let found = pattern.exec(style); found; found = pattern.exec(style)) {
    urls.push(
      found[1]
        .trim()
        .replace(/^(["'])(.*)\1$/s, '$2')
        .trim()
    );
  }
  return urls;
}

/** Plain text as markdown that shows it as it is (a link's label). */
export function escapeText(text: string): string {
  return text
    .replace(/\s+/g, ' ')
    .replace(/[\\`*_{}[\]()>#+!|~&']/g, '\\$&')
    .replace(/</g, '&lt;')
    .replace(/\$/g, '&#36;')
    .replace(/"/g, '&quot;');
}

/** A link destination with nothing markdown or math could read otherwise. */
function encodeUrl(url: string): string {
  let out = '';
  for (const ch of url) {
    if (/[A-Za-z0-9\-._~:/?#@!&+,;=%]/.test(ch)) {
      out += ch;
    } else if (ch.charCodeAt(0) < 0x80) {
      out += `%${ch.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;
    } else {
      try {
        out += encodeURIComponent(ch);
      } catch {
        out += '%EF%BF%BD';
      }
    }
  }
  return out;
}

const NAMED_ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0'
};

export function decodeEntities(text: string): string {
  return text.replace(
    /&(#[xX][0-9a-fA-F]{1,6}|#\d{1,7}|[a-zA-Z]+);/g,
    (entity, name: string) => {
      if (name[0] !== '#') {
        return NAMED_ENTITIES[name.toLowerCase()] ?? entity;
      }
      const code =
        name[1] === 'x' || name[1] === 'X'
          ? parseInt(name.slice(2), 16)
          : parseInt(name.slice(1), 10);
      return code > 0 && code <= 0x10ffff
        ? String.fromCodePoint(code)
        : '\ufffd';
    }
  );
}
/** A link to `url` reading `label` (its URL when empty); only the label when there is no URL. */
export function link(label: string, url: string): string {
  const shown = label.trim() ? label : escapeText(url);
  return url ? `[${shown}](${encodeUrl(url)})` : shown;
}

/** Whether a blank line starts after `from` and at or before `to`. */
export function crossesBlank(
  blanks: number[],
  from: number,
  to: number
): boolean {
  let low = 0;
  let high = blanks.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (blanks[middle] <= from) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  return low < blanks.length && blanks[low] <= to;
}
