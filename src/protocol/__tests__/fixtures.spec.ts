/**
 * Every JSON example of the spec documents, kept in fixtures/ (comments removed, `...` placeholders
 * filled with valid values), parsed with the schema it exemplifies.
 */
import { readdirSync, readFileSync } from 'fs';
import { join } from 'path';
import { z } from 'zod';

import {
  ActionMetadataSchema,
  ActionSchema,
  ContextFilterSchema,
  ContextUpdateSchema,
  GeneratingBatchSchema,
  GeneratingLineSchema,
  GeneratingRequestSchema,
  NdjsonLineSplitter,
  normalizeAction,
  normalizeGeneratingRequest,
  normalizePlanningRequest,
  normalizePlanningResponse,
  ObservationContextSchema,
  ObservationLocationSchema,
  PlanningRequestSchema,
  PlanningResponseSchema,
  ProgressSchema
} from '..';
import { unknownKeys } from './unknownKeys';

const FIXTURES = join(__dirname, 'fixtures');

function load(name: string): unknown {
  return JSON.parse(readFileSync(join(FIXTURES, name), 'utf-8'));
}

function expectParses(
  schema: z.ZodType,
  value: unknown,
  allowedExtras: string[] = []
): void {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new Error(z.prettifyError(result.error));
  }
  expect(unknownKeys(schema, value).sort()).toEqual([...allowedExtras].sort());
}

function expectAction(raw: unknown): void {
  expectParses(ActionSchema, raw);
  const normalized = normalizeAction(raw);
  expect(normalized).toEqual({
    ok: true,
    actions: [ActionSchema.parse(raw)],
    warnings: []
  });
}

type Check = (value: unknown) => void;

const action: Check = expectAction;
const actions: Check = value => {
  expect(Array.isArray(value)).toBe(true);
  (value as unknown[]).forEach(expectAction);
};
const planningRequest =
  (extras: string[] = []): Check =>
  value => {
    expectParses(PlanningRequestSchema, value, extras);
    const normalized = normalizePlanningRequest(value);
    expect(normalized.ok).toBe(true);
  };
const generatingRequest: Check = value => {
  expectParses(GeneratingRequestSchema, value);
  expect(normalizeGeneratingRequest(value).ok).toBe(true);
};
const planningResponse: Check = value => {
  expectParses(PlanningResponseSchema, value);
  const normalized = normalizePlanningResponse(value);
  expect(normalized).toMatchObject({ ok: true, warnings: [] });
};
const contextUpdate: Check = value => {
  const { context_update } = value as { context_update: unknown };
  expectParses(ContextUpdateSchema, context_update);
  const normalized = normalizePlanningResponse({
    targetAchieved: false,
    ...(value as object)
  });
  expect(normalized).toMatchObject({ ok: true, warnings: [] });
  expect(normalized.ok && normalized.response.context_update).toEqual(
    ContextUpdateSchema.parse(context_update)
  );
};
/** A fragment of a context filter (`"effects_config": {...}`) or a whole `{context_filter}`. */
const contextFilter: Check = value => {
  const filter =
    (value as { context_filter?: unknown }).context_filter ?? value;
  expectParses(ContextFilterSchema, filter);
};
const locationPart: Check = value =>
  expectParses(ObservationLocationSchema, value);
const progressPart: Check = value =>
  expectParses(ProgressSchema, value, outputsExtras(value));
const contextPart: Check = value =>
  expectParses(ObservationContextSchema, value);

/** OBSERVATION_PROTOCOL's completed items carry free-form findings next to variables and artifacts. */
function outputsExtras(value: unknown): string[] {
  const extras: Record<string, string[]> = {
    stages: ['stages.completed.outputs_produced.key_findings'],
    steps: [
      'steps.completed.outputs_produced.modified_features',
      'steps.completed.outputs_produced.validation'
    ],
    behaviors: ['behaviors.completed.outputs_produced.findings']
  };
  return Object.keys(value as object).flatMap(level => extras[level] ?? []);
}

