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
    expect(node.querySelector('b')?.textContent).toBe('df');
    expect((window as unknown as { pwned?: boolean }).pwned).toBeUndefined();
  });

  it('drops event handler attributes', async () => {
    const node = await render(
      '<img src="x" onerror="window.pwned = true"><a href="#" onclick="alert(1)">link</a>'
    );
    expect(node.innerHTML).not.toMatch(/onerror|onclick/i);
    for (const element of Array.from(node.querySelectorAll('*'))) {
      for (const attribute of Array.from(element.attributes)) {
        expect(attribute.name.startsWith('on')).toBe(false);
      }
    }
  });

  it('drops javascript: links', async () => {
    const node = await render('<a href="javascript:alert(1)">click</a>');
    expect(node.innerHTML).not.toContain('javascript:');
  });
});
