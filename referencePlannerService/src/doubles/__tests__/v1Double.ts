/**
 * The v1 room's fixture on the service side: the server's ids, the task variables and state a v1
 * client sends, and the v1 double of one spec file (started before each test with the defaults,
 * `restart`ed with options; `stream` one behavior; `json` a JSON route).
 */

import { linesOf, postJson, rawRequest } from '../../__tests__/helpers';
import type { IRunningDoubleServer } from '../http';
import { IV1Options, startV1Double } from '../v1';

export type Json = Record<string, unknown>;

export const ENTRY = {
  stage_id: 'chapter_0_planning',
  step_index: 'section_1_design_workflow'
};

export const CH1 = 'chapter_1_data_existence_establishment';

export const CH2 = 'chapter_2_revenue_exploration';

export const DISCOVERY = `${CH1}_section_2_data_structure_discovery`;

export const COLUMNS = "['month', 'region', 'units', 'revenue']\n";

export const TASK_VARIABLES = {
  user_goal: 'Predict next month’s revenue per region 📈',
  problem_description: 'Monthly sales by region; predict revenue.',
  csv_file_path: 'data/sales.csv',
  context_description: 'data/sales.csv, 240 x 4',
  problem_name: 'Revenue per region'
};

export function state(
  variables: Json = TASK_VARIABLES,
  toDoList: string[] = [],
  current: string[] = []
): Json {
  return {
    variables,
    toDoList,
    effect: { current, history: [] },
    checklist: { current: [], completed: [] },
    thinking: [],
    stageStatus: {}
  };
}

export interface IStream {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  header: Json;
  actions: Json[];
  /** Arrival time (ms from the first chunk) of each line. */
  arrivals: number[];
}

/** The v1 double of one spec file: started before each test, closed after it. */
export function servedV1Double(): {
  readonly server: IRunningDoubleServer;
  restart(options: IV1Options): Promise<void>;
  stream(body: Json): Promise<IStream>;
  json(path: string, body: unknown): Promise<{ status: number; body: Json }>;
} {
  let server: IRunningDoubleServer | undefined;
  beforeEach(async () => {
    server = await startV1Double({ port: 0, log: null });
  });
  afterEach(async () => {
    await server?.close();
  });
  const served = {
    get server(): IRunningDoubleServer {
      if (!server) {
        throw new Error('the v1 double was not started');
      }
      return server;
    },
    /** Closes the double, and starts it again with `options`. */
    async restart(options: IV1Options): Promise<void> {
      await server?.close();
      server = await startV1Double({ port: 0, log: null, ...options });
    },
    async stream(body: Json): Promise<IStream> {
      const stamps: number[] = [];
      let firstAt = 0;
      const res = await rawRequest(`${served.server.url}/v1/actions`, {
        body: JSON.stringify({ stream: true, ...body }),
        onChunk: chunk => {
          const now = Date.now();
          firstAt ||= now;
          const lines = chunk.toString('utf8').split('\n').length - 1;
          for (let i = 0; i < lines; i++) {
            stamps.push(now - firstAt);
          }
        }
      });
      const parsed = linesOf(res.text).map(line => JSON.parse(line) as Json);
      return {
        status: res.status,
        headers: res.headers,
        text: res.text,
        header: parsed[0] ?? {},
        actions: parsed.slice(1).map(line => line.action as Json),
        arrivals: stamps
      };
    },
    async json(
      path: string,
      body: unknown
    ): Promise<{ status: number; body: Json }> {
      const res = await postJson(`${served.server.url}${path}`, body);
      return { status: res.status, body: JSON.parse(res.text) as Json };
    }
  };
  return served;
}
