/**
 * What the reference planner says and does within one step: focus texts, context filters, and the
 * actions of an attempt, of publishing the findings, and of giving up.
 */
import type { z } from 'zod';

import type {
  ActionSchema,
  ContextFilterSchema,
  Observation,
  PlanningResponseSchema
} from '../protocol';
import { APPROACHES } from './codegen';
import type { IApproach, ICodeContext } from './pandasCode';
import type { Decision } from './decision';
import { caveatOf } from './intent';
import {
  dataPathOf,
  DATA_PATH_VARIABLES,
  describeVariable,
  effectTexts,
  hasVariable,
  IPosition,
  taskOf,
  TASK_VARIABLES,
  variablesOf
} from './observe';
import { INotebookSession, IStepMemory } from './session';
import {
  baseName,
  exploratorySteps,
  IStepPlan,
  stageOf,
  STAGES,
  STEPS,
  workflowTemplate
} from './workflow';

export type ActionInput = z.input<typeof ActionSchema>;
export type PlanningAnswer = z.input<typeof PlanningResponseSchema>;
type ContextFilterInput = z.input<typeof ContextFilterSchema>;

export const DEFAULT_MAX_TRIES = 3;

/** Set through `context_update.variables`, so a client that resumes carries the skip list back to us. */
export const SKIPPED_STEPS_VARIABLE = 'planner_skipped_steps';

export const FIRST_STEP = 'load_data';
export const FINDINGS_STEP = 'findings_report';
export const REPORT_HEADING = '## Findings';

export function isRunStart(
  decision: Decision,
  position: IPosition,
  stepStart: boolean
): boolean {
  return (
    stepStart &&
    position.iteration === 0 &&
    'step' in decision &&
    decision.step.id === FIRST_STEP
  );
}

export function code(name: string): string {
  return `\`${name}\``;
}

export function skippedSteps(observation: Observation): string[] {
  const value = variablesOf(observation)[SKIPPED_STEPS_VARIABLE];
  return Array.isArray(value)
    ? value.filter((v): v is string => typeof v === 'string')
    : [];
}

export function existing(observation: Observation, names: string[]): string[] {
  return [...new Set(names)].filter(name => hasVariable(observation, name));
}

export function chooseApproach(
  approaches: IApproach[],
  tried: string[],
  error: string | null
): IApproach | undefined {
  const untried = approaches.filter(a => !tried.includes(a.id));
  if (error) {
    const fitting = untried.find(a =>
      a.addresses.some(pattern => pattern.test(error))
    );
    if (fitting) {
      return fitting;
    }
  }
  return untried[0];
}

export function findReport(texts: readonly string[]): string | null {
  for (let i = texts.length - 1; i >= 0; i--) {
    const index = texts[i].indexOf(REPORT_HEADING);
    if (index >= 0) {
      return texts[i].slice(index).trim();
    }
  }
  return null;
}

export function codeContext(
  observation: Observation,
  frame: string,
  target: string | null
): ICodeContext {
  return {
    dataPath: dataPathOf(observation) ?? 'data.csv',
    frame,
    target,
    task: taskOf(observation),
    caveat: caveatOf(taskOf(observation))
  };
}

export function notebookTitle(observation: Observation): string {
  const task = taskOf(observation).replace(/\s+/g, ' ').trim();
  if (task) {
    // "forecast revenue" -> "Forecast revenue", but a file or column name stays as it is written.
    const first = task.split(' ')[0];
    const title = /[./\\_]|[a-z][A-Z]/.test(first)
      ? task
      : task.charAt(0).toUpperCase() + task.slice(1);
    return title.length > 100 ? `${title.slice(0, 97)}...` : title;
  }
  const path = dataPathOf(observation);
  return path
    ? `Exploratory analysis of ${baseName(path)}`
    : 'Exploratory data analysis';
}

export function stateLines(
  observation: Observation,
  step: IStepPlan,
  frame: string | null,
  target: string | null
): string[] {
  const lines: string[] = [];
  const task = taskOf(observation);
  if (task) {
    lines.push(`- Task: ${task}`);
  }
  const path = dataPathOf(observation);
  lines.push(path ? `- Data file: \`${path}\`` : '- Data file: not given');
  const inputs = step.inputs.map(name =>
    name === 'frame' ? (frame ?? 'df') : name
  );
  for (const name of [...new Set(inputs)]) {
    lines.push(`- ${code(name)}: ${describeVariable(observation, name)}`);
  }
  if (target) {
    lines.push(`- Target column named by the task: ${code(target)}`);
  }
  return lines;
}

