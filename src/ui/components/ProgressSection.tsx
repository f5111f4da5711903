import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';
import type { IRunSnapshot } from '../../engine/types';
import type { IStageNode } from '../../tokens';
import { IProgressTreeProps, ProgressTree } from './ProgressTree';
import { Section } from './Section';

export interface IProgressSectionProps {
  /** For the workflow's name and the behavior budget. */
  snapshot: IRunSnapshot;
  tree: IStageNode[];
  rendermime: IRenderMimeRegistry;
  trans: TranslationBundle;
  /** "Redo from here" on the steps that offer it. */
  redo?: IProgressTreeProps['redo'];
  /** "Attempts…" on the steps whose rewritten cells keep attempts. */
  attempts?: IProgressTreeProps['attempts'];
  /** The user's notes on steps. */
  notes?: IProgressTreeProps['notes'];
  /** Each step's menu. */
  onStepMenu?: IProgressTreeProps['onStepMenu'];
}

/** The workflow's name, its progress tree and how many behaviors ran; nothing before the workflow is known. */
export function ProgressSection(
  props: IProgressSectionProps
): JSX.Element | null {
  const { snapshot, tree, rendermime, trans } = props;
  if (tree.length === 0) {
    return null;
  }
  return (
    <Section title={trans.__('Progress')} className="jp-bcc-progress">
      {snapshot.workflowName ? (
        <div className="jp-bcc-workflow-name">{snapshot.workflowName}</div>
      ) : null}
      <ProgressTree
        stages={tree}
        rendermime={rendermime}
        trans={trans}
        redo={props.redo}
        attempts={props.attempts}
        notes={props.notes}
        onStepMenu={props.onStepMenu}
      />
      {snapshot.behaviorsRun > 0 ? (
        <div
          className="jp-bcc-budget"
          data-behaviors-run={snapshot.behaviorsRun}
        >
          {snapshot.maxExecutionSteps > 0
            ? trans.__(
                'Behaviors run: %1 of at most %2',
                snapshot.behaviorsRun,
                snapshot.maxExecutionSteps
              )
            : trans.__('Behaviors run: %1', snapshot.behaviorsRun)}
        </div>
      ) : null}
    </Section>
  );
}
