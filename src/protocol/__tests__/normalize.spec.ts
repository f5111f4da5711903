import { z } from 'zod';

import {
  Action,
  ActionSchema,
  describeZodError,
  isKnownAction,
  normalizeAction,
  normalizeObservation,
  normalizePlanningRequest,
  normalizePlanningResponse,
  normalizeWorkflowTemplate,
  PlanningResponse,
  UnknownAction
} from '..';

function actionsOf(raw: unknown): (Action | UnknownAction)[] {
  const result = normalizeAction(raw);
  if (!result.ok) {
    throw new Error(result.error);
  }
  return result.actions;
}

function errorOf(raw: unknown): string {
  const result = normalizeAction(raw);
  if (result.ok) {
    throw new Error(`expected an error, got ${JSON.stringify(result.actions)}`);
  }
  return result.error;
}

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

describe('normalizeAction', () => {
  it('returns canonical actions unchanged, with exec defaults filled', () => {
    expect(
      actionsOf({ action: 'add', shot_type: 'dialogue', content: 'Hello' })
    ).toEqual([{ action: 'add', shot_type: 'dialogue', content: 'Hello' }]);
    expect(
      actionsOf({ action: 'exec', codecell_id: 'lastAddedCellId' })
    ).toEqual([
      {
        action: 'exec',
        codecell_id: 'lastAddedCellId',
        need_output: true,
        auto_debug: false,
        keep_debug_button_visible: false
      }
    ]);
  });

  it('accepts the type key instead of action', () => {
    expect(
      actionsOf({ type: 'add', shot_type: 'action', content: 'x = 1' })
    ).toEqual(
      actionsOf({ action: 'add', shot_type: 'action', content: 'x = 1' })
    );
    expect(actionsOf({ type: 'finish_thinking' })).toEqual([
      { action: 'finish_thinking' }
    ]);
  });

  it('unwraps a streamed {"action": {...}} envelope', () => {
    expect(
      actionsOf({ action: { action: 'new_chapter', content: '数据分析' } })
    ).toEqual([{ action: 'new_chapter', content: '数据分析' }]);
  });

  it.each([
    ['text', 'dialogue'],
    ['code', 'action']
  ])(
    'maps legacy add_content with content_type %s to add %s',
    (contentType, shotType) => {
      expect(
        actionsOf({
          type: 'add_content',
          content_type: contentType,
          content: 'body'
        })
      ).toEqual([{ action: 'add', shot_type: shotType, content: 'body' }]);
    }
  );

  it('maps legacy add_section to new_section', () => {
    expect(
      actionsOf({ type: 'add_section', content: 'Data assessment' })
    ).toEqual(actionsOf({ action: 'new_section', content: 'Data assessment' }));
  });

  it('maps legacy execute_code with a cell id to exec', () => {
    expect(actionsOf({ type: 'execute_code', codecell_id: 'cell-7' })).toEqual(
      actionsOf({ action: 'exec', codecell_id: 'cell-7' })
    );
  });

  it('maps legacy execute_code with inline code to an add of a named code cell and its exec', () => {
    const [add, exec] = actionsOf({
      type: 'execute_code',
      code: 'df.head()',
      need_output: false
    });
    expect(add).toEqual({
      action: 'add',
      shot_type: 'action',
      content: 'df.head()',
      store_id: expect.any(String)
    });
    expect(exec).toEqual({
      action: 'exec',
      codecell_id: (add as { store_id: string }).store_id,
      need_output: false,
      auto_debug: false,
      keep_debug_button_visible: false
    });
    const [otherAdd] = actionsOf({ type: 'execute_code', content: 'print(1)' });
    expect((otherAdd as { store_id: string }).store_id).not.toBe(
      (add as { store_id: string }).store_id
    );
  });

  it('keeps a store_id given with legacy execute_code', () => {
    const [add, exec] = actionsOf({
      type: 'execute_code',
      code: '1',
      store_id: 'mine'
    });
    expect(add).toMatchObject({ store_id: 'mine' });
    expect(exec).toMatchObject({ codecell_id: 'mine' });
  });

  it('accepts new_step (a #### heading)', () => {
    expect(
      actionsOf({ action: 'new_step', content: 'Fill missing values' })
    ).toEqual([{ action: 'new_step', content: 'Fill missing values' }]);
  });

  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    [
      'add',
      { action: 'add', shotType: 'action', storeId: 'load', content: 'x' },
      { action: 'add', shot_type: 'action', store_id: 'load', content: 'x' }
    ],
    [
      'exec',
      {
        action: 'exec',
        codecellId: 'load',
        needOutput: false,
        autoDebug: true,
        keepDebugButtonVisible: true
      },
      {
        action: 'exec',
        codecell_id: 'load',
        need_output: false,
        auto_debug: true,
        keep_debug_button_visible: true
      }
    ],
    [
      'is_thinking',
      {
        action: 'is_thinking',
        thinkingText: 't',
        agentName: 'Analyst',
        customText: 'c',
        textArray: ['a', 'b']
      },
      {
        action: 'is_thinking',
        thinking_text: 't',
        agent_name: 'Analyst',
        custom_text: 'c',
        text_array: ['a', 'b']
      }
    ],
    [
      'update_stage_steps',
      {
        action: 'update_stage_steps',
        stageId: 's1',
        updatedSteps: [{ id: 'a', name: 'A' }]
      },
      {
        action: 'update_stage_steps',
        stage_id: 's1',
        updated_steps: [{ id: 'a', name: 'A' }]
      }
    ],
    [
      'update_workflow',
      { action: 'update_workflow', updatedWorkflow: { stages: [] } },
      { action: 'update_workflow', updated_workflow: { stages: [] } }
    ],
    [
      'end_phase',
      { action: 'end_phase', stepId: 'load_data' },
      { action: 'end_phase', step_id: 'load_data' }
    ],
    [
      'next_event',
      { action: 'next_event', eventType: 'custom_event' },
      { action: 'next_event', event_type: 'custom_event' }
    ],
    [
      'new_section metadata',
      {
        action: 'new_section',
        content: 'S',
        metadata: { isSection: true, sectionId: 'section-2', sectionNumber: 2 }
      },
      {
        action: 'new_section',
        content: 'S',
        metadata: {
          is_section: true,
          section_id: 'section-2',
          section_number: 2
        }
      }
    ]
  ])('renames camelCase fields of %s to snake_case', (_name, camel, snake) => {
    expect(actionsOf(camel)).toEqual(actionsOf(snake));
    expect(actionsOf(camel)).toEqual([ActionSchema.parse(snake)]);
  });

  it('passes unknown shot types through for the engine to map', () => {
    expect(
      actionsOf({ action: 'add', shot_type: 'markdown', content: '# T' })
    ).toEqual([{ action: 'add', shot_type: 'markdown', content: '# T' }]);
  });

  it('keeps unknown extra fields', () => {
    expect(actionsOf({ action: 'add', content: 'x', confidence: 0.9 })).toEqual(
      [{ action: 'add', content: 'x', confidence: 0.9 }]
    );
  });

  it('returns unknown action types untouched for custom handlers', () => {
    const actions = actionsOf({ action: 'my_action', payloadValue: 1 });
    expect(actions).toEqual([{ action: 'my_action', payloadValue: 1 }]);
    expect(isKnownAction(actions[0])).toBe(false);
    expect(actionsOf({ type: 'plot_chart', data: [1] })).toEqual([
      { action: 'plot_chart', data: [1] }
    ]);
  });

  it('reports a known type missing a required field, naming the field', () => {
    expect(errorOf({ action: 'exec' })).toBe(
      'exec action is missing required field "codecell_id"'
    );
    expect(errorOf({ action: 'add', shot_type: 'dialogue' })).toBe(
      'add action is missing required field "content"'
    );
    expect(errorOf({ action: 'update_title' })).toBe(
      'update_title action is missing required field "title"'
    );
    expect(errorOf({ action: 'update_workflow' })).toBe(
      'update_workflow action is missing required field "updated_workflow"'
    );
    expect(errorOf({ type: 'execute_code' })).toBe(
      'execute_code action has neither "codecell_id" nor "code"'
    );
  });

  it('reports wrongly typed fields with their path', () => {
    expect(
      errorOf({ action: 'exec', codecell_id: 'c', need_output: 'yes' })
    ).toBe(
      'exec action: field "need_output": Invalid input: expected boolean, received string'
    );
    expect(
      errorOf({
        action: 'update_workflow',
        updated_workflow: { stages: [{ name: 'x', steps: 3 }] }
      })
    ).toBe(
      'update_workflow action: field "updated_workflow": workflow template: stages[0].steps: expected an array, got number 3'
    );
  });

  it('reports a bad step of update_stage_steps by its index', () => {
    expect(
      errorOf({
        action: 'update_stage_steps',
        updated_steps: [{ id: 'a' }, { goal: 'g' }]
      })
    ).toBe('update_stage_steps action: updated_steps[1]: missing "id"');
  });

  it('reports input that is not an action', () => {
    expect(errorOf('add')).toBe(
      'action must be a JSON object, got string "add"'
    );
    expect(errorOf({ content: 'x' })).toBe(
      'action has no "action" (or "type") field naming its type'
    );
  });

  it('drops an invalid metadata field with a warning instead of failing the action', () => {
    const result = normalizeAction({
      action: 'new_chapter',
      content: 'C',
      metadata: { is_chapter: true, chapter_number: 'one' }
    });
    expect(result).toEqual({
      ok: true,
      actions: [
        { action: 'new_chapter', content: 'C', metadata: { is_chapter: true } }
      ],
      warnings: [
        'new_chapter action: metadata.chapter_number ignored: Invalid input: expected number, received string'
      ]
    });
  });

  it('accepts common aliases: title for headings, content for update_title, numeric ids', () => {
    expect(actionsOf({ action: 'new_chapter', title: 'C' })).toEqual([
      { action: 'new_chapter', content: 'C' }
    ]);
    expect(actionsOf({ action: 'update_title', content: 'T' })).toEqual([
      { action: 'update_title', title: 'T' }
    ]);
    expect(actionsOf({ action: 'exec', codecell_id: 3 })).toMatchObject([
      { codecell_id: '3' }
    ]);
    expect(actionsOf({ action: 'update_stage_steps', steps: ['a'] })).toEqual([
      { action: 'update_stage_steps', updated_steps: [{ id: 'a', name: 'a' }] }
    ]);
  });

  it('reads set_effect_as_thinking and update_last_text in snake_case and camelCase', () => {
    for (const raw of [
      { action: 'set_effect_as_thinking', thinking_text: 'why' },
      { action: 'setEffectAsThinking', thinkingText: 'why' },
      { type: 'set_effect_as_thinking', thinkingText: 'why' }
    ]) {
      const [action] = actionsOf(raw);
      expect(isKnownAction(action)).toBe(true);
      expect(action).toEqual({
        action: 'set_effect_as_thinking',
        thinking_text: 'why'
      });
    }
    for (const raw of [
      { action: 'update_last_text', text: 'new' },
      { action: 'updateLastText', content: 'new' },
      { type: 'update_last_text', text: 'new' }
    ]) {
      const [action] = actionsOf(raw);
      expect(isKnownAction(action)).toBe(true);
      expect(action).toEqual({ action: 'update_last_text', text: 'new' });
    }
    expect(normalizeAction({ action: 'update_last_text' })).toMatchObject({
      ok: false
    });
  });
});