export function attemptFocus(
  observation: Observation,
  decision: Extract<Decision, { kind: 'attempt' }>,
  maxTries: number
): string {
  const { step, failures, approach, error, rebuild, frame, target } = decision;
  const limit = Math.min(maxTries, (APPROACHES[step.id] ?? []).length);
  const heading =
    failures === 0
      ? `## Step: ${step.name}`
      : `## Step: ${step.name}, attempt ${failures + 1} of ${limit}`;
  const state = stateLines(observation, step, frame, target);
  if (rebuild.length) {
    state.push(
      `- The kernel lacks the inputs of this step; they are rebuilt first (${rebuild.join(', ')}).`
    );
  }
  if (error) {
    state.push(`- The previous attempt failed with: \`${error}\``);
  }
  const targets = step.expectedOutputs.map(
    name => `- ${code(name)}: ${step.outputNotes[name] ?? ''}`
  );
  return [
    heading,
    '',
    step.goal,
    '',
    '### State analysis',
    ...state,
    '',
    '### Targets',
    ...targets,
    '',
    '### Suggested method',
    failures === 0
      ? approach.summary
      : `A different approach than before: ${approach.summary}`
  ].join('\n');
}

export function achievedFocus(
  observation: Observation,
  step: IStepPlan
): string {
  return [
    `## Step: ${step.name}: done`,
    '',
    ...step.expectedOutputs.map(
      name => `- ${code(name)}: ${describeVariable(observation, name)}`
    )
  ].join('\n');
}

export function giveUpFocus(
  observation: Observation,
  decision: Extract<Decision, { kind: 'give_up' }>
): string {
  return [
    `## Step: ${decision.step.name}: giving up`,
    '',
    decision.reason,
    ...(decision.error ? ['', `Last error: \`${decision.error}\``] : []),
    '',
    '### Suggested method',
    'Explain in the notebook what was tried and what failed, then end the step so the run can go on.'
  ].join('\n');
}

export function attemptFilter(
  observation: Observation,
  decision: Extract<Decision, { kind: 'attempt' }>
): ContextFilterInput {
  const { step, failures, frame } = decision;
  const named = step.inputs.filter(name => name !== 'frame' && name !== 'df');
  const include = existing(observation, [
    ...TASK_VARIABLES,
    ...DATA_PATH_VARIABLES,
    'target_column',
    ...named
  ]);
  const summarize: Record<string, string> = {};
  const frames = step.inputs.includes('frame')
    ? [frame]
    : step.inputs.includes('df')
      ? ['df']
      : [];
  for (const name of frames) {
    if (hasVariable(observation, name)) {
      summarize[name] =
        step.stageId === 'exploratory_analysis'
          ? 'describe_only'
          : 'shape_only';
    }
  }
  if (step.id === FINDINGS_STEP) {
    for (const name of ['numeric_summary', 'correlations']) {
      if (hasVariable(observation, name)) {
        summarize[name] = 'shape_only';
      }
    }
    for (const name of ['target_correlations', 'category_effects']) {
      if (hasVariable(observation, name)) {
        summarize[name] = 'head_only';
      }
    }
  }
  const firstOfStage = stageOf(step.stageId)?.steps[0] === step.id;
  return {
    variables_to_include: include,
    ...(Object.keys(summarize).length
      ? { variables_to_summarize: summarize }
      : {}),
    effects_config:
      failures === 0
        ? {
            include_current: true,
            current_limit: 3,
            include_history: false,
            history_limit: 0
          }
        : {
            include_current: true,
            current_limit: 5,
            include_history: true,
            history_limit: 3
          },
    focus_to_include:
      failures === 0 && firstOfStage
        ? ['stages', 'steps', 'behaviors']
        : ['behaviors', 'steps'],
    outputs_tracking: { expected_variables: [...step.expectedOutputs] }
  };
}

export function storeId(step: IStepPlan, approach: IApproach): string {
  return `${step.id}.${approach.id}`;
}

/**
 * The actions of an attempt. `fix`: the cell a retry's code rewrites (`rewrite_cell`, when the client
 * takes it; `fixCell.ts`): the notebook keeps one code cell for the step, the failed code with it.
 */
