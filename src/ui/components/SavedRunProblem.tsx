import type { TranslationBundle } from '@jupyterlab/translation';
import { deleteIcon } from '@jupyterlab/ui-components';
import type { CommandRegistry } from '@lumino/commands';
import * as React from 'react';
import { CommandIDs } from '../../tokens';
import { CommandButton } from './CommandButton';

export interface ISavedRunProblemProps {
  /** What is wrong with the saved run, one `field: problem` each. */
  problems: readonly string[];
  canDiscard: boolean;
  commands: CommandRegistry;
  trans: TranslationBundle;
}

/** The run saved in the notebook cannot be read: what is wrong, and a way to discard it. */
export function SavedRunProblem(props: ISavedRunProblemProps): JSX.Element {
  const { problems, commands, trans } = props;
  return (
    <div className="jp-bcc-saved-problem" role="alert">
      <div className="jp-bcc-saved-problem-title">
        {trans.__(
          'The run saved in this notebook cannot be resumed: its state is not readable.'
        )}
      </div>
      <ul className="jp-bcc-saved-problem-list">
        {problems.map((problem, index) => (
          <li key={index}>{problem}</li>
        ))}
      </ul>
      <div className="jp-bcc-hint">
        {trans.__(
          'Discarding it removes only the saved run from the notebook’s metadata; the cells stay. A new Run starts afresh.'
        )}
      </div>
      <CommandButton
        commands={commands}
        id={CommandIDs.discardSavedRun}
        label={trans.__('Discard the saved run')}
        icon={deleteIcon}
        enabled={props.canDiscard}
      />
    </div>
  );
}
