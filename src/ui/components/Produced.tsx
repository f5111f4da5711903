import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

export interface IProducedProps {
  /** The variables an item produced; nothing is rendered when empty. */
  names: string[];
  trans: TranslationBundle;
}

/** "Produced: a, b" under a tree item. */
export function Produced(props: IProducedProps): JSX.Element | null {
  if (props.names.length === 0) {
    return null;
  }
  return (
    <div className="jp-bcc-produced">
      {props.trans.__('Produced:')}{' '}
      {props.names.map(name => (
        <code key={name} className="jp-bcc-variable">
          {name}
        </code>
      ))}
    </div>
  );
}
