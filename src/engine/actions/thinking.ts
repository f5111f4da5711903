/**
 * The texts of a thinking cell (`is_thinking`): its live title and its closed form.
 */
import type { IOpenThinking } from '../state/cells';

/**
 * The closed form of a thinking cell: one "💭 Thought for N s" line, with the thinking text (if any)
 * folded under it, so no finished notebook keeps a live "is thinking…" title.
 */
export function closedThinkingSource(
  thinking: IOpenThinking,
  seconds: number | null
): string {
  const who = thinking.agentName ? `${thinking.agentName} thought` : 'Thought';
  const line = `💭 ${who}${seconds === null ? '' : ` for ${seconds} s`}`;
  return thinking.body
    ? `<details><summary>${line}</summary>\n\n${thinking.body}\n\n</details>`
    : line;
}

/** The live title of a thinking cell. */
export function liveThinkingTitle(
  agentName: string | null | undefined
): string {
  return agentName ? `🤔 ${agentName} is thinking…` : '🤔 Thinking…';
}
