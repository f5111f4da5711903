import type { PlanningResponse, WorkflowTemplate } from '../../protocol';
import { msg } from '../messages';
import {
  type IPlanningChanges,
  type IRunView,
  locationAfterAdopting,
  planUpdate,
  resolveTransition,
  sameStructure,
  workflowProposal
} from '../run/planUpdate';

const TEMPLATE: WorkflowTemplate = {
  name: 'Analysis',
  stages: [
    {
      id: 'load',
      name: 'Load',
      steps: [
        { id: 'read', name: 'Read' },
        { id: 'check', name: 'Check' }
      ]
    },
    {
      id: 'model',
      name: 'Model',
      steps: [
        { id: 'fit', name: 'Fit', status: 'completed' },
        { id: 'score', name: 'Score' }
      ]
    }
  ]
};

const RENAMED: WorkflowTemplate = {
  ...TEMPLATE,
  stages: TEMPLATE.stages.map(stage => ({ ...stage, name: `${stage.name}!` }))
};

const RESHAPED: WorkflowTemplate = {
  name: 'Other',
  stages: [
    { id: 'explore', name: 'Explore', steps: [{ id: 'plot', name: 'Plot' }] }
  ]
};

const VIEW: IRunView = {
  template: TEMPLATE,
  stageId: 'load',
  stepId: 'read',
  templateFromPlanner: true,
  midBehavior: false
};

function view(over: Partial<IRunView> = {}): IRunView {
  return { ...VIEW, ...over };
}

function answer(over: Partial<PlanningResponse> = {}): PlanningResponse {
  return { targetAchieved: false, ...over };
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
}

const NOTHING: IPlanningChanges = {
  usage: null,
  workflow: null,
  stageSteps: null,
  variables: null,
  progress: [],
  effects: null,
  toDoList: null,
  sectionProgress: null,
  nextBehavior: { goal: null, id: null, outputs: null },
  filter: null,
  transition: null,
  warnings: []
};