describe('normalizeWorkflowTemplate', () => {
  const canonical = {
    name: 'W',
    stages: [
      {
        id: 'data_loading',
        name: 'Data loading',
        steps: [{ id: 'read_csv', name: 'Read CSV', expected_outputs: ['df'] }]
      },
      { id: 'modeling', name: 'modeling', steps: [] }
    ]
  };

  it('leaves a canonical template as it is', () => {
    expect(normalizeWorkflowTemplate(canonical)).toEqual({
      ok: true,
      template: canonical,
      warnings: []
    });
  });

  it('accepts stage_id/step_id, title, missing names, missing steps, camelCase', () => {
    const variant = {
      title: 'W',
      stages: [
        {
          stage_id: 'data_loading',
          title: 'Data loading',
          steps: [
            { step_id: 'read_csv', title: 'Read CSV', expectedOutputs: ['df'] }
          ]
        },
        { stageId: 'modeling' }
      ]
    };
    expect(normalizeWorkflowTemplate(variant)).toEqual({
      ok: true,
      template: canonical,
      warnings: []
    });
  });

  it('takes expected outputs given as {name, description}', () => {
    const result = normalizeWorkflowTemplate({
      stages: [
        {
          id: 's',
          name: 'S',
          steps: [
            {
              id: 't',
              expected_outputs: [{ name: 'df', description: 'the data' }]
            }
          ]
        }
      ]
    });
    expect(result.ok && result.template.stages[0].steps[0]).toEqual({
      id: 't',
      name: 't',
      expected_outputs: ['df']
    });
  });

  it('explains what is wrong', () => {
    expect(
      normalizeWorkflowTemplate({ stages: [{ description: 'no id' }] })
    ).toEqual({
      ok: false,
      error: 'workflow template: stages[0]: missing "id"'
    });
    expect(normalizeWorkflowTemplate({ name: 'x' })).toEqual({
      ok: false,
      error: 'workflow template: missing "stages" array'
    });
  });
});

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
    expect(response.context_update?.progress_update?.level).toBe('steps');
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
    expect(response.context_update?.progress_update?.current_outputs).toEqual({
      expected: ['df_working'],
      produced: [],
      in_progress: []
    });
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
