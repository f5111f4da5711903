import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';
import type { ITimedWarning } from '../../tokens';
import { translateMessage } from '../present';
import { ClippedText } from './ClippedText';
import { LimitedList } from './LimitedList';
import { Section } from './Section';

export interface IWarningsSectionProps {
  /** Newest first. */
  warnings: ITimedWarning[];
  trans: TranslationBundle;
}

function sourceLabel(
  source: ITimedWarning['source'],
  trans: TranslationBundle
): string {
  switch (source) {
    case 'planner':
      return trans.__('planner');
    case 'action':
      return trans.__('action');
    case 'filter':
      return trans.__('context filter');
    case 'engine':
      return trans.__('run');
    case 'hook':
      return trans.__('dialog');
    case 'driver':
      return trans.__('notebook');
  }
}

/** The run's warnings with where each came from; nothing when there are none. */
export function WarningsSection(
  props: IWarningsSectionProps
): JSX.Element | null {
  const { warnings, trans } = props;
  if (warnings.length === 0) {
    return null;
  }
  return (
    <Section
      title={trans.__('Warnings')}
      count={warnings.length}
      className="jp-bcc-warnings"
    >
      <LimitedList
        items={warnings}
        className="jp-bcc-warning-list"
        label={trans.__('Warnings, newest first')}
        trans={trans}
        render={(warning: ITimedWarning, index) => (
          <li key={`${warning.time}-${index}`} className="jp-bcc-warning">
            <span className="jp-bcc-warning-source">
              {sourceLabel(warning.source, trans)}
            </span>{' '}
            <ClippedText
              text={translateMessage(warning, trans)}
              trans={trans}
            />
          </li>
        )}
      />
    </Section>
  );
}