describe('planUpdate', () => {
  it('changes nothing but the next behavior and filter for a bare answer', () => {
    expect(planUpdate(VIEW, answer({ targetAchieved: true }))).toEqual(NOTHING);
  });

  it.each<[string, Partial<PlanningResponse>, Partial<IPlanningChanges>]>([
    [
      'usage',
      { usage: { model: 'm', run: { prompt_tokens: 3 } } },
      { usage: { model: 'm', run: { prompt_tokens: 3 } } }
    ],
    [
      'variables',
      { context_update: { variables: { target: 'price' } } },
      { variables: { target: 'price' } }
    ],
    [
      'effects',
      { context_update: { effects_update: { current: ['a'], history: [] } } },
      { effects: { current: ['a'], history: [] } }
    ],
    [
      'a stage’s steps',
      {
        context_update: {
          stage_steps_update: {
            stage_id: 'model',
            steps: [{ id: 'tune', name: 'Tune' }]
          }
        }
      },
      {
        stageSteps: { stageId: 'model', steps: [{ id: 'tune', name: 'Tune' }] }
      }
    ],
    [
      'section progress',
      { context_update: { section_progress: { current_section_number: 2 } } },
      { sectionProgress: { current_section_number: 2 } }
    ],
    [
      'the next behavior’s goal and id',
      { behavior: { id: 'b7', target: 'plot it' } },
      { nextBehavior: { goal: 'plot it', id: 'b7', outputs: null } }
    ],
    [
      'the context filter',
      { context_filter: { variables_to_summarize: { df: 'shape_only' } } },
      { filter: { variables_to_summarize: { df: 'shape_only' } } }
    ],
    [
      'a transition',
      { transition: { next_stage_id: 'model' } },
      { transition: { stageId: 'model', stepId: null } }
    ],
    [
      'actions, which /planning does not run',
      {
        actions: [
          { action: 'add', content: 'x' },
          { action: 'add', content: 'y' }
        ]
      } as Partial<PlanningResponse>,
      { warnings: [msg('planningActionsIgnored', 2)] }
    ]
  ])('reads %s', (_name, given, changes) => {
    expect(planUpdate(VIEW, answer(given))).toEqual({ ...NOTHING, ...changes });
  });

  it.each<[string, string[] | undefined, string, string[], string[]]>([
    ['adds new items', ['a', 'b'], 'add', ['b', 'c'], ['a', 'b', 'c']],
    ['adds to no list', undefined, 'add', ['a'], ['a']],
    ['removes items', ['a', 'b', 'c'], 'remove', ['b'], ['a', 'c']],
    ['replaces the list', ['a'], 'replace', ['x', 'y'], ['x', 'y']]
  ])('%s of the legacy todo list', (_name, list, operation, items, after) => {
    const changes = planUpdate(
      view({ toDoList: list }),
      answer({ context_update: { todo_list_update: { operation, items } } })
    );
    expect(changes.toDoList).toEqual(after);
  });

  it('turns each progress update into a change of its level, in order', () => {
    const changes = planUpdate(
      VIEW,
      answer({
        context_update: {
          progress_update: [
            {
              level: 'steps',
              focus: 'the target',
              assessment: { percent: 40 },
              current_outputs: {
                expected: ['df'],
                produced: ['raw'],
                in_progress: []
              }
            },
            { level: 'stages', focus: '' }
          ]
        }
      })
    );
    expect(changes.progress).toEqual([
      {
        level: 'steps',
        focus: 'the target',
        assessment: { percent: 40 },
        expected: ['df'],
        outputs: { produced: ['raw'], in_progress: [] }
      },
      { level: 'stages', focus: '' }
    ]);
    expect(changes.nextBehavior.outputs).toBeNull();
  });

  const outputs = (expected: string[]) => ({
    expected,
    produced: [],
    in_progress: []
  });

  it.each<[string, string[][], string[] | undefined, string[] | null]>([
    [
      'the plan’s, the last one given',
      [['a'], ['b', 'c']],
      undefined,
      ['b', 'c']
    ],
    ['none when the plan lists none', [[]], undefined, null],
    ['the filter’s alone', [], ['x', 'y'], ['x', 'y']],
    ['none, from an empty filter list', [], [], []],
    [
      'the plan’s joined by the filter’s',
      [['a', 'b']],
      ['b', 'c'],
      ['a', 'b', 'c']
    ]
  ])(
    'plans the next behavior’s outputs: %s',
    (_name, planned, fromFilter, expected) => {
      const changes = planUpdate(
        VIEW,
        answer({
          context_update: {
            progress_update: planned.map(names => ({
              level: 'behaviors' as const,
              current_outputs: outputs(names)
            }))
          },
          context_filter:
            fromFilter === undefined
              ? undefined
              : { outputs_tracking: { expected_variables: fromFilter } }
        })
      );
      expect(changes.nextBehavior.outputs).toEqual(expected);
      // The behaviors' expected names never go to the level's own list.
      expect(changes.progress.some(change => change.expected)).toBe(false);
    }
  );

  it('proposes the workflow of the answer, with the stage to move to', () => {
    const changes = planUpdate(
      view({ template: null, templateFromPlanner: false }),
      answer({
        context_update: {
          workflow_update: { workflowTemplate: TEMPLATE, nextStageId: 'model' }
        }
      })
    );
    expect(changes.workflow).toEqual({
      template: TEMPLATE,
      decision: 'adopt',
      replaces: null,
      templateFromPlanner: true,
      nextStageId: 'model'
    });
  });

  it('writes nothing: the view and the answer are left as they were', () => {
    const given = deepFreeze(
      answer({
        context_update: {
          variables: { a: 1 },
          todo_list_update: { operation: 'add', items: ['z'] },
          progress_update: {
            level: 'behaviors',
            current_outputs: outputs(['a'])
          },
          workflow_update: { workflowTemplate: RESHAPED }
        },
        context_filter: { outputs_tracking: { expected_variables: ['b'] } },
        transition: { next_step_id: 'check' }
      })
    );
    const seen = deepFreeze(view({ toDoList: ['y'] }));
    const changes = planUpdate(seen, given);
    expect(changes.toDoList).toEqual(['y', 'z']);
    expect(changes.nextBehavior.outputs).toEqual(['a', 'b']);
    expect(changes.workflow?.decision).toBe('confirm');
  });
});

