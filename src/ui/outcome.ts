/**
 * What the panel and the notifications say of a run's contract and of how it ended
 * (docs/protocol.md#output-contracts): the deliverables ("Deliver: `answer`, a region name" during the
 * run, "Answer: North (checked in the kernel: a value of df['region'])" or "Not delivered: `answer` is missing" at the end), the
 * steps given up, and a run that ended with problems said in words. Pure functions of a snapshot.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import type { IDeliverable, IRunOutcome } from '../engine/state/contracts';
import type { IRunFinished, IRunSnapshot } from '../engine/types';

/** `answer` as the panel quotes a variable. */
function quoted(name: string): string {
  return `\`${name}\``;
}

/** The kind of a deliverable in words, or null for `any`. */
function kindWords(
  kind: IDeliverable['kind'],
  trans: TranslationBundle
): string | null {
  switch (kind) {
    case 'number':
      return trans.__('a number');
    case 'integer':
      return trans.__('an integer');
    case 'label':
      return trans.__('a label');
    case 'text':
      return trans.__('a text');
    case 'bool':
      return trans.__('true or false');
    case 'series':
      return trans.__('a Series');
    case 'dataframe':
      return trans.__('a DataFrame');
    case 'dict':
      return trans.__('a dict');
    case 'list':
      return trans.__('a list');
    default:
      return null;
  }
}

/**
 * What the check in the kernel held a deliverable to, in words: "a number rounded to 2 decimals", "a
 * value of df['region']". Its kind and form, never whether the analysis is right.
 */
function checkedWords(d: IDeliverable, trans: TranslationBundle): string {
  const terms = d.terms;
  if (terms.one_of) {
    return trans.__(
      'one of %1',
      terms.one_of.map(choice => `"${choice}"`).join(', ')
    );
  }
  if (d.kind === 'label' && terms.of_column) {
    // The engine names the frame, the default's too (`termsOf`).
    const column = `['${terms.of_column}']`;
    return trans.__('a value of %1', `${terms.frame ?? ''}${column}`);
  }
  if (d.kind === 'number' && terms.decimals !== undefined) {
    return trans.__('a number rounded to %1 decimals', terms.decimals);
  }
  if (d.kind === 'series' && terms.index) {
    return trans.__('a Series indexed by %1', terms.index);
  }
  if (d.kind === 'dataframe' && terms.columns?.length) {
    return trans.__(
      'a DataFrame with the columns %1',
      terms.columns.join(', ')
    );
  }
  if (d.kind === 'dict' && terms.keys?.length) {
    return trans.__('a dict with the keys %1', terms.keys.join(', '));
  }
  return kindWords(d.kind, trans) ?? trans.__('it exists');
}

/** The problems of an ended run, each in words: "1 step given up", "`answer` not delivered". */
export function outcomeProblems(
  outcome: IRunOutcome,
  trans: TranslationBundle
): string[] {
  const problems: string[] = [];
  const given = outcome.givenUp.length;
  if (given > 0) {
    problems.push(trans._n('%1 step given up', '%1 steps given up', given));
  }
  const missed = outcome.deliverables.filter(d => d.status !== 'delivered');
  if (missed.length > 0) {
    problems.push(
      trans.__('%1 not delivered', missed.map(d => quoted(d.name)).join(', '))
    );
  }
  return problems;
}

/** The panel's state line of a completed run: "Completed", or its problems in words. */
export function describeCompleted(
  outcome: IRunOutcome | undefined,
  trans: TranslationBundle
): string {
  const problems = outcome ? outcomeProblems(outcome, trans) : [];
  return problems.length === 0
    ? trans.__('Completed')
    : trans.__('Finished with problems: %1', problems.join('; '));
}

/** The notification of a completed run: a success, or a warning that names its problems. */
export function completedNotice(
  finished: IRunFinished,
  notebook: string,
  trans: TranslationBundle
): { type: 'success' | 'warning'; message: string } {
  const problems = finished.outcome
    ? outcomeProblems(finished.outcome, trans)
    : [];
  return problems.length === 0
    ? {
        type: 'success',
        message: trans.__('Workflow completed in %1', notebook)
      }
    : {
        type: 'warning',
        message: trans.__(
          'Workflow finished with problems in %1: %2',
          notebook,
          problems.join('; ')
        )
      };
}

