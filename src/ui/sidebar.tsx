/**
 * The right-side panel: the run of the active notebook. It follows the notebook tracker, listens to
 * the run model of the current notebook and renders; every button runs a command.
 */
import { PathExt } from '@jupyterlab/coreutils';
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import {
  caretDownIcon,
  caretRightIcon,
  checkIcon,
  circleEmptyIcon,
  circleIcon,
  LabIcon,
  pauseIcon,
  refreshIcon,
  runIcon,
  stepOverIcon,
  stopIcon,
  ReactWidget
} from '@jupyterlab/ui-components';
import type { CommandRegistry } from '@lumino/commands';
import * as React from 'react';
import type { ItemStatus } from '../engine/types';
import {
  CommandIDs,
  IRunModel,
  IRunModelRegistry,
  ITimedWarning
} from '../tokens';
import { TRANSLATION_DOMAIN } from '../translation';
import { bccIcon } from './icons';
import { Markdown } from './markdown';
import {
  describeRun,
  formatDuration,
  IBehaviorNode,
  IStageNode,
  IStepNode
} from './present';

/** Effects longer than this are clipped behind "Show more". */
const EFFECT_CLIP = 400;
/** Effects and warnings shown before "Show all". */
const LIST_LIMIT = 8;

interface IViewProps {
  model: IRunModel | null;
  /** The active notebook is still loading (its runner does not exist yet). */
  loading: boolean;
  commands: CommandRegistry;
  rendermime: IRenderMimeRegistry;
  trans: TranslationBundle;
}

function StatusIcon(props: {
  status: ItemStatus;
  trans: TranslationBundle;
}): JSX.Element {
  const { status, trans } = props;
  const icon: LabIcon =
    status === 'completed'
      ? checkIcon
      : status === 'current'
        ? circleIcon
        : circleEmptyIcon;
  const label =
    status === 'completed'
      ? trans.__('completed')
      : status === 'current'
        ? trans.__('current')
        : trans.__('remaining');
  return (
    <span
      className={`jp-bcc-status-icon jp-bcc-mod-${status}`}
      role="img"
      aria-label={label}
      title={label}
    >
      <icon.react tag="span" elementSize="small" />
    </span>
  );
}

