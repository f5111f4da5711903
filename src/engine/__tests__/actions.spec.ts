/** The built-in action handlers (docs/protocol.md#actions), on a fake notebook. */
import type { WorkflowTemplate } from '../../protocol';
import type { IFakeCell } from '../testing';
import { actionHarness as harness, type IActionHarness } from './runnerSetup';

describe('built-in actions', () => {
  it('maps shot types to cell kinds and unwraps code', async () => {
    const h = harness();
    await h.run({ action: 'add', shot_type: 'dialogue', content: 'Hello' });
    await h.run({
      action: 'add',
      shot_type: 'observation',
      content: 'Output: 42'
    });
    await h.run({ action: 'add', shot_type: 'markdown', content: 'md' });
    await h.run({ action: 'add', content: 'no shot type' });
    const code = await h.run({
      action: 'add',
      shot_type: 'action',
      content: '```python\nx = 1\n```',
      store_id: 'load'
    });
    expect(h.driver.cells.map(c => [c.kind, c.source, c.role])).toEqual([
      ['markdown', 'Hello', 'content'],
      ['markdown', 'Output: 42', 'content'],
      ['markdown', 'md', 'content'],
      ['markdown', 'no shot type', 'content'],
      ['code', 'x = 1', 'code']
    ]);
    expect(code).toEqual({
      ok: true,
      summary: 'add code: x = 1',
      sectionAdded: false
    });
    expect(h.cells.lastAddedCellId).toBe('cell-5');
    expect(h.cells.resolve('load')).toEqual({
      ok: true,
      cellId: 'cell-5',
      via: 'store_id'
    });
    expect(h.driver.cells[4].provenance).toMatchObject({
      stage_id: 's1',
      step_id: 'p1',
      behavior_id: 'behavior_001',
      action: 'add'
    });
  });

  it('makes headings and counts them as sections', async () => {
    const h = harness();
    const results = [
      await h.run({ action: 'new_chapter', content: '数据分析' }),
      await h.run({ action: 'new_section', content: '### 缺失值处理' }),
      await h.run({ action: 'new_step', content: 'Load' })
    ];
    expect(h.driver.cells.map(c => [c.source, c.role])).toEqual([
      ['## 数据分析', 'chapter'],
      ['### 缺失值处理', 'section'],
      ['#### Load', 'step']
    ]);
    expect(results.every(r => r.ok && r.sectionAdded)).toBe(true);
    expect(h.driver.cells[0].metadata).toEqual({ is_chapter: true });
  });

  it('sets the title through the driver', async () => {
    const h = harness();
    await h.run({ action: 'update_title', title: '销售数据分析报告' });
    expect(h.driver.title).toBe('销售数据分析报告');
    expect(h.driver.cells[0].source).toBe('# 销售数据分析报告');
  });

  describe('touches only its own cells', () => {
    const userCell = (
      h: IActionHarness,
      metadata: Record<string, unknown> = {},
      role: IFakeCell['role'] = 'code'
    ): IFakeCell => {
      const cell: IFakeCell = {
        id: `user-${h.driver.cells.length}`,
        kind: role === 'code' ? 'code' : 'markdown',
        source: role === 'code' ? 'secret = 1' : '# My own title',
        role,
        provenance: {
          stage_id: null,
          step_id: null,
          behavior_id: null,
          action_index: 0,
          action: 'user'
        },
        metadata,
        output: 'kept',
        executionCount: 1
      };
      h.driver.cells.push(cell);
      return cell;
    };

    it("refuses to exec the user's own cell by its id, with an effect", async () => {
      const h = harness();
      const cell = userCell(h);
      const result = await h.run({ action: 'exec', codecell_id: cell.id });
      expect(result.ok).toBe(false);
      expect(h.driver.executed).toEqual([]);
      expect(cell.output).toBe('kept');
      expect(h.effects.pop()).toBe(
        `⚠️ exec of '${cell.id}' refused: the run did not create that cell and the user did not mark it for the planner. Add a cell with the code to run instead.`
      );
    });

    it('runs a cell the user marked for the planner, and its own cells', async () => {
      const h = harness();
      const marked = userCell(h, { planner_may_run: true });
      expect((await h.run({ action: 'exec', codecell_id: marked.id })).ok).toBe(
        true
      );
      await h.run({ action: 'add', shot_type: 'action', content: 'y = 2' });
      const own = h.driver.cells[h.driver.cells.length - 1].id;
      expect((await h.run({ action: 'exec', codecell_id: own })).ok).toBe(true);
      expect(h.driver.executed).toEqual([marked.id, own]);
    });

    it('runs any cell when allowPlannerToRunAnyCell is on', async () => {
      const h = harness({ allowPlannerToRunAnyCell: true });
      const cell = userCell(h);
      expect((await h.run({ action: 'exec', codecell_id: cell.id })).ok).toBe(
        true
      );
      expect(h.driver.executed).toEqual([cell.id]);
    });

    it("update_title rewrites only the run's own title cell", async () => {
      const h = harness();
      const mine = userCell(h, {}, 'title');
      h.driver.cells.unshift(h.driver.cells.pop()!);
      await h.run({ action: 'update_title', title: 'First' });
      await h.run({ action: 'update_title', title: 'Second' });
      expect(mine.source).toBe('# My own title');
      const titles = h.driver.cells.filter(c => c.role === 'title');
      expect(titles.map(c => c.source)).toEqual(['# Second', '# My own title']);
      expect(h.cells.titleCellId).toBe(titles[0].id);
    });
  });

  it('opens and closes a thinking cell', async () => {
    const h = harness();
    await h.run({
      action: 'is_thinking',
      thinking_text: 'Analyzing...',
      agent_name: 'Analyst',
      text_array: ['a', 'b']
    });
    const cell = h.driver.cells[0];
    expect(cell.role).toBe('thinking');
    expect(cell.source).toBe(
      '🤔 Analyst is thinking…\n\nAnalyzing...\n\na\n\nb'
    );
    expect(cell.metadata).toEqual({
      thinking: true,
      finished_thinking: false,
      agent_name: 'Analyst'
    });
    await h.run({ action: 'finish_thinking' });
    expect(cell.metadata.finished_thinking).toBe(true);
    expect(h.cells.openThinkingCellId).toBeNull();
    expect((await h.run({ action: 'finish_thinking' })).ok).toBe(true);
  });

  it('turns a finished thinking cell into one collapsed "Thought for N s" line', async () => {
    const h = harness();
    await h.run({
      action: 'is_thinking',
      agent_name: 'Analyst',
      thinking_text: 'Reading the columns'
    });
    h.clock = new Date(h.clock.getTime() + 4200);
    await h.run({ action: 'finish_thinking' });
    const cell = h.driver.cells[0];
    expect(cell.source).toBe(
      '<details><summary>💭 Analyst thought for 4 s</summary>\n\nReading the columns\n\n</details>'
    );
    expect(cell.metadata).toMatchObject({
      finished_thinking: true,
      thinking_seconds: 4
    });
    await h.run({ action: 'is_thinking' });
    await h.run({ action: 'is_thinking' });
    expect(h.driver.cells[1].source).toBe('💭 Thought for 0 s');
    expect(h.driver.cells[2].source).toBe('🤔 Thinking…');
  });

  it('marks the last code cell as the planner’s thinking without adding an effect', async () => {
    const h = harness();
    expect(
      await h.run({ action: 'set_effect_as_thinking', thinking_text: 'x' })
    ).toMatchObject({ ok: true });
    expect(h.warnings).toEqual([
      'set_effect_as_thinking: there is no code cell to mark; ignored.'
    ]);
    await h.run({ action: 'add', shot_type: 'action', content: 'x = 1' });
    await h.run({ action: 'add', shot_type: 'dialogue', content: 'note' });
    await h.run({ action: 'set_effect_as_thinking', thinking_text: 'why' });
    expect(h.driver.cells[0].metadata).toMatchObject({
      finished_thinking: true,
      thinkingText: 'why'
    });
    expect(h.driver.cells[1].metadata.finished_thinking).toBeUndefined();
    expect(h.effects).toEqual([]);
  });

  it('replaces the text of the last text cell, or adds one when there is none', async () => {
    const h = harness();
    await h.run({ action: 'update_last_text', text: 'first' });
    await h.run({ action: 'add', shot_type: 'dialogue', content: 'draft' });
    await h.run({ action: 'new_section', content: 'Heading' });
    await h.run({ action: 'add', shot_type: 'action', content: 'x = 1' });
    await h.run({ action: 'update_last_text', text: 'final' });
    expect(h.driver.cells.map(c => c.source)).toEqual([
      'first',
      'final',
      '### Heading',
      'x = 1'
    ]);
    expect(h.effects).toEqual([]);
  });

  it('moves the current effects into history at archive_effects', async () => {
    const h = harness();
    await h.run({ action: 'next_event', event_type: 'first' });
    const result = await h.run({ action: 'archive_effects' });
    await h.run({ action: 'next_event', event_type: 'second' });
    expect(result).toMatchObject({ ok: true });
    expect(h.history).toEqual(['next_event: first']);
    expect(h.effects).toEqual(['next_event: second']);
  });

  it('runs code cells by lastAddedCellId, store_id or cell id and reports outputs as one effect', async () => {
    const h = harness();
    await h.run({
      action: 'add',
      shot_type: 'action',
      content: 'x = 1\nprint("hello")',
      store_id: 'first'
    });
    await h.run({ action: 'add', shot_type: 'dialogue', content: 'text' });
    const first = await h.run({
      action: 'exec',
      codecell_id: 'lastAddedCellId',
      need_output: true,
      auto_debug: false,
      keep_debug_button_visible: false
    });
    expect(first).toEqual({ ok: true, summary: 'exec cell-1: ok' });
    await h.run({
      action: 'exec',
      codecell_id: 'first',
      need_output: true,
      auto_debug: false,
      keep_debug_button_visible: false
    });
    await h.run({
      action: 'exec',
      codecell_id: 'cell-1',
      need_output: false,
      auto_debug: false,
      keep_debug_button_visible: false
    });
    expect(h.driver.executed).toEqual(['cell-1', 'cell-1', 'cell-1']);
    expect(h.effects).toEqual(['hello', 'hello']);
    expect(h.driver.variables).toEqual({ x: '1' });
  });

  it('reports one effect per exec that needs its output, an empty one when the cell printed nothing', async () => {
    // A planner reads the k-th exec's output at effects.current[k] (v1: the after-exec handler reads current[0]).
    const h = harness();
    await h.run({ action: 'add', shot_type: 'action', content: 'x = 1' });
    h.driver.onExec = () => ({ status: 'ok', output: '' });
    await h.run({
      action: 'exec',
      codecell_id: 'lastAddedCellId',
      need_output: true
    });
    await h.run({
      action: 'exec',
      codecell_id: 'lastAddedCellId',
      need_output: false
    });
    expect(h.effects).toEqual(['']);
  });

  it('turns errors, missing cells, timeouts and a dead kernel into effects', async () => {
    const h = harness({ executionTimeout: 30 });
    const exec = (codecell_id: string) =>
      h.run({
        action: 'exec',
        codecell_id,
        need_output: false,
        auto_debug: false,
        keep_debug_button_visible: false
      });
    expect((await exec('lastAddedCellId')).ok).toBe(false);
    expect(h.effects.pop()).toBe(
      "⚠️ exec of 'lastAddedCellId' skipped: no code cell has been added yet."
    );
    await h.run({
      action: 'add',
      shot_type: 'action',
      content: 'raise ValueError("bad value")'
    });
    const failed = await exec('lastAddedCellId');
    expect(failed).toEqual({ ok: false, summary: 'exec cell-1: error' });
    expect(h.effects.pop()).toBe(
      'Traceback (most recent call last):\n  Cell In[1], line 1\nValueError: bad value'
    );
    expect((await exec('ghost')).ok).toBe(false);
    expect(h.effects.pop()).toBe(
      "⚠️ Cell 'ghost' (codecell_id 'ghost') was not found: Cell ghost does not exist or is not a code cell."
    );
    h.driver.onExec = () => ({ status: 'timeout', output: 'partial' });
    await exec('cell-1');
    expect(h.effects.pop()).toBe(
      "⏱️ Execution of cell 'cell-1' timed out after 30 s; the kernel was interrupted.\npartial"
    );
    h.driver.onExec = null;
    h.driver.kernelAlive = false;
    await exec('cell-1');
    expect(h.effects.pop()).toBe(
      '⚠️ No usable kernel: The kernel is dead. The run is paused; restart the kernel if needed, then resume.'
    );
    expect(h.pauses).toEqual(['The kernel is not usable: The kernel is dead']);
  });

  it('summarizes and truncates long output before it becomes an effect', async () => {
    const h = harness({ effectTruncation: 100 });
    h.driver.onExec = () => ({
      status: 'ok',
      output: [
        ...Array.from({ length: 50 }, (_, i) => `Epoch ${i + 1}/50`),
        'w'.repeat(500)
      ].join('\n')
    });
    await h.run({ action: 'add', shot_type: 'action', content: 'train()' });
    await h.run({
      action: 'exec',
      codecell_id: 'lastAddedCellId',
      need_output: true,
      auto_debug: false,
      keep_debug_button_visible: false
    });
    expect(h.effects).toHaveLength(1);
    expect(
      h.effects[0].startsWith('<Epoch 1/50 (repeated 50 times)>\nwww')
    ).toBe(true);
    expect(h.effects[0]).toContain('[TRUNCATED: 433 characters omitted');
  });

  it('hands workflow and step updates, end_phase and next_event to the run', async () => {
    const h = harness();
    const template: WorkflowTemplate = {
      stages: [{ id: 'a', name: 'A', steps: [] }]
    };
    await h.run({ action: 'update_workflow', updated_workflow: template });
    expect(h.workflows).toEqual([template]);
    await h.run({
      action: 'update_stage_steps',
      stage_id: 'a',
      updated_steps: [{ id: 'x', name: 'X' }]
    });
    await h.run({ action: 'update_stage_steps', updated_steps: [] });
    expect(h.stepUpdates).toEqual([
      ['a', [{ id: 'x', name: 'X' }]],
      [null, []]
    ]);
    const missing = await h.run({
      action: 'update_stage_steps',
      stage_id: 'unknown',
      updated_steps: []
    });
    expect(missing.ok).toBe(false);
    expect(h.effects.pop()).toBe(
      "⚠️ WARN: update_stage_steps for unknown stage 'unknown' ignored"
    );
    await h.run({ action: 'end_phase', step_id: 'load_data' });
    expect(h.endSteps).toEqual(['load_data']);
    await h.run({ action: 'next_event', event_type: 'custom_event' });
    expect(h.effects.pop()).toBe('next_event: custom_event');
  });
});
