/**
 * Planner-written text (focus, goals) rendered as markdown through JupyterLab's renderer. The model is
 * untrusted, so the renderer sanitizes the HTML: no script, no event handler attribute survives.
 */
import {
  IRenderMime,
  IRenderMimeRegistry,
  MimeModel
} from '@jupyterlab/rendermime';
import * as React from 'react';

const MARKDOWN = 'text/markdown';

/** Renders `source` as untrusted (sanitized) markdown; the renderer's node holds the result. */
export async function renderUntrustedMarkdown(
  rendermime: IRenderMimeRegistry,
  source: string
): Promise<IRenderMime.IRenderer> {
  const renderer = rendermime.createRenderer(MARKDOWN);
  const model = new MimeModel({ data: { [MARKDOWN]: source }, trusted: false });
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
