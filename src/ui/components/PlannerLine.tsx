import type { TranslationBundle } from '@jupyterlab/translation';
import type { CommandRegistry } from '@lumino/commands';
import * as React from 'react';
import { CommandIDs, IPlannerLocation } from '../../tokens';
import { describePlanner } from '../plannerText';
import { translateVia } from '../present';

export interface IPlannerLineProps {
  /** The dialect the planner speaks, once known (`IRunSnapshot.plannerDialect`). */
  dialect: string | null;
  /** Where requests go, when known. */
  location: IPlannerLocation | null;
  /** The model the LLM planner said it ran (`IRunSnapshot.usage.model`), when it did. */
  model?: string;
  /** "Test connection" executes `CommandIDs.testConnection`; "LLM settings" `CommandIDs.llmSettings`. */
  commands: CommandRegistry;
  trans: TranslationBundle;
}

/** The tooltip of the planner's place: where the LLM answers, or how requests leave. */
function titleOf(
  location: IPlannerLocation | null,
  trans: TranslationBundle
): string | undefined {
  if (!location) {
    return undefined;
  }
  if (location.llm?.base_url) {
    return trans.__('%1, through the Jupyter server', location.llm.base_url);
  }
  return translateVia(location, trans);
}

/**
 * A small line: "Planner: v1 dialect", where the planner is (or "LLM planner: <model>"), and the
 * "Test connection" and "LLM settings" links.
 */
export function PlannerLine(props: IPlannerLineProps): JSX.Element {
  const { commands, trans } = props;
  const text = describePlanner(
    props.dialect,
    props.location,
    trans,
    props.model
  );
  return (
    <div
      className="jp-bcc-planner"
      data-dialect={props.dialect ?? ''}
      data-llm-model={
        props.location?.llm
          ? props.model || props.location.llm.model
          : undefined
      }
    >
      <span
        className="jp-bcc-planner-dialect"
        // The LLM planner's line is its name: where it answers is the tooltip.
        title={text.where ? undefined : titleOf(props.location, trans)}
      >
        {text.dialect}
      </span>
      {text.where ? (
        <span
          className="jp-bcc-planner-where"
          title={titleOf(props.location, trans)}
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
      {commands.hasCommand(CommandIDs.llmSettings) ? (
        <button
          type="button"
          className="jp-bcc-link-button jp-bcc-llm-settings-link"
          title={commands.caption(CommandIDs.llmSettings)}
          onClick={() => {
            void commands.execute(CommandIDs.llmSettings);
          }}
        >
          {trans.__('LLM settings…')}
        </button>
      ) : null}
    </div>
  );
}
