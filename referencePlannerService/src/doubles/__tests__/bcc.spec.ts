/**
 * The bcc double (docs/dialects.md#test-doubles): its routes and the bodies it validates, its planning
 * and generating answers in each scenario, and a whole run whose code is executed.
 */

import { linesOf } from '../../__tests__/helpers';
import { BCC_SCENARIOS } from '../bcc';
import { PythonCells } from './python';
import { Json, STAGES, bccBody, STEP_1, servedBccDouble } from './bccDouble';

describe('bcc test double', () => {
  const double = servedBccDouble();

  describe('routes and validation', () => {
    beforeEach(() => double.start());

    it('404s other paths', async () => {
      for (const path of ['/v1/actions', '/generate', '/health', '/plan']) {
        const res = await double.post(path, bccBody('IDLE'));
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
        const res = await double.post(path, body);
        expect([path, res.status]).toEqual([path, 422]);
        expect(typeof JSON.parse(res.text).detail).toBe('string');
      }
    });

    it('records the requests at GET /__requests', async () => {
      await double.post('/planning', bccBody('IDLE'));
      const recorded = (await (
        await fetch(`${double.server.url}/__requests`)
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
      await double.start('recorded');
      const res = await double.post('/planning', bccBody('IDLE'));
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
      await double.start('ndjson');
      const res = await double.post('/planning', bccBody('IDLE'));
      expect(res.type).toBe('text/plain; charset=utf-8');
    });

    it('answers STAGE_RUNNING with <steps> without a wrapper, with <focus> and <goals>', async () => {
      await double.start();
      const res = await double.post(
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
      await double.start();
      const first = await double.post(
        '/planning',
        bccBody('STEP_RUNNING', STEP_1)
      );
      expect(first.text).toMatch(
        /^<behavior id="load_sales_b1" step_id="load_sales">/
      );
      expect(first.text).toContain('<agent>Explore-Agent</agent>');
      expect(first.text).toContain('<task behavior_id="load_sales_b1">');
      expect(first.text).toContain('<outputs><artifact name="sales_df">');
      expect(first.text).toContain('len(sales_df) > 0');
      const second = await double.post(
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
      await double.start('workflow');
      const workflow = await double.post('/planning', bccBody('IDLE'));
      expect(workflow.text).toMatch(
        /^<workflow>\s*<title>Sales revenue review<\/title>\s*<description>[^<]+<\/description>\s*<stages>/
      );
      expect(workflow.text).toMatch(/<\/stages>\s*<\/workflow>$/);

      await double.start('truncated');
      const truncated = await double.post('/planning', bccBody('IDLE'));
      expect(truncated.text).toMatch(/<focus>Keep it short & chec$/);
      expect(truncated.text).not.toContain('</stages>');

      await double.start('mismatched-tag');
      const mismatched = await double.post(
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
      await double.start('recorded');
      const res = await double.post('/generating', generatingBody);
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
      await double.start('ndjson');
      const res = await double.post('/generating', generatingBody);
      const lines = linesOf(res.text).map(line => JSON.parse(line) as Json);
      expect(lines.filter(line => !('action' in line))).toEqual([
        { type: 'add', shot_type: 'markdown', content: expect.any(String) }
      ]);
      expect(lines.filter(line => 'action' in line)).toHaveLength(6);
    });

    it('writes the second behavior’s code so that it prints the marker, without the marker in its text', async () => {
      await double.start();
      const res = await double.post(
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

  describe('a whole run with the code executed', () => {
    let python: PythonCells;

    beforeEach(() => {
      python = new PythonCells();
    });

    afterEach(() => python.close());

    it.each(BCC_SCENARIOS.map(s => s.name))(
      'scenario %s: 2 stages x 2 steps, each step done once its marker is fed back',
      async scenario => {
        await double.start(scenario);
        const spec = BCC_SCENARIOS.find(s => s.name === scenario);
        const reflectPath =
          spec?.reflecting === 'on-planning' ? '/planning' : '/reflecting';
        const idle = await double.post('/planning', bccBody('IDLE'));
        const stageIds = [...idle.text.matchAll(/<stage id="(\w+)"/g)].map(
          m => m[1]
        );
        expect(stageIds).toEqual(Object.keys(STAGES));
        const completedSteps: string[] = [];
        for (const stage of stageIds) {
          const steps = await double.post(
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
              const behavior = await double.post(
                '/planning',
                bccBody('STEP_RUNNING', {
                  stage,
                  step,
                  completedBehaviors: done
                })
              );
              const behaviorId =
                /<behavior id="(\w+)"/.exec(behavior.text)?.[1] ?? '';
              const generated = await double.post(
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
              const reflection = await double.post(
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
            const stageReflection = await double.post(
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
        const states = double.server
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
