import { linesOf, postJson, rawRequest } from '../../__tests__/helpers';
import type { IRunningDoubleServer } from '../http';
import { startV1Double } from '../v1';
import { PythonCells } from './python';

type Json = Record<string, unknown>;

const ENTRY = {
  stage_id: 'chapter_0_planning',
  step_index: 'section_1_design_workflow'
};
const CH1 = 'chapter_1_data_existence_establishment';
const CH2 = 'chapter_2_revenue_exploration';
const DISCOVERY = `${CH1}_section_2_data_structure_discovery`;
const COLUMNS = "['month', 'region', 'units', 'revenue']\n";

const TASK_VARIABLES = {
  user_goal: 'Predict next month’s revenue per region 📈',
  problem_description: 'Monthly sales by region; predict revenue.',
  csv_file_path: 'data/sales.csv',
  context_description: 'data/sales.csv, 240 x 4',
  problem_name: 'Revenue per region'
};

function state(
  variables: Json = TASK_VARIABLES,
  toDoList: string[] = [],
  current: string[] = []
): Json {
  return {
    variables,
    toDoList,
    effect: { current, history: [] },
    checklist: { current: [], completed: [] },
    thinking: [],
    stageStatus: {}
  };
}

interface IStream {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  header: Json;
  actions: Json[];
  /** Arrival time (ms from the first chunk) of each line. */
  arrivals: number[];
}

