import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { TranslationBundle } from '@jupyterlab/translation';
import { editIcon } from '@jupyterlab/ui-components';
import * as React from 'react';
import type { ItemStatus } from '../../engine/types';
import type { IStageNode, IStepNode, IStepNoteView } from '../../tokens';
import { stepKey } from '../../engine/rewindView';
import { BehaviorItem } from './BehaviorItem';
import { TreeItem } from './TreeItem';

export interface IProgressTreeProps {
  stages: IStageNode[];
  /** Steps that offer "Redo from here" (`stageId/stepId`), and what the button does. */
  redo?: {
    steps: readonly string[];
    onRedo: (stageId: string, stepId: string) => void;
  };
  /** Steps whose rewritten cells keep attempts, and what their "Attempts…" button does. */
  attempts?: {
    has: (stepId: string) => boolean;
    onShow: (stepId: string) => void;
  };
  /** The user's notes on steps, marked on their rows. */
  notes?: readonly IStepNoteView[];
  /** Opens a step's menu (note, redo with the note…) under `anchor`. */
  onStepMenu?: (
    stageId: string,
    stepId: string,
    anchor: HTMLElement,
    byKeyboard: boolean
  ) => void;
  rendermime: IRenderMimeRegistry;
  trans: TranslationBundle;
}

/** Moves focus among the visible tree items: arrows, Home and End (WAI-ARIA tree pattern). */
function onTreeKeyDown(
  event: React.KeyboardEvent<HTMLUListElement>,
  toggle: (id: string, expanded: boolean) => void
): void {
  const items = Array.from(
    event.currentTarget.querySelectorAll<HTMLElement>('[role="treeitem"]')
  ).filter(
    item => item.offsetParent !== null || item === document.activeElement
  );
  const current = (event.target as HTMLElement).closest<HTMLElement>(
    '[role="treeitem"]'
  );
  if (event.target !== current) {
    // A control inside an item (Redo from here, a folded summary, a link) keeps its own keys.
    return;
  }
  const index = current ? items.indexOf(current) : -1;
  const focus = (item: HTMLElement | undefined) => {
    if (item) {
      event.preventDefault();
      item.focus();
    }
  };
  const id = current?.dataset.id;
  switch (event.key) {
    case 'ArrowDown':
      focus(items[index + 1]);
      break;
    case 'ArrowUp':
      focus(items[Math.max(0, index - 1)]);
      break;
    case 'Home':
      focus(items[0]);
      break;
    case 'End':
      focus(items[items.length - 1]);
      break;
    case 'ArrowRight':
      if (id && current?.getAttribute('aria-expanded') === 'false') {
        event.preventDefault();
        toggle(id, true);
      } else {
        focus(items[index + 1]);
      }
      break;
    case 'ArrowLeft':
      if (id && current?.getAttribute('aria-expanded') === 'true') {
        event.preventDefault();
        toggle(id, false);
      } else {
        const parent =
          current?.parentElement?.closest<HTMLElement>('[role="treeitem"]');
        focus(parent ?? undefined);
      }
      break;
    case 'Enter':
    case ' ':
      if (id && current?.hasAttribute('aria-expanded')) {
        event.preventDefault();
        toggle(id, current.getAttribute('aria-expanded') !== 'true');
      }
      break;
    default:
      break;
  }
}

/** The user's note on a step, marked after its name. */
function NoteMark(props: { text: string; trans: TranslationBundle }) {
  const label = props.trans.__('Your note: %1', props.text);
  return (
    <span
      className="jp-bcc-step-note-mark"
      role="img"
      aria-label={label}
      title={label}
    >
      <editIcon.react tag="span" height="12px" width="12px" />
    </span>
  );
}

/** A step's buttons: Redo from here (when it can be redone), and its menu. */
function StepActions(props: {
  stageId: string;
  step: IStepNode;
  onRedo?: (stageId: string, stepId: string) => void;
  onMenu?: IProgressTreeProps['onStepMenu'];
  /** The step's rewritten cells keep attempts: "Attempts…" shows them. */
  onAttempts?: () => void;
  trans: TranslationBundle;
}) {
  const { stageId, step, onRedo, onMenu, onAttempts, trans } = props;
  return (
    <>
      {onRedo ? (
        <button
          type="button"
          className="jp-bcc-link-button jp-bcc-redo-step"
          data-step-id={step.id}
          title={trans.__(
            'Remove the cells of this step and the later ones, and run again from here'
          )}
          onClick={() => onRedo(stageId, step.id)}
        >
          {trans.__('Redo from here')}
        </button>
      ) : null}
      {onAttempts ? (
        <button
          type="button"
          className="jp-bcc-link-button jp-bcc-step-attempts"
          data-step-id={step.id}
          title={trans.__(
            'The earlier code of the cells a retry fixed in this step; restore one of them'
          )}
          onClick={onAttempts}
        >
          {trans.__('Attempts…')}
        </button>
      ) : null}
      {onMenu ? (
        <button
          type="button"
          className="jp-bcc-link-button jp-bcc-step-menu"
          data-step-id={step.id}
          aria-haspopup="menu"
          aria-label={trans.__('Step actions: %1', step.name)}
          title={trans.__(
            'A note for the planner on this step, Redo with the note…'
          )}
          onClick={event =>
            onMenu(stageId, step.id, event.currentTarget, event.detail === 0)
          }
        >
          ⋯
        </button>
      ) : null}
    </>
  );
}

