/** Renders React views into the test document for the view specs, and waits for what they draw. */
import { ReactWidget } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';
import type * as React from 'react';

let widget: Widget | null = null;

/** Polls `found` every 20 ms until it holds; throws after `timeoutMs`. */
export async function waitFor(
  found: () => unknown,
  timeoutMs = 3000
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!found()) {
    if (Date.now() > end) {
      throw new Error('timed out');
    }
    await new Promise(resolve => setTimeout(resolve, 20));
  }
}

/** Renders `element` attached to the document and waits until React has drawn it. */
export async function render(
  element: React.ReactElement
): Promise<HTMLElement> {
  const rendered = ReactWidget.create(element);
  widget = rendered;
  Widget.attach(rendered, document.body);
  rendered.update();
  await waitFor(() => rendered.node.childElementCount > 0);
  return rendered.node;
}

/** Disposes of what `render` drew last (call it in `afterEach`). */
export function disposeRendered(): void {
  widget?.dispose();
  widget = null;
}
