import type { NotebookPanel } from '@jupyterlab/notebook';
import { CellFollower } from '../following';

/** A notebook 5,000 px tall in a 500 px view, scrolled to its top; `scrollToItem` only records. */
function fakePanel() {
  const node = document.createElement('div');
  const outer = document.createElement('div');
  node.appendChild(outer);
  document.body.appendChild(node);
  Object.defineProperty(outer, 'scrollHeight', { value: 5000 });
  Object.defineProperty(outer, 'clientHeight', { value: 500 });
  outer.scrollTop = 0;
  const scrollToItem = jest.fn(async () => undefined);
  const panel = {
    isDisposed: false,
    content: {
      node,
      outerNode: outer,
      widgets: [],
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

  it('takes a scroll with no input just after its own for the list settling, and keeps following', async () => {
    const { panel, outer, scrollToItem } = fakePanel();
    const follower = new CellFollower(panel, true, () => 0);
    follower.follow('a');
    await afterScroll();
    outer.dispatchEvent(new Event('scroll'));
    follower.follow('b');
    await afterScroll();
    expect(scrollToItem).toHaveBeenCalledTimes(2);
  });
});
