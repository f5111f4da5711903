import type { TranslationBundle } from '@jupyterlab/translation';
import { refreshIcon, settingsIcon } from '@jupyterlab/ui-components';
import type { CommandRegistry } from '@lumino/commands';
import * as React from 'react';
import type { IMessageText } from '../../engine/messages';
import type { IRunError } from '../../engine/types';
import { CommandIDs } from '../../tokens';
import { OPEN_LLM_SETTINGS } from '../present';
import { describePlannerProblem } from '../problem';
import { CommandButton } from './CommandButton';

/** A run's error: the cause first, the whole chain folded under Details. */
function ErrorText(props: {
  error: IMessageText;
  trans: TranslationBundle;
}): JSX.Element {
  const problem = describePlannerProblem(props.error, props.trans);
  return (
    <>
      <div className="jp-bcc-error-message">{problem.summary}</div>
      {problem.details !== problem.summary ? (
        <details className="jp-bcc-problem-details">
          <summary>{props.trans.__('Details')}</summary>
          <pre>{problem.details}</pre>
        </details>
      ) : null}
    </>
  );
}

/**
 * The run's error, with Retry (or Set Variables… when the planner lacks some) when it may be retried,
 * and LLM Planner Settings… when the planner says its model settings are wrong.
 */
export function RunError(props: {
  error: IRunError;
  canRetry: boolean;
  commands: CommandRegistry;
  trans: TranslationBundle;
}): JSX.Element {
  const { error, commands, trans } = props;
  const lacksVariables = (error.missingVariables?.length ?? 0) > 0;
  const settings =
    error.action === OPEN_LLM_SETTINGS &&
    commands.hasCommand(CommandIDs.llmSettings);
  return (
    <div className="jp-bcc-error" role="alert">
      <ErrorText error={error} trans={trans} />
      {settings ? (
        <CommandButton
          commands={commands}
          id={CommandIDs.llmSettings}
          label={trans.__('LLM Planner Settings…')}
          icon={settingsIcon}
          enabled={commands.isEnabled(CommandIDs.llmSettings)}
          primary
        />
      ) : null}
      {props.canRetry ? (
        <CommandButton
          commands={commands}
          // Retrying without the variables the planner lacks would fail the same way.
          id={lacksVariables ? CommandIDs.setVariables : CommandIDs.retry}
          label={
            lacksVariables ? trans.__('Set Variables…') : trans.__('Retry')
          }
          icon={refreshIcon}
          enabled
          // Retrying before the settings are fixed would fail the same way.
          primary={!settings}
        />
      ) : null}
    </div>
  );
}
