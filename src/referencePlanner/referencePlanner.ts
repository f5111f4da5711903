/**
 * The reference planner: deterministic decisions from an observation (and, when it has one, the
 * notebook's session memory). `/planning` judges the current step and says what comes next;
 * `/generating` turns that decision into actions.
 */
import type {
  GeneratingRequest,
  Observation,
  PlanningRequest
} from '../protocol';
import { APPROACHES } from './codegen';
import { PANDAS_MISSING } from './pandasCode';
import type { Decision } from './decision';
import {
  behaviorFailed,
  dataPathOf,
  DATA_PATH_VARIABLES,
  describeVariable,
  effectTexts,
  hasVariable,
  IPosition,
  lastErrorIn,
  positionOf,
  taskOf,
  TASK_VARIABLES,
  variablesOf
} from './observe';
import { notesToQuote, quoteNotesAction } from './notes';
import {
  emptyStepMemory,
  INotebookSession,
  IStepMemory,
  SessionStore,
  stepMemory
} from './session';
import {
  ActionInput,
  DEFAULT_MAX_TRIES,
  FINDINGS_STEP,
  FIRST_STEP,
  PlanningAnswer,
  SKIPPED_STEPS_VARIABLE,
  achievedFocus,
  attemptActions,
  attemptFilter,
  attemptFocus,
  chooseApproach,
  code,
  existing,
  findReport,
  giveUpActions,
  giveUpFocus,
  isRunStart,
  publishActions,
  skippedSteps,
  unknownStepActions,
  unknownStepAnswer
} from './stepAnswers';
import { asksForTarget, columnsIn, columnsOf, targetOf } from './target';
import { cellToFix } from './fixCell';
import { IStepPlan, STAGES, STEPS, workflowTemplate } from './workflow';

export type { ActionInput, PlanningAnswer };
export { DEFAULT_MAX_TRIES, SKIPPED_STEPS_VARIABLE };

const LAST_STAGE = STAGES[STAGES.length - 1].id;

const NO_PANDAS = [
  "**pandas is not installed in this kernel's environment,** so the data cannot be loaded and none of the analysis steps can run.",
  '',
  'Install it where the kernel runs, for example with `%pip install pandas matplotlib` in a notebook cell, or `pip install pandas matplotlib` in a terminal of that environment. Then restart the kernel and run the workflow again.'
].join('\n');

/** Did the behavior just reported find that the kernel cannot import pandas? */
function missingPandas(observation: Observation): boolean {
  return effectTexts(observation, 'current').some(text =>
    PANDAS_MISSING.test(text)
  );
}

export interface IPlannerOptions {
  /** Failed behaviors after which a step is given up. */
  maxTries?: number;
  sessions?: SessionStore;
}

export class ReferencePlanner {
  constructor(options: IPlannerOptions = {}) {
    this._maxTries = Math.max(1, options.maxTries ?? DEFAULT_MAX_TRIES);
    this._sessions = options.sessions ?? new SessionStore();
  }

