import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';
import { ClippedText } from './ClippedText';
import { LimitedList } from './LimitedList';
import { Section } from './Section';

export interface IEffectsSectionProps {
  /** What the planner sees of the run's actions, newest first. */
  effects: string[];
  trans: TranslationBundle;
}

/** The latest effects, folded; nothing when there are none. */
export function EffectsSection(
  props: IEffectsSectionProps
): JSX.Element | null {
  const { effects, trans } = props;
  if (effects.length === 0) {
    return null;
  }
  return (
    <Section
      title={trans.__('Latest cell outputs')}
      count={effects.length}
      open={false}
      className="jp-bcc-effects"
    >
      <LimitedList
        items={effects}
        className="jp-bcc-effect-list"
        label={trans.__('Cell outputs, newest first')}
        trans={trans}
        render={(effect: string, index) => (
          <li key={`${effects.length - index}`} className="jp-bcc-effect">
            {effect === '' ? (
              <span className="jp-bcc-effect-empty">
                {trans.__('(the cell printed nothing)')}
              </span>
            ) : (
              <ClippedText text={effect} trans={trans} />
            )}
          </li>
        )}
      />
    </Section>
  );
}