const fixtureChecks: Record<string, Check> = {
  // ACTION_PROTOCOL.md
  'action__action-metadata.json': value =>
    expectParses(ActionMetadataSchema, value),
  'action__add-example.json': action,
  'action__add-format.json': action,
  'action__end-phase-format.json': action,
  'action__exec-example.json': action,
  'action__exec-format.json': action,
  'action__finish-thinking-format.json': action,
  'action__is-thinking-example.json': action,
  'action__is-thinking-format.json': action,
  'action__new-chapter-example.json': action,
  'action__new-chapter-format.json': action,
  'action__new-section-example.json': action,
  'action__new-section-format.json': action,
  'action__next-event-format.json': action,
  // The notebook part of this older example lists cells and metadata.
  'action__pomdp-payload.json': planningRequest([
    'observation.context.notebook.cells',
    'observation.context.notebook.metadata'
  ]),
  'action__shot-type-examples.json': actions,
  'action__typical-workflow-sequence.json': actions,
  'action__update-stage-steps-format.json': action,
  'action__update-title-example.json': action,
  'action__update-title-format.json': action,
  'action__update-workflow-format.json': action,
  // API_PROTOCOL.md
  'api__common-request-structure.json': generatingRequest,
  'api__context-filter-effects-config.json': contextFilter,
  'api__context-filter-focus-to-include.json': contextFilter,
  'api__context-filter-outputs-tracking.json': contextFilter,
  'api__context-filter-structure.json': contextFilter,
  'api__context-filter-usage-example__generating-payload.json':
    generatingRequest,
  'api__context-filter-usage-example__planning-response.json': planningResponse,
  'api__context-filter-variables-to-summarize.json': contextFilter,
  'api__context-update-effects.json': contextUpdate,
  'api__context-update-progress-focus.json': contextUpdate,
  'api__context-update-stage-steps.json': value => {
    // The example's steps have no name: the normaliser uses the id, the canonical schema needs one.
    const normalized = normalizePlanningResponse({
      targetAchieved: false,
      ...(value as object)
    });
    expect(normalized).toMatchObject({ ok: true, warnings: [] });
    expect(
      normalized.ok && normalized.response.context_update?.stage_steps_update
    ).toEqual({
      stage_id: 'data_analysis',
      steps: [
        { id: 'step1', name: 'step1', description: 'Load data' },
        { id: 'step2', name: 'step2', description: 'Preprocess' }
      ]
    });
  },
  'api__context-update-variables.json': contextUpdate,
  'api__context-update-workflow.json': contextUpdate,
  'api__feedback-api-request.json': planningRequest(),
  'api__feedback-api-response.json': planningResponse,
  'api__generating-api-non-streamed-response.json': value => {
    expectParses(GeneratingBatchSchema, value);
    actions((value as { actions: unknown[] }).actions);
  },
  'api__generating-api-request.json': generatingRequest,
  'api__planning-api-request.json': planningRequest(),
  'api__planning-api-response.json': planningResponse,
  // ARCHITECTURE.md (superseded; accepted through normalisation)
  'architecture__request-payload.json': value => {
    const normalized = normalizePlanningRequest(value);
    if (!normalized.ok) {
      throw new Error(normalized.error);
    }
    const { observation } = normalized.request;
    expect(observation.location.current).toEqual({
      stage_id: 'chapter_3_data_insight',
      step_id: 'section_1_workflow_initialization',
      behavior_id: 'behavior_003',
      behavior_iteration: 3
    });
    expect(observation.context?.toDoList).toEqual([
      'Section 2: 数据状态评估',
      'Section 3: 变量定义'
    ]);
    expect(observation.context?.effects?.history).toEqual([
      '{"action":"load_data","result":"success"}'
    ]);
    expect(observation.context?.section_progress?.current_section_number).toBe(
      2
    );
    expect(normalized.request.behavior_feedback).toMatchObject({
      actions_executed: 5,
      last_action_result: 'success'
    });
  },
  'architecture__response-payload.json': value => {
    const normalized = normalizePlanningResponse(value);
    expect(normalized).toMatchObject({ ok: true, warnings: [] });
    if (!normalized.ok) {
      return;
    }
    const { response } = normalized;
    expect(response.targetAchieved).toBe(false);
    // The document's `next_stage_id: null` reads as no next stage named.
    expect(response.transition).toEqual({
      continue_behaviors: true,
      target_achieved: false,
      strategy: 'server_controlled'
    });
    expect(response.actions).toEqual([
      {
        action: 'add',
        shot_type: 'dialogue',
        content: '## Section 2: 数据状态评估',
        metadata: {
          is_section: true,
          section_id: 'data_assessment',
          section_number: 2
        }
      },
      { action: 'add', shot_type: 'action', content: 'data.info()' }
    ]);
    expect(response.context_update?.todo_list_update).toEqual({
      operation: 'remove',
      items: ['Section 2: 数据状态评估']
    });
    expect(response.context_update?.section_progress?.current_section_id).toBe(
      'variable_definition'
    );
    expect(response.behavior?.id).toBe('behavior_004');
    expect(response.metadata?.estimated_remaining_behaviors).toBe(2);
  },
  // OBSERVATION_PROTOCOL.md
  'observation__context-effects.json': contextPart,
  'observation__context-filter-effects-config.json': contextFilter,
  'observation__context-filter-focus-to-include.json': contextFilter,
  'observation__context-filter-outputs-tracking.json': contextFilter,
  'observation__context-filter-variables-to-include.json': contextFilter,
  'observation__context-filter-variables-to-summarize.json': contextFilter,
  'observation__context-fsm.json': contextPart,
  'observation__context-notebook.json': contextPart,
  'observation__context-variables.json': contextPart,
  'observation__full-planning-response.json': planningResponse,
  'observation__goals.json': locationPart,
  'observation__location-current.json': locationPart,
  'observation__progress-behaviors.json': progressPart,
  'observation__progress-stages.json': progressPart,
  'observation__progress-steps.json': progressPart,
  'observation__top-level-structure.json': generatingRequest,
  'observation__workflow-generating-payload.json': generatingRequest,
  'observation__workflow-planning-request.json': planningRequest(),
  'observation__workflow-planning-response.json': planningResponse
};

