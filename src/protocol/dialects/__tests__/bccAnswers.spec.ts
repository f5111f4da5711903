import { reflectionFromXml } from '../bccAnswers';
import { parseLenientXml } from '../xml';

function reflect(xml: string) {
  const root = parseLenientXml(xml).root;
  if (!root) {
    throw new Error(`no root in ${xml}`);
  }
  const reflection = reflectionFromXml(root);
  if (!reflection) {
    throw new Error(`not a reflection: ${xml}`);
  }
  return reflection;
}

describe('bcc reflection completion', () => {
  it.each([
    ['<reflection current_step_is_complete="true"/>', true],
    ['<reflection current_step_is_complete="false"/>', false],
    ['<reflection/>', false],
    // The older BCC client's attribute: it meant the same thing (its COMPLETE_STEP handler read it).
    ['<reflection current_behavior_is_complete="true"/>', true],
    ['<reflection current_behavior_is_complete="false"/>', false],
    [
      '<reflection current_behavior_is_complete="true"><decision><next_state>STEP_RUNNING</next_state></decision></reflection>',
      false
    ],
    [
      '<reflection current_behavior_is_complete="false"><decision><next_state>STATE_Step_Completed</next_state></decision></reflection>',
      true
    ],
    // Both spelled: the newer attribute wins.
    [
      '<reflection current_step_is_complete="false" current_behavior_is_complete="true"/>',
      false
    ]
  ])('%s → step complete: %s', (xml, complete) => {
    expect(reflect(xml).stepComplete).toBe(complete);
  });

  it('names the attribute it read when it disagrees with next_state', () => {
    expect(
      reflect(
        '<reflection current_behavior_is_complete="true"><decision><next_state>STEP_RUNNING</next_state></decision></reflection>'
      ).conflict
    ).toBe('current_behavior_is_complete="true" but next_state STEP_RUNNING');
  });
});
