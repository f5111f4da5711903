import type { TranslationBundle } from '@jupyterlab/translation';
import type { CommandRegistry } from '@lumino/commands';
import * as React from 'react';
import { CommandIDs } from '../../tokens';

/** The panel's footer link that exports the run's trace. */
export function TraceLink(props: {
  commands: CommandRegistry;
  trans: TranslationBundle;
}): JSX.Element {
  const { commands, trans } = props;
  return (
    <div className="jp-bcc-footer">
      <button
        type="button"
        className="jp-bcc-link-button"
        title={commands.caption(CommandIDs.exportTrace)}
        onClick={() => {
          void commands.execute(CommandIDs.exportTrace);
        }}
      >
        {trans.__('Export the run trace')}
      </button>
    </div>
  );
}