  plan(request: PlanningRequest, notebookId: string): PlanningAnswer {
    const observation = request.observation;
    const feedback = request.behavior_feedback;
    const position = positionOf(observation);
    const stepId = position.stepId ?? FIRST_STEP;
    const session = this._sessions.get(notebookId);
    const step = STEPS[stepId];
    if (!step) {
      return unknownStepAnswer(stepId);
    }
    if (!feedback && position.iteration === 0) {
      // A step (re)starts: what was remembered about an earlier run of it no longer applies.
      session.steps.set(stepId, emptyStepMemory());
    }
    const memory = stepMemory(session, stepId);
    if (!memory.planned && position.iteration > 0) {
      // Mid-step without memory (the planner restarted, the client resumed): the behaviors before
      // the one just reported count as failed attempts, made in the usual order.
      const earlier = feedback ? position.iteration - 1 : position.iteration;
      memory.failedBehaviors = Array.from(
        { length: earlier },
        (_, i) => `iteration_${i + 1}`
      );
      memory.tried = (APPROACHES[step.id] ?? [])
        .slice(0, position.iteration)
        .map(a => a.id);
    }
    memory.planned = true;
    const failed = behaviorFailed(observation, feedback);
    const raised = failed
      ? lastErrorIn(effectTexts(observation, 'current'))
      : null;
    const error = failed
      ? (raised ?? 'the last action reported an error')
      : null;
    if (feedback && !failed) {
      this._rememberOutputs(session, memory, step, observation);
    }
    if (feedback && missingPandas(observation)) {
      memory.noPandas = true;
    }
    if (feedback) {
      memory.lastError = error;
      memory.codeFailed = raised !== null;
    }
    let decision = this._decide(
      observation,
      session,
      step,
      memory,
      failed,
      position
    );
    if (
      feedback &&
      (decision.kind === 'attempt' || decision.kind === 'give_up') &&
      !memory.gaveUp &&
      !(memory.published && step.id === FINDINGS_STEP)
    ) {
      const behaviorId =
        feedback.behavior_id ??
        observation.location.current?.behavior_id ??
        `iteration_${position.iteration}`;
      if (!memory.failedBehaviors.includes(behaviorId)) {
        memory.failedBehaviors.push(behaviorId);
        decision = this._decide(
          observation,
          session,
          step,
          memory,
          failed,
          position
        );
      }
    }
    memory.next = decision;
    return this._answer(
      observation,
      session,
      memory,
      decision,
      position,
      !feedback
    );
  }

  generate(request: GeneratingRequest, notebookId: string): ActionInput[] {
    const observation = request.observation;
    const position = positionOf(observation);
    const stepId = position.stepId ?? FIRST_STEP;
    const session = this._sessions.get(notebookId);
    const step = STEPS[stepId];
    if (!step) {
      return unknownStepActions(stepId);
    }
    const memory = stepMemory(session, stepId);
    const decision =
      memory.planned && memory.next
        ? memory.next
        : this._decide(observation, session, step, memory, false, position);
    // A retry fixes the step's cell when its code raised the error. Not after a fault of the run (a cut
    // stream, a restarted kernel whose inputs are rebuilt): that cell's code did not fail, and it stays.
    const fix =
      decision.kind === 'attempt' &&
      decision.failures > 0 &&
      memory.codeFailed &&
      decision.rebuild.length === 0
        ? cellToFix(request, step, memory.tried)
        : null;
    const actions = this._actions(
      observation,
      session,
      memory,
      decision,
      position,
      fix
    );
    const notes = notesToQuote(observation, session, memory, stepId);
    return notes.length ? [quoteNotesAction(notes), ...actions] : actions;
  }

  private _decide(
    observation: Observation,
    session: INotebookSession,
    step: IStepPlan,
    memory: IStepMemory,
    failed: boolean,
    position: IPosition
  ): Decision {
    if (memory.gaveUp || skippedSteps(observation).includes(step.id)) {
      return { kind: 'given_up', step };
    }
    const produced = step.expectedOutputs.every(name =>
      hasVariable(observation, name)
    );
    // The findings step is done only once the report is also a Markdown cell; without the printed
    // text (e.g. a kernel kept from an earlier run) the report is built again, which prints it.
    const report =
      step.id === FINDINGS_STEP
        ? (memory.report ?? findReport(effectTexts(observation, 'all')))
        : null;
    if (
      produced &&
      !failed &&
      (step.id !== FINDINGS_STEP || memory.published)
    ) {
      return { kind: 'achieved', step };
    }
    if (produced && !failed && report !== null) {
      return { kind: 'publish', step };
    }
    if (memory.noPandas || (!memory.planned && missingPandas(observation))) {
      return {
        kind: 'give_up',
        step,
        reason: NO_PANDAS,
        error: memory.lastError,
        tried: memory.tried,
        endsAnalysis: true
      };
    }
    const failures = memory.planned
      ? memory.failedBehaviors.length
      : Math.max(0, position.iteration - 1);
    const approaches = APPROACHES[step.id] ?? [];
    const tried = memory.planned
      ? memory.tried
      : approaches.slice(0, failures).map(a => a.id);
    const error =
      memory.lastError ??
      (failures > 0 ? lastErrorIn(effectTexts(observation, 'all')) : null);
    if (!dataPathOf(observation) && !hasVariable(observation, 'df')) {
      return {
        kind: 'give_up',
        step,
        reason:
          'No data file was given: start the run with a data file so that `csv_file_path` is set, then run this step again.',
        error: null,
        tried
      };
    }
    const columns = columnsOf(observation, session);
    const target = targetOf(observation, columns);
    if (step.id === 'target_drivers' && !target) {
      return {
        kind: 'give_up',
        step,
        reason:
          "The task names none of the data's columns as its target, so there is nothing to relate the columns to.",
        error: null,
        tried
      };
    }
    const limit = Math.min(this._maxTries, approaches.length);
    const approach = chooseApproach(approaches, tried, error);
    if (failures >= limit || !approach) {
      return {
        kind: 'give_up',
        step,
        reason: approach
          ? `${failures} attempts failed, the limit for one step.`
          : `${failures} attempt${failures === 1 ? '' : 's'} failed and every approach I know for this step has been tried.`,
        error,
        tried
      };
    }
    const rebuild = this._rebuildPlan(observation, session, step);
    if (
      rebuild.length &&
      (session.steps.get(FIRST_STEP)?.gaveUp ||
        skippedSteps(observation).includes(FIRST_STEP))
    ) {
      return {
        kind: 'give_up',
        step,
        reason:
          'It needs the data as `df`, which the load step could not produce.',
        error: null,
        tried
      };
    }
    const frame =
      hasVariable(observation, 'df_clean') || rebuild.includes('impute')
        ? 'df_clean'
        : 'df';
    return {
      kind: 'attempt',
      step,
      failures,
      approach,
      error,
      rebuild,
      frame,
      target,
      targetUnmatched:
        !target && columns !== null && asksForTarget(taskOf(observation))
    };
  }

