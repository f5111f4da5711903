/** Request bodies as a client sends them, for the planner's tests (HTTP and in-process alike). */
import type { PlanningRequestInput } from '../../protocol';

export const TASK = 'Explore housing.csv and report what drives SalePrice';
export const DATA_PATH = 'data/housing.csv';

export interface IObservationOptions {
  stageId?: string | null;
  stepId?: string | null;
  iteration?: number;
  variables?: Record<string, unknown>;
  effects?: string[];
  history?: string[];
  feedback?: 'success' | 'error';
  stream?: boolean;
}

/** A request body as a client would send it, with the task and data file in the variables. */
export function requestBody(
  options: IObservationOptions = {}
): PlanningRequestInput {
  const iteration = options.iteration ?? 0;
  const body: PlanningRequestInput = {
    observation: {
      location: {
        current: {
          stage_id: options.stageId ?? null,
          step_id: options.stepId ?? null,
          behavior_id: iteration
            ? `behavior_${String(iteration).padStart(3, '0')}`
            : null,
          behavior_iteration: iteration
        }
      },
      context: {
        variables: {
          problem_description: TASK,
          csv_file_path: DATA_PATH,
          ...(options.variables ?? {})
        },
        effects: {
          current: options.effects ?? [],
          history: options.history ?? []
        }
      }
    },
    options: { stream: options.stream ?? false }
  };
  if (options.feedback) {
    body.behavior_feedback = {
      behavior_id: `behavior_${String(iteration).padStart(3, '0')}`,
      actions_executed: 5,
      actions_succeeded: options.feedback === 'error' ? 4 : 5,
      last_action_result: options.feedback
    };
  }
  return body;
}
