import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';
import type { IRunOutcome } from '../../engine/state/contracts';
import type { IRunSnapshot } from '../../engine/types';
import {
  deliverableLines,
  deliverLine,
  givenUpLines,
  shownOutcome
} from '../outcome';

export interface IDeliverablesProps {
  /** The run's deliverables and steps given up (`IRunSnapshot.outcome`). */
  outcome: IRunOutcome;
  /** The workflow completed: what was delivered, not what is to be. */
  completed: boolean;
  trans: TranslationBundle;
}

/**
 * What the task asked for and how it stands, near the top of the panel: "Deliver: `answer`, a region
 * name" with each deliverable's latest check while the run goes on; at the end "Answer: North (checked
 * in the kernel: a value of df['region'])" or "Not delivered: `answer` is missing", and the steps given up.
 */
export function Deliverables(props: IDeliverablesProps): JSX.Element | null {
  const { outcome, completed, trans } = props;
  const lines = deliverableLines(outcome, completed, trans);
  const givenUp = givenUpLines(outcome, trans);
  if (lines.length === 0 && givenUp.length === 0) {
    return null;
  }
  const problems =
    givenUp.length > 0 || lines.some(line => line.status === 'failed');
  return (
    <div
      className={`jp-bcc-deliverables${problems ? ' jp-bcc-mod-problems' : ''}`}
      data-completed={completed}
    >
      {lines.length > 0 && !completed ? (
        <div className="jp-bcc-deliver">{deliverLine(outcome, trans)}</div>
      ) : null}
      {lines.length > 0 ? (
        <ul className="jp-bcc-deliverable-list">
          {lines.map(line => (
            <li
              key={line.name}
              className={`jp-bcc-deliverable jp-bcc-mod-${line.status}`}
              data-name={line.name}
              data-status={line.status}
              title={line.title}
            >
              <span className="jp-bcc-deliverable-mark" aria-hidden="true">
                {line.status === 'delivered'
                  ? '✓'
                  : line.status === 'failed'
                    ? '✗'
                    : '…'}
              </span>{' '}
              {line.text}
            </li>
          ))}
        </ul>
      ) : null}
      {givenUp.length > 0 ? (
        <ul className="jp-bcc-given-up-list">
          {givenUp.map((text, index) => (
            <li key={index} className="jp-bcc-given-up">
              {text}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** The run's deliverables and steps given up, when it has any. */
export function RunDeliverables(props: {
  snapshot: IRunSnapshot;
  trans: TranslationBundle;
}): JSX.Element | null {
  const outcome = shownOutcome(props.snapshot);
  return outcome ? (
    <Deliverables
      outcome={outcome}
      completed={props.snapshot.state === 'WORKFLOW_COMPLETED'}
      trans={props.trans}
    />
  ) : null;
}
