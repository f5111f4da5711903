import type { TranslationBundle } from '@jupyterlab/translation';
import type { CommandRegistry } from '@lumino/commands';
import * as React from 'react';
import { CommandIDs, IPlannerLocation } from '../../tokens';
import { describePlanner, translateVia } from '../present';

export interface IPlannerLineProps {
  /** The dialect the planner speaks, once known (`IRunSnapshot.plannerDialect`). */
  dialect: string | null;
  /** Where requests go, when known. */
  location: IPlannerLocation | null;
  /** "Test connection" executes `CommandIDs.testConnection`. */
  commands: CommandRegistry;
  trans: TranslationBundle;
}

/** A small line: "Planner: v1 dialect", where the planner is, and a "Test connection" link. */
export function PlannerLine(props: IPlannerLineProps): JSX.Element {
  const { commands, trans } = props;
  const text = describePlanner(props.dialect, props.location, trans);
  return (
    <div className="jp-bcc-planner" data-dialect={props.dialect ?? ''}>
      <span className="jp-bcc-planner-dialect">{text.dialect}</span>
      {text.where ? (
        <span
          className="jp-bcc-planner-where"
          title={
            props.location ? translateVia(props.location, trans) : undefined
          }
        >
          {text.where}
        </span>
      ) : null}
      {commands.hasCommand(CommandIDs.testConnection) ? (
        <button
          type="button"
          className="jp-bcc-link-button jp-bcc-test-connection"
          title={commands.caption(CommandIDs.testConnection)}
          disabled={!commands.isEnabled(CommandIDs.testConnection)}
          onClick={() => {
            void commands.execute(CommandIDs.testConnection);
          }}
        >
          {trans.__('Test connection')}
        </button>
      ) : null}
    </div>
  );
}