export function attemptActions(
  observation: Observation,
  session: INotebookSession,
  decision: Extract<Decision, { kind: 'attempt' }>,
  position: IPosition,
  fix: string | null = null
): ActionInput[] {
  const { step, failures, approach, error, rebuild, frame, target } = decision;
  const context = codeContext(observation, frame, target);
  const actions: ActionInput[] = [];
  if (failures === 0) {
    if (step.id === FIRST_STEP) {
      actions.push({
        action: 'update_title',
        title: notebookTitle(observation)
      });
      // Also carried here so that a client started in generation mode, without a planning answer, gets it.
      actions.push({
        action: 'update_workflow',
        shot_type: 'action',
        updated_workflow: workflowTemplate(
          taskOf(observation),
          dataPathOf(observation)
        )
      });
      // The one thinking fold of a run: how the demo answers, which no later cell repeats.
      actions.push({
        action: 'is_thinking',
        shot_type: 'dialogue',
        agent_name: 'Planner',
        thinking_text: runPlanText(observation)
      });
      actions.push({ action: 'finish_thinking' });
    }
    const [chapter, section] = headingActions(step);
    if (chapter) {
      actions.push(chapter);
    }
    if (step.id === 'distributions' && target) {
      actions.push({
        action: 'update_stage_steps',
        shot_type: 'action',
        stage_id: 'exploratory_analysis',
        updated_steps: exploratorySteps(true)
      });
    }
    actions.push(section);
    const noTarget =
      step.id === 'distributions' && decision.targetUnmatched
        ? '\n\n**No target column:** the task names none of the data\'s columns, so the columns are described without relating them to a target. To get one, pick it as the Target column in the Run dialog, or name the column in the task as the data spells it, e.g. "What drives `column_name`?".'
        : '';
    actions.push({
      action: 'add',
      shot_type: 'dialogue',
      content: `${step.goal}\n\n**Method:** ${approach.summary}\n\n**Produces:** ${step.expectedOutputs.map(code).join(', ')}${noTarget}`
    });
  } else if (!fix) {
    actions.push({
      action: 'add',
      shot_type: 'observation',
      content: error
        ? `**Attempt ${failures} failed:**\n\n\`\`\`\n${error}\n\`\`\``
        : `**Attempt ${failures} did not produce** ${step.expectedOutputs.map(code).join(', ')}.`
    });
    actions.push({
      action: 'add',
      shot_type: 'dialogue',
      content: `Trying a different approach: ${approach.summary}`
    });
  }
  if (rebuild.length) {
    const parts = [
      approachThatWorked(session, FIRST_STEP).code(
        codeContext(observation, 'df', target)
      )
    ];
    if (rebuild.includes('impute')) {
      parts.push(
        approachThatWorked(session, 'impute_missing').code(
          codeContext(observation, 'df', target)
        )
      );
    }
    actions.push({
      action: 'add',
      shot_type: 'dialogue',
      content: `The kernel does not hold the inputs of this step (was it restarted?). Rebuilding ${rebuild.includes('impute') ? '`df` and `df_clean`' : '`df`'} first.`
    });
    actions.push({
      action: 'add',
      shot_type: 'action',
      content: parts.join('\n\n'),
      store_id: `${step.id}.rebuild`
    });
    actions.push({
      action: 'exec',
      codecell_id: 'lastAddedCellId',
      need_output: true
    });
  }
  if (fix && failures > 0) {
    actions.push({
      action: 'rewrite_cell',
      codecell_id: fix,
      content: approach.code(context)
    });
    actions.push({ action: 'exec', codecell_id: fix, need_output: true });
    return actions;
  }
  const id = storeId(step, approach);
  actions.push({
    action: 'add',
    shot_type: 'action',
    content: approach.code(context),
    store_id: id
  });
  actions.push({ action: 'exec', codecell_id: id, need_output: true });
  return actions;
}

/**
 * What the run's thinking fold says: the standard analysis this planner makes of every task, and what
 * the task asks that it will not do. No cell after it says this, so the fold is not a repeat.
 */
export function runPlanText(observation: Observation): string {
  const path = dataPathOf(observation);
  const stages = STAGES.map(stage => stage.name.toLowerCase()).join(', ');
  const caveat = caveatOf(taskOf(observation));
  return [
    `This planner makes the same exploratory analysis of ${path ? code(path) : 'the data'} for every task: ${stages}.`,
    ...(caveat
      ? [caveat.replace(/^\*\*Not done:\*\* /, 'Not done here: ')]
      : [])
  ].join(' ');
}

