/**
 * The `bcc` adapter's actions: a server's action keyed by `type` to a canonical one, and the lines of
 * a `/generating` answer (read by `readLines`, the one reader) to events (docs/dialects.md#bcc).
 */
import type { GeneratingEvent } from '../../actionStream';
import { isRecord, JsonObject, omit } from '../../fields';
import { msg, type ProtocolText, say } from '../../messages';
import { normalizeAction } from '../../normalize';
import { DialectLog, parseJson } from '../common';

/** What mapping an action needs to know: the headings the client wrote, and where to log. */
export interface IBccActionContext {
  readonly headings: readonly string[];
  readonly log: DialectLog;
}

/** A warning event, logged too. */
export function bccWarning(
  log: DialectLog,
  warning: ProtocolText
): GeneratingEvent {
  log(warning.message);
  return { kind: 'warning', ...warning };
}

/** The messages of a JSON value that lists them: a JSON array or `{"actions": [...]}`; else null. */
export function messageList(value: unknown): unknown[] | null {
  return Array.isArray(value)
    ? value
    : isRecord(value) && Array.isArray(value.actions)
      ? value.actions
      : null;
}

/** The events of one message of an answer (an action, a list of them, or something else: a notice). */
export function messageEvents(
  context: IBccActionContext,
  message: unknown,
  url: string,
  line: string
): GeneratingEvent[] {
  const events: GeneratingEvent[] = [];
  for (const item of messageList(message) ?? [message]) {
    const raw = isRecord(item) && isRecord(item.action) ? item.action : item;
    if (
      !isRecord(raw) ||
      (typeof raw.type !== 'string' && typeof raw.action !== 'string')
    ) {
      const notice = say(
        'lineProblem',
        `POST ${url}`,
        msg('lineWithoutActionIgnored'),
        line.slice(0, 200)
      );
      context.log(notice.message);
      events.push({ kind: 'notice', ...notice });
      continue;
    }
    events.push(...bccActionEvents(context, raw, url));
  }
  return events;
}

/**
 * One action of the server (or a cell the client writes itself: `fromClient`) as events; a heading
 * the client already wrote is skipped.
 */
export function bccActionEvents(
  context: IBccActionContext,
  raw: JsonObject,
  url: string,
  fromClient = false
): GeneratingEvent[] {
  const type = String(raw.type ?? raw.action).trim();
  let fields: JsonObject = { ...omit(raw, ['type']), action: type };
  switch (type) {
    case 'add-text':
    case 'add_text':
      fields = { ...fields, action: 'add', shot_type: 'markdown' };
      break;
    case 'comment_result':
      // A markdown cell, then the effects it comments on move into history (§3.4).
      return [
        ...bccActionEvents(
          context,
          {
            ...omit(raw, ['type', 'action']),
            type: 'add',
            shot_type: 'markdown'
          },
          url,
          fromClient
        ),
        ...bccActionEvents(
          context,
          { type: 'archive_effects' },
          url,
          fromClient
        )
      ];
    case 'update_last_text':
      fields = {
        action: 'update_last_text',
        text: raw.text ?? raw.content ?? ''
      };
      break;
    case 'new_section':
    case 'new_step':
    case 'newSection':
    case 'newStep': {
      const content = String(raw.content ?? raw.title ?? '')
        .replace(/^\s*#+\s*/, '')
        .trim();
      if (!fromClient && context.headings.includes(content)) {
        context.log(
          `bcc: ${type} "${content}" skipped: the client already wrote that heading`
        );
        return [];
      }
      break;
    }
  }
  const shot = fields.shot_type ?? fields.shotType;
  if (fields.action === 'add' && (shot === undefined || shot === 'markdown')) {
    fields.shot_type = 'dialogue';
    delete fields.shotType;
  }
  const normalized = normalizeAction(fields);
  if (!normalized.ok) {
    return [
      bccWarning(
        context.log,
        say(
          'requestProblem',
          `POST ${url}`,
          msg('actionIgnored', normalized.error)
        )
      )
    ];
  }
  const line = JSON.stringify(raw).slice(0, 500);
  return [
    ...normalized.warnings.map(w =>
      bccWarning(context.log, say('requestProblem', `POST ${url}`, w))
    ),
    ...normalized.actions.map(action => ({
      kind: 'action' as const,
      action,
      index: 0,
      line
    }))
  ];
}

/**
 * The lines of a `/generating` answer to events. One pretty-printed JSON document is read whole when
 * its first line opens it (§3.4 (b)); any other line that is not JSON is a warning, and the lines
 * after it are applied as they arrive (as the dslc reader does: `ActionLineParser`).
 */
export class BccAnswerReader {
  constructor(
    private readonly _context: IBccActionContext,
    private readonly _url: string
  ) {}

  line(line: string): GeneratingEvent[] {
    if (this._buffered) {
      this._buffered.push(line);
      return [];
    }
    const opensDocument =
      this._first &&
      (line.startsWith('[') || (line.startsWith('{') && !parseJson(line).ok));
    this._first = false;
    if (opensDocument) {
      this._buffered = [line];
      return [];
    }
    return this._lineEvents(line);
  }

  end(): GeneratingEvent[] {
    const buffered = this._buffered;
    if (!buffered) {
      return [];
    }
    const text = buffered.join('\n');
    const whole = parseJson(text);
    return whole.ok
      ? messageEvents(this._context, whole.value, this._url, text)
      : buffered.flatMap(line => this._lineEvents(line));
  }

  private _lineEvents(line: string): GeneratingEvent[] {
    const parsed = parseJson(line);
    if (!parsed.ok) {
      return [
        bccWarning(
          this._context.log,
          say(
            'lineProblem',
            `POST ${this._url}`,
            msg('malformedLine'),
            line.slice(0, 200)
          )
        )
      ];
    }
    return messageEvents(this._context, parsed.value, this._url, line);
  }

  private _buffered: string[] | null = null;
  private _first = true;
}
