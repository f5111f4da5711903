/**
 * Whether a behavior waits for the user before it runs (docs/protocol.md#decisions, item 17): in
 * interactive mode every behavior that runs code does; without it, one whose code is flagged as
 * reaching outside the notebook (`codeRisk.ts`) does. And what the planner is told of a held behavior
 * the user skipped. Pure.
 */
import type { CodeRisk, ICodeFlag } from './codeRisk';

/** Why a behavior is shown for approval. */
export type ApprovalReason = 'interactive' | 'flagged';

/** `ask` the user; `apply` without asking; `skip`: it may not run and no one can be asked. */
export type ApprovalNeed = 'ask' | 'apply' | 'skip';

export function approvalNeed(behavior: {
  /** Interactive mode is on (the user's setting, or the administrator's). */
  interactive: boolean;
  /** The behavior adds or runs code. */
  runsCode: boolean;
  /** Some of that code is flagged. */
  flagged: boolean;
  /** There is a user to ask (a dialog hook). */
  canAsk: boolean;
}): ApprovalNeed {
  if (!behavior.runsCode) {
    return 'apply';
  }
  if (behavior.flagged) {
    return behavior.canAsk ? 'ask' : 'skip';
  }
  if (behavior.interactive) {
    return behavior.canAsk ? 'ask' : 'apply';
  }
  return 'apply';
}

/** What each risk is, in the words the planner reads. */
const RISK_WORDS: Record<CodeRisk, string> = {
  environment: 'reads the environment',
  files: 'reads or writes files outside the working folder',
  install: 'installs packages',
  shell: 'runs shell commands',
  process: 'starts processes',
  network: 'opens network connections',
  dynamic: 'runs code built at run time or in the page'
};

/** `opens network connections (line 1: requests.post) and reads the environment (line 1: os.environ)`. */
export function describeFlags(flags: readonly ICodeFlag[]): string {
  const byRisk = new Map<CodeRisk, string[]>();
  for (const flag of flags) {
    byRisk.set(flag.risk, [
      ...(byRisk.get(flag.risk) ?? []),
      `line ${flag.line}: ${flag.what}`
    ]);
  }
  const parts = [...byRisk].map(
    ([risk, places]) => `${RISK_WORDS[risk]} (${places.join(', ')})`
  );
  return parts.length > 1
    ? `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`
    : (parts[0] ?? '');
}

/** The effect the planner reads after a held behavior was not run. */
export function heldEffect(
  behaviorId: string,
  flags: readonly ICodeFlag[],
  remaining: number,
  asked: boolean
): string {
  const who = asked ? 'the user skipped it' : 'no one could approve it';
  return `Behavior ${behaviorId} was held before its code ran, because the code ${describeFlags(flags)}; ${who}: its ${remaining} remaining actions were not applied.`;
}
