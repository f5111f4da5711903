/**
 * The reference planner room's fixture: request bodies as a client sends them (HTTP and in-process
 * alike), the same parsed as the planner reads them, and the code of its answers.
 */

import {
  GeneratingRequest,
  type PlanningRequestInput,
  normalizeGeneratingRequest,
  normalizePlanningRequest,
  PlanningRequest,
  type UserNote
} from '../../protocol';
import { ActionInput } from '../referencePlanner';

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
  /** The user's notes for the planner (`context.user_notes`), left out when not given. */
  userNotes?: UserNote[];
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
        },
        ...(options.userNotes ? { user_notes: options.userNotes } : {})
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

export function planning(options: IObservationOptions): PlanningRequest {
  const parsed = normalizePlanningRequest(requestBody(options));
  if (!parsed.ok) {
    throw new Error(parsed.error);
  }
  return parsed.request;
}

export function generating(options: IObservationOptions): GeneratingRequest {
  const parsed = normalizeGeneratingRequest(
    requestBody({ ...options, stream: true })
  );
  if (!parsed.ok) {
    throw new Error(parsed.error);
  }
  return parsed.request;
}

export function codeOf(actions: ActionInput[]): string[] {
  return actions.flatMap(a =>
    a.action === 'add' && a.shot_type === 'action' ? [a.content] : []
  );
}

export const LOAD = { stageId: 'data_loading', stepId: 'load_data' };
