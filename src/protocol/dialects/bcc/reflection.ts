/**
 * What a reflection changes (docs/dialects.md#bcc-answers): the plan's variables, outputs and notes,
 * the cells it asks for, and the engine's progress entries in `update`.
 */
import type { JsonObject } from '../../fields';
import { type ProtocolText, say } from '../../messages';
import {
  progressUpdatesOf,
  type ContextUpdate,
  type ObservationInput,
  type ProgressLevelName,
  type ProgressUpdate
} from '../../schemas';
import type { DialectLog } from '../common';
import type { IReflection } from './answers';
import type { BccState } from './state';

/** What applying a reflection reads besides the state: the request's observation, and where to tell. */
export interface IReflectionContext {
  observation: ObservationInput | undefined;
  log: DialectLog;
  warn: (warning: ProtocolText) => void;
}

export function applyReflection(
  state: BccState,
  reflection: IReflection,
  update: ContextUpdate,
  context: IReflectionContext
): void {
  const { log, warn } = context;
  const plan = state.plan;
  if (reflection.conflict) {
    log(`bcc: reflection disagrees with itself: ${reflection.conflict}`);
  }
  const variables: JsonObject = { ...reflection.variables };
  if (reflection.saveEffectAs) {
    variables[reflection.saveEffectAs] = (
      context.observation?.context?.effects?.current ?? []
    ).join('\n');
  }
  if (Object.keys(variables).length > 0) {
    Object.assign(plan.variables, variables);
    update.variables = { ...(update.variables ?? {}), ...variables };
  }
  const outputs = reflection.outputs;
  if (outputs) {
    const level: ProgressLevelName =
      reflection.kind === 'stage_reflection'
        ? 'stages'
        : plan.behaviors.current
          ? 'behaviors'
          : 'steps';
    const target = plan[level];
    target.produced = outputs.produced;
    target.in_progress = outputs.in_progress;
    // The engine's outputs tracking shows the server's lists (docs/dialects.md#bcc).
    const entry = progressAt(update, level);
    entry.current_outputs = {
      expected: entry.current_outputs?.expected ?? [],
      produced: [...outputs.produced],
      in_progress: [...outputs.in_progress]
    };
  }
  for (const comment of reflection.comments) {
    state.pending.push({
      type: 'add',
      shot_type: 'markdown',
      content: comment
    });
  }
  // §3.7: the reasoning and the progress percentage are shown in the progress panel, on the step
  // (a behavior's reflection) or the stage.
  const percent = Number.parseFloat(reflection.progressPercent ?? '');
  if (reflection.reasoning || Number.isFinite(percent)) {
    progressAt(
      update,
      reflection.kind === 'stage_reflection' ? 'stages' : 'steps'
    ).assessment = {
      ...(reflection.reasoning ? { reasoning: reflection.reasoning } : {}),
      ...(Number.isFinite(percent) ? { percent } : {})
    };
  }
  const notes = [
    reflection.reasoning,
    reflection.progressPercent
      ? `progress ${reflection.progressPercent}`
      : undefined,
    typeof reflection.whathappened === 'object'
      ? JSON.stringify(reflection.whathappened)
      : reflection.whathappened
  ]
    .filter(Boolean)
    .join(' · ');
  if (notes) {
    log(`bcc ${reflection.kind}: ${notes}`);
  }
  if (reflection.experienceSummary || reflection.keyFindings) {
    // §3.7: kept on the stage record, sent back in `completed` once the stage is done.
    const notes = plan.stageNotes ?? {};
    const findings = [
      ...(notes.key_findings ?? []),
      ...(reflection.keyFindings ?? [])
    ];
    plan.stageNotes = {
      ...notes,
      ...(reflection.experienceSummary
        ? { experience_summary: reflection.experienceSummary }
        : {}),
      ...(findings.length > 0 ? { key_findings: [...new Set(findings)] } : {})
    };
  }
  if (reflection.proposedGoal && plan.stages.current) {
    plan.stages.current.goal = reflection.proposedGoal;
    update.workflow_update = { workflowTemplate: state.template() };
  }
  if (reflection.needsMoreSteps) {
    warn(say('bccNeedsMoreSteps'));
  }
}

/** The `progress_update` entry of one level: a reflection and the next plan in one answer both add to it. */
export function progressAt(
  update: ContextUpdate,
  level: ProgressLevelName
): ProgressUpdate {
  const entries = progressUpdatesOf(update);
  let entry = entries.find(e => e.level === level);
  if (!entry) {
    entry = { level };
    entries.push(entry);
  }
  update.progress_update = entries.length === 1 ? entries[0] : entries;
  return entry;
}
