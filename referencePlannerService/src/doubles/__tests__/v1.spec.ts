/**
 * The v1 double (docs/dialects.md#test-doubles): its routes, its stream as the published server writes
 * it, and a whole run whose code is executed.
 */

import { postJson, rawRequest } from '../../__tests__/helpers';
import { PythonCells } from './python';
import {
  Json,
  ENTRY,
  CH1,
  DISCOVERY,
  COLUMNS,
  TASK_VARIABLES,
  state,
  servedV1Double
} from './v1Double';

describe('v1 test double', () => {
  const double = servedV1Double();

  describe('routes', () => {
    it('serves /v2/health and /v1/generate, and 404s everything else with FastAPI’s body', async () => {
      const health = await fetch(`${double.server.url}/v2/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: 'ok' });

      for (const path of ['/planning', '/generating', '/generate', '/health']) {
        const res = await postJson(`${double.server.url}${path}`, {});
        expect(res.status).toBe(404);
        expect(res.text).toBe('{"detail":"Not Found"}');
      }

      const choices = await double.json('/v1/generate', {
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
      const other = await double.json('/v1/generate', {
        issue: 'summarise',
        context: 'x'
      });
      expect(other.body.message).toEqual([
        { type: 'text', content: expect.any(String), context: 'x' }
      ]);
    });

    it('allows any origin and answers preflights', async () => {
      const preflight = await rawRequest(`${double.server.url}/v1/actions`, {
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
      const res = await fetch(`${double.server.url}/v2/health`, {
        headers: { Origin: 'http://example.org' }
      });
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
    });

    it('records the requests it received at GET /__requests', async () => {
      await double.json('/v1/reflection', { ...ENTRY, state: {} });
      await postJson(`${double.server.url}/planning`, { a: 1 });
      const res = await fetch(`${double.server.url}/__requests`);
      const recorded = (await res.json()) as Json[];
      expect(recorded.map(r => [r.method, r.path, r.status])).toEqual([
        ['POST', '/v1/reflection', 200],
        ['POST', '/planning', 404]
      ]);
      expect(recorded[0].body).toEqual({ ...ENTRY, state: {} });
      expect(double.server.requests()).toHaveLength(2);
    });
  });

  describe('the stream', () => {
    it('is NDJSON sent as application/json, chunked, header first, ASCII only, lines ~10 ms apart', async () => {
      const res = await double.stream({ ...ENTRY, state: state() });
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
      const res = await double.stream({ ...ENTRY, state: state() });
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

  describe('other', () => {
    it('accepts step_index in full or bare form', async () => {
      const full = await double.stream({
        stage_id: CH1,
        step_index: DISCOVERY,
        state: state()
      });
      const bare = await double.stream({
        stage_id: CH1,
        step_index: 'section_2_data_structure_discovery',
        state: state()
      });
      expect(bare.text).toBe(full.text);
    });

    it('stream: false returns the sequence object; broken for chapters after the entry one', async () => {
      const entry = await double.json('/v1/actions', {
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
      const broken = await double.json('/v1/actions', {
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
        (await double.json('/v1/reflection', { ...ENTRY, state: s })).body;
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
      const noState = await double.json('/v1/reflection', { ...ENTRY });
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
        const res = await double.stream({
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
          const reflection = await double.json('/v1/reflection', {
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
      const paths = double.server.requests().map(r => r.path);
      expect(paths.filter(p => p === '/v1/actions')).toHaveLength(
        counts.reduce((sum, [, n]) => sum + n, 0)
      );
    }, 60000);
  });
});
