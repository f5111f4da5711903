import { progressUpdatesOf } from '../schemas';
import { z } from 'zod';

import {
  describeZodError,
  normalizeObservation,
  normalizePlanningRequest,
  normalizePlanningResponse,
  PlanningResponse
} from '..';

function responseOf(raw: unknown): {
  response: PlanningResponse;
  warnings: string[];
} {
  const result = normalizePlanningResponse(raw);
  if (!result.ok) {
    throw new Error(result.error);
  }
  return result;
}

describe('normalizePlanningResponse', () => {
  it.each([
    [{ targetAchieved: true }],
    [{ target_achieved: true }],
    [{ transition: { target_achieved: true } }],
    [{ transition: { targetAchieved: true } }],
    [{ metadata: { target_achieved: true } }]
  ])('reads targetAchieved from %j', raw => {
    const { response, warnings } = responseOf(raw);
    expect(response.targetAchieved).toBe(true);
    expect(response.transition?.target_achieved).toBe(true);
    expect(warnings).toEqual([]);
  });

  it('reads null sections and fields as absent, keeping the rest of the answer', () => {
    const { response, warnings } = responseOf({
      targetAchieved: false,
      nextStageId: null,
      transition: { continue_behaviors: null, next_stage_id: null },
      context_update: {
        variables: { empty: null, n: 3 },
        workflow_update: {
          workflowTemplate: {
            stages: [
              {
                id: 's',
                name: 'S',
                description: null,
                steps: [{ id: 'a', name: 'A', goal: null }]
              }
            ]
          }
        },
        progress_update: {
          level: 'steps',
          focus: 'f',
          current_outputs: null
        },
        stage_steps_update: null
      },
      context_filter: {
        effects_config: { current_limit: 5, patterns: null },
        variables_to_include: null
      }
    });
    expect(warnings).toEqual([]);
    expect(response.context_update?.variables).toEqual({ empty: null, n: 3 });
    expect(
      response.context_update?.workflow_update?.workflowTemplate?.stages
    ).toEqual([{ id: 's', name: 'S', steps: [{ id: 'a', name: 'A' }] }]);
    expect(progressUpdatesOf(response.context_update)).toEqual([
      { level: 'steps', focus: 'f' }
    ]);
    expect(response.context_filter?.effects_config).toEqual({
      current_limit: 5
    });
  });

  it('assumes false, with a warning, when no target flag is present', () => {
    const { response, warnings } = responseOf({});
    expect(response.targetAchieved).toBe(false);
    expect(warnings).toEqual([
      'planning response has no targetAchieved; assuming false'
    ]);
  });

  it('warns when the target flags contradict each other', () => {
    const { response, warnings } = responseOf({
      targetAchieved: true,
      transition: { target_achieved: false }
    });
    expect(response.targetAchieved).toBe(true);
    expect(warnings).toEqual([
      'transition.target_achieved (false) contradicts targetAchieved (true); using targetAchieved'
    ]);
  });

  it('renames camelCase keys throughout to the canonical spelling', () => {
    const camel = {
      targetAchieved: false,
      transition: { continueBehaviors: true, nextStageId: 'next' },
      contextUpdate: {
        variables: { dfTrain: 'DataFrame(1×1)' },
        progressUpdate: { level: 'behaviors', focus: 'F' },
        effectsUpdate: { current: ['e'] },
        workflowUpdate: {
          workflow_template: { stages: [] },
          next_stage_id: 's2'
        },
        stageStepsUpdate: {
          stageId: 's',
          updatedSteps: [{ stepId: 'a', title: 'A' }]
        },
        todoListUpdate: { operation: 'remove', items: ['x'] },
        sectionProgress: { currentSectionId: 'intro' }
      },
      contextFilter: {
        variablesToInclude: ['df'],
        variablesToSummarize: { corrMatrix: 'shape_only' },
        effectsConfig: {
          includeCurrent: true,
          currentLimit: 3,
          includeHistory: false,
          historyLimit: 0,
          patterns: { include: ['^✓'], exclude: ['^DEBUG'] }
        },
        focusToInclude: ['behaviors', 'steps'],
        outputsTracking: {
          expectedVariables: ['df_working'],
          validationRequired: ['ok']
        }
      }
    };
    const snake = {
      targetAchieved: false,
      transition: { continue_behaviors: true, next_stage_id: 'next' },
      context_update: {
        variables: { dfTrain: 'DataFrame(1×1)' },
        progress_update: { level: 'behaviors', focus: 'F' },
        effects_update: { current: ['e'] },
        workflow_update: {
          workflowTemplate: { stages: [] },
          nextStageId: 's2'
        },
        stage_steps_update: { stage_id: 's', steps: [{ id: 'a', name: 'A' }] },
        todo_list_update: { operation: 'remove', items: ['x'] },
        section_progress: { current_section_id: 'intro' }
      },
      context_filter: {
        variables_to_include: ['df'],
        variables_to_summarize: { corrMatrix: 'shape_only' },
        effects_config: {
          include_current: true,
          current_limit: 3,
          include_history: false,
          history_limit: 0,
          patterns: { include: ['^✓'], exclude: ['^DEBUG'] }
        },
        focus_to_include: ['behaviors', 'steps'],
        outputs_tracking: {
          expected_variables: ['df_working'],
          validation_required: ['ok']
        }
      }
    };
    const fromCamel = responseOf(camel);
    const fromSnake = responseOf(snake);
    expect(fromCamel).toEqual(fromSnake);
    expect(fromSnake.warnings).toEqual([]);
    expect(fromSnake.response.transition).toEqual({
      continue_behaviors: true,
      next_stage_id: 'next',
      target_achieved: false
    });
  });

  it('reads transition.stage_complete in either spelling, as a boolean', () => {
    const { response, warnings } = responseOf({
      targetAchieved: true,
      transition: { stageComplete: 'true' }
    });
    expect(response.transition).toEqual({
      target_achieved: true,
      stage_complete: true
    });
    expect(warnings).toEqual([]);
    const odd = responseOf({
      targetAchieved: true,
      transition: { stage_complete: 'soon' }
    });
    expect(odd.response.transition).toEqual({ target_achieved: true });
    expect(odd.warnings).toEqual([
      'transition.stage_complete ignored: expected a boolean, got string "soon"'
    ]);
  });

  it('accepts a workflow update sent without the workflowTemplate wrapper', () => {
    const { response } = responseOf({
      targetAchieved: false,
      context_update: {
        workflow_update: { name: 'W', stages: [{ stage_id: 's' }] }
      }
    });
    expect(response.context_update?.workflow_update).toEqual({
      workflowTemplate: {
        name: 'W',
        stages: [{ id: 's', name: 's', steps: [] }]
      }
    });
  });

  it('moves a legacy transition.workflow_update into context_update', () => {
    const { response } = responseOf({
      targetAchieved: false,
      transition: {
        workflow_update: { workflowTemplate: { stages: [{ id: 'a' }] } }
      }
    });
    expect(
      response.context_update?.workflow_update?.workflowTemplate.stages
    ).toEqual([{ id: 'a', name: 'a', steps: [] }]);
  });

  it('accepts singular or capitalised progress levels', () => {
    const { response } = responseOf({
      targetAchieved: false,
      context_update: { progress_update: { level: 'Step', focus: 'F' } },
      context_filter: { focus_to_include: ['behavior', 'stages'] }
    });
    expect(progressUpdatesOf(response.context_update)[0]?.level).toBe('steps');
    expect(response.context_filter?.focus_to_include).toEqual([
      'behaviors',
      'stages'
    ]);
  });

  it('takes current_outputs.expected items given as {name, description}', () => {
    const { response } = responseOf({
      targetAchieved: false,
      context_update: {
        progress_update: {
          level: 'behaviors',
          current_outputs: {
            expected: [{ name: 'df_working', description: 'the copy' }]
          }
        }
      }
    });
    expect(
      progressUpdatesOf(response.context_update)[0]?.current_outputs
    ).toEqual({
      expected: ['df_working'],
      produced: [],
      in_progress: []
    });
  });

  it('accepts progress_update as a list, one entry per level, each normalised', () => {
    const { response, warnings } = responseOf({
      targetAchieved: false,
      context_update: {
        progress_update: [
          { level: 'Step', currentOutputs: { produced: ['a'] } },
          { level: 'stages', focus: 'S' }
        ]
      }
    });
    expect(warnings).toEqual([]);
    expect(progressUpdatesOf(response.context_update)).toEqual([
      {
        level: 'steps',
        current_outputs: { expected: [], produced: ['a'], in_progress: [] }
      },
      { level: 'stages', focus: 'S' }
    ]);
  });

  it('drops what it cannot understand with a warning and keeps the rest', () => {
    const { response, warnings } = responseOf({
      targetAchieved: true,
      context_update: {
        variables: { a: 1 },
        progress_update: { level: 'nowhere', focus: 'F' },
        workflow_update: { workflowTemplate: { stages: 'none' } }
      },
      context_filter: {
        variables_to_include: ['df'],
        effects_config: { current_limit: -2 },
        focus_to_include: ['behaviors', 'galaxies']
      },
      actions: [{ action: 'add', content: 'ok' }, { action: 'exec' }]
    });
    expect(response.targetAchieved).toBe(true);
    expect(response.context_update).toEqual({ variables: { a: 1 } });
    expect(response.context_filter).toEqual({
      variables_to_include: ['df'],
      focus_to_include: ['behaviors']
    });
    expect(response.actions).toEqual([{ action: 'add', content: 'ok' }]);
    expect(warnings).toEqual([
      'context_update.workflow_update ignored: workflow template: missing "stages" array',
      'context_update.progress_update ignored: level: Invalid option: expected one of "stages"|"steps"|"behaviors"',
      'context_filter.focus_to_include: unknown level "galaxies" ignored',
      'context_filter.effects_config ignored: current_limit: Too small: expected number to be >=0',
      'actions[1] ignored: exec action is missing required field "codecell_id"'
    ]);
  });

  it('fails only for a body that is not an object', () => {
    expect(normalizePlanningResponse([1])).toEqual({
      ok: false,
      error: 'planning response: expected a JSON object, got an array'
    });
    expect(normalizePlanningResponse(null).ok).toBe(false);
  });
});