  /** Inputs a step reads that the kernel no longer has (e.g. the kernel was restarted and the run resumed). */
  private _rebuildPlan(
    observation: Observation,
    session: INotebookSession,
    step: IStepPlan
  ): Array<'load' | 'impute'> {
    const needsFrame =
      step.inputs.includes('df') || step.inputs.includes('frame');
    if (
      !needsFrame ||
      hasVariable(observation, 'df') ||
      hasVariable(observation, 'df_clean')
    ) {
      return [];
    }
    const impute = session.steps.get('impute_missing');
    const afterCleaning = step.inputs.includes('frame');
    return afterCleaning &&
      !impute?.gaveUp &&
      !skippedSteps(observation).includes('impute_missing')
      ? ['load', 'impute']
      : ['load'];
  }

  private _rememberOutputs(
    session: INotebookSession,
    memory: IStepMemory,
    step: IStepPlan,
    observation: Observation
  ): void {
    const texts = effectTexts(observation, 'current');
    const names = step.id === FIRST_STEP ? columnsIn(texts) : null;
    if (names) {
      session.columns = { dataPath: dataPathOf(observation), names };
    }
    if (step.id === FINDINGS_STEP) {
      memory.report = findReport(texts) ?? memory.report;
    }
  }

  private _answer(
    observation: Observation,
    session: INotebookSession,
    memory: IStepMemory,
    decision: Decision,
    position: IPosition,
    stepStart: boolean
  ): PlanningAnswer {
    const runStart =
      position.stepId === null ||
      (decision.kind !== 'unknown_step' &&
        isRunStart(decision, position, stepStart));
    const variables: Record<string, unknown> = {};
    // Set once the data's columns confirm it, so the client carries it to every later step.
    const target = targetOf(observation, columnsOf(observation, session));
    if (target && variablesOf(observation).target_column !== target) {
      variables.target_column = target;
    }
    const workflowUpdate = runStart
      ? {
          workflowTemplate: workflowTemplate(
            taskOf(observation),
            dataPathOf(observation)
          )
        }
      : undefined;
    switch (decision.kind) {
      case 'unknown_step':
        return unknownStepAnswer(decision.stepId);
      case 'achieved':
        return {
          targetAchieved: true,
          transition: { continue_behaviors: false, target_achieved: true },
          context_update: {
            ...(Object.keys(variables).length ? { variables } : {}),
            progress_update: {
              level: 'steps',
              focus: achievedFocus(observation, decision.step)
            }
          }
        };
      case 'given_up':
        return {
          targetAchieved: false,
          transition: {
            continue_behaviors: false,
            target_achieved: false,
            // Without pandas no later step can run: on to the last stage, which says so once.
            ...(memory.noPandas && decision.step.stageId !== LAST_STAGE
              ? { stage_complete: true, next_stage_id: LAST_STAGE }
              : {})
          },
          context_update: {
            progress_update: {
              level: 'steps',
              focus: memory.noPandas
                ? `## ${decision.step.name}: given up\n\nThe kernel cannot import pandas (see the notebook), so no later step can run either.`
                : `## ${decision.step.name}: given up\n\nThis step was abandoned after repeated failures (see the notebook). The run moves on to the next step.`
            }
          }
        };
      case 'give_up': {
        const skipped = [
          ...new Set([...skippedSteps(observation), decision.step.id])
        ];
        return {
          targetAchieved: false,
          transition: { continue_behaviors: true, target_achieved: false },
          context_update: {
            variables: { ...variables, [SKIPPED_STEPS_VARIABLE]: skipped },
            ...(workflowUpdate ? { workflow_update: workflowUpdate } : {}),
            progress_update: {
              level: 'behaviors',
              focus: giveUpFocus(observation, decision)
            }
          },
          context_filter: {
            variables_to_include: existing(observation, [
              ...TASK_VARIABLES,
              ...DATA_PATH_VARIABLES
            ]),
            effects_config: {
              include_current: true,
              current_limit: 3,
              include_history: true,
              history_limit: 3
            },
            focus_to_include: ['behaviors', 'steps'],
            outputs_tracking: { expected_variables: [] }
          }
        };
      }
      case 'publish':
        return {
          targetAchieved: false,
          transition: { continue_behaviors: true, target_achieved: false },
          context_update: {
            progress_update: {
              level: 'behaviors',
              focus: [
                '## Publish the findings',
                '',
                '### State analysis',
                `- \`findings_report\` exists: ${describeVariable(observation, 'findings_report')}`,
                '',
                '### Targets',
                '- A Markdown cell holding the report, so that it reads as part of the notebook.',
                '',
                '### Suggested method',
                'Copy the printed report into a Markdown cell and end the step.'
              ].join('\n')
            }
          },
          context_filter: {
            variables_to_include: existing(observation, [
              'findings_report',
              ...TASK_VARIABLES
            ]),
            effects_config: {
              include_current: true,
              current_limit: 3,
              include_history: true,
              history_limit: 5
            },
            focus_to_include: ['behaviors'],
            outputs_tracking: { expected_variables: ['findings_report'] }
          }
        };
      case 'attempt':
        return {
          targetAchieved: false,
          transition: { continue_behaviors: true, target_achieved: false },
          context_update: {
            ...(Object.keys(variables).length ? { variables } : {}),
            ...(workflowUpdate ? { workflow_update: workflowUpdate } : {}),
            progress_update: {
              level: decision.failures === 0 ? 'steps' : 'behaviors',
              focus: attemptFocus(observation, decision, this._maxTries)
            }
          },
          context_filter: attemptFilter(observation, decision)
        };
    }
  }

  private _actions(
    observation: Observation,
    session: INotebookSession,
    memory: IStepMemory,
    decision: Decision,
    position: IPosition,
    fix: string | null
  ): ActionInput[] {
    switch (decision.kind) {
      case 'unknown_step':
        return unknownStepActions(decision.stepId);
      case 'achieved':
        return [
          {
            action: 'add',
            shot_type: 'dialogue',
            content: `${decision.step.name}: ${decision.step.expectedOutputs.map(code).join(', ')} already exist in the kernel, so there is nothing left to do here.`
          },
          { action: 'end_phase', step_id: decision.step.id }
        ];
      case 'given_up':
      case 'give_up':
        memory.gaveUp = true;
        return giveUpActions(
          decision.kind === 'give_up' ? decision : null,
          decision.step,
          memory,
          position.iteration <= 1
        );
      case 'publish':
        memory.published = true;
        return publishActions(observation, memory, decision.step);
      case 'attempt':
        if (!memory.tried.includes(decision.approach.id)) {
          memory.tried.push(decision.approach.id);
        }
        return attemptActions(observation, session, decision, position, fix);
    }
  }

  private readonly _maxTries: number;
  private readonly _sessions: SessionStore;
}
