/**
 * What the `bcc` adapter remembers between requests and saves with the run: the plan and its FSM
 * state, the cells the client writes at the start of the next `/generating`, and the headings it
 * wrote (docs/dialects.md#bcc-loop).
 */
import { isRecord, JsonObject } from '../../fields';
import type { ContextUpdate, PlanningResponse } from '../../schemas';
import type { WorkflowStage, WorkflowTemplate } from '../../actionSchemas';
import type { IStepDef } from './answers';
import { emptyPlan, FsmName, IPlan, stageName, stepList } from './plan';

/** Kinds of cell the adapter itself queues (titles, headings, markdown, workflow updates). */
const OWN_PENDING = new Set([
  'update_title',
  'new_section',
  'new_step',
  'update_workflow',
  'update_stage_steps'
]);

/**
 * A saved queued cell the adapter could have written: a notebook file is untrusted input, and an
 * entry of code or an `exec` in it would run on Resume before the planner is asked anything.
 */
function isOwnPending(entry: Record<string, unknown>): boolean {
  return (
    OWN_PENDING.has(String(entry.type)) ||
    (entry.type === 'add' && entry.shot_type === 'markdown')
  );
}

/** A state `BccState.save` wrote, or null: a notebook file is untrusted input. */
export function readBccSaved(saved: unknown): JsonObject | null {
  return isRecord(saved) && isRecord(saved.plan) && isRecord(saved.plan.fsm)
    ? (saved as JsonObject)
    : null;
}

export class BccState {
  plan: IPlan = emptyPlan();
  /** Cells an answer asked for that the next `/generating` writes first. */
  pending: JsonObject[] = [];
  /** The latest headings the client wrote: the server's copies of them are skipped. */
  headings: string[] = [];
  /** The engine holds the plan's template (a `workflow_update` went out). */
  templateSent = false;

  transition(state: FsmName, event: string): void {
    const fsm = this.plan.fsm;
    if (fsm.state !== state) {
      fsm.previous_state = fsm.state;
    }
    fsm.state = state;
    fsm.last_transition = event;
  }

  /** A heading the client writes; the server's copy of it is skipped, `plain` too (no "(optional)"). */
  heading(
    type: 'new_section' | 'new_step',
    title: string,
    plain = title
  ): void {
    this.pending.push({ type, content: title });
    this.headings = [...this.headings.slice(-3), ...new Set([title, plain])];
  }

  /** The queued cells, taken (the next `/generating` writes them). */
  takePending(): JsonObject[] {
    const pending = this.pending;
    this.pending = [];
    return pending;
  }

  template(): WorkflowTemplate {
    const plan = this.plan;
    const stages = [
      ...plan.stages.completed,
      ...(plan.stages.current ? [plan.stages.current] : []),
      ...plan.stages.remaining
    ];
    const steps = stepList(plan);
    return {
      ...(plan.title ? { name: plan.title } : {}),
      stages: stages.map((stage): WorkflowStage => ({
        id: stage.stage_id,
        name: stageName(stage),
        goal: stage.goal,
        expected_outputs: stage.verified_artifacts.map(a => a.name),
        steps: (stage.stage_id === plan.stepsOf
          ? steps
          : (plan.pastSteps?.[stage.stage_id] ?? [])
        ).map(templateStep)
      }))
    };
  }

  /** `update` on `response`, with the plan's template the first time the engine can take it. */
  finish(response: PlanningResponse, update: ContextUpdate): PlanningResponse {
    if (!this.templateSent && this.plan.stages.current) {
      update.workflow_update ??= { workflowTemplate: this.template() };
    }
    if (update.workflow_update) {
      this.templateSent = true;
    }
    if (Object.keys(update).length > 0) {
      response.context_update = update;
    }
    return response;
  }

  save(): JsonObject {
    return {
      dialect: 'bcc',
      plan: structuredClone(this.plan) as unknown as JsonObject,
      headings: this.headings,
      // Cells an answer asked for that the next /generating writes first: a reload in between keeps them.
      pending: structuredClone(this.pending)
    };
  }

  restore(saved: unknown): void {
    this.reset();
    const read = readBccSaved(saved);
    if (read) {
      this.plan = structuredClone(read.plan) as unknown as IPlan;
      this.headings = Array.isArray(read.headings)
        ? read.headings.map(String)
        : [];
      this.templateSent = this.plan.stages.current !== null;
      this.pending = Array.isArray(read.pending)
        ? (structuredClone(
            read.pending.filter(isRecord).filter(isOwnPending)
          ) as JsonObject[])
        : [];
    }
  }

  reset(): void {
    this.plan = emptyPlan();
    this.pending = [];
    this.headings = [];
    this.templateSent = false;
  }
}

/** A step as the engine's template holds it. */
export function templateStep(step: IStepDef) {
  return {
    id: step.step_id,
    name: step.title,
    goal: step.goal,
    expected_outputs: step.verified_artifacts.map(a => a.name)
  };
}