describe('normalizeObservation', () => {
  const variant = {
    location: {
      current: {
        stageId: 'data_cleaning',
        stepId: 'handle_missing',
        behaviorId: 'b3'
      },
      progress: {
        stages: {
          completed: ['data_loading'],
          current: {
            stage_id: 'data_cleaning',
            title: 'Data cleaning',
            goal: 'Clean'
          },
          remaining: [{ stage_id: 'modeling', title: 'Modeling' }]
        },
        steps: {
          completed: [
            { id: 'convert_types', outputsProduced: { variables: ['df'] } }
          ],
          current: {
            step_id: 'handle_missing',
            goal: 'Fill',
            focus: 'step focus'
          },
          currentOutputs: {
            expected: [
              { name: 'df', description: 'main frame' },
              { name: 'missing_fill_report', description: 'report' }
            ],
            produced: ['missing_summary'],
            inProgress: []
          }
        },
        behavior: { current: { id: 'b3' }, iteration: 3 }
      },
      goals: { stage: 'Clean', step: 'Fill', behavior: null }
    },
    context: {
      variables: { myVar: 1 },
      effects: {
        current: ['out'],
        history: [{ action: 'load', result: 'success' }]
      },
      notebook: { cellCount: 3, lastCellType: 'code' },
      FSM: {
        state: 'BEHAVIOR_RUNNING',
        lastTransition: 'NEXT_BEHAVIOR -> BEHAVIOR_RUNNING'
      },
      todo_list: ['a']
    }
  };

  it('turns every variant into the canonical observation', () => {
    const result = normalizeObservation(variant);
    if (!result.ok) {
      throw new Error(result.error);
    }
    expect(result.observation).toEqual({
      location: {
        current: {
          stage_id: 'data_cleaning',
          step_id: 'handle_missing',
          behavior_id: 'b3'
        },
        progress: {
          stages: {
            completed: [{ stage_id: 'data_loading' }],
            current: 'data_cleaning',
            remaining: ['modeling']
          },
          steps: {
            completed: [
              {
                id: 'convert_types',
                step_id: 'convert_types',
                outputs_produced: { variables: ['df'] }
              }
            ],
            current: 'handle_missing',
            focus: 'step focus',
            current_outputs: {
              expected: ['df', 'missing_fill_report'],
              produced: ['missing_summary'],
              in_progress: []
            }
          },
          behaviors: { completed: [], current: 'b3', iteration: 3 }
        },
        goals: { stage: 'Clean', step: 'Fill', behavior: null }
      },
      context: {
        variables: { myVar: 1 },
        effects: {
          current: ['out'],
          history: ['{"action":"load","result":"success"}']
        },
        notebook: { cell_count: 3, last_cell_type: 'code' },
        FSM: {
          state: 'BEHAVIOR_RUNNING',
          last_transition: 'NEXT_BEHAVIOR -> BEHAVIOR_RUNNING'
        },
        toDoList: ['a']
      }
    });
  });

  it('is used by normalizePlanningRequest', () => {
    const result = normalizePlanningRequest({
      observation: variant,
      behaviorFeedback: {
        behaviorId: 'b3',
        actionsExecuted: 2,
        lastActionResult: 'error'
      }
    });
    expect(
      result.ok && result.request.observation.location.progress?.stages?.current
    ).toBe('data_cleaning');
    expect(result.ok && result.request.behavior_feedback).toEqual({
      behavior_id: 'b3',
      actions_executed: 2,
      last_action_result: 'error'
    });
  });

  it('names the field that is wrong', () => {
    expect(normalizeObservation({ context: {} })).toEqual({
      ok: false,
      error: 'observation.location: missing (expected object)'
    });
    expect(
      normalizeObservation({
        location: { current: { behavior_iteration: 'three' } }
      })
    ).toEqual({
      ok: false,
      error:
        'observation.location.current.behavior_iteration: Invalid input: expected number, received string'
    });
  });
});

describe('describeZodError', () => {
  it('writes one "path: problem" per issue', () => {
    const schema = z.object({
      a: z.string(),
      list: z.array(z.object({ n: z.number() }))
    });
    const result = schema.safeParse({ list: [{ n: 1 }, { n: 'x' }] });
    expect(result.success).toBe(false);
    expect(describeZodError(result.error as z.ZodError)).toBe(
      'a: missing (expected string); list[1].n: Invalid input: expected number, received string'
    );
  });
});
