/**
 * The lines of a `v1/actions` answer (read by `readLines`, the one reader) to events, and what the
 * answer as a whole says: the server's new state, whether it moved, the variables it lacks
 * (docs/dialects.md#v1-stream).
 */
import type { GeneratingEvent } from '../../actionStream';
import { PlannerError } from '../../errors';
import { isRecord, omit } from '../../fields';
import { msg, say } from '../../messages';
import { asString, parseJson } from '../common';
import { IV1ActionContext, mapV1Action, v1Notice, v1Warning } from './actions';
import { emptyTodo, isMissing, missingVariableNames, sectionOf } from './state';

/** The behavior's request an answer is read for. */
export interface IV1Request {
  url: string;
  status: number;
  stageId: string;
  stepId: string;
}

export class V1AnswerReader {
  constructor(
    private readonly _context: IV1ActionContext,
    private readonly _request: IV1Request
  ) {
    // The missing-variables answer comes instead of the step's first actions.
    this._first = !_context.memory.stepActed;
  }

  line(line: string): GeneratingEvent[] {
    const { memory, log } = this._context;
    const { url, stageId } = this._request;
    const parsed = parseJson(line);
    if (!parsed.ok || !isRecord(parsed.value)) {
      return [
        v1Warning(
          log,
          say(
            'lineProblem',
            `POST ${url}`,
            msg('malformedLine'),
            line.slice(0, 200)
          )
        )
      ];
    }
    const message = parsed.value;
    if (isRecord(message.header)) {
      memory.nextStep = asString(message.header.next_step) ?? null;
      memory.nextStepOf = asString(message.header.stage_id) ?? stageId;
      log(
        `v1 header: stage ${String(message.header.stage_id)}, next step ${memory.nextStep ?? '(none)'}`
      );
      return [];
    }
    if (!isRecord(message.action)) {
      return [
        v1Notice(
          log,
          say(
            'lineProblem',
            `POST ${url}`,
            msg('lineWithoutActionIgnored'),
            line.slice(0, 200)
          )
        )
      ];
    }
    const raw = message.action;
    if (!this._sawAction) {
      // From the first action on, an answer that breaks off leaves the step half done.
      memory.streamComplete = false;
      memory.stepActed = true;
    }
    if (isRecord(raw.state)) {
      memory.state = omit(raw.state, ['effect']);
      this._moved = true;
    }
    if (raw.action === 'error' || raw.action === 'text') {
      // The server's fallbacks when a handler raised: "Error executing action: …".
      this._reportedError ??=
        asString(raw.error_message) ??
        asString(raw.content) ??
        'no details returned';
    } else if (raw.action === 'update_stage_steps') {
      this._moved = true;
    }
    this._sawAction = true;
    if (raw.action === 'add') {
      this._lastContent = asString(raw.content) ?? this._lastContent;
    } else {
      this._onlyAdds = false;
    }
    return mapV1Action(this._context, raw, url);
  }

  /** The answer was read to its end: an error when the server did not move or lacks variables. */
  end(): GeneratingEvent[] {
    const { memory } = this._context;
    const { url, status, stageId, stepId } = this._request;
    memory.streamComplete = true;
    if (!this._moved) {
      // The server's memory did not move (a handler raised, or the last toDoList entry matches no
      // handler): a reflection would complete the step with nothing run, or ask the same again forever.
      throw new PlannerError({
        kind: 'invalid',
        url,
        status,
        ...(this._reportedError === null
          ? say('v1NoAction', sectionOf(stageId, stepId))
          : say('plannerReportedError', this._reportedError))
      });
    }
    // The server says what a step or one of its handlers lacks in a text ending with the list of
    // names, whatever its words (`缺少必需变量: ['problem_name']`, `Missing: ['user_goal']`; spec
    // §2.7 item 8); names its state has are not what it lacks.
    const said =
      this._sawAction && this._onlyAdds && this._lastContent
        ? missingVariableNames(this._lastContent)
        : null;
    const stored = isRecord(memory.state.variables)
      ? memory.state.variables
      : {};
    const names =
      said && said.every(name => isMissing(stored[name])) ? said : null;
    if (names && !this._first) {
      // A later handler: the server dropped its event and the chain goes on (spec §2.6).
      return [
        v1Warning(
          this._context.log,
          say('v1HandlerSkipped', sectionOf(stageId, stepId), names.join(', '))
        )
      ];
    }
    if (names && emptyTodo(memory.state)) {
      // The step's first answer names what it lacks instead of running: it did not run.
      memory.missing = names;
      names.forEach(name => memory.asked.add(name));
      throw new PlannerError({
        kind: 'invalid',
        url,
        status,
        ...say(
          'v1VariablesMissing',
          sectionOf(stageId, stepId),
          names.join(', ')
        ),
        missingVariables: names
      });
    }
    return [];
  }

  private readonly _first: boolean;
  private _onlyAdds = true;
  private _lastContent: string | null = null;
  private _sawAction = false;
  /** Whether a line carried the server's state or steps: else the server did not move. */
  private _moved = false;
  private _reportedError: string | null = null;
}
