import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';
import type { PlanningUsage } from '../../protocol';
import { describeUsage } from '../plannerText';

export interface IUsageLineProps {
  /** What the LLM planner said the run spent (`IRunSnapshot.usage`). */
  usage: PlanningUsage;
  trans: TranslationBundle;
}

/** The tokens of the last behavior and of the run, and their cost when the administrator set prices. */
export function UsageLine(props: IUsageLineProps): JSX.Element | null {
  const { usage } = props;
  const text = describeUsage(usage, props.trans);
  if (!text.behavior && !text.run && !text.cost) {
    return null;
  }
  return (
    <div
      className="jp-bcc-usage"
      data-model={usage.model ?? ''}
      data-run-prompt-tokens={usage.run?.prompt_tokens}
      data-run-completion-tokens={usage.run?.completion_tokens}
      data-estimated={text.estimated ? 'true' : undefined}
    >
      {text.behavior ? (
        <span className="jp-bcc-usage-behavior">{text.behavior}</span>
      ) : null}
      {text.run ? <span className="jp-bcc-usage-run">{text.run}</span> : null}
      {text.estimated ? (
        <span
          className="jp-bcc-usage-estimated"
          title={props.trans.__(
            'The model sent no token counts: they are estimated from the text.'
          )}
        >
          {text.estimated}
        </span>
      ) : null}
      {text.cost ? (
        <span className="jp-bcc-usage-cost">{text.cost}</span>
      ) : null}
    </div>
  );
}
