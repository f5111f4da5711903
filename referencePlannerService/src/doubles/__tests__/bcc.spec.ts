import { linesOf, postJson } from '../../__tests__/helpers';
import { BCC_SCENARIOS, startBccDouble } from '../bcc';
import type { IRunningDoubleServer } from '../http';
import { PythonCells } from './python';

type Json = Record<string, unknown>;

const STAGES: Record<string, { title: string; steps: string[] }> = {
  sales_data_check: {
    title: 'Sales Data Check',
    steps: ['load_sales', 'check_quality']
  },
  revenue_summary: {
    title: 'Revenue Summary',
    steps: ['revenue_by_region', 'monthly_trend']
  }
};

interface IPosition {
  stage?: string;
  step?: string;
  behavior?: string;
  completedBehaviors?: string[];
  effects?: string[];
}

/** A request body as the BCC client sends it: the plan objects in progress, the sibling `state`. */
function bccBody(fsm: string, position: IPosition = {}): Json {
  const stage = position.stage && {
    stage_id: position.stage,
    title: STAGES[position.stage]?.title ?? position.stage,
    goal: 'the stage goal',
    verified_artifacts: { sales_df: 'the data' }
  };
  const step = position.step && {
    step_id: position.step,
    title: position.step,
    goal: 'the step goal',
    verified_artifacts: {},
    required_variables: {},
    pcs_considerations: {}
  };
  const behavior = position.behavior && {
    behavior_id: position.behavior,
    step_id: position.step,
    agent: 'Explore-Agent',
    task: 'the task',
    inputs: {},
    outputs: {},
    acceptance: []
  };
  return {
    observation: {
      location: {
        current: {},
        progress: {
          stages: { completed: [], current: stage ?? null, remaining: [] },
          steps: { completed: [], current: step ?? null, remaining: [] },
          behaviors: {
            completed: (position.completedBehaviors ?? []).map(id => ({
              behavior_id: id,
              step_id: position.step,
              completion_status: 'success'
            })),
            current: behavior ?? null,
            remaining: []
          }
        },
        goals: 'Split the problem into stages.'
      }
    },
    state: {
      variables: {
        user_problem: 'Summarise revenue per region',
        user_submit_files: ['data/sales.csv']
      },
      effects: { current: position.effects ?? [], history: [] },
      notebook: { notebook_id: 'nb', title: 'Sales', cell_count: 0, cells: [] },
      FSM: {
        state: fsm,
        last_transition: 'START_WORKFLOW',
        timestamp: '2025-01-01T00:00:00Z'
      }
    },
    options: { stream: fsm === 'BEHAVIOR_RUNNING' },
    notebook_id: 'nb'
  };
}

const STEP_1 = { stage: 'sales_data_check', step: 'load_sales' };

