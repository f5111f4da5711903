import { caretDownIcon, caretRightIcon } from '@jupyterlab/ui-components';
import * as React from 'react';

export interface IToggleProps {
  expanded: boolean;
  onToggle: () => void;
}

/** The caret that opens or closes a tree item (hidden from assistive technology: the item has aria-expanded). */
export function Toggle(props: IToggleProps): JSX.Element {
  const Icon = props.expanded ? caretDownIcon : caretRightIcon;
  return (
    <span
      className="jp-bcc-toggle"
      aria-hidden="true"
      onClick={event => {
        event.stopPropagation();
        props.onToggle();
      }}
    >
      <Icon.react tag="span" elementSize="small" />
    </span>
  );
}
