import type { TranslationBundle } from '@jupyterlab/translation';
import {
  checkIcon,
  circleEmptyIcon,
  circleIcon,
  fastForwardIcon,
  LabIcon
} from '@jupyterlab/ui-components';
import * as React from 'react';
import type { ItemStatus } from '../../engine/types';

export interface IStatusIconProps {
  /** Completed, current, remaining or skipped: picks the icon and its spoken label. */
  status: ItemStatus;
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