function CommandButton(props: {
  commands: CommandRegistry;
  id: string;
  label: string;
  icon: LabIcon;
  enabled: boolean;
  primary?: boolean;
}): JSX.Element {
  const { commands, id } = props;
  const caption = commands.caption(id) || props.label;
  const keys = commands.keyBindings.find(binding => binding.command === id);
  const shortcut = keys ? ` (${keys.keys.join(', ')})` : '';
  return (
    <button
      type="button"
      className={`jp-bcc-control ${props.primary ? 'jp-bcc-mod-primary' : ''}`}
      data-command={id}
      title={caption + shortcut}
      disabled={!props.enabled}
      onClick={() => {
        void commands.execute(id);
      }}
    >
      <props.icon.react tag="span" elementSize="small" />
      <span className="jp-bcc-control-label">{props.label}</span>
    </button>
  );
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

function Produced(props: {
  names: string[];
  trans: TranslationBundle;
}): JSX.Element | null {
  if (props.names.length === 0) {
    return null;
  }
  return (
    <div className="jp-bcc-produced">
      {props.trans.__('Produced:')}{' '}
      {props.names.map(name => (
        <code key={name} className="jp-bcc-variable">
          {name}
        </code>
      ))}
    </div>
  );
}

function BehaviorItem(props: {
  behavior: IBehaviorNode;
  trans: TranslationBundle;
}): JSX.Element {
  const { behavior, trans } = props;
  const title =
    behavior.status !== 'current'
      ? trans.__('Behavior %1', behavior.iteration)
      : behavior.running
        ? trans.__('Behavior %1 (running)', behavior.iteration)
        : trans.__('Behavior %1 (not finished)', behavior.iteration);
  return (
    <li
      role="treeitem"
      aria-level={3}
      aria-label={title}
      aria-current={behavior.status === 'current' ? 'step' : undefined}
      tabIndex={-1}
      className={`jp-bcc-tree-item jp-bcc-behavior jp-bcc-mod-${behavior.status}`}
    >
      <div className="jp-bcc-tree-row">
        <StatusIcon status={behavior.status} trans={trans} />
        <span className="jp-bcc-tree-name">{title}</span>
        {behavior.durationMs !== null ? (
          <span className="jp-bcc-duration">
            {formatDuration(behavior.durationMs, trans)}
          </span>
        ) : null}
      </div>
      {behavior.goal ? (
        <div className="jp-bcc-goal">{behavior.goal}</div>
      ) : null}
      <Produced names={behavior.produced} trans={trans} />
    </li>
  );
}

function Toggle(props: {
  expanded: boolean;
  onToggle: () => void;
  label: string;
}): JSX.Element {
  const Icon = props.expanded ? caretDownIcon : caretRightIcon;
  return (
    <span
      className="jp-bcc-toggle"
      aria-hidden="true"
      onClick={event => {
        event.stopPropagation();
        props.onToggle();
      }}
    >
      <Icon.react tag="span" elementSize="small" />
    </span>
  );
}

interface ITreeProps {
  stages: IStageNode[];
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

function ProgressTree(props: ITreeProps): JSX.Element {
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
    const open = expanded(id, step.status);
    const hasChildren =
      step.behaviors.length > 0 || !!step.focus || !!step.goal;
    return (
      <li
        key={id}
        data-id={id}
        role="treeitem"
        aria-level={2}
        aria-label={step.name}
        aria-expanded={hasChildren ? open : undefined}
        aria-current={step.status === 'current' ? 'step' : undefined}
        tabIndex={-1}
        className={`jp-bcc-tree-item jp-bcc-step jp-bcc-mod-${step.status}`}
      >
        <div
          className="jp-bcc-tree-row"
          onClick={() => hasChildren && toggle(id, !open)}
        >
          {hasChildren ? (
            <Toggle
              expanded={open}
              onToggle={() => toggle(id, !open)}
              label={step.name}
            />
          ) : (
            <span className="jp-bcc-toggle" />
          )}
          <StatusIcon status={step.status} trans={trans} />
          <span className="jp-bcc-tree-name">{step.name}</span>
        </div>
        {open ? (
          <div className="jp-bcc-tree-details">
            {step.goal ? <div className="jp-bcc-goal">{step.goal}</div> : null}
            {step.focus ? (
              <details className="jp-bcc-focus" open>
                <summary>{trans.__('Focus of this step')}</summary>
                <Markdown source={step.focus} rendermime={rendermime} />
              </details>
            ) : null}
            <Produced names={step.produced} trans={trans} />
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
          </div>
        ) : null}
      </li>
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
        const open = expanded(id, stage.status);
        return (
          <li
            key={id}
            data-id={id}
            role="treeitem"
            aria-level={1}
            aria-label={stage.name}
            aria-expanded={open}
            aria-current={stage.status === 'current' ? 'step' : undefined}
            tabIndex={stage.id === firstFocusable ? 0 : -1}
            className={`jp-bcc-tree-item jp-bcc-stage jp-bcc-mod-${stage.status}`}
          >
            <div className="jp-bcc-tree-row" onClick={() => toggle(id, !open)}>
              <Toggle
                expanded={open}
                onToggle={() => toggle(id, !open)}
                label={stage.name}
              />
              <StatusIcon status={stage.status} trans={trans} />
              <span className="jp-bcc-tree-name">{stage.name}</span>
            </div>
            {open ? (
              <div className="jp-bcc-tree-details">
                {stage.goal ? (
                  <div className="jp-bcc-goal">{stage.goal}</div>
                ) : null}
                {stage.focus ? (
                  <details className="jp-bcc-focus">
                    <summary>{trans.__('Focus of this stage')}</summary>
                    <Markdown source={stage.focus} rendermime={rendermime} />
                  </details>
                ) : null}
                <Produced names={stage.produced} trans={trans} />
                <ul role="group" className="jp-bcc-tree-group">
                  {stage.steps.map(step => renderStep(stage, step))}
                </ul>
              </div>
            ) : null}
          </li>
        );
      })}
    </ul>
  );
}

function ClippedText(props: {
  text: string;
  trans: TranslationBundle;
}): JSX.Element {
  const [open, setOpen] = React.useState(false);
  const { text, trans } = props;
  const long = text.length > EFFECT_CLIP;
  return (
    <div className="jp-bcc-clipped">
      <pre className="jp-bcc-effect-text">
        {long && !open ? `${text.slice(0, EFFECT_CLIP)}…` : text}
      </pre>
      {long ? (
        <button
          type="button"
          className="jp-bcc-link-button"
          aria-expanded={open}
          onClick={() => setOpen(!open)}
        >
          {open ? trans.__('Show less') : trans.__('Show more')}
        </button>
      ) : null}
    </div>
  );
}

