/**
 * The saved run read back from a notebook is checked before anything trusts it: a hand-edited,
 * truncated or older state must say what is wrong instead of breaking the panel or every Run.
 */
import { z } from 'zod';
import {
  AssessmentSchema,
  BehaviorFeedbackSchema,
  ContextFilterSchema,
  WorkflowTemplateSchema
} from '../../protocol';
import { WORKFLOW_STATES } from '../state/fsm';
import type { ISavedRunState } from '../state/runState';

const Names = z.array(z.string());
const Outputs = z.looseObject({
  expected: Names,
  produced: Names,
  in_progress: Names
});
const Level = z.looseObject({
  current: z.string().nullable(),
  completed: z.array(z.looseObject({})),
  focus: z.string().nullable(),
  outputs: Outputs
});
const State = z.enum(WORKFLOW_STATES);

export const SavedRunStateSchema = z.looseObject({
  format: z.literal('notebook-bcc-run'),
  version: z.literal(1),
  savedAt: z.string(),
  task: z.string().nullable(),
  dataFiles: Names,
  phase: z.enum(['plan', 'generate', 'done']),
  pendingFeedback: BehaviorFeedbackSchema.nullable(),
  openBehavior: z
    .looseObject({
      id: z.string(),
      executed: z.number(),
      succeeded: z.number(),
      sectionsAdded: z.number(),
      lastResult: z.string(),
      actionIndex: z.number(),
      rotated: z.boolean()
    })
    .nullable(),
  endStepRequested: z.boolean(),
  fsm: z.looseObject({
    state: State,
    returnTo: State.nullable(),
    history: z.array(
      z.looseObject({ event: z.string(), from: State, to: State })
    )
  }),
  progress: z.looseObject({
    version: z.literal(1),
    template: WorkflowTemplateSchema.nullable(),
    stages: Level,
    steps: Level,
    behaviors: Level.extend({
      iteration: z.number(),
      goal: z.string().nullable(),
      actionsTaken: Names,
      nextExpected: Names
    }),
    assessments: z
      .record(
        z.string(),
        z.looseObject({
          stage: AssessmentSchema.optional(),
          steps: z.record(z.string(), AssessmentSchema).optional()
        })
      )
      .optional()
  }),
  effects: z.looseObject({ current: Names, history: Names }),
  contextVariables: z.record(z.string(), z.unknown()),
  userVariables: Names.optional(),
  kernelVariableTypes: z.record(z.string(), z.string()).optional(),
  kernelVariables: z.record(z.string(), z.unknown()).optional(),
  cells: z.looseObject({
    storeIds: z.record(z.string(), z.string()),
    lastAddedCellId: z.string().nullable(),
    openThinkingCellId: z.string().nullable().optional(),
    created: Names.optional(),
    titleCellId: z.string().nullable().optional()
  }),
  filter: ContextFilterSchema.nullable(),
  legacy: z.looseObject({}),
  timings: z.array(z.looseObject({})),
  stepMode: z.boolean(),
  plannerDialect: z.string().nullable().optional(),
  templateFromPlanner: z.boolean().optional()
});

export type SavedRunCheck =
  { ok: true; state: ISavedRunState } | { ok: false; problems: string[] };

const MAX_PROBLEMS = 5;

/** The saved run, or what is wrong with it in plain words (`progress.stages.current: expected string`). */
export function checkSavedRunState(value: unknown): SavedRunCheck {
  const parsed = SavedRunStateSchema.safeParse(value);
  if (parsed.success) {
    return { ok: true, state: value as ISavedRunState };
  }
  const problems = parsed.error.issues.slice(0, MAX_PROBLEMS).map(issue => {
    const where = issue.path.map(String).join('.') || 'the saved run';
    return `${where}: ${issue.message}`;
  });
  const more = parsed.error.issues.length - problems.length;
  if (more > 0) {
    problems.push(`and ${more} more`);
  }
  return { ok: false, problems };
}

/** A saved run that can be restored (see `checkSavedRunState` for what is wrong with one that cannot). */
export function isSavedRunState(value: unknown): value is ISavedRunState {
  return checkSavedRunState(value).ok;
}
