/**
 * The `v1` adapter's actions: each action of a `v1/actions` answer to canonical ones
 * (docs/dialects.md#v1-stream).
 */
import type { GeneratingEvent } from '../../actionStream';
import { isRecord, JsonObject, omit } from '../../fields';
import { msg, type ProtocolText, say } from '../../messages';
import { normalizeAction, normalizeWorkflowTemplate } from '../../normalize';
import { asString, DialectLog } from '../common';
import type { V1Memory } from './memory';
import { dropNulls, lastTodo } from './state';

/** What mapping an action reads and sets: the adapter's memory (the next stage), and where to log. */
export interface IV1ActionContext {
  memory: V1Memory;
  log: DialectLog;
}

/** A warning event, logged too. */
export function v1Warning(
  log: DialectLog,
  warning: ProtocolText
): GeneratingEvent {
  log(warning.message);
  return { kind: 'warning', ...warning };
}

/** Shown and logged, never an effect: `effect.current[0]` stays the exec output. */
export function v1Notice(
  log: DialectLog,
  notice: ProtocolText
): GeneratingEvent {
  log(notice.message);
  return { kind: 'notice', ...notice };
}

export function mapV1Action(
  context: IV1ActionContext,
  raw: JsonObject,
  url: string
): GeneratingEvent[] {
  const fields = dropNulls(omit(raw, ['state']));
  const type = asString(fields.action) ?? '';
  const adds = (content: string): JsonObject[] => [
    { action: 'add', shot_type: 'dialogue', content }
  ];
  let actions: JsonObject[];
  switch (type) {
    case 'add':
      if (fields.delay !== undefined) {
        context.log(`v1: add delay ${String(fields.delay)} ms ignored`);
      }
      actions = [omit(fields, ['delay'])];
      break;
    case 'exec':
      if (fields.auto_debug !== undefined) {
        context.log(`v1: exec auto_debug ignored`);
      }
      actions = [{ ...omit(fields, ['auto_debug']), need_output: true }];
      break;
    case 'set_effect_as_thinking':
      actions = [
        {
          action: 'set_effect_as_thinking',
          thinking_text: asString(fields.thinkingText) ?? ''
        }
      ];
      break;
    case 'next_event':
      context.log(
        `v1: next_event (next: ${lastTodo(context.memory.state) ?? 'end of step'})`
      );
      return [];
    case 'update_workflow':
      actions = workflowAction(context, fields);
      break;
    case 'update_stage_steps':
      if (fields.next_step_id !== undefined) {
        context.log(
          `v1: update_stage_steps next_step_id ${String(fields.next_step_id)} ignored (it names the running step)`
        );
      }
      actions = [omit(fields, ['next_step_id'])];
      break;
    case 'error': {
      const text =
        asString(fields.error_message) ??
        asString(fields.content) ??
        'the planner reported an error';
      return [
        v1Warning(
          context.log,
          say('requestProblem', `POST ${url}`, msg('plannerErrorAction', text))
        )
      ];
    }
    case 'text':
      context.log(`v1 text: ${asString(fields.content) ?? ''}`);
      return [];
    case 'command_call': {
      const command = asString(fields.command) ?? '';
      context.log(`v1: command not executed: ${command}`);
      actions = adds(`(planner requested: \`${command}\`)`);
      break;
    }
    case 'comunicate_with_agent':
      actions = adds(
        `**${asString(fields.agent_name) ?? 'agent'}:** ${asString(fields.content) ?? ''}`
      );
      break;
    default:
      actions = [fields];
  }
  const events: GeneratingEvent[] = [];
  const line = JSON.stringify(raw).slice(0, 500);
  for (const action of actions) {
    const normalized = normalizeAction(action);
    if (!normalized.ok) {
      events.push(
        v1Warning(
          context.log,
          say(
            'requestProblem',
            `POST ${url}`,
            msg('actionIgnored', normalized.error)
          )
        )
      );
      continue;
    }
    for (const warning of normalized.warnings) {
      events.push(
        v1Warning(context.log, say('requestProblem', `POST ${url}`, warning))
      );
    }
    for (const item of normalized.actions) {
      events.push({ kind: 'action', action: item, index: 0, line });
    }
  }
  return events;
}

function workflowAction(
  context: IV1ActionContext,
  fields: JsonObject
): JsonObject[] {
  const updated = isRecord(fields.updated_workflow)
    ? fields.updated_workflow
    : {};
  const raw = updated.workflowTemplate ?? updated.workflow_template ?? updated;
  const next = asString(updated.nextStageId ?? updated.next_stage_id);
  const template = normalizeWorkflowTemplate(raw);
  if (!template.ok) {
    return [{ action: 'update_workflow' }];
  }
  context.memory.nextStageId = next ?? null;
  if (next) {
    context.log(`v1: update_workflow names the next stage ${next}`);
  }
  return [{ action: 'update_workflow', updated_workflow: template.template }];
}
