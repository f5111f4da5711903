/** The requests, server states and event filters the v1 adapter's tests share. */
import type { GeneratingEvent } from '../../actionStream';
import type { PlanningRequestInput } from '../../schemas';
import type { IPlannerRequest } from '../../transport';
import { json, ndjson } from './fakeTransport';

export const STAGE = 'chapter_1_data_existence_establishment';
export const STEP = `${STAGE}_section_2_data_structure_discovery`;

export function request(
  stage: string | null,
  step: string | null,
  options: {
    feedback?: boolean;
    current?: string[];
    history?: string[];
    variables?: Record<string, unknown>;
  } = {}
): PlanningRequestInput {
  const body: PlanningRequestInput = {
    observation: {
      location: { current: { stage_id: stage, step_id: step } },
      context: {
        variables: options.variables ?? {
          problem_description: 'Predict revenue',
          csv_file_path: 'data/sales.csv',
          sales_df: 'DataFrame(240×4)'
        },
        effects: {
          current: options.current ?? [],
          history: options.history ?? []
        }
      }
    }
  };
  if (options.feedback) {
    body.behavior_feedback = {
      actions_executed: 1,
      last_action_result: 'success'
    };
  }
  return body;
}

export function state(toDoList: string[], extra: Record<string, unknown> = {}) {
  return {
    variables: { user_goal: 'Predict revenue', column_names: 'x' },
    toDoList,
    effect: { current: ['echo'], history: [] },
    ...extra
  };
}

export const header = {
  header: { stage_id: STAGE, step: null, next_step: 'section_3_x' }
};

/** A behavior's stream: the header and one dialogue `add`, with the state the server ends it with. */
export function oneAddStream(toDoList: string[], content = 'hi'): Response {
  return ndjson([
    header,
    {
      action: {
        action: 'add',
        shotType: 'dialogue',
        content,
        state: state(toDoList)
      }
    }
  ]);
}

export function actions(events: GeneratingEvent[]) {
  return events.flatMap(e => (e.kind === 'action' ? [e.action] : []));
}

export function warnings(events: GeneratingEvent[]) {
  return events.flatMap(e => (e.kind === 'warning' ? [e.message] : []));
}

/** A v1 server: health (unless `health` is false), reflection and one streamed action. */
export function v1Server(health = true) {
  return (req: IPlannerRequest) => {
    if (req.path === 'v2/health') {
      return health
        ? json({ status: 'ok', message: 'up' })
        : json({ detail: 'Not Found' }, 404);
    }
    if (req.path === 'v1/reflection') {
      return json({ status: 'received', targetAchieved: false, state: {} });
    }
    if (req.path === 'v1/actions') {
      return ndjson([
        { header: { stage_id: 's', step: null, next_step: null } },
        {
          action: {
            action: 'add',
            shotType: 'dialogue',
            content: 'v1!',
            state: {}
          }
        }
      ]);
    }
    return json({ detail: 'Not Found' }, 404);
  };
}
