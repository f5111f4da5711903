import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';
import type { ItemStatus } from '../../engine/types';
import type { Assessment } from '../../protocol';
import { Markdown } from '../markdown';
import { Produced } from './Produced';
import { StatusIcon } from './StatusIcon';
import { Toggle } from './Toggle';

export interface ITreeItemProps {
  /** `stage:<id>` or `step:<stage>/<step>`: the key of its expanded state, and `data-id`. */
  id: string;
  kind: 'stage' | 'step';
  name: string;
  status: ItemStatus;
  goal: string | null;
  /** The planner's guidance (markdown), shown folded under `focusLabel`. */
  focus: string | null;
  focusLabel: string;
  /** The focus starts unfolded. */
  focusOpen: boolean;
  /** The planner's latest assessment: its percentage in the row, its reasoning folded. */
  assessment: Assessment | null;
  produced: string[];
  expanded: boolean;
  /** Whether the item has anything to expand; a leaf has no caret and no aria-expanded. */
  expandable: boolean;
  /** 0 for the one item the tree is entered on, -1 for the others (roving tabindex). */
  tabIndex: number;
  onToggle: (expanded: boolean) => void;
  rendermime: IRenderMimeRegistry;
  trans: TranslationBundle;
  /** Buttons at the end of the row (e.g. Redo from here). */
  actions?: React.ReactNode;
  /** A mark after the name (the user's note on a step). */
  badge?: React.ReactNode;
  /** Shown first under the row when expanded (the user's note). */
  note?: React.ReactNode;
  /** The child group (steps of a stage, behaviors of a step), shown when expanded. */
  children?: React.ReactNode;
}

/** A stage or a step in the progress tree: its row, and when expanded its goal, focus, outputs and children. */
export function TreeItem(props: ITreeItemProps): JSX.Element {
  const { id, name, status, expanded, expandable, trans } = props;
  const toggle = () => props.onToggle(!expanded);
  return (
    <li
      data-id={id}
      role="treeitem"
      aria-level={props.kind === 'stage' ? 1 : 2}
      aria-label={name}
      aria-expanded={expandable ? expanded : undefined}
      aria-current={status === 'current' ? 'step' : undefined}
      tabIndex={props.tabIndex}
      className={`jp-bcc-tree-item jp-bcc-${props.kind} jp-bcc-mod-${status}`}
    >
      <div
        className={`jp-bcc-tree-row${props.actions ? ' jp-bcc-tree-row-actions' : ''}`}
        onClick={() => expandable && toggle()}
      >
        {expandable ? (
          <Toggle expanded={expanded} onToggle={toggle} />
        ) : (
          <span className="jp-bcc-toggle" />
        )}
        <StatusIcon status={status} kind={props.kind} trans={trans} />
        <span className="jp-bcc-tree-name">{name}</span>
        {props.badge}
        {props.assessment?.percent !== undefined ? (
          <span
            className="jp-bcc-percent"
            title={trans.__('How far the planner says this is')}
          >
            {`${Math.round(props.assessment.percent)}%`}
          </span>
        ) : null}
        {props.actions ? (
          <span
            className="jp-bcc-tree-actions"
            onClick={event => event.stopPropagation()}
          >
            {props.actions}
          </span>
        ) : null}
      </div>
      {expanded ? (
        <div className="jp-bcc-tree-details">
          {props.note}
          {props.goal ? <div className="jp-bcc-goal">{props.goal}</div> : null}
          {props.focus ? (
            <details
              className="jp-bcc-focus"
              open={props.focusOpen || undefined}
            >
              <summary>{props.focusLabel}</summary>
              <Markdown source={props.focus} rendermime={props.rendermime} />
            </details>
          ) : null}
          {props.assessment?.reasoning ? (
            <details className="jp-bcc-focus jp-bcc-assessment">
              <summary>{trans.__('The planner’s assessment')}</summary>
              <Markdown
                source={props.assessment.reasoning}
                rendermime={props.rendermime}
              />
            </details>
          ) : null}
          <Produced names={props.produced} trans={trans} />
          {props.children}
        </div>
      ) : null}
    </li>
  );
}
