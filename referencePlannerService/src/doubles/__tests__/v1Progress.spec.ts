/**
 * How the v1 double moves through a step (docs/dialects.md#test-doubles): progress driven by
 * `toDoList`, the entry step and section 1 of a chapter, and the variables a step requires.
 */

import {
  Json,
  ENTRY,
  CH1,
  CH2,
  DISCOVERY,
  COLUMNS,
  TASK_VARIABLES,
  state,
  servedV1Double
} from './v1Double';

describe('v1 test double', () => {
  const double = servedV1Double();

  describe('progress driven by toDoList', () => {
    it('runs a step behavior by behavior and captures effect.current[0] as a variable', async () => {
      const first = await double.stream({
        stage_id: CH1,
        step_index: DISCOVERY,
        state: state()
      });
      expect(first.header).toEqual({
        header: {
          stage_id: CH1,
          step: null,
          next_step: 'section_3_variable_semantic_analysis'
        }
      });
      expect(first.actions.map(a => a.action)).toEqual([
        'new_section',
        'add',
        'add',
        'exec',
        'set_effect_as_thinking',
        'next_event'
      ]);
      const firstState = first.actions[0].state as Json;
      expect(firstState.toDoList).toEqual(['read_columns']);
      // Unknown keys survive the round trip.
      expect(firstState.stageStatus).toEqual({});

      const second = await double.stream({
        stage_id: CH1,
        step_index: DISCOVERY,
        state: { ...firstState, effect: { current: [COLUMNS], history: [] } }
      });
      const secondState = second.actions[second.actions.length - 1]
        .state as Json;
      expect(secondState.toDoList).toEqual(['record_shape']);
      expect((secondState.variables as Json).column_names).toBe(
        "['month', 'region', 'units', 'revenue']"
      );
      const reflection = await double.json('/v1/reflection', {
        stage_id: CH1,
        step_index: DISCOVERY,
        state: secondState
      });
      expect(reflection.body.targetAchieved).toBe(false);

      const third = await double.stream({
        stage_id: CH1,
        step_index: DISCOVERY,
        state: {
          ...secondState,
          effect: { current: ['240 rows x 4 columns\n'], history: [COLUMNS] }
        }
      });
      const thirdState = third.actions[third.actions.length - 1].state as Json;
      expect(thirdState.toDoList).toEqual([]);
      expect(third.actions.map(a => a.action)).not.toContain('next_event');
      expect((thirdState.variables as Json).data_shape).toBe(
        '240 rows x 4 columns'
      );
      const done = await double.json('/v1/reflection', {
        stage_id: CH1,
        step_index: DISCOVERY,
        state: thirdState
      });
      expect(done.body).toEqual({
        status: 'received',
        message: 'Feedback processed',
        targetAchieved: true,
        state: thirdState
      });
    });

    it('shows the end-of-behavior toDoList and variables on every line', async () => {
      const res = await double.stream({
        stage_id: CH1,
        step_index: DISCOVERY,
        state: state()
      });
      for (const action of res.actions) {
        expect((action.state as Json).toDoList).toEqual(['read_columns']);
      }
    });

    it('without an output, an after-exec handler names itself and the missing list and drops its event', async () => {
      const res = await double.stream({
        stage_id: CH1,
        step_index: DISCOVERY,
        state: state(TASK_VARIABLES, ['read_columns'], [])
      });
      expect(res.actions).toHaveLength(1);
      expect(res.actions[0].content).toMatch(
        /^Handler read_columns .*\['effect\.current'\]$/
      );
      expect((res.actions[0].state as Json).toDoList).toEqual([]);
    });
  });

  describe('the entry step and section 1', () => {
    it('runs the whole entry chain at once, with two execs, ending with update_workflow', async () => {
      const res = await double.stream({ ...ENTRY, state: state() });
      const types = res.actions.map(a => a.action);
      expect(types.filter(t => t === 'exec')).toHaveLength(2);
      expect(types[types.length - 1]).toBe('update_workflow');
      const update = res.actions[res.actions.length - 1];
      const template = (update.updated_workflow as Json).workflowTemplate as {
        name: string;
        stages: Array<{ id: string; title: string; steps: Json[] }>;
      };
      expect(template.stages.map(s => s.id)).toEqual([CH1, CH2]);
      expect(JSON.stringify(template)).not.toContain('chapter_0_planning');
      expect(template.stages[0].steps[1]).toEqual({
        id: DISCOVERY,
        step_id: 'section_2_data_structure_discovery',
        title: 'Data structure discovery',
        description: expect.any(String)
      });
      expect((update.updated_workflow as Json).nextStageId).toBe(CH1);
      expect((update.state as Json).toDoList).toEqual([]);
    });

    it('section 1 replaces the chapter’s steps without state and adds current_workflow afterwards', async () => {
      const section = `${CH2}_section_1_workflow_initialization`;
      const first = await double.stream({
        stage_id: CH2,
        step_index: section,
        state: state()
      });
      expect(first.actions.map(a => a.action)).toEqual([
        'new_chapter',
        'new_section',
        'add',
        'is_thinking',
        'next_event'
      ]);
      const second = await double.stream({
        stage_id: CH2,
        step_index: section,
        state: first.actions[0].state as Json
      });
      const types = second.actions.map(a => a.action);
      const at = types.indexOf('update_stage_steps');
      const update = second.actions[at];
      expect(update).not.toHaveProperty('state');
      expect(update.stage_id).toBe(CH2);
      expect(update.next_step_id).toBe(section);
      const steps = update.updated_steps as Json[];
      expect(steps.map(s => s.step_id)).toEqual([
        'section_1_workflow_initialization',
        'section_2_revenue_by_region',
        'section_3_monthly_trend'
      ]);
      expect(steps[0]).toEqual({
        id: section,
        step_id: 'section_1_workflow_initialization',
        name: 'Workflow initialization',
        description: expect.any(String),
        status: 'completed'
      });
      expect(steps.slice(1).map(s => s.status)).toEqual(['pending', 'pending']);
      for (const action of second.actions.slice(0, at)) {
        expect(action.state).not.toHaveProperty('current_workflow');
      }
      const after = second.actions[at + 1].state as Json;
      expect(after.current_workflow).toEqual({
        stages: [
          {
            id: CH2,
            name: 'Revenue exploration',
            description: expect.any(String),
            steps
          }
        ]
      });
      expect(after.toDoList).toEqual([]);
    });
  });

  describe('required variables', () => {
    it.each([
      ['the entry step', ENTRY.stage_id, ENTRY.step_index, 'user_goal'],
      // The published server's DesignWorkflow requires problem_name and context_description too.
      ['the entry step', ENTRY.stage_id, ENTRY.step_index, 'problem_name'],
      [
        'the entry step',
        ENTRY.stage_id,
        ENTRY.step_index,
        'context_description'
      ],
      [
        'a chapter-1 step',
        CH1,
        'section_1_workflow_initialization',
        'problem_description'
      ],
      ['a data step', CH1, DISCOVERY, 'csv_file_path'],
      [
        'a later step',
        CH1,
        'section_3_variable_semantic_analysis',
        'column_names'
      ]
    ])(
      '%s answers one add ending with the missing list, toDoList unchanged',
      async (_name, stageId, stepIndex, missing) => {
        const variables: Json = { ...TASK_VARIABLES };
        delete variables[missing];
        if (missing !== 'column_names') {
          variables.column_names = '';
        }
        const res = await double.stream({
          stage_id: stageId,
          step_index: stepIndex,
          state: state(variables)
        });
        expect(res.status).toBe(200);
        expect(res.actions).toHaveLength(1);
        expect(res.actions[0]).toMatchObject({
          action: 'add',
          shotType: 'dialogue'
        });
        expect(String(res.actions[0].content)).toMatch(
          new RegExp(`\\['${missing}'\\]$`)
        );
        const echoed = res.actions[0].state as Json;
        expect(echoed.toDoList).toEqual([]);
        const reflection = await double.json('/v1/reflection', {
          stage_id: stageId,
          step_index: stepIndex,
          state: echoed
        });
        expect(reflection.body.targetAchieved).toBe(true);
      }
    );

    it('asks for a variable it was told a step requires (--require-variable), like the late steps of the published server', async () => {
      await double.restart({
        requirements: [
          {
            section: 'section_2_data_structure_discovery',
            name: 'target_variable'
          }
        ]
      });
      const ask = (variables: Json) =>
        double.stream({
          stage_id: CH1,
          step_index: DISCOVERY,
          state: state(variables)
        });
      const without = await ask({ ...TASK_VARIABLES });
      expect(without.actions).toHaveLength(1);
      expect(String(without.actions[0].content)).toMatch(
        /\['target_variable'\]$/
      );
      const given = await ask({
        ...TASK_VARIABLES,
        target_variable: 'revenue'
      });
      expect(given.actions.length).toBeGreaterThan(1);
    });

    it('reads a variable from the top level of state as a fallback', async () => {
      const res = await double.stream({
        ...ENTRY,
        state: {
          ...state({ ...TASK_VARIABLES, user_goal: '' }),
          user_goal: 'from the top level'
        }
      });
      expect(res.actions.map(a => a.action)).toContain('update_workflow');
    });
  });
});
