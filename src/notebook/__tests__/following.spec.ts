import type { NotebookPanel } from '@jupyterlab/notebook';
import { CellFollower } from '../following';

/**
 * A notebook 5,000 px tall in a 500 px view, scrolled to its top, whose one cell (the run's newest)
 * spans `cell` in the view; `scrollToItem` only records.
 */
function fakePanel(cell = { top: 2000, bottom: 2400 }) {
  const node = document.createElement('div');
  const outer = document.createElement('div');
  const cellNode = document.createElement('div');
  node.appendChild(outer);
  outer.appendChild(cellNode);
  document.body.appendChild(node);
  Object.defineProperty(outer, 'scrollHeight', { value: 5000 });
  Object.defineProperty(outer, 'clientHeight', { value: 500 });
  outer.getBoundingClientRect = () => ({ top: 0, bottom: 500 }) as DOMRect;
  cellNode.getBoundingClientRect = () => cell as DOMRect;
  outer.scrollTop = 0;
  const scrollToItem = jest.fn(async () => undefined);
  const panel = {
    isDisposed: false,
    content: {
      node,
      outerNode: outer,
      widgets: [{ node: cellNode }],
      mode: 'command',
      scrollToItem
    }
  };
  return { panel: panel as unknown as NotebookPanel, outer, scrollToItem };
}

/** Past the follower's pause between scrolls and the frame it scrolls in. */
const afterScroll = () => new Promise(resolve => setTimeout(resolve, 150));

/** The user turns the mouse wheel: the input, then the scroll it makes. */
function wheel(outer: HTMLElement): void {
  outer.dispatchEvent(
    new WheelEvent('wheel', { deltaY: -1000, bubbles: true })
  );
  outer.dispatchEvent(new Event('scroll'));
}

describe('CellFollower', () => {
  it('stops following when the user scrolls away just after one of its own scrolls', async () => {
    const { panel, outer, scrollToItem } = fakePanel();
    const follower = new CellFollower(panel, true, () => 0);
    follower.follow('a');
    await afterScroll();
    expect(scrollToItem).toHaveBeenCalledTimes(1);
    // Within the time a scroll of its own may still move the list: the wheel says it is the user's.
    wheel(outer);
    follower.follow('b');
    await afterScroll();
    expect(scrollToItem).toHaveBeenCalledTimes(1);
  });

  it('drops a scroll it had planned when the user scrolls away before it happens', async () => {
    const { panel, outer, scrollToItem } = fakePanel();
    const follower = new CellFollower(panel, true, () => 0);
    follower.follow('a');
    wheel(outer);
    await afterScroll();
    expect(scrollToItem).not.toHaveBeenCalled();
  });

  it('stops following when the user scrolls back to the top of the tall newest cell', async () => {
    const { panel, outer, scrollToItem } = fakePanel({
      top: 100,
      bottom: 2000
    });
    const follower = new CellFollower(panel, true, () => 0);
    follower.follow('a');
    await afterScroll();
    await new Promise(resolve => setTimeout(resolve, 600));
    wheel(outer);
    follower.follow('b');
    await afterScroll();
    expect(scrollToItem).toHaveBeenCalledTimes(1);
  });

  it('keeps following when the user scrolls to where the end of the newest cell shows', async () => {
    const { panel, outer, scrollToItem } = fakePanel({ top: 100, bottom: 450 });
    const follower = new CellFollower(panel, true, () => 0);
    follower.follow('a');
    await afterScroll();
    wheel(outer);
    follower.follow('b');
    await afterScroll();
    expect(scrollToItem).toHaveBeenCalledTimes(2);
  });

  it('takes a scroll with no input just after its own for the list settling, and keeps following', async () => {
    const { panel, outer, scrollToItem } = fakePanel();
    const follower = new CellFollower(panel, true, () => 0);
    follower.follow('a');
    await afterScroll();
    outer.dispatchEvent(new Event('scroll'));
    follower.follow('b');
    await afterScroll();
    expect(scrollToItem).toHaveBeenCalledTimes(2);
    // Outputs growing move the view later, with no input: still following.
    await new Promise(resolve => setTimeout(resolve, 600));
    outer.dispatchEvent(new Event('scroll'));
    follower.follow('c');
    await afterScroll();
    expect(scrollToItem).toHaveBeenCalledTimes(3);
  });
});
