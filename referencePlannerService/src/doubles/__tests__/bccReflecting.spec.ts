/**
 * The bcc double's reflections (docs/dialects.md#test-doubles): "complete" only when the exec output
 * marker came back, both stage-reflection layouts, and the scenarios without `/reflecting`.
 */

import { linesOf } from '../../__tests__/helpers';
import { Json, bccBody, STEP_1, servedBccDouble } from './bccDouble';

describe('bcc test double', () => {
  const double = servedBccDouble();

  describe('/reflecting', () => {
    it('at BEHAVIOR_COMPLETED: false with variables_produced and in_progress until the marker is in effects.current', async () => {
      await double.start('recorded');
      const early = await double.post(
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

      const done = await double.post(
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
      await double.start('recorded');
      const middle = await double.post(
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

      const last = await double.post(
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
      await double.start('short-last-stage');
      const first = await double.post(
        '/reflecting',
        bccBody('STEP_COMPLETED', STEP_1)
      );
      expect(first.text).toMatch(
        /^<stage_reflection stage_is_complete="false">/
      );
      const short = await double.post(
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
      await double.start('ndjson');
      const reflection = await double.post(
        '/reflecting',
        bccBody('BEHAVIOR_COMPLETED', STEP_1)
      );
      expect(reflection.text).toContain(
        '<next_state>STATE_Step_Running</next_state>'
      );
      const stage = await double.post(
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
      await double.start('reflect-on-planning');
      const missing = await double.post(
        '/reflecting',
        bccBody('BEHAVIOR_COMPLETED', STEP_1)
      );
      expect(missing.status).toBe(404);
      expect(JSON.parse(missing.text)).toEqual({ detail: 'Not Found' });
      const reflection = await double.post(
        '/planning',
        bccBody('BEHAVIOR_COMPLETED', STEP_1)
      );
      expect(reflection.text).toMatch(
        /^<reflection current_step_is_complete="false">/
      );
      const stage = await double.post(
        '/planning',
        bccBody('STEP_COMPLETED', STEP_1)
      );
      expect(stage.text).toMatch(
        /^<stage_reflection stage_is_complete="false">/
      );
    });

    it('variant: the NDJSON reflection form', async () => {
      await double.start('ndjson-reflection');
      const types = async (body: Json): Promise<unknown[]> =>
        linesOf((await double.post('/reflecting', body)).text).map(
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
});
