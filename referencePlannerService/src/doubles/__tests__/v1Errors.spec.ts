/**
 * The v1 double's errors (docs/dialects.md#v1-errors): 422, 404 and 400 as the published server answers
 * them, and a step that fails on cue.
 */

import { rawRequest } from '../../__tests__/helpers';
import {
  Json,
  ENTRY,
  CH1,
  DISCOVERY,
  COLUMNS,
  state,
  servedV1Double
} from './v1Double';

describe('v1 test double', () => {
  const double = servedV1Double();

  describe('errors', () => {
    it('422 with a string detail for a null or absent stage_id / step_index on /v1/actions', async () => {
      expect(
        await double.json('/v1/actions', { step_index: 'x', stage_id: null })
      ).toEqual({
        status: 422,
        body: { detail: 'stage_id cannot be null' }
      });
      expect(await double.json('/v1/actions', { stage_id: CH1 })).toEqual({
        status: 422,
        body: { detail: 'step_index cannot be null' }
      });
    });

    it('422 with a FastAPI list for bad JSON or wrong types', async () => {
      const notJson = await rawRequest(`${double.server.url}/v1/actions`, {
        body: '{"stage_id":'
      });
      expect(notJson.status).toBe(422);
      expect(JSON.parse(notJson.text).detail[0]).toMatchObject({
        type: 'json_invalid',
        loc: ['body', 0]
      });
      const wrong = await double.json('/v1/actions', { ...ENTRY, state: [] });
      expect(wrong.status).toBe(422);
      expect(wrong.body.detail).toEqual([
        expect.objectContaining({
          loc: ['body', 'state'],
          msg: expect.any(String)
        })
      ]);
    });

    it('422 with a list detail on /v1/reflection without ids', async () => {
      const res = await double.json('/v1/reflection', { state: {} });
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
        await double.json('/v1/actions', {
          stage_id: 'chapter_9_nowhere',
          step_index: 'x'
        })
      ).toEqual({
        status: 404,
        body: { detail: 'Stage chapter_9_nowhere not found' }
      });
      const unknown = await double.json('/v1/actions', {
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
      const integer = await double.json('/v1/actions', {
        stage_id: CH1,
        step_index: 2
      });
      expect(integer.status).toBe(400);
    });

    it('404 "Sequence for section … not found" from a step set up to raise on its n-th behavior, and from a step without code', async () => {
      await double.restart({
        failures: [{ section: 'section_2_data_structure_discovery', nth: 2 }]
      });
      const first = await double.stream({
        stage_id: CH1,
        step_index: DISCOVERY,
        state: state()
      });
      expect(first.status).toBe(200);
      const second = await double.json('/v1/actions', {
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
      const noCode = await double.json('/v1/actions', {
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
});
