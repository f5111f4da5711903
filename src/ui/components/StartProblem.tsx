import type { TranslationBundle } from '@jupyterlab/translation';
import type { CommandRegistry } from '@lumino/commands';
import * as React from 'react';
import { CommandIDs, IPlannerLocation, IStartProblem } from '../../tokens';
import {
  describePlannerProblem,
  offeredActions,
  OPEN_SETTINGS,
  PlannerProblemAction,
  problemActionLabel,
  startArgs
} from '../problem';

export interface IStartProblemProps {
  problem: IStartProblem;
  /** The notebook's panel id (Retry starts the run there); null: the active notebook. */
  notebook?: string | null;
  location: IPlannerLocation | null;
  commands: CommandRegistry;
  trans: TranslationBundle;
}

/** A run that could not start: why, the actions that may fix it, and the details folded. */
export function StartProblem(props: IStartProblemProps): JSX.Element {
  const { problem, commands, trans } = props;
  const described = describePlannerProblem(problem.message, trans);
  const actions = offeredActions(
    described.actions,
    commands.hasCommand(CommandIDs.useBuiltinPlanner),
    props.location
  );
  const run = () =>
    commands.execute(
      CommandIDs.run,
      startArgs(props.notebook ?? null, problem)
    );
  const act = async (action: PlannerProblemAction) => {
    switch (action) {
      case 'settings':
        await commands.execute(OPEN_SETTINGS.id, OPEN_SETTINGS.args);
        break;
      case 'test':
        await commands.execute(CommandIDs.testConnection);
        break;
      case 'builtin':
        await commands.execute(CommandIDs.useBuiltinPlanner);
        await run();
        break;
      case 'retry':
        await run();
        break;
    }
  };
  return (
    <div
      className="jp-bcc-error jp-bcc-start-problem"
      role="alert"
      data-kind={described.kind}
    >
      <div className="jp-bcc-error-message">{described.summary}</div>
      <div className="jp-bcc-problem-actions">
        {actions.map(action => (
          <button
            key={action}
            type="button"
            className={`jp-bcc-control ${action === 'retry' ? 'jp-bcc-mod-primary' : ''}`}
            data-action={action}
            onClick={() => {
              void act(action);
            }}
          >
            <span className="jp-bcc-control-label">
              {problemActionLabel(action, trans)}
            </span>
          </button>
        ))}
      </div>
      {described.details !== described.summary ? (
        <details className="jp-bcc-problem-details">
          <summary>{trans.__('Details')}</summary>
          <pre>{described.details}</pre>
        </details>
      ) : null}
    </div>
  );
}