function LimitedList<T>(props: {
  items: T[];
  render: (item: T, index: number) => JSX.Element;
  className: string;
  label: string;
  trans: TranslationBundle;
}): JSX.Element {
  const [all, setAll] = React.useState(false);
  const { items, trans } = props;
  const shown = all ? items : items.slice(0, LIST_LIMIT);
  return (
    <>
      <ol className={props.className} aria-label={props.label}>
        {shown.map(props.render)}
      </ol>
      {items.length > LIST_LIMIT ? (
        <button
          type="button"
          className="jp-bcc-link-button"
          onClick={() => setAll(!all)}
        >
          {all ? trans.__('Show fewer') : trans.__('Show all %1', items.length)}
        </button>
      ) : null}
    </>
  );
}

function Section(props: {
  title: string;
  count?: number;
  open?: boolean;
  className: string;
  children: React.ReactNode;
}): JSX.Element {
  return (
    <details
      className={`jp-bcc-section ${props.className}`}
      open={props.open ?? true}
    >
      <summary className="jp-bcc-section-title">
        {props.title}
        {props.count !== undefined ? (
          <span className="jp-bcc-count">{props.count}</span>
        ) : null}
      </summary>
      {props.children}
    </details>
  );
}

function RunView(props: IViewProps & { model: IRunModel }): JSX.Element {
  const { model, commands, rendermime, trans } = props;
  const snapshot = model.snapshot;
  const available = model.availability;
  const state = describeRun(snapshot, trans, {
    awaitingApproval: model.awaitingApproval,
    finished: model.finished
  });
  const tree = model.tree;
  const outputs = model.outputs;
  const artifacts = model.artifacts;
  const effects = model.effects;
  const warnings = model.warnings;
  const error = snapshot.error;
  const waiting =
    (snapshot.paused || snapshot.pausing) && snapshot.bufferedActions > 0
      ? trans._n(
          '%1 action received, waiting to be applied',
          '%1 actions received, waiting to be applied',
          snapshot.bufferedActions
        )
      : null;
  const paused = snapshot.running && (snapshot.paused || snapshot.pausing);
  return (
    <>
      <div
        className={`jp-bcc-state jp-bcc-state-${snapshot.state.toLowerCase()}`}
        role="status"
        aria-live="polite"
        data-state={snapshot.state}
        data-running={snapshot.running}
        data-paused={snapshot.paused}
      >
        {state}
      </div>
      {waiting ? <div className="jp-bcc-buffered">{waiting}</div> : null}
      {model.source === 'saved' && available.resume ? (
        <div className="jp-bcc-hint">
          {trans.__(
            'This notebook holds a run that was not finished. Resume continues it from the current step.'
          )}
        </div>
      ) : null}
      {snapshot.task ? (
        <div className="jp-bcc-task" title={snapshot.task}>
          <span className="jp-bcc-label">{trans.__('Task:')}</span>{' '}
          {snapshot.task}
        </div>
      ) : null}
      <div
        className="jp-bcc-controls"
        role="toolbar"
        aria-label={trans.__('Workflow controls')}
      >
        <CommandButton
          commands={commands}
          id={CommandIDs.run}
          label={trans.__('Run')}
          icon={runIcon}
          enabled={available.run}
          primary={!snapshot.running && !available.resume && !available.retry}
        />
        {paused || (!snapshot.running && available.resume) ? (
          <CommandButton
            commands={commands}
            id={CommandIDs.resume}
            label={trans.__('Resume')}
            icon={runIcon}
            enabled={available.resume}
            primary
          />
        ) : (
          <CommandButton
            commands={commands}
            id={CommandIDs.pause}
            label={trans.__('Pause')}
            icon={pauseIcon}
            enabled={available.pause}
          />
        )}
        <CommandButton
          commands={commands}
          id={CommandIDs.step}
          label={trans.__('Step')}
          icon={stepOverIcon}
          enabled={available.step}
        />
        <CommandButton
          commands={commands}
          id={CommandIDs.stop}
          label={trans.__('Stop')}
          icon={stopIcon}
          enabled={available.stop}
        />
      </div>
      {error ? (
        <div className="jp-bcc-error" role="alert">
          <div className="jp-bcc-error-message">{error.message}</div>
          {available.retry ? (
            <CommandButton
              commands={commands}
              id={CommandIDs.retry}
              label={trans.__('Retry')}
              icon={refreshIcon}
              enabled
              primary
            />
          ) : null}
        </div>
      ) : null}
      {tree.length > 0 ? (
        <Section title={trans.__('Progress')} className="jp-bcc-progress">
          {snapshot.workflowName ? (
            <div className="jp-bcc-workflow-name">{snapshot.workflowName}</div>
          ) : null}
          <ProgressTree stages={tree} rendermime={rendermime} trans={trans} />
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
      ) : null}
      {outputs.length > 0 || artifacts.length > 0 ? (
        <Section title={trans.__('Outputs')} className="jp-bcc-outputs">
          <ul className="jp-bcc-output-list">
            {outputs.map(output => (
              <li
                key={output.name}
                className={`jp-bcc-output jp-bcc-mod-${output.status}`}
                data-status={output.status}
              >
                <code className="jp-bcc-variable">{output.name}</code>
                <span className="jp-bcc-output-status">
                  {output.status === 'produced'
                    ? trans.__('produced')
                    : output.status === 'in_progress'
                      ? trans.__('in progress')
                      : trans.__('missing')}
                </span>
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
                  <li
                    key={artifact.artifact_id}
                    className="jp-bcc-artifact"
                    title={artifact.artifact_id}
                  >
                    <code className="jp-bcc-variable">
                      {artifact.variable_name}
                    </code>
                    <span className="jp-bcc-artifact-source">
                      {artifact.source ?? artifact.artifact_id}
                    </span>
                  </li>
                ))}
              </ul>
            </details>
          ) : null}
        </Section>
      ) : null}
      {warnings.length > 0 ? (
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
                <ClippedText text={warning.message} trans={trans} />
              </li>
            )}
          />
        </Section>
      ) : null}
      {effects.length > 0 ? (
        <Section
          title={trans.__('Latest effects')}
          count={effects.length}
          open={false}
          className="jp-bcc-effects"
        >
          <LimitedList
            items={effects}
            className="jp-bcc-effect-list"
            label={trans.__('Effects, newest first')}
            trans={trans}
            render={(effect: string, index) => (
              <li key={`${effects.length - index}`} className="jp-bcc-effect">
                <ClippedText text={effect} trans={trans} />
              </li>
            )}
          />
        </Section>
      ) : null}
      {commands.isEnabled(CommandIDs.exportTrace) ? (
        <div className="jp-bcc-footer">
          <button
            type="button"
            className="jp-bcc-link-button"
            title={commands.caption(CommandIDs.exportTrace)}
            onClick={() => {
              void commands.execute(CommandIDs.exportTrace);
            }}
          >
            {trans.__('Export the run trace')}
          </button>
        </div>
      ) : null}
    </>
  );
}

