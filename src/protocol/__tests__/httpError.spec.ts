import { httpError } from '../exchange';
import { msg } from '../messages';

const URL = 'http://localhost:8888/notebook-bcc/relay/generating';

function failed(status: number, body: string, statusText = '') {
  return httpError(
    `POST ${URL}`,
    URL,
    new Response(body, { status, statusText }),
    body
  );
}

describe('httpError', () => {
  it("shows the message of a JSON {message} body (the LLM planner's and the relay's form), with the status", () => {
    const body = JSON.stringify({
      message:
        'The model endpoint refused the API key (HTTP 401): set the key in LLM Planner Settings'
    });
    const error = failed(502, body, 'Bad Gateway');
    expect(error.message).toBe(
      `POST ${URL} failed: HTTP 502 Bad Gateway: The model endpoint refused the API key (HTTP 401): set the key in LLM Planner Settings`
    );
    expect(error.text).toEqual(
      msg(
        'requestFailed',
        `POST ${URL}`,
        'HTTP 502 Bad Gateway: The model endpoint refused the API key (HTTP 401): set the key in LLM Planner Settings'
      )
    );
    expect(error.status).toBe(502);
    // The body itself stays with the error (the trace, the details).
    expect(error.bodyExcerpt).toBe(body);
  });

  it('keeps what the body asks the user to do (`action`), and nothing when it asks nothing', () => {
    const body = JSON.stringify({
      message: 'The model endpoint refused the API key.',
      action: 'open-llm-settings'
    });
    const error = failed(424, body);
    expect(error.action).toBe('open-llm-settings');
    expect(error.message).toBe(
      `POST ${URL} failed: HTTP 424: The model endpoint refused the API key.`
    );
    expect(failed(500, '{"message":"boom"}').action).toBeUndefined();
    expect(failed(500, '{"action": 3}').action).toBeUndefined();
  });

  it('shows a long message whole, past the excerpt of a body', () => {
    const message = `The model endpoint ${'http://'.padEnd(240, 'x')} cannot be reached: connection refused`;
    const error = failed(502, JSON.stringify({ message }));
    expect(error.message).toBe(`POST ${URL} failed: HTTP 502: ${message}`);
  });

  it.each([
    ['a JSON body without a message', '{"error":"boom"}'],
    ['a message that is not text', '{"message":{"code":5}}'],
    ['a JSON list', '[{"message":"no"}]'],
    ['text', 'Internal error, see the log']
  ])('shows an excerpt of %s as before', (_, body) => {
    expect(failed(500, body).message).toBe(
      `POST ${URL} failed: HTTP 500: ${body}`
    );
  });

  it('keeps Retry-After', () => {
    const error = httpError(
      `POST ${URL}`,
      URL,
      new Response('{"message":"slow down"}', {
        status: 429,
        headers: { 'Retry-After': '7' }
      }),
      '{"message":"slow down"}'
    );
    expect(error.retryAfterMs).toBe(7000);
    expect(error.message).toBe(`POST ${URL} failed: HTTP 429: slow down`);
  });
});
