import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';
import type { Artifact } from '../../protocol';
import type { IOutputItem } from '../../tokens';
import { checkText } from '../outcome';
import { Section } from './Section';

/** ✓ or ✗: an output's latest check in the kernel, its reason in words below a ✗. */
function Check(props: {
  output: IOutputItem;
  trans: TranslationBundle;
}): JSX.Element | null {
  const { output, trans } = props;
  const check = output.check;
  if (!check) {
    return null;
  }
  const text = checkText(output.name, check, trans);
  return (
    <span
      className={`jp-bcc-check jp-bcc-mod-${check.ok ? 'ok' : 'failed'}`}
      data-ok={check.ok}
      role="img"
      aria-label={text}
      title={text}
    >
      {check.ok ? '✓' : '✗'}
    </span>
  );
}

export interface IOutputsSectionProps {
  /** The expected outputs of the current step and whether each exists. */
  outputs: IOutputItem[];
  /** What the run produced so far. */
  artifacts: Artifact[];
  trans: TranslationBundle;
}

/**
 * The expected outputs (each with its latest check in the kernel when it has a contract) and the
 * run's artifacts; nothing when there are neither.
 */
export function OutputsSection(
  props: IOutputsSectionProps
): JSX.Element | null {
  const { outputs, artifacts, trans } = props;
  if (outputs.length === 0 && artifacts.length === 0) {
    return null;
  }
  return (
    <Section title={trans.__('Outputs')} className="jp-bcc-outputs">
      <ul className="jp-bcc-output-list">
        {outputs.map(output => (
          <li
            key={output.name}
            className={`jp-bcc-output jp-bcc-mod-${output.status}`}
            data-status={output.status}
          >
            <code className="jp-bcc-variable">{output.name}</code>
            <Check output={output} trans={trans} />
            <span className="jp-bcc-output-status">
              {output.status === 'produced'
                ? trans.__('produced')
                : output.status === 'in_progress'
                  ? trans.__('in progress')
                  : trans.__('missing')}
            </span>
            {output.check && !output.check.ok ? (
              <div className="jp-bcc-check-reason">
                {checkText(output.name, output.check, trans)}
              </div>
            ) : null}
          </li>
        ))}
      </ul>
      {artifacts.length > 0 ? (
        <details className="jp-bcc-artifacts">
          <summary className="jp-bcc-subtitle">
            {trans.__('Artifacts')}
            <span className="jp-bcc-count">{artifacts.length}</span>
          </summary>
          <ul className="jp-bcc-artifact-list">
            {artifacts.map(artifact => (
              <li key={artifact.artifact_id} className="jp-bcc-artifact">
                <code className="jp-bcc-variable">
                  {artifact.variable_name}
                </code>
              </li>
            ))}
          </ul>
        </details>
      ) : null}
    </Section>
  );
}