const STREAMS = [
  'api__generating-api-streamed-response.ndjson',
  'api__ndjson-stream-format.ndjson',
  'api__server-streamed-response.ndjson'
];

describe('spec fixtures', () => {
  it('has a check for every fixture file', () => {
    const files = readdirSync(FIXTURES).sort();
    expect(files).toEqual([...Object.keys(fixtureChecks), ...STREAMS].sort());
  });

  it.each(Object.keys(fixtureChecks))('%s parses', name => {
    fixtureChecks[name](load(name));
  });

  it.each(STREAMS)('%s: every line is a wrapped, valid action', name => {
    const splitter = new NdjsonLineSplitter();
    const bytes = readFileSync(join(FIXTURES, name));
    const lines = [
      ...splitter.push(new Uint8Array(bytes)),
      ...splitter.flush()
    ];
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const line of lines) {
      const parsed = GeneratingLineSchema.parse(JSON.parse(line));
      expectAction(parsed.action);
    }
  });

  it('notices keys a schema does not declare (so a loose schema cannot hide a stray fixture)', () => {
    expect(
      unknownKeys(ActionSchema, {
        action: 'exec',
        codecell_id: 'c',
        need_outptu: false
      })
    ).toEqual(['need_outptu']);
    expect(
      unknownKeys(PlanningResponseSchema, {
        targetAchieved: true,
        context_filter: { effects_config: { current_limt: 3 } }
      })
    ).toEqual(['context_filter.effects_config.current_limt']);
  });

  it('keeps the example values after parsing (not just "no error")', () => {
    const request = PlanningRequestSchema.parse(
      load('api__common-request-structure.json')
    );
    expect(request.observation.location.progress?.steps?.current).toBe('step2');
    expect(
      request.observation.location.progress?.behaviors?.current_outputs
    ).toEqual({
      expected: ['df_working', 'imputation_log'],
      produced: [],
      in_progress: []
    });
    const exec = ActionSchema.parse(load('action__exec-example.json'));
    expect(exec).toEqual({
      action: 'exec',
      codecell_id: 'code-1',
      need_output: true,
      auto_debug: false,
      keep_debug_button_visible: false
    });
  });
});
