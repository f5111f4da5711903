/**
 * Planner-written text (focus, the assessment's reasoning) rendered as markdown through JupyterLab's
 * renderer. The planner is untrusted: its text is made inert first (`inertMarkdown`: no image that loads
 * by itself, no raw HTML, no command link), and the renderer sanitizes the HTML.
 */
import {
  IRenderMime,
  IRenderMimeRegistry,
  MimeModel
} from '@jupyterlab/rendermime';
import * as React from 'react';

const MARKDOWN = 'text/markdown';

/** Renders `source` as inert, untrusted (sanitized) markdown; the renderer's node holds the result. */
export async function renderUntrustedMarkdown(
  rendermime: IRenderMimeRegistry,
  source: string
): Promise<IRenderMime.IRenderer> {
  // Loaded with the first planner text, not at startup (docs/architecture.md#lazy-loading).
  const { inertMarkdown } = await import('../notebook/inertMarkdown');
  const renderer = rendermime.createRenderer(MARKDOWN);
  const model = new MimeModel({
    data: { [MARKDOWN]: inertMarkdown(source) },
    trusted: false
  });
  await renderer.renderModel(model);
  return renderer;
}

export function Markdown(props: {
  source: string;
  rendermime: IRenderMimeRegistry;
  className?: string;
}): JSX.Element {
  const host = React.useRef<HTMLDivElement>(null);
  const { source, rendermime } = props;
  React.useEffect(() => {
    const node = host.current;
    if (!node) {
      return;
    }
    let disposed = false;
    let rendered: IRenderMime.IRenderer | null = null;
    renderUntrustedMarkdown(rendermime, source)
      .then(renderer => {
        if (disposed) {
          renderer.dispose();
        } else {
          rendered = renderer;
          node.replaceChildren(renderer.node);
        }
      })
      .catch(reason => {
        console.warn('Notebook-BCC: markdown could not be rendered.', reason);
        node.textContent = source;
      });
    return () => {
      disposed = true;
      rendered?.dispose();
    };
  }, [source, rendermime]);
  return (
    <div
      ref={host}
      className={`jp-bcc-markdown ${props.className ?? ''}`.trim()}
    />
  );
}
