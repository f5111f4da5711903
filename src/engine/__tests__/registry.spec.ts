/** The action registry around the handlers, the cell map the handlers resolve names with, and code fences. */
import { ACTION_TYPES } from '../../protocol/actionTypes';
import { BUILTIN_HANDLERS, unwrapCodeFence } from '../actions/builtins';
import { registerDeferredBuiltins } from '../actions/deferredBuiltins';
import { CellMap } from '../state/cells';
import { actionHarness as harness } from './runnerSetup';

describe('unwrapCodeFence', () => {
  it('unwraps a fenced block and leaves anything else', () => {
    expect(unwrapCodeFence('```python\nimport pandas as pd\ndf = 1\n```')).toBe(
      'import pandas as pd\ndf = 1'
    );
    expect(unwrapCodeFence('  ```\nx = 1\n```  \n')).toBe('x = 1');
    expect(unwrapCodeFence('~~~py\nx\n~~~')).toBe('x');
    expect(unwrapCodeFence('x = 1')).toBe('x = 1');
    expect(unwrapCodeFence('text\n```\nx\n```')).toBe('text\n```\nx\n```');
  });

  it('reads fences as the documented pattern did, edge cases included', () => {
    // Each answer is what /^\s*(`{3,}|~{3,})[^\n]*\n([\s\S]*?)\n?[ \t]*\1[ \t]*$/ gave.
    const cases: Array<[string, string]> = [
      ['````\nx\n```', 'x'],
      ['```\nx\n````', 'x\n`'],
      ['```\n```', ''],
      ['```', '```'],
      ['```\nx```', 'x'],
      ['```py\n  a\n \t```\t \n\n', '  a'],
      ['~~~\nx\n```', '~~~\nx\n```'],
      ['\n\n```\n\nx\n\n```\n\n', '\nx\n'],
      ['```\nx\n ```` ', 'x\n `'],
      ['`````\na\n`````', 'a'],
      ['``` a ``` b\nbody\n```', 'body'],
      ['```\nx\n\n```', 'x\n']
    ];
    for (const [input, output] of cases) {
      expect([input, unwrapCodeFence(input)]).toEqual([input, output]);
    }
  });

  it('takes time linear in the content (the regex took 5 s and more on 20,000 characters)', () => {
    const n = 30_000;
    const inputs = [
      'x' + ' '.repeat(n) + 'x',
      '```\n' + ' '.repeat(n) + 'x',
      '```\n' + '\t \n'.repeat(n / 3) + 'x',
      '`'.repeat(n) + '\n' + '`'.repeat(n)
    ];
    const started = Date.now();
    for (const input of inputs) {
      unwrapCodeFence(input);
    }
    // A generous bound: linear work on 120,000 characters takes milliseconds.
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('ActionRegistry', () => {
  it('skips an unknown type with a warning effect and a signal', async () => {
    const h = harness();
    const seen: string[] = [];
    h.registry.unhandled.connect((_, u) => seen.push(u.type));
    const result = await h.run({ action: 'make_coffee', strength: 3 });
    expect(result.ok).toBe(false);
    expect(h.effects).toEqual([
      "⚠️ WARN: Unknown action type 'make_coffee' skipped: no handler is registered for it"
    ]);
    expect(seen).toEqual(['make_coffee']);
  });

  it('runs pre- and post-hooks around handlers, by type or for all', async () => {
    const h = harness();
    const calls: string[] = [];
    h.registry.addPreHook(a => void calls.push(`pre:${a.action}`));
    const onlyExec = h.registry.addPostHook(
      (a, _c, r) => void calls.push(`post-exec:${r.ok}`),
      'exec'
    );
    h.registry.register('custom', (action, context) => {
      calls.push(`custom:${String(action.value)}`);
      context.effects.add('custom ran');
      return { ok: true };
    });
    await h.run({ action: 'custom', value: 7 });
    await h.run({
      action: 'exec',
      codecell_id: 'nothing',
      need_output: true,
      auto_debug: false,
      keep_debug_button_visible: false
    });
    onlyExec.dispose();
    expect(onlyExec.isDisposed).toBe(true);
    await h.run({
      action: 'exec',
      codecell_id: 'nothing',
      need_output: true,
      auto_debug: false,
      keep_debug_button_visible: false
    });
    expect(calls).toEqual([
      'pre:custom',
      'custom:7',
      'pre:exec',
      'post-exec:false',
      'pre:exec'
    ]);
    expect(h.effects[0]).toBe('custom ran');
  });

  it('lets a later registration override a type until it is disposed', async () => {
    const h = harness();
    const override = h.registry.register('new_chapter', (action, context) => {
      context.effects.add(`chapter ${action.content}`);
    });
    await h.run({ action: 'new_chapter', content: 'A' });
    expect(h.driver.cells).toHaveLength(0);
    expect(h.effects).toEqual(['chapter A']);
    override.dispose();
    await h.run({ action: 'new_chapter', content: 'B' });
    expect(h.driver.cells.map(c => c.source)).toEqual(['## B']);
    expect(h.registry.has('new_chapter')).toBe(true);
  });

  it('turns a throwing handler into a failed result and an effect', async () => {
    const h = harness();
    h.registry.register('explode', () => {
      throw new Error('kaboom');
    });
    const result = await h.run({ action: 'explode' });
    expect(result.ok).toBe(false);
    expect(h.effects).toEqual(["⚠️ Action 'explode' failed: kaboom"]);
  });

  it('warns when a post-hook fails', async () => {
    const h = harness();
    h.registry.addPostHook(() => {
      throw new Error('hook broke');
    });
    const result = await h.run({ action: 'next_event' });
    expect(result.ok).toBe(true);
    expect(h.warnings).toEqual([
      "A post-hook of action 'next_event' failed: hook broke"
    ]);
  });
});

describe('CellMap', () => {
  it('resolves names and round-trips', () => {
    const cells = new CellMap();
    cells.cellAdded('c1', 'code', 's1');
    cells.cellAdded('m1', 'markdown', 'note');
    expect(cells.lastAddedCellId).toBe('c1');
    expect(cells.resolve('note')).toEqual({
      ok: true,
      cellId: 'm1',
      via: 'store_id'
    });
    expect(cells.resolve('raw-id')).toEqual({
      ok: true,
      cellId: 'raw-id',
      via: 'cell_id'
    });
    const copy = new CellMap();
    copy.restore(JSON.parse(JSON.stringify(cells.toJSON())));
    expect(copy.resolve('lastAddedCellId')).toEqual({
      ok: true,
      cellId: 'c1',
      via: 'lastAddedCellId'
    });
  });
});

describe('the built-in types registered before their code is loaded', () => {
  function deferred() {
    let loads = 0;
    const h = harness({}, registry =>
      registerDeferredBuiltins(registry, async () => {
        loads++;
        return BUILTIN_HANDLERS;
      })
    );
    return { h, loads: () => loads };
  }

  it('names every built-in type at once and loads the handlers only when an action runs', async () => {
    const { h, loads } = deferred();
    expect(h.registry.types).toEqual([...ACTION_TYPES]);
    expect(loads()).toBe(0);
    const direct = harness();
    for (const h2 of [h, direct]) {
      await h2.run({ action: 'add', shot_type: 'markdown', content: 'md' });
      await h2.run({ action: 'next_event', event_type: 'e' });
    }
    expect(loads()).toBe(2);
    // The same cells and effects as the handlers registered directly.
    expect(h.driver.cells.map(c => [c.kind, c.source, c.role])).toEqual(
      direct.driver.cells.map(c => [c.kind, c.source, c.role])
    );
    expect(h.effects).toEqual(direct.effects);
  });

  it('lets a handler registered later take over, and gives the type back when it is disposed', async () => {
    const { h, loads } = deferred();
    const own = h.registry.register('next_event', () => ({
      ok: true,
      summary: 'own'
    }));
    expect(await h.run({ action: 'next_event', event_type: 'e' })).toEqual({
      ok: true,
      summary: 'own'
    });
    expect(loads()).toBe(0);
    own.dispose();
    expect(await h.run({ action: 'next_event', event_type: 'e' })).toEqual({
      ok: true,
      summary: 'next_event e'
    });
  });
});
