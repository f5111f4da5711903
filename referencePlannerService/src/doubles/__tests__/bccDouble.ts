/**
 * The bcc room's fixture on the service side: the bodies a bcc client sends at each FSM state, and the
 * bcc double of one spec file (`start` it with a scenario; `post` a body; closed after each test).
 */

import { postJson } from '../../__tests__/helpers';
import { startBccDouble } from '../bcc';
import type { IRunningDoubleServer } from '../http';

export type Json = Record<string, unknown>;

export const STAGES: Record<string, { title: string; steps: string[] }> = {
  sales_data_check: {
    title: 'Sales Data Check',
    steps: ['load_sales', 'check_quality']
  },
  revenue_summary: {
    title: 'Revenue Summary',
    steps: ['revenue_by_region', 'monthly_trend']
  }
};

export interface IPosition {
  stage?: string;
  step?: string;
  behavior?: string;
  completedBehaviors?: string[];
  effects?: string[];
}

/** A request body as the BCC client sends it: the plan objects in progress, the sibling `state`. */
export function bccBody(fsm: string, position: IPosition = {}): Json {
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

export const STEP_1 = { stage: 'sales_data_check', step: 'load_sales' };

/** The bcc double of one spec file, closed after each test. */
export function servedBccDouble(): {
  readonly server: IRunningDoubleServer;
  start(scenario?: string): Promise<void>;
  post(
    path: string,
    body: unknown
  ): Promise<{ status: number; type: string; text: string }>;
} {
  let server: IRunningDoubleServer | undefined;
  afterEach(async () => {
    await server?.close();
  });
  const served = {
    get server(): IRunningDoubleServer {
      if (!server) {
        throw new Error('the bcc double was not started');
      }
      return server;
    },
    async start(scenario?: string): Promise<void> {
      await server?.close();
      server = await startBccDouble({
        port: 0,
        log: null,
        scenario,
        lineDelayMs: 0
      });
    },
    async post(path: string, body: unknown) {
      const res = await postJson(`${served.server.url}${path}`, body);
      return {
        status: res.status,
        type: String(res.headers['content-type']),
        text: res.text
      };
    }
  };
  return served;
}