/** "Deliver: `answer`, a region name": the planner's summary, else one made from the deliverables. */
export function deliverLine(
  outcome: IRunOutcome,
  trans: TranslationBundle
): string {
  if (outcome.contractSummary) {
    return outcome.contractSummary;
  }
  const items = outcome.deliverables.map(d => {
    const words = d.describe ?? kindWords(d.kind, trans);
    return words ? `${quoted(d.name)}, ${words}` : quoted(d.name);
  });
  return trans.__('Deliver: %1', items.join('; '));
}

/** Why a deliverable is not there, in words: the kernel's reason, or that it was never checked. */
function notDelivered(d: IDeliverable, trans: TranslationBundle): string {
  if (d.status === 'unchecked') {
    return trans.__('%1 was not checked in the kernel', quoted(d.name));
  }
  if (d.type === null && d.reason === `${quoted(d.name)} is missing`) {
    return trans.__('%1 is missing', quoted(d.name));
  }
  // The kernel's own sentence (English, like a cause from elsewhere).
  return d.reason ?? trans.__('%1 does not fit its contract', quoted(d.name));
}

/** One line of the deliverables: how it stands, and in what words. */
export interface IDeliverableLine {
  name: string;
  /** `pending`: the run goes on and it was not checked yet. */
  status: 'delivered' | 'failed' | 'pending';
  text: string;
  /** On hover, for a delivered line: what a check in the kernel is not. */
  title?: string;
}

/**
 * The deliverables as the panel lists them: while the run goes on, the latest check of each (a mark and
 * the value or the reason); once it completed, what was delivered and what was not.
 */
export function deliverableLines(
  outcome: IRunOutcome,
  completed: boolean,
  trans: TranslationBundle
): IDeliverableLine[] {
  const single = outcome.deliverables.length === 1;
  return outcome.deliverables.map(d => {
    if (d.status === 'delivered') {
      const shown = d.value ?? d.type ?? '';
      const checked = checkedWords(d, trans);
      const text = !completed
        ? trans.__(
            '%1: %2 (checked in the kernel: %3)',
            quoted(d.name),
            shown,
            checked
          )
        : single && d.value !== null
          ? trans.__('Answer: %1 (checked in the kernel: %2)', d.value, checked)
          : trans.__(
              'Delivered: %1, %2 (checked in the kernel: %3)',
              quoted(d.name),
              shown,
              checked
            );
      const title = trans.__(
        'The kernel checked the kind and form the task asked for, not that the analysis is right.'
      );
      return { name: d.name, status: 'delivered', text, title };
    }
    if (!completed && d.status === 'unchecked') {
      return {
        name: d.name,
        status: 'pending',
        text: trans.__('%1: not checked yet', quoted(d.name))
      };
    }
    // While the run goes on the planner may still deliver it: the check says why it is not there yet.
    return {
      name: d.name,
      status: 'failed',
      text: completed
        ? trans.__('Not delivered: %1', notDelivered(d, trans))
        : notDelivered(d, trans)
    };
  });
}

/** "Given up: Load (the reason)", one line per step given up. */
export function givenUpLines(
  outcome: IRunOutcome,
  trans: TranslationBundle
): string[] {
  return outcome.givenUp.map(step =>
    step.reason
      ? trans.__('Step given up: %1. %2', step.name, step.reason)
      : trans.__('Step given up: %1', step.name)
  );
}

/** What the Outputs section says of a name's latest check: ✓, or ✗ with the reason. */
export function checkText(
  name: string,
  check: { ok: boolean; reason?: string | null; type: string | null },
  trans: TranslationBundle
): string {
  if (check.ok) {
    return trans.__('checked in the kernel');
  }
  if (check.type === null && check.reason === `${quoted(name)} is missing`) {
    return trans.__('%1 is missing', quoted(name));
  }
  return check.reason ?? trans.__('%1 does not fit its contract', quoted(name));
}

/** The run's outcome when the panel should show it: it has deliverables or steps given up. */
export function shownOutcome(snapshot: IRunSnapshot): IRunOutcome | null {
  const outcome = snapshot.outcome;
  return outcome &&
    (outcome.deliverables.length > 0 || outcome.givenUp.length > 0)
    ? outcome
    : null;
}
