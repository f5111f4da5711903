import {
  Action,
  ActionSchema,
  isActionType,
  isKnownAction,
  OPTIONAL_ACTIONS,
  normalizeAction,
  normalizeWorkflowTemplate,
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

  it('reads rewrite_cell with the aliases of exec and add, and ids sent as numbers', () => {
    const canonical = {
      action: 'rewrite_cell',
      codecell_id: 'load.read_csv',
      content: 'df = pd.read_csv(path, sep=";")'
    };
    for (const raw of [
      canonical,
      { type: 'rewriteCell', cellId: 'load.read_csv', code: canonical.content },
      {
        action: 'rewrite-cell',
        code_cell_id: 'load.read_csv',
        source: canonical.content
      }
    ]) {
      const [action] = actionsOf(raw);
      expect(isKnownAction(action)).toBe(true);
      expect(action).toEqual(canonical);
    }
    expect(
      actionsOf({ action: 'rewrite_cell', codecell_id: 7, content: 'x = 1' })
    ).toEqual([{ action: 'rewrite_cell', codecell_id: '7', content: 'x = 1' }]);
    expect(errorOf({ action: 'rewrite_cell', content: 'x = 1' })).toBe(
      'rewrite_cell action is missing required field "codecell_id"'
    );
    expect(errorOf({ action: 'rewrite_cell', codecell_id: 'a' })).toBe(
      'rewrite_cell action is missing required field "content"'
    );
  });

  it('offers rewrite_cell as an optional action, a built-in type', () => {
    expect(OPTIONAL_ACTIONS).toEqual(['rewrite_cell']);
    expect(OPTIONAL_ACTIONS.every(name => isActionType(name))).toBe(true);
  });
});

describe('null fields, as a server serialising its whole model sends them', () => {
  it('reads a null optional field of an action as absent', () => {
    expect(
      actionsOf({
        action: 'add',
        shot_type: 'action',
        content: 'x = 1',
        store_id: null,
        metadata: null
      })
    ).toEqual([{ action: 'add', shot_type: 'action', content: 'x = 1' }]);
    expect(
      actionsOf({
        action: 'exec',
        codecell_id: 'lastAddedCellId',
        need_output: null,
        auto_debug: null
      })
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

  it('passes a custom action on as sent, its null fields included', () => {
    expect(
      actionsOf({ action: 'show_table', rows: [{ a: 1, b: null }], note: null })
    ).toEqual([
      { action: 'show_table', rows: [{ a: 1, b: null }], note: null }
    ]);
  });

  it('still names a required field that is null', () => {
    expect(
      errorOf({ action: 'add', shot_type: 'action', content: null })
    ).toMatch(/content/);
  });

  it('reads null descriptions and goals of a template as absent', () => {
    const result = normalizeWorkflowTemplate({
      name: 'W',
      description: null,
      stages: [
        {
          id: 's',
          name: 'S',
          description: null,
          steps: [{ id: 'a', name: 'A', goal: null, expected_outputs: null }]
        }
      ]
    });
    expect(result).toEqual({
      ok: true,
      template: {
        name: 'W',
        stages: [{ id: 's', name: 'S', steps: [{ id: 'a', name: 'A' }] }]
      },
      warnings: []
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