function SidebarView(
  props: IViewProps & { label: string | null; name: string | null }
): JSX.Element {
  const { model, trans } = props;
  return (
    <>
      <header className="jp-bcc-header">
        <h2 className="jp-bcc-sidebar-title">{trans.__('Workflow')}</h2>
        {props.label ? (
          <div className="jp-bcc-notebook-name" title={props.label}>
            {props.name}
          </div>
        ) : null}
      </header>
      {model ? (
        <RunView {...props} model={model} />
      ) : (
        <p className="jp-bcc-sidebar-empty">
          {props.loading
            ? trans.__('Loading the notebook…')
            : trans.__(
                'Open a notebook and run a workflow to see its progress here.'
              )}
        </p>
      )}
    </>
  );
}

/** The right-side panel that shows the workflow run of the active notebook. */
export class WorkflowSidebar extends ReactWidget {
  constructor(options: WorkflowSidebar.IOptions) {
    super();
    this._options = options;
    this._trans = (options.translator ?? nullTranslator).load(
      TRANSLATION_DOMAIN
    );
    this.id = 'jp-bcc-sidebar';
    this.addClass('jp-bcc-sidebar');
    this.title.icon = bccIcon;
    this.title.caption = this._trans.__('Notebook-BCC Workflow');
    options.models.currentChanged.connect(this._onChanged, this);
  }

  protected render(): JSX.Element {
    const current = this._options.models.current;
    const path = current?.panel.context.localPath ?? null;
    return (
      <SidebarView
        model={current?.model ?? null}
        loading={current !== null && current.model === null}
        label={path}
        name={path === null ? null : PathExt.basename(path)}
        commands={this._options.commands}
        rendermime={this._options.rendermime}
        trans={this._trans}
      />
    );
  }

  private _onChanged(): void {
    this.update();
  }

  private _options: WorkflowSidebar.IOptions;
  private _trans: TranslationBundle;
}

export namespace WorkflowSidebar {
  export interface IOptions {
    /** The view models; the sidebar shows the current one. */
    models: IRunModelRegistry;
    commands: CommandRegistry;
    rendermime: IRenderMimeRegistry;
    translator?: ITranslator;
  }
}
