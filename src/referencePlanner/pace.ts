/**
 * The rhythm of a planner that thinks: a pause before each streamed action, longer before code and
 * while a thinking cell is shown, so a user sees cells arrive one by one (`docs/architecture.md#demo-planner`).
 */
import type { ActionInput } from './referencePlanner';

/** The built-in demo planner's pace: a few hundred milliseconds per line. */
export const DEMO_PACE_MS = 300;

/** Multiples of the pace: code is "written" for a while, a thinking cell stays visible, bookkeeping is quick. */
const BEFORE_CODE = 4;
const WHILE_THINKING = 3;
const BOOKKEEPING = 0.5;

const BOOKKEEPING_ACTIONS = new Set([
  'update_title',
  'update_workflow',
  'update_stage_steps',
  'end_phase',
  'next_event'
]);

/** `delays[i]`: milliseconds to wait before line i of a generating stream; all 0 when `paceMs` is 0. */
export function paceDelays(
  actions: readonly ActionInput[],
  paceMs: number
): number[] {
  const pace = Math.max(0, paceMs);
  return actions.map((action, i) => {
    const previous = i > 0 ? actions[i - 1].action : null;
    if (previous === 'is_thinking') {
      return pace * WHILE_THINKING;
    }
    if (
      action.action === 'add' &&
      'shot_type' in action &&
      action.shot_type === 'action'
    ) {
      return pace * BEFORE_CODE;
    }
    if (BOOKKEEPING_ACTIONS.has(action.action)) {
      return Math.round(pace * BOOKKEEPING);
    }
    return pace;
  });
}

/** The pause before a planning answer: the planner judging the last step. */
export function planningDelay(paceMs: number): number {
  return Math.max(0, paceMs) * 2;
}
