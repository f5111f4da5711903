/**
 * What the extension tells the user, as message ids with parameters: the UI translates them
 * (`translateMessage` in `ui/present.ts`), logs, traces and the planner get the English text. Each room
 * that speaks keeps its English templates in a catalogue (the protocol's below, the engine's in
 * `engine/messages.ts`); each template is a msgid of the `notebook_bcc` catalogue, `%1`, `%2`… standing
 * for the parameters as in `trans.__`. A leaf module (no zod), so the startup code may import it.
 */

/** What the planner client, its transports and the dialect adapters report to the user. */
export const PROTOCOL_MESSAGES = {
  requestFailed: '%1 failed: %2',
  requestAborted: '%1 aborted',
  readingAborted: 'reading %1 aborted',
  notSerializable: '%1 not sent: the request cannot be serialized (%2)',
  invalidResponse: '%1 answered HTTP %2 with an invalid response: %3',
  invalidResponseWithBody:
    '%1 answered HTTP %2 with an invalid response: %3: %4',
  firstByteTimeout:
    '%1 timed out: no data from the planner for %2 s after the request was sent',
  stallTimeout:
    '%1 timed out: no data from the planner for %2 s since the last chunk (stream stalled)',
  retrying: '%1; retrying in %2 s (retry %3 of %4)',
  generatingNotFound: '%1 answered 404; trying %2',
  connectionOk: 'The planner (%1) answers (HTTP %2).',
  connectionRefused:
    'The planner (%1) refused the request (%2). Check the token in Settings > Notebook-BCC.',
  connectionError:
    'The planner (%1) answered with an error (%2). Start the planner, or set its URL in Settings > Notebook-BCC.',
  connectionUnreachable:
    'The planner (%1) cannot be reached: %2. Start the planner, or set its URL in Settings > Notebook-BCC.',
  relayLabel: "the Jupyter server's relay (%1)",
  builtinLabel: 'Demo planner (built in)',
  relayUnreachable:
    '%1 failed: the Jupyter server could not reach the planner: %2',
  jupyterRefused:
    '%1 failed: the Jupyter server refused it (HTTP %2%3), so the planner never saw it. Your Jupyter session may have ended: reload the page, sign in again, then Retry.',
  relayMissing:
    '%1 failed: this Jupyter server has no Notebook-BCC relay (HTTP 404). Enable it with "jupyter server extension enable jupyterlab_notebook_bcc" and restart Jupyter, or set Transport to "browser" in Settings > Notebook-BCC.',
  proxyTimedOut:
    '%1 failed: a proxy in front of the Jupyter server stopped waiting (HTTP 504) before the planner answered. Its time limit (for example nginx proxy_read_timeout, or a load balancer idle timeout) must be longer than the planner takes to think: ask your administrator to raise it.',
  proxyFailed:
    '%1 failed: HTTP %2 from a proxy in front of the Jupyter server, not from the planner. Is the Jupyter server running?',
  requestProblem: '%1: %2',
  lineProblem: '%1: %2: %3',
  malformedJsonLine: 'malformed JSON line ignored (%1)',
  malformedLine: 'malformed line ignored',
  lineNotAnObject: 'ignored line that is not a JSON object',
  lineWithoutAction: 'ignored line without action',
  lineWithoutActionIgnored: 'line without action ignored',
  lineTooLong: 'line of %1 characters dropped (the limit is %2)',
  plannerReportedError: 'the planner reported an error: %1',
  plannerErrorAction: 'planner error: %1',
  actionIgnored: 'action ignored: %1',
  generatingFieldsIgnored:
    '%1 ignored: a /generating answer is applied for its actions only; send them in the /planning answer',
  noDialectAnswer:
    '%1 answered HTTP %2 with something no DSLC dialect sends: %3',
  noKnownDialect: 'no known DSLC dialect at %1 (%2)',
  notSentWithoutStep: '%1 not sent: the run has no current stage and step',
  v1VariablesMissing:
    'The planner did not run step %1: variables missing: %2. Set them with "Set Variables…" to retry the step.',
  v1StepFailed: 'planner failed in step %1 (no details returned)',
  v1HandlerSkipped:
    'The planner skipped part of step %1 (variables missing: %2); the step goes on without it.',
  v1NoAction:
    'The planner sent no action for step %1 and did not move on; retrying asks it the same again.',
  v1UnknownStage: '%1: the planner does not know stage %2 (HTTP 404: %3)',
  v1UnknownStep: '%1: the planner does not know step %2 (HTTP 400: %3)',
  v1StageWithoutSteps:
    'v1: stage %1 has no steps and the server named no next step; moving on.',
  v1AnswerCutOff:
    'v1: the last answer of step %1 was cut off; the step restarts and some cells may repeat.',
  v1StepRestarts: 'v1: step %1 did not run (missing %2); it starts again.',
  v1ReflectionDecidedLocally:
    '%1 failed (%2); the step was decided from the stored toDoList (%3), as the server decides it.',
  bccNoStages: 'The planner answered <stages> without any stage',
  bccNoSteps: 'The planner answered <steps> without any step for stage %1',
  bccUnexpectedAnswer:
    'The planner answered <%1> to FSM state %2, which does not fit',
  bccUnknownStage:
    "bcc: the run is at stage %1, which the plan does not list; the plan's stage is kept.",
  bccUnknownStep:
    "bcc: the run is at step %1, which the plan does not list; the plan's step is kept.",
  bccNoReflection:
    'bcc: the planner answers no reflection; the client decides (the step is complete).',
  bccRequiredVariables: 'bcc: required variables not found: %1',
  bccNeedsMoreSteps:
    'bcc: the planner wants more steps in this stage; bcc cannot insert steps.'
} as const;

