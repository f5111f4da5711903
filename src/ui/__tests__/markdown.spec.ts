import {
  RenderMimeRegistry,
  standardRendererFactories
} from '@jupyterlab/rendermime';
import { renderUntrustedMarkdown } from '../markdown';

/**
 * The worst parser for safety: it passes the text through as HTML, so whatever the planner wrote
 * reaches the sanitizer as it is.
 */
const rendermime = new RenderMimeRegistry({
  initialFactories: standardRendererFactories,
  markdownParser: { render: async (source: string) => source }
});

async function render(source: string): Promise<HTMLElement> {
  const renderer = await renderUntrustedMarkdown(rendermime, source);
  return renderer.node;
}

describe('focus text is rendered as sanitized markdown', () => {
  it('drops script elements', async () => {
    const node = await render(
      'Look at <b>df</b>.<script>window.pwned = true;</script>'
    );
    expect(node.innerHTML).not.toContain('<script');
    expect(node.querySelector('script')).toBeNull();
    // Raw HTML from the planner is shown as the text it is.
    expect(node.textContent).toContain('Look at <b>df</b>.');
    expect((window as unknown as { pwned?: boolean }).pwned).toBeUndefined();
  });

  it('drops event handler attributes', async () => {
    const node = await render(
      '<img src="x" onerror="window.pwned = true"><a href="#" onclick="alert(1)">link</a>'
    );
    for (const element of Array.from(node.querySelectorAll('*'))) {
      for (const attribute of Array.from(element.attributes)) {
        expect(attribute.name.startsWith('on')).toBe(false);
      }
    }
  });

  it('drops javascript: links', async () => {
    const node = await render(
      '<a href="javascript:alert(1)">click</a> [link](javascript:alert(1))'
    );
    for (const link of Array.from(node.querySelectorAll('a'))) {
      expect(link.getAttribute('href') ?? '').not.toContain('javascript:');
    }
  });
});

describe('planner text in the panel is inert (docs/security.md#what-a-planner-writes)', () => {
  it('shows a remote image as a link, not an image that loads by itself', async () => {
    const node = await render(
      'Focus: <img src="https://collector.example/p?d=1" alt="chart">'
    );
    expect(node.querySelector('img')).toBeNull();
    expect(node.textContent).toContain(
      '[chart](https://collector.example/p?d=1)'
    );
  });

  it('shows a command link as text, without its attribute', async () => {
    const node = await render(
      '<button data-commandlinker-command="terminal:create-new">Open</button>'
    );
    expect(node.querySelector('[data-commandlinker-command]')).toBeNull();
    expect(node.querySelector('button')).toBeNull();
    expect(node.textContent).toContain('data-commandlinker-command');
  });
});