/** The approach a completed step succeeded with (its last one), so a rebuild repeats what worked. */
export function approachThatWorked(
  session: INotebookSession,
  stepId: string
): IApproach {
  const approaches = APPROACHES[stepId];
  const last = session.steps.get(stepId)?.tried.slice(-1)[0];
  return approaches.find(a => a.id === last) ?? approaches[0];
}

/** The step's `###` heading, preceded by its stage's `##` heading when it opens the stage. */
export function headingActions(
  step: IStepPlan
): [ActionInput | null, ActionInput] {
  const stage = stageOf(step.stageId);
  const chapter: ActionInput | null =
    stage && stage.steps[0] === step.id
      ? {
          action: 'new_chapter',
          content: stage.name,
          metadata: { is_chapter: true }
        }
      : null;
  return [
    chapter,
    {
      action: 'new_section',
      content: step.name,
      metadata: { is_section: true }
    }
  ];
}

export function publishActions(
  observation: Observation,
  memory: IStepMemory,
  step: IStepPlan
): ActionInput[] {
  const report = memory.report ?? findReport(effectTexts(observation, 'all'));
  const content =
    report ??
    'The findings were printed above and are kept in the variable `findings_report` (the printed text was not in the effects I received).';
  return [
    { action: 'add', shot_type: 'observation', content },
    {
      action: 'add',
      shot_type: 'dialogue',
      content:
        'The analysis is complete. The report above is also available as `findings_report` in the kernel.'
    },
    { action: 'end_phase', step_id: step.id },
    { action: 'next_event', event_type: 'report_published' }
  ];
}

export function giveUpActions(
  decision: Extract<Decision, { kind: 'give_up' }> | null,
  step: IStepPlan,
  memory: IStepMemory,
  firstBehavior: boolean
): ActionInput[] {
  const tried = decision?.tried ?? memory.tried;
  const error = decision?.error ?? memory.lastError;
  const lastError = error ? ['', 'Last error:', '', '```', error, '```'] : [];
  const headings = firstBehavior
    ? headingActions(step).filter((a): a is ActionInput => a !== null)
    : [];
  if (decision?.endsAnalysis) {
    return [
      ...headings,
      {
        action: 'add',
        shot_type: 'dialogue',
        content: [decision.reason, ...lastError].join('\n')
      },
      { action: 'end_phase', step_id: step.id }
    ];
  }
  const approaches = APPROACHES[step.id] ?? [];
  const triedLines = tried.map(
    id => `- ${approaches.find(a => a.id === id)?.summary ?? id}`
  );
  const dependents = Object.values(STEPS)
    .filter(
      other =>
        other.id !== step.id &&
        step.expectedOutputs.some(out => other.inputs.includes(out))
    )
    .map(other => other.name);
  const content = [
    `**Skipping "${step.name}".** ${decision?.reason ?? 'This step could not be completed.'}`,
    ...(triedLines.length ? ['', 'What was tried:', ...triedLines] : []),
    ...lastError,
    '',
    `${step.expectedOutputs.map(code).join(', ')} will not be available.` +
      (dependents.length
        ? ` Later steps that use them (${dependents.join(', ')}) work without them where they can.`
        : ''),
    'Fix the cause and run the workflow again from this step to retry it.'
  ].join('\n');
  return [
    ...headings,
    { action: 'add', shot_type: 'dialogue', content },
    { action: 'end_phase', step_id: step.id }
  ];
}

export function unknownStepAnswer(stepId: string): PlanningAnswer {
  return {
    targetAchieved: false,
    transition: { continue_behaviors: false, target_achieved: false },
    context_update: {
      progress_update: {
        level: 'steps',
        focus: `## Step "${stepId}"\n\nThis step is not part of the reference planner's workflow, so it has no plan here. It is left as it is and the run moves on.`
      }
    }
  };
}

export function unknownStepActions(stepId: string): ActionInput[] {
  return [
    {
      action: 'add',
      shot_type: 'dialogue',
      content: `The step "${stepId}" is not part of the reference planner's workflow; moving on.`
    },
    { action: 'end_phase', step_id: stepId }
  ];
}
