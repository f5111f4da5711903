/**
 * A planner failure in the user's words: the cause first (a notification shows about 140 characters),
 * the actions that may fix it, the whole chain kept for "Details".
 */
import { nullTranslator } from '@jupyterlab/translation';
import { say } from '../../engine/messages';
import { msg } from '../../protocol/messages';
import { describePlannerProblem, offeredActions, startArgs } from '../problem';
import { markingTrans } from './markingTranslator';

const trans = nullTranslator.load('notebook_bcc');
const RELAY = 'http://localhost:8888/notebook-bcc/relay';

/** The Run check's answer when the relay cannot reach the planner (what issue 34 quoted). */
const relayRefused = say(
  'connectionUnreachable',
  msg('relayLabel', RELAY),
  msg(
    'relayUnreachable',
    `GET ${RELAY}/`,
    'Planner at http://127.0.0.1:28600 is unreachable: connection refused'
  )
);

describe('describePlannerProblem', () => {
  it('leads with the planner and the cause, not the relay', () => {
    const problem = describePlannerProblem(relayRefused, trans);
    expect(problem.kind).toBe('unreachable');
    expect(problem.summary).toBe(
      'Notebook-BCC could not reach the planner at http://127.0.0.1:28600: connection refused.'
    );
    expect(problem.url).toBe('http://127.0.0.1:28600');
    expect(problem.actions).toEqual(['settings', 'test', 'builtin', 'retry']);
    // The whole chain stays for Details.
    expect(problem.details).toBe(relayRefused.message);
    expect(problem.details).toContain("the Jupyter server's relay");
  });

  it('is short enough for a notification to show the cause', () => {
    const summary = describePlannerProblem(relayRefused, trans).summary;
    const notice = `Workflow failed in analysis.ipynb: ${summary}`;
    expect(notice.length).toBeLessThanOrEqual(140);
    expect(notice).toContain('connection refused');
  });

  it('finds the cause inside a run error (the engine wraps the client)', () => {
    const error = say(
      'generatingFailed',
      msg(
        'relayUnreachable',
        `POST ${RELAY}/generating`,
        'Planner at http://10.0.0.5:28600 gave no answer: timed out'
      )
    );
    expect(describePlannerProblem(error, trans)).toMatchObject({
      kind: 'unreachable',
      summary: 'The planner at http://10.0.0.5:28600 did not answer: timed out.'
    });
  });

  it('names the planner of the browser transport by its address', () => {
    const check = say(
      'connectionUnreachable',
      'http://localhost:28600',
      msg('requestFailed', 'GET http://localhost:28600/', 'Failed to fetch')
    );
    expect(describePlannerProblem(check, trans).summary).toBe(
      'Notebook-BCC could not reach the planner at http://localhost:28600: Failed to fetch.'
    );
  });

  it('sends a refused token to the settings, without the demo', () => {
    const check = say(
      'connectionRefused',
      msg('relayLabel', RELAY),
      'HTTP 401: {"detail": "bad token"}'
    );
    expect(describePlannerProblem(check, trans)).toMatchObject({
      kind: 'refused',
      summary:
        'The planner refused the request (HTTP 401): check the token in Settings.',
      actions: ['settings', 'retry']
    });
  });

  it('tells an answer that refused the run from a planner it could not reach', () => {
    // A shared planner's budget, mid-run: the planner answered, so "could not reach" would be wrong.
    const error = say(
      'generatingFailed',
      msg(
        'requestFailed',
        `POST ${RELAY}/generating`,
        'HTTP 403 Forbidden: You have used your token budget for today (908 of 1 tokens).'
      )
    );
    expect(describePlannerProblem(error, trans)).toMatchObject({
      kind: 'refused',
      summary:
        'The planner refused the request (HTTP 403): You have used your token budget for today (908 of 1 tokens).',
      url: null,
      actions: ['settings']
    });
    const failed = say(
      'generatingFailed',
      msg('requestFailed', `POST ${RELAY}/generating`, 'HTTP 500: boom')
    );
    // The planner's words come first; the status stays in the details.
    expect(describePlannerProblem(failed, trans)).toMatchObject({
      kind: 'error',
      summary: 'The planner reports: boom.',
      details: `/generating failed: POST ${RELAY}/generating failed: HTTP 500: boom`,
      actions: ['retry', 'settings']
    });
    const silent = say(
      'generatingFailed',
      msg('requestFailed', `POST ${RELAY}/generating`, 'HTTP 502 Bad Gateway')
    );
    expect(describePlannerProblem(silent, trans).summary).toBe(
      'The planner answered with an error (HTTP 502).'
    );
  });

  it('shows a message it does not know as it is', () => {
    const problem = describePlannerProblem({ message: 'boom' }, trans);
    expect(problem).toMatchObject({
      kind: 'other',
      summary: 'boom',
      details: 'boom'
    });
  });

  it('translates the sentence and keeps the cause as the system said it', () => {
    expect(describePlannerProblem(relayRefused, markingTrans).summary).toBe(
      '⟦Notebook-BCC could not reach the planner at http://127.0.0.1:28600: connection refused.⟧'
    );
  });
});

describe('offeredActions', () => {
  const all = ['settings', 'test', 'builtin', 'retry'] as const;

  it('offers the demo only when it would change the planner', () => {
    expect(offeredActions(all, true, { source: 'user' })).toEqual(all);
    expect(offeredActions(all, true, null)).toEqual(all);
    // The administrator's URL takes precedence over the user's.
    expect(offeredActions(all, true, { source: 'server' })).not.toContain(
      'builtin'
    );
    expect(offeredActions(all, true, { builtin: true })).not.toContain(
      'builtin'
    );
    expect(offeredActions(all, false, null)).not.toContain('builtin');
  });
});

describe('startArgs', () => {
  it('starts the same run again, the planner checked first', () => {
    expect(
      startArgs('nb-1', {
        message: relayRefused,
        options: {
          task: 't',
          dataFiles: ['a.csv'],
          llmModel: 'qwen',
          targetColumn: 'price'
        }
      })
    ).toEqual({
      notebook: 'nb-1',
      task: 't',
      dataFiles: ['a.csv'],
      stepMode: false,
      llmModel: 'qwen',
      targetColumn: 'price',
      check: true
    });
  });
});