describe('workflowProposal', () => {
  it.each<
    [string, Partial<IRunView>, WorkflowTemplate, boolean, string, boolean]
  >([
    [
      'the first template',
      { template: null, templateFromPlanner: false },
      TEMPLATE,
      false,
      'adopt',
      true
    ],
    ['the template the run has', {}, TEMPLATE, false, 'keep', true],
    [
      'the planner’s first, over a saved one',
      { templateFromPlanner: false },
      RESHAPED,
      false,
      'adopt',
      true
    ],
    [
      'a provisional start',
      { template: null, templateFromPlanner: false },
      TEMPLATE,
      true,
      'adopt',
      false
    ],
    ['a later one marked provisional', {}, RESHAPED, true, 'confirm', true],
    [
      'new names on the same stages and steps',
      {},
      RENAMED,
      false,
      'adoptMinor',
      true
    ],
    ['other stages or steps', {}, RESHAPED, false, 'confirm', true]
  ])('%s', (_name, over, template, provisional, decision, fromPlanner) => {
    const proposal = workflowProposal(view(over), template, provisional);
    expect(proposal.decision).toBe(decision);
    expect(proposal.templateFromPlanner).toBe(fromPlanner);
    expect(proposal.replaces).toBe(view(over).template);
  });

  it('tells a change of stages or steps from a change of names', () => {
    expect(sameStructure(TEMPLATE, RENAMED)).toBe(true);
    expect(sameStructure(TEMPLATE, RESHAPED)).toBe(false);
  });
});

describe('locationAfterAdopting', () => {
  it.each<[string, Partial<IRunView>, WorkflowTemplate, unknown]>([
    [
      'a run in no stage starts at the first open step',
      { stageId: null, stepId: null },
      RESHAPED,
      { stageId: 'explore', stepId: 'plot' }
    ],
    ['a run in a stage the template keeps stays', {}, RENAMED, null],
    [
      'a run in a stage the template drops starts over',
      {},
      RESHAPED,
      { stageId: 'explore', stepId: 'plot' }
    ],
    [
      'a behavior under way finishes in its step first',
      { midBehavior: true },
      RESHAPED,
      null
    ],
    [
      'a run in no stage starts even mid-behavior',
      { stageId: null, midBehavior: true },
      RESHAPED,
      { stageId: 'explore', stepId: 'plot' }
    ],
    [
      'a template without stages moves nothing',
      { stageId: null },
      { name: 'empty', stages: [] },
      null
    ]
  ])('%s', (_name, over, template, location) => {
    expect(locationAfterAdopting(view(over), template)).toEqual(location);
  });
});

describe('resolveTransition', () => {
  it.each<
    [
      string,
      Partial<IRunView>,
      { stageId: string | null; stepId: string | null } | null,
      unknown,
      unknown[]
    ]
  >([
    ['no transition: the normal order', {}, null, null, []],
    [
      'another stage, at its first open step',
      {},
      { stageId: 'model', stepId: null },
      { stageId: 'model', stepId: 'score' },
      []
    ],
    [
      'another stage’s step',
      {},
      { stageId: 'model', stepId: 'fit' },
      { stageId: 'model', stepId: 'fit' },
      []
    ],
    [
      'a step found by its id alone',
      {},
      { stageId: null, stepId: 'score' },
      { stageId: 'model', stepId: 'score' },
      []
    ],
    [
      'another step of the current stage',
      {},
      { stageId: null, stepId: 'check' },
      { stageId: 'load', stepId: 'check' },
      []
    ],
    [
      'the current step: the normal order',
      {},
      { stageId: 'load', stepId: 'read' },
      null,
      []
    ],
    [
      'the current stage alone: the normal order',
      {},
      { stageId: 'load', stepId: null },
      null,
      []
    ],
    [
      'an unknown stage',
      {},
      { stageId: 'nope', stepId: 'read' },
      null,
      [msg('unknownNextStage', 'nope')]
    ],
    [
      'an unknown step',
      {},
      { stageId: null, stepId: 'nope' },
      null,
      [msg('unknownNextStep', 'nope')]
    ],
    [
      'a step the current stage lacks',
      {},
      { stageId: 'load', stepId: 'score' },
      null,
      [msg('stepNotInCurrentStage', 'score', 'load')]
    ],
    [
      'a step another stage lacks: its first open step',
      {},
      { stageId: 'model', stepId: 'read' },
      { stageId: 'model', stepId: 'score' },
      [msg('stepNotInStage', 'read', 'model')]
    ],
    [
      'any name, before a template',
      { template: null },
      { stageId: 'model', stepId: null },
      null,
      [msg('unknownNextStage', 'model')]
    ]
  ])('%s', (_name, over, request, target, problems) => {
    expect(resolveTransition(view(over), request)).toEqual({
      target,
      problems
    });
  });
});
