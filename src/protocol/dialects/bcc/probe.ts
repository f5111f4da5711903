/**
 * How detection recognises a bcc server (docs/dialects.md#choosing): it reads the sibling `state` of
 * the superset probe, and its first answer is XML, or JSON holding stages, steps or a behavior.
 */
import { isRecord, type JsonObject } from '../../fields';
import { looksLikeXml, parseJson, unquotedBody } from '../common';
import type { IDialectProbe } from '../dialect';
import { BccAdapter } from './adapter';

export const bccProbe: IDialectProbe = {
  ownBody: {
    label: 'bcc body',
    // A new adapter: the body it sends first, at IDLE, with no plan.
    build: ({ transport, notebookId, request, notebook }) =>
      new BccAdapter({ transport, notebookId }).idleBody(request, notebook)
  },
  /** The seed request's context as a bcc server reads it: a sibling `state` at IDLE. */
  supersetFields({ request, notebook }): JsonObject {
    const context = request.observation.context ?? {};
    const variables: JsonObject = { ...(context.variables ?? {}) };
    variables.user_problem ??= variables.problem_description ?? '';
    variables.user_submit_files ??=
      variables.data_files ??
      (variables.csv_file_path ? [variables.csv_file_path] : []);
    return {
      state: {
        variables,
        effects: context.effects ?? { current: [], history: [] },
        notebook: notebook ?? context.notebook ?? {},
        FSM: { ...(context.FSM ?? {}), state: 'IDLE' }
      }
    };
  },
  claim(answer) {
    const unquoted = unquotedBody(answer.text);
    if (looksLikeXml(answer.contentType, unquoted)) {
      return { prefetched: answer };
    }
    const parsed = parseJson(unquoted);
    const value = parsed.ok ? parsed.value : null;
    return isRecord(value) &&
      (Array.isArray(value.stages) ||
        Array.isArray(value.steps) ||
        value.behavior_id !== undefined)
      ? { prefetched: answer }
      : null;
  }
};
