import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';
import type { IBehaviorNode } from '../../tokens';
import { formatDuration } from '../present';
import { Produced } from './Produced';
import { StatusIcon } from './StatusIcon';

export interface IBehaviorItemProps {
  behavior: IBehaviorNode;
  trans: TranslationBundle;
}

/** A behavior of a step: a leaf of the progress tree, with its duration once it ended. */
export function BehaviorItem(props: IBehaviorItemProps): JSX.Element {
  const { behavior, trans } = props;
  const title =
    behavior.status !== 'current'
      ? trans.__('Behavior %1', behavior.iteration)
      : behavior.paused
        ? trans.__('Behavior %1 (paused)', behavior.iteration)
        : behavior.running
          ? trans.__('Behavior %1 (running)', behavior.iteration)
          : trans.__('Behavior %1 (not finished)', behavior.iteration);
  return (
    <li
      role="treeitem"
      aria-level={3}
      aria-label={title}
      aria-current={behavior.status === 'current' ? 'step' : undefined}
      tabIndex={-1}
      className={`jp-bcc-tree-item jp-bcc-behavior jp-bcc-mod-${behavior.status}`}
    >
      <div className="jp-bcc-tree-row">
        <StatusIcon status={behavior.status} trans={trans} />
        <span className="jp-bcc-tree-name">{title}</span>
        {behavior.durationMs !== null ? (
          <span className="jp-bcc-duration">
            {formatDuration(behavior.durationMs, trans)}
          </span>
        ) : null}
      </div>
      {behavior.goal ? (
        <div className="jp-bcc-goal">{behavior.goal}</div>
      ) : null}
      <Produced names={behavior.produced} trans={trans} />
    </li>
  );
}
