import type { TranslationBundle } from '@jupyterlab/translation';
import {
  checkIcon,
  circleEmptyIcon,
  circleIcon,
  closeIcon,
  fastForwardIcon,
  LabIcon
} from '@jupyterlab/ui-components';
import * as React from 'react';
import type { ItemStatus } from '../../engine/types';

export interface IStatusIconProps {
  /** Completed, current, remaining, skipped or given up: picks the icon and its spoken label. */
  status: ItemStatus;
  /** A stage `given_up` has a step given up; a step is given up itself. */
  kind?: 'stage' | 'step';
  trans: TranslationBundle;
}

/** The status of a stage, step or behavior as an icon with an accessible label. */
export function StatusIcon(props: IStatusIconProps): JSX.Element {
  const { status, trans } = props;
  const [icon, label]: [LabIcon, string] =
    status === 'completed'
      ? [checkIcon, trans.__('completed')]
      : status === 'current'
        ? [circleIcon, trans.__('current')]
        : status === 'skipped'
          ? [fastForwardIcon, trans.__('skipped')]
          : status === 'given_up'
            ? [
                closeIcon,
                props.kind === 'stage'
                  ? trans.__('ended with a step given up')
                  : trans.__('given up')
              ]
            : [circleEmptyIcon, trans.__('remaining')];
  return (
    <span
      className={`jp-bcc-status-icon jp-bcc-mod-${status}`}
      role="img"
      aria-label={label}
      title={label}
    >
      <icon.react tag="span" elementSize="small" />
    </span>
  );
}