export type ProtocolMessageId = keyof typeof PROTOCOL_MESSAGES;

/** A parameter: a value shown as it is (a URL, a cause in English), or a message translated in turn. */
export type MessageParam<Id extends string = string> =
  string | number | IMessage<Id>;

/** A user-visible message: the UI translates the template of `id` and fills in `params`. */
export interface IMessage<Id extends string = string> {
  id: Id;
  params: MessageParam<Id>[];
}

/** The message text carried by warnings, errors and reports. */
export interface IMessageText<Id extends string = string> {
  /** In English: for logs, the trace, the planner and other extensions. */
  message: string;
  /** What the UI translates; absent when the text comes from elsewhere (the planner, a run saved before). */
  text?: IMessage<Id>;
}

/** A protocol message with its English text, as `say` gives it. */
export type ProtocolText = Required<IMessageText<ProtocolMessageId>>;

/** `template` with `%1`, `%2`… replaced by `params`, the way `trans.__` does. */
export function fillTemplate(
  template: string,
  params: readonly (string | number)[]
): string {
  return template.replace(/%(\d+)/g, (whole, index: string) => {
    const value = params[Number(index) - 1];
    return value === undefined ? whole : String(value);
  });
}

/** The helpers of one catalogue of English templates, typed by its ids. */
export interface IMessageCatalogue<Id extends string> {
  readonly templates: Readonly<Record<Id, string>>;
  isMessageId(id: unknown): id is Id;
  msg(id: Id, ...params: MessageParam<Id>[]): IMessage<Id>;
  englishText(message: IMessage<Id>): string;
  /** A report's message fields: `{ ...say('requestAborted', request) }`. */
  say(id: Id, ...params: MessageParam<Id>[]): Required<IMessageText<Id>>;
  /** The message fields of a report for a message or a text from elsewhere (shown as it is). */
  reported(message: string | IMessage<Id>): IMessageText<Id>;
}

export function messageCatalogue<Id extends string>(
  templates: Readonly<Record<Id, string>>
): IMessageCatalogue<Id> {
  const msg = (id: Id, ...params: MessageParam<Id>[]): IMessage<Id> => ({
    id,
    params
  });
  const englishText = (message: IMessage<Id>): string =>
    fillTemplate(
      templates[message.id],
      message.params.map(p => (typeof p === 'object' ? englishText(p) : p))
    );
  const say = (id: Id, ...params: MessageParam<Id>[]) => {
    const text = msg(id, ...params);
    return { message: englishText(text), text };
  };
  return {
    templates,
    isMessageId: (id: unknown): id is Id =>
      typeof id === 'string' && Object.hasOwn(templates, id),
    msg,
    englishText,
    say,
    reported: message =>
      typeof message === 'string'
        ? { message }
        : say(message.id, ...message.params)
  };
}

/** The protocol room's own helpers (the engine has its own over every template, `engine/messages.ts`). */
export const { msg, say } = messageCatalogue(PROTOCOL_MESSAGES);

/** What an error says in the user's language when it can: a `PlannerError`'s message id, else its English. */
export function textOf(error: {
  message: string;
  text?: IMessage<ProtocolMessageId>;
}): MessageParam<ProtocolMessageId> {
  return error.text ?? error.message;
}
