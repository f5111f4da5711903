/**
 * The bcc room's fixture: the answers a bcc server gives (XML and JSON), the engine's requests, and a
 * scripted server of two stages whose reflections and generations a test chooses (docs/dialects.md#bcc).
 */

import type { GeneratingEvent } from '../../actionStream';
import {
  progressUpdatesOf,
  type PlanningRequestInput,
  type PlanningResponse,
  type ProgressUpdate
} from '../../schemas';
import type { IPlannerRequest } from '../../transport';
import { BccAdapter } from '../bcc/adapter';
import { collect, FakeTransport, text } from './fakeTransport';

export const STAGES = `<stages><remaining>
  <stage id="sales_data_check" title="Sales Data Check">
    <goal>Load sales.csv. Artifacts: sales_df; Acceptance: len(sales_df) > 0.</goal>
    <verified_artifacts><variable name="sales_df">DataFrame with 4 columns</variable></verified_artifacts>
    <required_variables><variable name="user_submit_files">uploaded CSV</variable><variable name="nowhere">x</variable></required_variables></stage>
  <stage id="revenue_forecast" title="Revenue Forecast" optional><goal>Forecast, MAPE < 10%.</goal></stage>
</remaining><focus>Keep MAPE < 10% & explain each region.</focus></stages>`;

export const STEPS = `<step id="load_sales" title="Load"><goal>Read the file</goal><verified_artifacts><variable name="sales_df">df</variable></verified_artifacts></step>
<step id="check_sales" title="Check"><goal>Check it</goal></step><focus>be careful</focus><goals>Load then check</goals>`;

export const STEPS2 = `<steps><step id="forecast" title="Forecast"><goal>Fit</goal></step></steps>`;

export const behavior = (id: string, step: string) =>
  `<behavior id="${id}" step_id="${step}"><agent>Explore-Agent</agent><task>Read data/sales.csv into sales_df.</task>
  <inputs><variable name="path">data/sales.csv</variable></inputs>
  <outputs><artifact name="sales_df">the loaded DataFrame</artifact></outputs><acceptance><criterion>len(sales_df) > 0</criterion></acceptance></behavior>`;

export const REFLECT_RUNNING = `<reflection current_step_is_complete="false"><decision><next_state>STEP_RUNNING</next_state><reasoning>print the shape</reasoning></decision>
  <context_for_next><variables_produced><variable name="sales_df" value="DataFrame 240x4">loaded</variable></variables_produced>
    <recommendations_for_next><if_continuing_behavior>Print sales_df.shape.</if_continuing_behavior></recommendations_for_next></context_for_next>
  <outputs_tracking_update><produced/><in_progress><artifact>sales_df</artifact></in_progress><remaining/></outputs_tracking_update></reflection>`;

export const REFLECT_DONE = `<reflection current_step_is_complete="false"><new_variable><save_current_effect name="shape_text"/></new_variable><decision><next_state>STATE_Step_Completed</next_state></decision></reflection>`;

export const STAGE_NOT_DONE = `<stage_reflection stage_is_complete="false"><step_evaluation><step_summary step_id="load_sales" completion_status="done">ok</step_summary></step_evaluation>
<stage_assessment><stage_progress completed_steps="1" remaining_steps="1" progress_percentage="50"/></stage_assessment>
<decision><next_state>STEP_RUNNING</next_state></decision>
<context_for_next><if_continuing_stage><next_step_id>check_sales</next_step_id><next_step_focus>Check nulls</next_step_focus>
<variables_to_carry_forward><variable name="rows" value="240"/></variables_to_carry_forward></if_continuing_stage></context_for_next></stage_reflection>`;

export const STAGE_DONE = `<stage_reflection stage_is_complete="false"><progress percentage="100"/><stage_goal_review needs_update="true" proposed_goal="Load and check sales"/><decision><next_state>STAGE_COMPLETED</next_state></decision><outputs_update><produced><artifact>sales_df</artifact></produced></outputs_update></stage_reflection>`;

export const GENERATED = JSON.stringify(
  [
    { action: { type: 'update_title', content: 'Sales' } },
    { action: { type: 'new_section', content: 'Sales Data Check' } },
    { action: { type: 'new_step', content: 'Reading' } },
    { action: { type: 'add', shot_type: 'markdown', content: 'We load.' } },
    { action: { type: 'add', shot_type: 'action', content: 'print(1)' } },
    {
      action: {
        type: 'exec',
        codecell_id: 'lastAddedCellId',
        need_output: true
      }
    },
    { type: 'add-text', content: 'bare' },
    { note: 'no action here' }
  ],
  null,
  2
);

export function fsmOf(request: IPlannerRequest): string {
  const body = request.body as { state: { FSM: { state: string } } };
  return body.state.FSM.state;
}

export function engineRequest(
  stage: string | null,
  step: string | null,
  feedback = false
): PlanningRequestInput {
  const body: PlanningRequestInput = {
    observation: {
      location: { current: { stage_id: stage, step_id: step } },
      context: {
        variables: {
          problem_description: 'Predict revenue',
          data_files: ['data/sales.csv'],
          sales_df: 'DataFrame(240×4)'
        },
        effects: { current: ['(240, 4)'], history: [] },
        notebook: { title: 'n', cell_count: 3 }
      }
    }
  };
  if (feedback) {
    body.behavior_feedback = {
      actions_executed: 2,
      last_action_result: 'success'
    };
  }
  return body;
}

export function actionsOf(events: GeneratingEvent[]) {
  return events.flatMap(e => (e.kind === 'action' ? [e.action] : []));
}

/** The `progress_update` entries of an answer, by level. */
export function levelsOf(
  response: PlanningResponse
): Partial<Record<string, ProgressUpdate>> {
  return Object.fromEntries(
    progressUpdatesOf(response.context_update).map(e => [e.level, e])
  );
}

/** The run's start (stages, steps, the first behavior planned) and that behavior's /generating. */
export async function runFirstBehavior(service: BccAdapter): Promise<void> {
  await service.planning(engineRequest(null, null));
  await collect(
    service.generating(engineRequest('sales_data_check', 'load_sales'))
  );
}

/** A server with two stages of two steps whose reflections and generations the test scripts. */
export function scripted(
  reflect: (req: IPlannerRequest) => Response,
  generate: () => Response = () => text(GENERATED, 200, 'application/json')
) {
  let behaviors = 0;
  return new FakeTransport(req => {
    if (req.path === 'generating') {
      return generate();
    }
    if (req.path === 'reflecting') {
      return reflect(req);
    }
    switch (fsmOf(req)) {
      case 'IDLE':
        return text(STAGES);
      case 'STAGE_RUNNING':
        return text(
          (req.body as any).observation.location.progress.stages.current
            .stage_id === 'sales_data_check'
            ? STEPS
            : `<steps><step id="forecast" title="Forecast"><goal>Fit</goal></step><step id="explain" title="Explain"><goal>Say</goal></step></steps>`,
          200,
          'application/xml'
        );
      default:
        behaviors++;
        return text(behavior(`b${behaviors}`, 'load_sales'));
    }
  });
}