describe('v1 test double', () => {
  let server: IRunningDoubleServer;

  async function stream(body: Json): Promise<IStream> {
    const stamps: number[] = [];
    let firstAt = 0;
    const res = await rawRequest(`${server.url}/v1/actions`, {
      body: JSON.stringify({ stream: true, ...body }),
      onChunk: chunk => {
        const now = Date.now();
        firstAt ||= now;
        const lines = chunk.toString('utf8').split('\n').length - 1;
        for (let i = 0; i < lines; i++) {
          stamps.push(now - firstAt);
        }
      }
    });
    const parsed = linesOf(res.text).map(line => JSON.parse(line) as Json);
    return {
      status: res.status,
      headers: res.headers,
      text: res.text,
      header: parsed[0] ?? {},
      actions: parsed.slice(1).map(line => line.action as Json),
      arrivals: stamps
    };
  }

  async function json(
    path: string,
    body: unknown
  ): Promise<{ status: number; body: Json }> {
    const res = await postJson(`${server.url}${path}`, body);
    return { status: res.status, body: JSON.parse(res.text) as Json };
  }

  beforeEach(async () => {
    server = await startV1Double({ port: 0, log: null });
  });

  afterEach(async () => {
    await server?.close();
  });

  describe('routes', () => {
    it('serves /v2/health and /v1/generate, and 404s everything else with FastAPI’s body', async () => {
      const health = await fetch(`${server.url}/v2/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: 'ok' });

      for (const path of ['/planning', '/generating', '/generate', '/health']) {
        const res = await postJson(`${server.url}${path}`, {});
        expect(res.status).toBe(404);
        expect(res.text).toBe('{"detail":"Not Found"}');
      }

      const choices = await json('/v1/generate', {
        issue: 'generate_question_choice_map',
        context: {}
      });
      expect(choices.body.status).toBe('success');
      expect(choices.body.message).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            target: 'revenue',
            problem_description: expect.any(String),
            problem_name: expect.any(String)
          })
        ])
      );
      const other = await json('/v1/generate', {
        issue: 'summarise',
        context: 'x'
      });
      expect(other.body.message).toEqual([
        { type: 'text', content: expect.any(String), context: 'x' }
      ]);
    });

    it('allows any origin and answers preflights', async () => {
      const preflight = await rawRequest(`${server.url}/v1/actions`, {
        method: 'OPTIONS',
        headers: {
          Origin: 'http://localhost:8888',
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'content-type,x-custom'
        }
      });
      expect(preflight.status).toBe(200);
      expect(preflight.headers['access-control-allow-origin']).toBe('*');
      expect(preflight.headers['access-control-allow-methods']).toContain(
        'POST'
      );
      expect(preflight.headers['access-control-allow-headers']).toBe(
        'content-type,x-custom'
      );
      const res = await fetch(`${server.url}/v2/health`, {
        headers: { Origin: 'http://example.org' }
      });
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
    });

    it('records the requests it received at GET /__requests', async () => {
      await json('/v1/reflection', { ...ENTRY, state: {} });
      await postJson(`${server.url}/planning`, { a: 1 });
      const res = await fetch(`${server.url}/__requests`);
      const recorded = (await res.json()) as Json[];
      expect(recorded.map(r => [r.method, r.path, r.status])).toEqual([
        ['POST', '/v1/reflection', 200],
        ['POST', '/planning', 404]
      ]);
      expect(recorded[0].body).toEqual({ ...ENTRY, state: {} });
      expect(server.requests()).toHaveLength(2);
    });
  });

  describe('the stream', () => {
    it('is NDJSON sent as application/json, chunked, header first, ASCII only, lines ~10 ms apart', async () => {
      const res = await stream({ ...ENTRY, state: state() });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.headers['transfer-encoding']).toBe('chunked');
      expect(res.headers['content-length']).toBeUndefined();
      expect(res.header).toEqual({
        header: { stage_id: 'chapter_0_planning', step: null, next_step: null }
      });
      expect(res.text.endsWith('}\n')).toBe(true);
      expect(/^[\x20-\x7e\n]*$/.test(res.text)).toBe(true);
      expect(res.text).toContain('\\ud83d\\udcc8');
      expect(res.text).toContain('\\u2019');
      expect(res.text).not.toContain('end_phase');
      const lines = res.arrivals.length;
      expect(lines).toBe(res.actions.length + 1);
      // Ten lines at least 10 ms apart, plus the 30 ms `delay` of one add.
      expect(res.arrivals[lines - 1]).toBeGreaterThanOrEqual(
        (lines - 1) * 10 * 0.8 + 30
      );
      const delayed = res.actions.findIndex(a => a.delay === 30);
      expect(delayed).toBeGreaterThan(0);
      expect(
        res.arrivals[delayed + 1] - res.arrivals[delayed]
      ).toBeGreaterThanOrEqual(35);
    });

    it('spells fields as the server does and puts the type under `action`', async () => {
      const res = await stream({ ...ENTRY, state: state() });
      for (const action of res.actions) {
        expect(typeof action.action).toBe('string');
        expect(action).not.toHaveProperty('type');
        expect(action).not.toHaveProperty('shot_type');
        expect(action).not.toHaveProperty('need_output');
      }
      const thinking = res.actions.find(a => a.action === 'is_thinking');
      expect(thinking).toMatchObject({
        shotType: 'thinking',
        textArray: expect.any(Array),
        agentName: expect.any(String),
        customText: expect.anything()
      });
      expect(res.actions.find(a => a.action === 'exec')).toMatchObject({
        codecell_id: 'lastAddedCellId'
      });
      expect(
        res.actions.find(a => a.action === 'set_effect_as_thinking')
      ).toMatchObject({ thinkingText: expect.any(String) });
    });
  });

  describe('progress driven by toDoList', () => {
    it('runs a step behavior by behavior and captures effect.current[0] as a variable', async () => {
      const first = await stream({
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

      const second = await stream({
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
      const reflection = await json('/v1/reflection', {
        stage_id: CH1,
        step_index: DISCOVERY,
        state: secondState
      });
      expect(reflection.body.targetAchieved).toBe(false);

      const third = await stream({
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
      const done = await json('/v1/reflection', {
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
      const res = await stream({
        stage_id: CH1,
        step_index: DISCOVERY,
        state: state()
      });
      for (const action of res.actions) {
        expect((action.state as Json).toDoList).toEqual(['read_columns']);
      }
    });

    it('without an output, an after-exec handler names itself and the missing list and drops its event', async () => {
      const res = await stream({
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
        const res = await stream({
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
        const reflection = await json('/v1/reflection', {
          stage_id: stageId,
          step_index: stepIndex,
          state: echoed
        });
        expect(reflection.body.targetAchieved).toBe(true);
      }
    );

    it('asks for a variable it was told a step requires (--require-variable), like the late steps of the published server', async () => {
      await server.close();
      server = await startV1Double({
        port: 0,
        log: null,
        requirements: [
          {
            section: 'section_2_data_structure_discovery',
            name: 'target_variable'
          }
        ]
      });
      const ask = (variables: Json) =>
        stream({
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
      const res = await stream({
        ...ENTRY,
        state: {
          ...state({ ...TASK_VARIABLES, user_goal: '' }),
          user_goal: 'from the top level'
        }
      });
      expect(res.actions.map(a => a.action)).toContain('update_workflow');
    });
  });

  describe('the entry step and section 1', () => {
    it('runs the whole entry chain at once, with two execs, ending with update_workflow', async () => {
      const res = await stream({ ...ENTRY, state: state() });
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
      const first = await stream({
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
      const second = await stream({
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

  describe('errors', () => {
    it('422 with a string detail for a null or absent stage_id / step_index on /v1/actions', async () => {
      expect(
        await json('/v1/actions', { step_index: 'x', stage_id: null })
      ).toEqual({
        status: 422,
        body: { detail: 'stage_id cannot be null' }
      });
      expect(await json('/v1/actions', { stage_id: CH1 })).toEqual({
        status: 422,
        body: { detail: 'step_index cannot be null' }
      });
    });

    it('422 with a FastAPI list for bad JSON or wrong types', async () => {
      const notJson = await rawRequest(`${server.url}/v1/actions`, {
        body: '{"stage_id":'
      });
      expect(notJson.status).toBe(422);
      expect(JSON.parse(notJson.text).detail[0]).toMatchObject({
        type: 'json_invalid',
        loc: ['body', 0]
      });
      const wrong = await json('/v1/actions', { ...ENTRY, state: [] });
      expect(wrong.status).toBe(422);
      expect(wrong.body.detail).toEqual([
        expect.objectContaining({
          loc: ['body', 'state'],
          msg: expect.any(String)
        })
      ]);
    });

    it('422 with a list detail on /v1/reflection without ids', async () => {
      const res = await json('/v1/reflection', { state: {} });
      expect(res.status).toBe(422);
      expect(res.body.detail).toEqual([
        {
          type: 'missing',
          loc: ['body', 'stage_id'],
          msg: 'Field required',
          input: { state: {} }
        },
        {
          type: 'missing',
          loc: ['body', 'step_index'],
          msg: 'Field required',
          input: { state: {} }
        }
      ]);
    });

    it('404 for an unknown stage, 400 with the available list for an unknown section', async () => {
      expect(
        await json('/v1/actions', {
          stage_id: 'chapter_9_nowhere',
          step_index: 'x'
        })
      ).toEqual({
        status: 404,
        body: { detail: 'Stage chapter_9_nowhere not found' }
      });
      const unknown = await json('/v1/actions', {
        stage_id: CH1,
        step_index: 'section_9_nothing'
      });
      expect(unknown).toEqual({
        status: 400,
        body: {
          detail:
            "Step section_9_nothing not found in stage chapter_1_data_existence_establishment. Available steps: ['section_1_workflow_initialization', 'section_2_data_structure_discovery', 'section_3_variable_semantic_analysis', 'section_4_data_preview_report']"
        }
      });
      const integer = await json('/v1/actions', {
        stage_id: CH1,
        step_index: 2
      });
      expect(integer.status).toBe(400);
    });

    it('404 "Sequence for section … not found" from a step set up to raise on its n-th behavior, and from a step without code', async () => {
      await server.close();
      server = await startV1Double({
        port: 0,
        log: null,
        failures: [{ section: 'section_2_data_structure_discovery', nth: 2 }]
      });
      const first = await stream({
        stage_id: CH1,
        step_index: DISCOVERY,
        state: state()
      });
      expect(first.status).toBe(200);
      const second = await json('/v1/actions', {
        stage_id: CH1,
        step_index: DISCOVERY,
        state: {
          ...(first.actions[0].state as Json),
          effect: { current: [COLUMNS], history: [] }
        }
      });
      expect(second).toEqual({
        status: 404,
        body: {
          detail:
            'Sequence for section section_2_data_structure_discovery not found'
        }
      });
      const noCode = await json('/v1/actions', {
        stage_id: CH1,
        step_index: 'section_4_data_preview_report',
        state: state()
      });
      expect(noCode).toEqual({
        status: 404,
        body: {
          detail: 'Sequence for section section_4_data_preview_report not found'
        }
      });
    });
  });

  describe('other', () => {
    it('accepts step_index in full or bare form', async () => {
      const full = await stream({
        stage_id: CH1,
        step_index: DISCOVERY,
        state: state()
      });
      const bare = await stream({
        stage_id: CH1,
        step_index: 'section_2_data_structure_discovery',
        state: state()
      });
      expect(bare.text).toBe(full.text);
    });

    it('stream: false returns the sequence object; broken for chapters after the entry one', async () => {
      const entry = await json('/v1/actions', {
        ...ENTRY,
        stream: false,
        state: state()
      });
      expect(entry.status).toBe(200);
      expect(entry.body).toMatchObject({
        stage_id: 'chapter_0_planning',
        step: {
          id: 'chapter_0_planning',
          stepId: expect.any(String),
          icon: expect.any(String)
        },
        sequence: {
          chapter_id: 'chapter_0_planning',
          section_id: 'section_1_design_workflow',
          next_section: null
        },
        next_step: null
      });
      const steps = (entry.body.sequence as Json).steps as Json[];
      expect(steps[steps.length - 1].action).toBe('update_workflow');

      const requestState = state(TASK_VARIABLES, ['read_columns'], [COLUMNS]);
      const broken = await json('/v1/actions', {
        stage_id: CH1,
        step_index: DISCOVERY,
        stream: false,
        state: requestState
      });
      expect(broken.status).toBe(200);
      expect(broken.body.next_step).toBe(2);
      expect((broken.body.sequence as Json).steps).toEqual([
        {
          action: 'text',
          content: expect.stringMatching(/^<coroutine object /)
        }
      ]);
      expect(broken.body.state).toEqual(requestState);
    });

    it('/v1/reflection computes only whether toDoList is empty, and echoes the state', async () => {
      const ask = async (s: Json) =>
        (await json('/v1/reflection', { ...ENTRY, state: s })).body;
      expect(await ask({})).toMatchObject({ targetAchieved: false, state: {} });
      expect((await ask({ variables: {} })).targetAchieved).toBe(true);
      expect((await ask(state())).targetAchieved).toBe(true);
      const pending = state(TASK_VARIABLES, ['read_columns']);
      expect(await ask(pending)).toEqual({
        status: 'received',
        message: 'Feedback processed',
        targetAchieved: false,
        state: pending
      });
      const noState = await json('/v1/reflection', { ...ENTRY });
      expect(noState.body.targetAchieved).toBe(false);
    });
  });

  describe('a whole run with the code executed', () => {
    let python: PythonCells;

    beforeEach(() => {
      python = new PythonCells();
    });

    afterEach(() => python.close());

    it('walks the entry step, then every step of both chapters, feeding exec outputs back', async () => {
      let stored: Json = state({ ...TASK_VARIABLES });
      let effect = { current: [] as string[], history: [] as string[] };
      const behaviorsPerStep: Record<string, number> = {};

      async function behavior(
        stageId: string,
        stepId: string
      ): Promise<Json[]> {
        const res = await stream({
          stage_id: stageId,
          step_index: stepId,
          state: { ...stored, effect }
        });
        expect(res.status).toBe(200);
        effect = {
          current: [],
          history: [...effect.history, ...effect.current]
        };
        let lastCode = '';
        for (const action of res.actions) {
          if (action.state) {
            stored = action.state as Json;
          }
          if (action.action === 'add' && action.shotType === 'action') {
            lastCode = String(action.content);
          }
          if (action.action === 'exec') {
            const output = await python.run(lastCode);
            expect(output).not.toContain('Traceback');
            effect.current.push(output);
          }
        }
        behaviorsPerStep[stepId] = (behaviorsPerStep[stepId] ?? 0) + 1;
        return res.actions;
      }

      async function runStep(stageId: string, stepId: string): Promise<Json[]> {
        const all: Json[] = [];
        for (let n = 0; n < 6; n++) {
          all.push(...(await behavior(stageId, stepId)));
          const reflection = await json('/v1/reflection', {
            stage_id: stageId,
            step_index: stepId,
            state: { ...stored, effect }
          });
          if (reflection.body.targetAchieved) {
            return all;
          }
        }
        throw new Error(`step ${stepId} never finished`);
      }

      const entry = await runStep(ENTRY.stage_id, ENTRY.step_index);
      expect(effect.current).toEqual([
        expect.stringMatching(/^pandas \d/),
        'goal: Predict next month’s revenue per region 📈\n'
      ]);
      const template = (entry[entry.length - 1].updated_workflow as Json)
        .workflowTemplate as {
        stages: Array<{ id: string; steps: Array<{ id: string }> }>;
      };
      for (const stage of template.stages) {
        let steps = stage.steps.map(s => s.id);
        for (let i = 0; i < steps.length; i++) {
          const actions = await runStep(stage.id, steps[i]);
          const update = actions.find(a => a.action === 'update_stage_steps');
          if (update) {
            steps = (update.updated_steps as Json[]).map(s => String(s.id));
          }
          expect(actions.some(a => /\['\w+'\]$/.test(String(a.content)))).toBe(
            false
          );
        }
      }
      const variables = stored.variables as Json;
      expect(variables.column_names).toBe(
        "['month', 'region', 'units', 'revenue']"
      );
      expect(variables.data_shape).toBe('240 rows x 4 columns');
      expect(variables.region_values).toBe(
        "['Central', 'East', 'North', 'South', 'West']"
      );
      expect(variables.revenue_by_region).toMatch(/^\{'Central': \d/);
      expect(variables.monthly_trend).toMatch(/^48 months, best 20\d\d-\d\d$/);
      expect(variables.final_summary).toMatch(
        /^mean monthly revenue \d+\.\d\d$/
      );
      expect(stored.current_workflow).toBeDefined();
      const counts = Object.entries(behaviorsPerStep);
      expect(counts).toHaveLength(7);
      for (const [step, count] of counts) {
        if (step !== ENTRY.step_index) {
          expect(count).toBeGreaterThanOrEqual(2);
          expect(count).toBeLessThanOrEqual(5);
        }
      }
      const paths = server.requests().map(r => r.path);
      expect(paths.filter(p => p === '/v1/actions')).toHaveLength(
        counts.reduce((sum, [, n]) => sum + n, 0)
      );
    }, 60000);
  });
});