describe('bcc test double', () => {
  let server: IRunningDoubleServer;

  async function start(scenario?: string): Promise<void> {
    await server?.close();
    server = await startBccDouble({
      port: 0,
      log: null,
      scenario,
      lineDelayMs: 0
    });
  }

  async function post(
    path: string,
    body: unknown
  ): Promise<{ status: number; type: string; text: string }> {
    const res = await postJson(`${server.url}${path}`, body);
    return {
      status: res.status,
      type: String(res.headers['content-type']),
      text: res.text
    };
  }

  afterEach(async () => {
    await server?.close();
  });

  describe('routes and validation', () => {
    beforeEach(() => start());

    it('404s other paths', async () => {
      for (const path of ['/v1/actions', '/generate', '/health', '/plan']) {
        const res = await post(path, bccBody('IDLE'));
        expect(res.status).toBe(404);
        expect(JSON.parse(res.text)).toEqual({ detail: 'Not Found' });
      }
    });

    it('422s a body without state, an unknown FSM state, missing plan objects or the wrong endpoint', async () => {
      const cases: Array<[string, unknown]> = [
        ['/planning', { observation: {} }],
        ['/planning', 'text'],
        ['/planning', bccBody('DANCING')],
        ['/planning', bccBody('STAGE_RUNNING')],
        ['/planning', bccBody('STEP_RUNNING', { stage: 'sales_data_check' })],
        ['/generating', bccBody('BEHAVIOR_RUNNING', STEP_1)],
        ['/generating', bccBody('IDLE')],
        ['/reflecting', bccBody('IDLE')],
        ['/planning', bccBody('BEHAVIOR_COMPLETED', STEP_1)],
        ['/planning', bccBody('STAGE_RUNNING', { stage: 'no_such_stage' })]
      ];
      for (const [path, body] of cases) {
        const res = await post(path, body);
        expect([path, res.status]).toEqual([path, 422]);
        expect(typeof JSON.parse(res.text).detail).toBe('string');
      }
    });

    it('records the requests at GET /__requests', async () => {
      await post('/planning', bccBody('IDLE'));
      const recorded = (await (
        await fetch(`${server.url}/__requests`)
      ).json()) as Json[];
      expect(recorded).toHaveLength(1);
      expect(recorded[0]).toMatchObject({
        method: 'POST',
        path: '/planning',
        status: 200,
        body: { state: { FSM: { state: 'IDLE' } } }
      });
    });
  });

  describe('/planning', () => {
    it('answers IDLE with malformed <stages> as application/xml in the recorded scenario', async () => {
      await start('recorded');
      const res = await post('/planning', bccBody('IDLE'));
      expect(res.status).toBe(200);
      expect(res.type).toBe('application/xml; charset=utf-8');
      expect(res.text).toMatch(
        /^<stages>\s*<remaining>\s*<stage id="sales_data_check"/
      );
      expect(res.text).toContain(
        '<stage id="revenue_summary" title="Revenue Summary" optional>'
      );
      expect(res.text).toContain('regions & revenue');
      expect(res.text).toContain('revenue < 5000');
      expect(res.text).toMatch(
        /<\/remaining>\s*<focus>.*<\/focus>\s*<\/stages>$/
      );
      expect(res.text).toContain(
        '<verified_artifacts><variable name="sales_df">'
      );
    });

    it('uses text/plain in other scenarios', async () => {
      await start('ndjson');
      const res = await post('/planning', bccBody('IDLE'));
      expect(res.type).toBe('text/plain; charset=utf-8');
    });

    it('answers STAGE_RUNNING with <steps> without a wrapper, with <focus> and <goals>', async () => {
      await start();
      const res = await post(
        '/planning',
        bccBody('STAGE_RUNNING', { stage: 'revenue_summary' })
      );
      expect(res.text).not.toContain('<remaining>');
      expect(res.text).toMatch(
        /^<steps>\s*<step id="revenue_by_region" title="Revenue by Region">/
      );
      expect(res.text).toContain('<step id="monthly_trend"');
      expect(res.text).toMatch(
        /<focus>[^<]+<\/focus>\s*<goals>Total revenue per region\.<\/goals>\s*<\/steps>$/
      );
      expect(res.text).toContain('<pcs_considerations><predictability>');
    });

    it('answers STEP_RUNNING with the next <behavior> of the step', async () => {
      await start();
      const first = await post('/planning', bccBody('STEP_RUNNING', STEP_1));
      expect(first.text).toMatch(
        /^<behavior id="load_sales_b1" step_id="load_sales">/
      );
      expect(first.text).toContain('<agent>Explore-Agent</agent>');
      expect(first.text).toContain('<task behavior_id="load_sales_b1">');
      expect(first.text).toContain('<outputs><artifact name="sales_df">');
      expect(first.text).toContain('len(sales_df) > 0');
      const second = await post(
        '/planning',
        bccBody('STEP_RUNNING', {
          ...STEP_1,
          completedBehaviors: ['load_sales_b1']
        })
      );
      expect(second.text).toMatch(/^<behavior id="load_sales_b2"/);
      expect(second.text).toContain('<whathappened>');
    });

    it('has a <workflow>-root scenario, a truncated one and a mismatched closing tag', async () => {
      await start('workflow');
      const workflow = await post('/planning', bccBody('IDLE'));
      expect(workflow.text).toMatch(
        /^<workflow>\s*<title>Sales revenue review<\/title>\s*<description>[^<]+<\/description>\s*<stages>/
      );
      expect(workflow.text).toMatch(/<\/stages>\s*<\/workflow>$/);

      await start('truncated');
      const truncated = await post('/planning', bccBody('IDLE'));
      expect(truncated.text).toMatch(/<focus>Keep it short & chec$/);
      expect(truncated.text).not.toContain('</stages>');

      await start('mismatched-tag');
      const mismatched = await post(
        '/planning',
        bccBody('STEP_RUNNING', STEP_1)
      );
      expect(mismatched.text).toMatch(
        /<task behavior_id="load_sales_b1">[^<]*<\/tsak>/
      );
    });
  });

  describe('/generating', () => {
    const generatingBody = bccBody('BEHAVIOR_RUNNING', {
      ...STEP_1,
      behavior: 'load_sales_b1'
    });

    it('answers a pretty-printed JSON array as application/json in the recorded scenario', async () => {
      await start('recorded');
      const res = await post('/generating', generatingBody);
      expect(res.type).toBe('application/json');
      expect(res.text.startsWith('[\n')).toBe(true);
      const items = JSON.parse(res.text) as Json[];
      const wrapped = items
        .filter(item => 'action' in item)
        .map(item => item.action as Json);
      const bare = items.filter(item => !('action' in item));
      expect(wrapped.map(a => a.type)).toEqual([
        'update_title',
        'new_section',
        'new_step',
        'add',
        'add',
        'exec'
      ]);
      expect(wrapped[1].content).toBe('Sales Data Check');
      expect(wrapped[2].content).toBe('Load Sales Data');
      expect(wrapped[3].shot_type).toBe('markdown');
      expect(wrapped[4].shot_type).toBe('action');
      expect(wrapped[4].content).toContain('pd.read_csv("data/sales.csv")');
      expect(wrapped[5]).toEqual({
        type: 'exec',
        codecell_id: 'lastAddedCellId',
        need_output: true
      });
      expect(bare).toEqual([
        { type: 'add', shot_type: 'markdown', content: expect.any(String) }
      ]);
    });

    it('answers NDJSON with one bare line in the ndjson scenario', async () => {
      await start('ndjson');
      const res = await post('/generating', generatingBody);
      const lines = linesOf(res.text).map(line => JSON.parse(line) as Json);
      expect(lines.filter(line => !('action' in line))).toEqual([
        { type: 'add', shot_type: 'markdown', content: expect.any(String) }
      ]);
      expect(lines.filter(line => 'action' in line)).toHaveLength(6);
    });

    it('writes the second behavior’s code so that it prints the marker, without the marker in its text', async () => {
      await start();
      const res = await post(
        '/generating',
        bccBody('BEHAVIOR_RUNNING', { ...STEP_1, behavior: 'load_sales_b2' })
      );
      const items = JSON.parse(res.text) as Json[];
      const code = items
        .map(item => item.action as Json | undefined)
        .find(a => a?.shot_type === 'action')?.content as string;
      expect(code).not.toContain('BCC-DONE:load_sales');
      expect(code).toContain('print("BCC" + "-DONE:load_sales")');
      expect(items.map(item => (item.action as Json).type)).toEqual([
        'add',
        'add',
        'exec'
      ]);
    });
  });

  describe('/reflecting', () => {
    it('at BEHAVIOR_COMPLETED: false with variables_produced and in_progress until the marker is in effects.current', async () => {
      await start('recorded');
      const early = await post(
        '/reflecting',
        bccBody('BEHAVIOR_COMPLETED', { ...STEP_1, effects: ['(240, 4)\n'] })
      );
      expect(early.type).toBe('application/xml; charset=utf-8');
      expect(early.text).toMatch(
        /^<reflection current_step_is_complete="false">/
      );
      expect(early.text).toContain('<next_state>STEP_RUNNING</next_state>');
      expect(early.text).toContain(
        '<variables_produced><variable name="sales_df" value="created">'
      );
      expect(early.text).toContain(
        '<in_progress><artifact>sales_df</artifact></in_progress>'
      );
      expect(early.text).toContain('<if_continuing_behavior>');

      const done = await post(
        '/reflecting',
        bccBody('BEHAVIOR_COMPLETED', {
          ...STEP_1,
          effects: ["{'month': 'object'}\nBCC-DONE:load_sales\n"]
        })
      );
      expect(done.text).toMatch(
        /^<reflection current_step_is_complete="true">/
      );
      expect(done.text).toContain('<next_state>STEP_COMPLETED</next_state>');
      expect(done.text).toContain(
        '<produced><artifact>sales_df</artifact></produced>'
      );
      expect(done.text).toContain(
        '<save_current_effect name="load_sales_output"/>'
      );
    });

    it('at STEP_COMPLETED: the stage goes on with next_step_id, and completes after its last step (payload layout)', async () => {
      await start('recorded');
      const middle = await post(
        '/reflecting',
        bccBody('STEP_COMPLETED', STEP_1)
      );
      expect(middle.text).toMatch(
        /^<stage_reflection stage_is_complete="false">/
      );
      expect(middle.text).toContain(
        '<next_step_id>check_quality</next_step_id>'
      );
      expect(middle.text).toContain('<next_state>STEP_RUNNING</next_state>');
      expect(middle.text).toContain(
        '<step_summary><step_id>load_sales</step_id>'
      );
      expect(middle.text).toContain(
        '<stage_progress><completed_steps>1</completed_steps>'
      );
      expect(middle.text).toContain('<outputs_tracking_update><stage_level>');
      expect(middle.text).toContain(
        '<stage_experience_variable from="load_sales">'
      );
      expect(middle.text).toContain('<pcs_alignment_check>');

      const last = await post(
        '/reflecting',
        bccBody('STEP_COMPLETED', {
          stage: 'sales_data_check',
          step: 'check_quality'
        })
      );
      expect(last.text).toMatch(/^<stage_reflection stage_is_complete="true">/);
      expect(last.text).toContain('<next_state>STAGE_COMPLETED</next_state>');
      expect(last.text).not.toContain('<next_step_id>');
    });

    it('variant: the last stage is complete after its first step, while a step remains', async () => {
      await start('short-last-stage');
      const first = await post(
        '/reflecting',
        bccBody('STEP_COMPLETED', STEP_1)
      );
      expect(first.text).toMatch(
        /^<stage_reflection stage_is_complete="false">/
      );
      const short = await post(
        '/reflecting',
        bccBody('STEP_COMPLETED', {
          stage: 'revenue_summary',
          step: 'revenue_by_region'
        })
      );
      expect(short.text).toMatch(
        /^<stage_reflection stage_is_complete="true">/
      );
      expect(short.text).toContain('<next_state>STAGE_COMPLETED</next_state>');
      expect(short.text).not.toContain('<next_step_id>');
      expect(short.text).toContain(
        '<remaining><artifact>monthly_revenue</artifact></remaining>'
      );
    });

    it('uses the prompt layout in other scenarios', async () => {
      await start('ndjson');
      const reflection = await post(
        '/reflecting',
        bccBody('BEHAVIOR_COMPLETED', STEP_1)
      );
      expect(reflection.text).toContain(
        '<next_state>STATE_Step_Running</next_state>'
      );
      const stage = await post(
        '/reflecting',
        bccBody('STEP_COMPLETED', STEP_1)
      );
      expect(stage.text).toContain('<progress><completed>1</completed>');
      expect(stage.text).toContain('<outputs_update>');
      expect(stage.text).toContain('<goal_status>partial</goal_status>');
      expect(stage.text).toContain('<stage_experience from="load_sales">');
      expect(stage.text).toContain('<pcs_check>');
      expect(stage.text).not.toContain('<stage_level>');
    });

    it('variant: /reflecting 404 and /planning serves the reflections', async () => {
      await start('reflect-on-planning');
      const missing = await post(
        '/reflecting',
        bccBody('BEHAVIOR_COMPLETED', STEP_1)
      );
      expect(missing.status).toBe(404);
      expect(JSON.parse(missing.text)).toEqual({ detail: 'Not Found' });
      const reflection = await post(
        '/planning',
        bccBody('BEHAVIOR_COMPLETED', STEP_1)
      );
      expect(reflection.text).toMatch(
        /^<reflection current_step_is_complete="false">/
      );
      const stage = await post('/planning', bccBody('STEP_COMPLETED', STEP_1));
      expect(stage.text).toMatch(
        /^<stage_reflection stage_is_complete="false">/
      );
    });

    it('variant: the NDJSON reflection form', async () => {
      await start('ndjson-reflection');
      const types = async (body: Json): Promise<unknown[]> =>
        linesOf((await post('/reflecting', body)).text).map(
          line => (JSON.parse(line) as { action: Json }).action.type
        );
      expect(await types(bccBody('BEHAVIOR_COMPLETED', STEP_1))).toEqual([
        'add-text',
        'complete_reflection'
      ]);
      expect(
        await types(
          bccBody('BEHAVIOR_COMPLETED', {
            ...STEP_1,
            effects: ['BCC-DONE:load_sales\n']
          })
        )
      ).toEqual(['add-text', 'mark_step_complete', 'complete_reflection']);
      expect(await types(bccBody('STEP_COMPLETED', STEP_1))).toEqual([
        'add-text',
        'complete_reflection'
      ]);
      expect(
        await types(
          bccBody('STEP_COMPLETED', {
            stage: 'sales_data_check',
            step: 'check_quality'
          })
        )
      ).toEqual(['add-text', 'mark_stage_complete', 'complete_reflection']);
    });
  });

  describe('a whole run with the code executed', () => {
    let python: PythonCells;

    beforeEach(() => {
      python = new PythonCells();
    });

    afterEach(() => python.close());

    it.each(BCC_SCENARIOS.map(s => s.name))(
      'scenario %s: 2 stages x 2 steps, each step done once its marker is fed back',
      async scenario => {
        await start(scenario);
        const spec = BCC_SCENARIOS.find(s => s.name === scenario);
        const reflectPath =
          spec?.reflecting === 'on-planning' ? '/planning' : '/reflecting';
        const idle = await post('/planning', bccBody('IDLE'));
        const stageIds = [...idle.text.matchAll(/<stage id="(\w+)"/g)].map(
          m => m[1]
        );
        expect(stageIds).toEqual(Object.keys(STAGES));
        const completedSteps: string[] = [];
        for (const stage of stageIds) {
          const steps = await post(
            '/planning',
            bccBody('STAGE_RUNNING', { stage })
          );
          const stepIds = [...steps.text.matchAll(/<step id="(\w+)"/g)].map(
            m => m[1]
          );
          expect(stepIds).toEqual(STAGES[stage].steps);
          let stepIndex = 0;
          for (;;) {
            const step = stepIds[stepIndex];
            const done: string[] = [];
            let effects: string[] = [];
            for (let n = 0; n < 4; n++) {
              const behavior = await post(
                '/planning',
                bccBody('STEP_RUNNING', {
                  stage,
                  step,
                  completedBehaviors: done
                })
              );
              const behaviorId =
                /<behavior id="(\w+)"/.exec(behavior.text)?.[1] ?? '';
              const generated = await post(
                '/generating',
                bccBody('BEHAVIOR_RUNNING', {
                  stage,
                  step,
                  behavior: behaviorId,
                  completedBehaviors: done
                })
              );
              const items = generated.text.trimStart().startsWith('[')
                ? (JSON.parse(generated.text) as Json[])
                : linesOf(generated.text).map(line => JSON.parse(line) as Json);
              effects = [];
              let code = '';
              for (const item of items) {
                const action = (item.action ?? item) as Json;
                if (action.type === 'add' && action.shot_type === 'action') {
                  code = String(action.content);
                }
                if (action.type === 'exec') {
                  const output = await python.run(code);
                  expect(output).not.toContain('Traceback');
                  effects.push(output);
                }
              }
              done.push(behaviorId);
              const reflection = await post(
                reflectPath,
                bccBody('BEHAVIOR_COMPLETED', {
                  stage,
                  step,
                  effects,
                  completedBehaviors: done
                })
              );
              if (
                reflection.text.includes('current_step_is_complete="true"') ||
                reflection.text.includes('"mark_step_complete"')
              ) {
                break;
              }
            }
            expect(done).toEqual([`${step}_b1`, `${step}_b2`]);
            expect(effects.join('')).toMatch(
              new RegExp(`BCC-DONE:${step}\\n$`)
            );
            completedSteps.push(step);
            const stageReflection = await post(
              reflectPath,
              bccBody('STEP_COMPLETED', { stage, step })
            );
            if (
              stageReflection.text.includes('stage_is_complete="true"') ||
              stageReflection.text.includes('"mark_stage_complete"')
            ) {
              break;
            }
            const next = /<next_step_id>(\w+)<\/next_step_id>/.exec(
              stageReflection.text
            )?.[1];
            stepIndex = next ? stepIds.indexOf(next) : stepIndex + 1;
          }
        }
        expect(completedSteps).toEqual([
          'load_sales',
          'check_quality',
          'revenue_by_region',
          ...(spec?.shortLastStage ? [] : ['monthly_trend'])
        ]);
        const revenue = await python.run(
          'print(round(float(region_revenue.sum()), 2))'
        );
        expect(Number(revenue)).toBeGreaterThan(0);
        const states = server
          .requests()
          .map(
            r =>
              ((r.body as Json).state as { FSM: { state: string } }).FSM.state
          );
        expect(states.slice(0, 6)).toEqual([
          'IDLE',
          'STAGE_RUNNING',
          'STEP_RUNNING',
          'BEHAVIOR_RUNNING',
          'BEHAVIOR_COMPLETED',
          'STEP_RUNNING'
        ]);
      },
      60000
    );
  });
});
