import {
  planningAnswerFromJson,
  planningAnswerFromXml,
  reflectionFromXml
} from '../bcc/answers';
import { withIds } from '../bcc/plan';
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
    [
      '<reflection><decision><next_state>Step Completed</next_state></decision></reflection>',
      true
    ],
    [
      '<reflection current_step_is_complete="true"><decision><next_state>step-running</next_state></decision></reflection>',
      false
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

describe('bcc plan ids', () => {
  it('gives stages and steps without an id one from the title, unique, never empty', () => {
    const stages = planningAnswerFromXml(
      parseLenientXml(
        '<stages><stage title="Load Data"/><stage id="model" title="Model"/><stage title="数据 清洗"/>' +
          '<stage title="Load data!"/><stage/></stages>'
      ).root!
    );
    expect(
      stages?.kind === 'stages' &&
        withIds(stages.stages, 'stage_id', 'stage').map(s => s.stage_id)
    ).toEqual(['load_data', 'model', '数据_清洗', 'load_data_2', 'stage_5']);

    const steps = planningAnswerFromJson({
      steps: [{ title: 'Read' }, { name: 'Read' }, { step_id: 'x', title: 'X' }]
    });
    expect(
      steps?.kind === 'steps' &&
        withIds(steps.steps, 'step_id', 'step').map(s => s.step_id)
    ).toEqual(['read', 'read_2', 'x']);
  });

  it('reads a JSON behavior under "behavior" without an id', () => {
    expect(
      planningAnswerFromJson({ behavior: { task: 'Read the file' } })
    ).toMatchObject({
      kind: 'behavior',
      behavior: { behavior_id: '', task: 'Read the file' }
    });
    expect(planningAnswerFromJson({ task: 'no marker' })).toBeNull();
  });
});
