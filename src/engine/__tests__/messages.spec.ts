import { PROTOCOL_MESSAGES } from '../../protocol/messages';
import * as protocol from '../../protocol/messages';
import {
  ENGINE_MESSAGES,
  englishText,
  fillTemplate,
  isMessageId,
  MESSAGES,
  msg,
  reported,
  say
} from '../messages';

describe('engine messages', () => {
  it('fill their parameters into the English template the way trans.__ does', () => {
    expect(fillTemplate('%2 before %1, %1 again', ['a', 3])).toBe(
      '3 before a, a again'
    );
    expect(englishText(msg('maxSteps', 4, 10))).toBe(
      'Stopped after 4 behaviors: the maximum number of execution steps (10) was reached. Raise it in the settings, or resume the run to go on.'
    );
  });

  it('give a report both its English text and its id', () => {
    expect(say('runFailed', 'boom')).toEqual({
      message: 'The run failed: boom',
      text: { id: 'runFailed', params: ['boom'] }
    });
    expect(reported(msg('kernelUnusable'))).toEqual({
      message: 'The kernel is not usable (dead or restarting).',
      text: { id: 'kernelUnusable', params: [] }
    });
    // A message inside a message: the notebook's reason inside the engine's pause.
    expect(
      say('kernelUnusableDetail', msg('kernelStartFailed', 'no spec')).message
    ).toBe(
      'The kernel is not usable: The kernel could not be started: no spec'
    );
    // A text from elsewhere (the planner's own words) is shown as it is.
    expect(reported('heartbeat')).toEqual({ message: 'heartbeat' });
  });

  it("take the protocol's messages as their own: one catalogue, ids that never collide", () => {
    expect(
      Object.keys(ENGINE_MESSAGES).filter(id =>
        Object.hasOwn(PROTOCOL_MESSAGES, id)
      )
    ).toEqual([]);
    expect(isMessageId('requestFailed')).toBe(true);
    // The planner client's error, kept as its id inside the engine's message.
    const failure = protocol.say('requestFailed', 'POST /planning', 'HTTP 502');
    expect(say('planningFailed', failure.text)).toEqual({
      message: '/planning failed: POST /planning failed: HTTP 502',
      text: {
        id: 'planningFailed',
        params: [
          { id: 'requestFailed', params: ['POST /planning', 'HTTP 502'] }
        ]
      }
    });
  });

  it('know their ids (a saved run may carry one a later version dropped)', () => {
    expect(isMessageId('runStopped')).toBe(true);
    expect(isMessageId('noSuchMessage')).toBe(false);
    expect(isMessageId('toString')).toBe(false);
  });

  it('use placeholders %1…%n without gaps', () => {
    for (const template of Object.values(MESSAGES)) {
      const used = [...template.matchAll(/%(\d+)/g)].map(m => Number(m[1]));
      const highest = Math.max(0, ...used);
      for (let i = 1; i <= highest; i++) {
        expect(used).toContain(i);
      }
    }
  });
});
