/**
 * The built-in action handlers (docs/protocol.md#actions).
 */
import { unwrapCodeFence } from '../../protocol/codeFence';
import type {
  ActionOf,
  ActionType,
  ExecAction,
  IsThinkingAction
} from '../../protocol';

export { unwrapCodeFence };
import type { CellRole, IExecResult } from '../ports/driver';
import { processOutput } from '../state/effects';
import { msg } from '../messages';
import {
  type ActionHandler,
  type ActionRegistry,
  disposeTogether,
  type IActionContext,
  type IActionResult,
  type IDisposableLike
} from './registry';
import { liveThinkingTitle } from './thinking';
import { rewriteCellHandler } from './rewriteCell';

function headingText(content: string): string {
  return content.replace(/^\s*#+\s*/, '').trim();
}

function brief(text: string, max = 80): string {
  const line =
    text
      .split('\n')
      .map(l => l.trim())
      .find(l => l !== '') ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function thinkingTitle(action: IsThinkingAction): string {
  return action.custom_text ?? liveThinkingTitle(action.agent_name);
}

function thinkingBody(action: IsThinkingAction): string {
  const parts: string[] = [];
  if (action.thinking_text) {
    parts.push(action.thinking_text);
  }
  for (const piece of action.text_array ?? []) {
    parts.push(piece);
  }
  return parts.join('\n\n');
}

/** The effect text of an exec, or null when there is nothing to tell the planner. */
export function execEffect(
  action: ExecAction,
  cellId: string,
  result: IExecResult,
  context: IActionContext
): string | null {
  const limit = context.settings.effectTruncation;
  const output = result.output ? processOutput(result.output, limit) : '';
  switch (result.status) {
    // One effect per exec that needs its output, empty ones too: a planner may read the k-th exec's
    // output at `effects.current[k]` (the v1 server's after-exec handlers read `current[0]`).
    case 'ok':
      return action.need_output !== false ? output : null;
    // An error reaches the planner even with `need_output: false`: it decides what happens next.
    case 'error': {
      const headline =
        result.ename || result.evalue
          ? `${result.ename ?? 'Error'}: ${result.evalue ?? ''}`.trim()
          : 'The cell raised an error';
      return output || headline;
    }
    case 'timeout': {
      const seconds = context.settings.executionTimeout;
      const text = `⏱️ Execution of cell '${cellId}' timed out after ${seconds} s; the kernel was interrupted.`;
      return output ? `${text}\n${output}` : text;
    }
    case 'missing':
      return `⚠️ Cell '${cellId}' (codecell_id '${action.codecell_id}') was not found: ${result.message ?? 'it may have been deleted'}.`;
    case 'kernel':
      return `⚠️ No usable kernel: ${result.message ?? 'the kernel is dead or restarting'}. The run is paused; restart the kernel if needed, then resume.`;
    case 'aborted':
      return `Execution of cell '${cellId}' was aborted${result.message ? `: ${result.message}` : ''}.`;
  }
}

/**
 * Whether `exec` may run the cell: the run's own cells, the ones the user marked for the planner, or
 * any with `allowPlannerToRunAnyCell`. A cell that is gone is not refused: its exec reports it missing.
 */
export function plannerMayRunCell(
  cellId: string,
  context: Pick<IActionContext, 'cells' | 'driver' | 'settings'>
): boolean {
  return (
    context.cells.created(cellId) ||
    context.driver.plannerMayRun(cellId) !== false ||
    context.settings.allowPlannerToRunAnyCell
  );
}

async function execHandler(
  action: ExecAction,
  context: IActionContext
): Promise<IActionResult> {
  const resolved = context.cells.resolve(action.codecell_id);
  if (!resolved.ok) {
    context.effects.add(
      `⚠️ exec of '${action.codecell_id}' skipped: ${resolved.reason}.`
    );
    return { ok: false, summary: `exec ${action.codecell_id}: no cell` };
  }
  if (!plannerMayRunCell(resolved.cellId, context)) {
    context.effects.add(
      `⚠️ exec of '${action.codecell_id}' refused: the run did not create that cell and the user did not mark it for the planner. Add a cell with the code to run instead.`
    );
    return { ok: false, summary: `exec ${resolved.cellId}: refused` };
  }
  const result = await context.driver.execCell({
    cellId: resolved.cellId,
    timeoutMs: Math.max(0, context.settings.executionTimeout) * 1000,
    signal: context.signal
  });
  const effect = execEffect(action, resolved.cellId, result, context);
  if (effect !== null) {
    context.effects.add(effect);
  }
  if (result.status === 'kernel') {
    context.run.pause(
      result.message
        ? msg('kernelUnusableDetail', result.text ?? result.message)
        : msg('kernelUnusable'),
      'kernel'
    );
  }
  const ok = result.status === 'ok';
  return {
    ok,
    summary: `exec ${resolved.cellId}: ${ok ? 'ok' : result.status}`
  };
}

function headingHandler(level: 2 | 3 | 4, role: CellRole) {
  return async (
    action: { content: string; action: string },
    context: IActionContext
  ): Promise<IActionResult> => {
    const title = headingText(action.content);
    await context.run.addCell({
      kind: 'markdown',
      source: `${'#'.repeat(level)} ${title}`,
      role,
      metadata: { [`is_${role}`]: true }
    });
    return {
      ok: true,
      summary: `${action.action}: ${title}`,
      sectionAdded: true
    };
  };
}

const addHandler: ActionHandler<ActionOf<'add'>> = async (action, context) => {
  const kind = action.shot_type === 'action' ? 'code' : 'markdown';
  const meta = action.metadata;
  const role: CellRole =
    kind === 'code'
      ? 'code'
      : meta?.is_chapter
        ? 'chapter'
        : meta?.is_section
          ? 'section'
          : meta?.is_step
            ? 'step'
            : 'content';
  const source =
    kind === 'code' ? unwrapCodeFence(action.content) : action.content;
  await context.run.addCell({
    kind,
    source,
    role,
    storeId: action.store_id,
    metadata: {
      shot_type: action.shot_type ?? null,
      ...(meta ? { action_metadata: meta } : {})
    }
  });
  return {
    ok: true,
    summary: `add ${kind}: ${brief(source)}`,
    sectionAdded: role === 'chapter' || role === 'section' || role === 'step'
  };
};

const setEffectAsThinking: ActionHandler<
  ActionOf<'set_effect_as_thinking'>
> = async (action, context) => {
  const cellId = context.cells.lastAddedCellId;
  const marked =
    cellId !== null &&
    (await context.run.updateCell(cellId, null, {
      finished_thinking: true,
      thinkingText: action.thinking_text ?? ''
    }));
  if (!marked) {
    // Cosmetic: a visible warning, but nothing the planner has to read.
    context.run.warn(msg('noCellToMarkAsThinking'));
  }
  return {
    ok: true,
    summary: marked
      ? `output of ${cellId} marked as thinking`
      : 'set_effect_as_thinking: no code cell'
  };
};

const updateLastText: ActionHandler<ActionOf<'update_last_text'>> = async (
  action,
  context
) => {
  const cellId = context.cells.lastTextCellId;
  if (cellId && (await context.run.updateCell(cellId, action.text))) {
    return { ok: true, summary: `text replaced: ${brief(action.text)}` };
  }
  // No text cell of this run to replace (yet, or any more): the text is shown as a new one.
  await context.run.addCell({
    kind: 'markdown',
    source: action.text,
    role: 'content'
  });
  return { ok: true, summary: `text added: ${brief(action.text)}` };
};

const updateStageSteps: ActionHandler<ActionOf<'update_stage_steps'>> = async (
  action,
  context
) => {
  const stageId = action.stage_id ?? null;
  const applied = await context.run.replaceStageSteps(
    stageId,
    action.updated_steps
  );
  if (!applied) {
    context.effects.add(
      `⚠️ WARN: update_stage_steps for unknown stage '${stageId ?? '(current)'}' ignored`
    );
  }
  return {
    ok: applied,
    summary: `steps of ${stageId ?? 'the current stage'} ${applied ? 'replaced' : 'not replaced'}`
  };
};

/** A handler for every action type. */
export type BuiltinHandlers = { [T in ActionType]: ActionHandler<ActionOf<T>> };

/** Every built-in action type and its handler. */
export const BUILTIN_HANDLERS: BuiltinHandlers = {
  add: addHandler,
  exec: execHandler,
  is_thinking: async (action, context) => {
    await context.run.openThinking({
      title: thinkingTitle(action),
      body: thinkingBody(action),
      agentName: action.agent_name ?? null
    });
    return { ok: true, summary: 'thinking' };
  },
  finish_thinking: async (_action, context) => {
    await context.run.closeThinking();
    return { ok: true, summary: 'finished thinking' };
  },
  set_effect_as_thinking: setEffectAsThinking,
  archive_effects: (_action, context) => {
    context.effects.archive();
    return { ok: true, summary: 'effects moved to history' };
  },
  update_last_text: updateLastText,
  rewrite_cell: rewriteCellHandler,
  new_chapter: headingHandler(2, 'chapter'),
  new_section: headingHandler(3, 'section'),
  new_step: headingHandler(4, 'step'),
  update_title: async (action, context) => {
    await context.run.setTitle(action.title);
    return { ok: true, summary: `title: ${brief(action.title)}` };
  },
  update_workflow: async (action, context) => {
    const applied = await context.run.updateWorkflow(action.updated_workflow);
    return {
      ok: true,
      summary: `workflow update ${applied ? 'applied' : 'rejected'}`
    };
  },
  update_stage_steps: updateStageSteps,
  end_phase: (action, context) => {
    context.run.endStep(action.step_id);
    return { ok: true, summary: 'end of step' };
  },
  next_event: (action, context) => {
    const event = action.event_type ?? '(unnamed)';
    context.effects.add(`next_event: ${event}`);
    return { ok: true, summary: `next_event ${event}` };
  }
};

/** Registers the handlers of every built-in action type; dispose to remove them all. */
export function registerBuiltinActions(
  registry: ActionRegistry
): IDisposableLike {
  return disposeTogether(
    (Object.keys(BUILTIN_HANDLERS) as ActionType[]).map(type =>
      registry.register(
        type,
        BUILTIN_HANDLERS[type] as ActionHandler<ActionOf<typeof type>>
      )
    )
  );
}
