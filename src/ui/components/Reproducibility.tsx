import type { TranslationBundle } from '@jupyterlab/translation';
import { refreshIcon, stopIcon } from '@jupyterlab/ui-components';
import type { CommandRegistry } from '@lumino/commands';
import * as React from 'react';
import { CommandIDs, ReproducibilityState } from '../../tokens';
import { reproducibilityText } from '../reproducibilityText';
import { CommandButton } from './CommandButton';
import { Section } from './Section';

export interface IReproducibilityProps {
  state: ReproducibilityState | null;
  /** A check may start now (the run ran and neither it nor a check runs). */
  canCheck: boolean;
  commands: CommandRegistry;
  trans: TranslationBundle;
}

/**
 * Does the run reproduce: the button that checks it in a fresh kernel, the check under way (Stop), and
 * its result: "Reproduced: 5 of 5 values", or what differs and where it first does (Show the cell).
 */
export function Reproducibility(
  props: IReproducibilityProps
): JSX.Element | null {
  const { state, commands, trans } = props;
  if (!state && !props.canCheck) {
    return null;
  }
  const text = state ? reproducibilityText(state, trans) : null;
  const checking = state?.kind === 'checking';
  return (
    <Section
      title={trans.__('Reproducibility')}
      className="jp-bcc-reproducibility"
    >
      {text ? (
        <div
          className={`jp-bcc-reproducibility-status jp-bcc-mod-${text.status}`}
          role="status"
          aria-live="polite"
          data-status={text.status}
        >
          <span aria-hidden="true">
            {text.status === 'reproduced'
              ? '✓ '
              : text.status === 'differs' || text.status === 'failed'
                ? '✗ '
                : ''}
          </span>
          {text.headline}
        </div>
      ) : null}
      {text?.firstDifference ? (
        <div className="jp-bcc-reproducibility-first">
          {text.firstDifference.text}{' '}
          <button
            type="button"
            className="jp-bcc-link-button"
            onClick={() =>
              void commands.execute(CommandIDs.showCell, {
                cellId: text.firstDifference!.cellId
              })
            }
          >
            {trans.__('Show the cell')}
          </button>
        </div>
      ) : null}
      {text && text.values.length > 0 ? (
        <ul className="jp-bcc-reproducibility-values">
          {text.values.map(value => (
            <li key={value.name} data-name={value.name}>
              {value.text}
            </li>
          ))}
        </ul>
      ) : null}
      {text && text.details.length > 0 ? (
        <details className="jp-bcc-reproducibility-details">
          <summary>{trans.__('What the check ran with')}</summary>
          <ul>
            {text.details.map(line => (
              <li key={line}>{line}</li>
            ))}
          </ul>
        </details>
      ) : null}
      <div className="jp-bcc-controls">
        {checking ? (
          <CommandButton
            commands={commands}
            id={CommandIDs.stopReproducibilityCheck}
            label={trans.__('Stop the check')}
            icon={stopIcon}
            enabled={true}
          />
        ) : (
          <CommandButton
            commands={commands}
            id={CommandIDs.checkReproducibility}
            label={
              state
                ? trans.__('Check again')
                : trans.__('Check that it reproduces')
            }
            icon={refreshIcon}
            enabled={props.canCheck}
          />
        )}
      </div>
    </Section>
  );
}