/**
 * Stages > steps > behaviors as a WAI-ARIA tree. The current stage and step are expanded until the
 * user opens or closes an item.
 */
export function ProgressTree(props: IProgressTreeProps): JSX.Element {
  const { stages, rendermime, trans } = props;
  const [overrides, setOverrides] = React.useState<Record<string, boolean>>({});
  const expanded = (id: string, status: ItemStatus) =>
    overrides[id] ?? status === 'current';
  const toggle = (id: string, value: boolean) =>
    setOverrides(previous => ({ ...previous, [id]: value }));
  const firstFocusable =
    stages.find(stage => stage.status === 'current')?.id ?? stages[0]?.id;

  const renderStep = (stage: IStageNode, step: IStepNode) => {
    const id = `step:${stage.id}/${step.id}`;
    const redo = props.redo;
    const note =
      props.notes?.find(
        n =>
          n.stepId === step.id && (n.stageId === null || n.stageId === stage.id)
      ) ?? null;
    const onMenu = props.onStepMenu;
    const canRedo =
      !!redo &&
      // A step given up (`skipped` in a run saved before steps were marked given up) is run again
      // from here too, once its cause is fixed.
      (step.status === 'completed' ||
        step.status === 'given_up' ||
        step.status === 'skipped') &&
      redo.steps.includes(stepKey(stage.id, step.id));
    const hasAttempts = !!props.attempts?.has(step.id);
    return (
      <TreeItem
        key={id}
        id={id}
        kind="step"
        name={step.name}
        status={step.status}
        goal={step.goal}
        focus={step.focus}
        focusLabel={trans.__('Focus of this step')}
        focusOpen={true}
        assessment={step.assessment}
        produced={step.produced}
        expanded={expanded(id, step.status)}
        expandable={
          step.behaviors.length > 0 ||
          !!step.focus ||
          !!step.goal ||
          !!step.assessment?.reasoning ||
          note !== null
        }
        badge={note ? <NoteMark text={note.text} trans={trans} /> : undefined}
        note={
          note ? (
            <div className="jp-bcc-step-note">
              <span className="jp-bcc-label">{trans.__('Your note:')}</span>{' '}
              {note.text}
            </div>
          ) : undefined
        }
        tabIndex={-1}
        onToggle={value => toggle(id, value)}
        rendermime={rendermime}
        trans={trans}
        actions={
          canRedo || onMenu || hasAttempts ? (
            <StepActions
              stageId={stage.id}
              step={step}
              onRedo={canRedo ? redo?.onRedo : undefined}
              onMenu={onMenu}
              onAttempts={
                hasAttempts ? () => props.attempts?.onShow(step.id) : undefined
              }
              trans={trans}
            />
          ) : undefined
        }
      >
        {step.behaviors.length > 0 ? (
          <ul role="group" className="jp-bcc-tree-group">
            {step.behaviors.map(behavior => (
              <BehaviorItem
                key={behavior.key}
                behavior={behavior}
                trans={trans}
              />
            ))}
          </ul>
        ) : null}
      </TreeItem>
    );
  };

  return (
    <ul
      role="tree"
      aria-label={trans.__('Workflow progress')}
      className="jp-bcc-tree"
      onKeyDown={event => onTreeKeyDown(event, toggle)}
    >
      {stages.map(stage => {
        const id = `stage:${stage.id}`;
        return (
          <TreeItem
            key={id}
            id={id}
            kind="stage"
            name={stage.name}
            status={stage.status}
            goal={stage.goal}
            focus={stage.focus}
            focusLabel={trans.__('Focus of this stage')}
            focusOpen={false}
            assessment={stage.assessment}
            produced={stage.produced}
            expanded={expanded(id, stage.status)}
            expandable={true}
            tabIndex={stage.id === firstFocusable ? 0 : -1}
            onToggle={value => toggle(id, value)}
            rendermime={rendermime}
            trans={trans}
          >
            <ul role="group" className="jp-bcc-tree-group">
              {stage.steps.map(step => renderStep(stage, step))}
            </ul>
          </TreeItem>
        );
      })}
    </ul>
  );
}
