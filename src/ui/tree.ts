/**
 * The progress tree (stages > steps > behaviors) and the outputs tracking of a run, as the panel shows
 * them. Pure functions of a snapshot and its progress state.
 */
import type { Artifact, CompletedItem, CurrentOutputs } from '../protocol';
import type { IProgressState } from '../engine/state/progressState';
import type {
  IBehaviorTiming,
  IRunSnapshot,
  ItemStatus
} from '../engine/types';
import type { IBehaviorNode, IOutputItem, IStageNode } from '../tokens';

/**
 * Completed items remembered for the whole run: the engine keeps completed behaviors for the current
 * step only and completed steps for the current stage only, but the tree shows all of them.
 */
export class CompletedItems {
  /** Remembers what a progress state says is completed. */
  observe(progress: IProgressState | null): void {
    if (!progress) {
      return;
    }
    const stageId = progress.stages.current;
    const stepId = progress.steps.current;
    for (const item of progress.behaviors.completed) {
      if (item.behavior_id) {
        this._items.set(behaviorKey(stepId, item.behavior_id), item);
      }
    }
    for (const item of progress.steps.completed) {
      if (item.step_id) {
        this._items.set(stepKey(stageId, item.step_id), item);
      }
    }
    for (const item of progress.stages.completed) {
      if (item.stage_id) {
        this._items.set(stageKey(item.stage_id), item);
      }
    }
  }

  behavior(stepId: string | null, behaviorId: string): CompletedItem | null {
    return this._items.get(behaviorKey(stepId, behaviorId)) ?? null;
  }

  step(stageId: string | null, stepId: string): CompletedItem | null {
    return this._items.get(stepKey(stageId, stepId)) ?? null;
  }

  stage(stageId: string): CompletedItem | null {
    return this._items.get(stageKey(stageId)) ?? null;
  }

  /**
   * The latest artifact of each variable the run produced. A run read back from the notebook keeps the
   * behaviors of its current step only, but its completed steps and stages list what theirs produced:
   * every level counts, the most specific (a behavior's) wins, so a reload shows the same artifacts.
   */
  artifacts(): Artifact[] {
    const latest = new Map<string, Artifact>();
    for (const level of ['g:', 's:', 'b:']) {
      for (const [key, item] of this._items) {
        if (!key.startsWith(level)) {
          continue;
        }
        for (const artifact of item.outputs_produced?.artifacts ?? []) {
          latest.delete(artifact.variable_name);
          latest.set(artifact.variable_name, artifact);
        }
      }
    }
    return [...latest.values()];
  }

  clear(): void {
    this._items.clear();
  }

  private _items = new Map<string, CompletedItem>();
}

function behaviorKey(stepId: string | null, behaviorId: string): string {
  return `b:${stepId ?? ''}/${behaviorId}`;
}

function stepKey(stageId: string | null, stepId: string): string {
  return `s:${stageId ?? ''}/${stepId}`;
}

function stageKey(stageId: string): string {
  return `g:${stageId}`;
}

function produced(item: CompletedItem | null): string[] {
  return item?.outputs_produced?.variables ?? [];
}

function behaviorsOf(
  stepId: string,
  stepStatus: ItemStatus,
  snapshot: IRunSnapshot,
  progress: IProgressState | null,
  completed: CompletedItems
): IBehaviorNode[] {
  const timings = snapshot.timings.filter(t => t.stepId === stepId);
  const byId = new Map<string, IBehaviorTiming>();
  for (const timing of timings) {
    byId.set(timing.behaviorId, timing);
  }
  const iterations = new Map<string, number>();
  for (const timing of timings) {
    iterations.set(timing.behaviorId, timing.iteration);
  }
  const currentId = snapshot.behavior.id;
  const isCurrentStep = stepStatus === 'current';
  if (isCurrentStep) {
    const completedHere =
      progress?.steps.current === stepId ? progress.behaviors.completed : [];
    // A step's completed behaviors are kept in order: the first is iteration 1.
    completedHere.forEach((item, index) => {
      if (item.behavior_id && !iterations.has(item.behavior_id)) {
        iterations.set(item.behavior_id, index + 1);
      }
    });
    if (currentId && !iterations.has(currentId)) {
      iterations.set(currentId, snapshot.behavior.iteration);
    }
  }
  const ids = [...iterations.keys()].sort(
    (a, b) => (iterations.get(a) ?? 0) - (iterations.get(b) ?? 0)
  );
  const running = snapshot.running || snapshot.state === 'ERROR';
  return ids.map(id => {
    const item = completed.behavior(stepId, id);
    const timing = byId.get(id) ?? null;
    const open = timing ? timing.endedAt === null : id === currentId;
    const status: ItemStatus =
      isCurrentStep && id === currentId && open && running
        ? 'current'
        : item || (timing && timing.endedAt !== null) || !isCurrentStep
          ? 'completed'
          : 'current';
    const goal =
      item?.goal ??
      (status === 'current' && progress?.behaviors.current === id
        ? progress.behaviors.goal
        : null);
    // The engine names a behavior without a goal `Behavior <id>`: nothing the row does not say.
    const shownGoal = goal === `Behavior ${id}` ? null : goal;
    return {
      key: `${stepId}/${id}`,
      id,
      iteration: iterations.get(id) ?? 0,
      status,
      running: status === 'current' && snapshot.running,
      paused:
        status === 'current' &&
        snapshot.running &&
        (snapshot.paused || snapshot.pausing),
      goal: shownGoal,
      produced: produced(item),
      durationMs: timing?.durationMs ?? null
    };
  });
}

function templateGoal(item: {
  goal?: string;
  description?: string;
}): string | null {
  return item.goal ?? item.description ?? null;
}

/**
 * Stages > steps > behaviors, each completed, current or remaining. Goals and focus come from the
 * progress state (saved with the run), names and statuses from the snapshot.
 */
export function buildTree(
  snapshot: IRunSnapshot,
  progress: IProgressState | null,
  completed: CompletedItems
): IStageNode[] {
  const template = progress?.template ?? null;
  const assessments = progress?.assessments ?? {};
  return snapshot.stages.map(stage => {
    const stageTemplate = template?.stages.find(s => s.id === stage.id);
    const stageItem = completed.stage(stage.id);
    const isCurrentStage = stage.status === 'current';
    return {
      id: stage.id,
      name: stage.name,
      status: stage.status,
      goal: stageTemplate ? templateGoal(stageTemplate) : null,
      focus: isCurrentStage ? snapshot.stage.focus : null,
      assessment: assessments[stage.id]?.stage ?? null,
      produced: produced(stageItem),
      steps: stage.steps.map(step => {
        const stepTemplate = stageTemplate?.steps.find(s => s.id === step.id);
        const isCurrentStep = step.status === 'current';
        return {
          id: step.id,
          name: step.name,
          status: step.status,
          goal: stepTemplate ? templateGoal(stepTemplate) : null,
          focus: isCurrentStep ? snapshot.step.focus : null,
          assessment: assessments[stage.id]?.steps?.[step.id] ?? null,
          produced: produced(completed.step(stage.id, step.id)),
          behaviors: behaviorsOf(
            step.id,
            step.status,
            snapshot,
            progress,
            completed
          )
        };
      })
    };
  });
}

/**
 * The expected variables of the current stage and step, each produced, in progress (present in the
 * kernel while its level runs) or missing.
 */
export function trackOutputs(snapshot: IRunSnapshot): IOutputItem[] {
  const levels: CurrentOutputs[] = [
    snapshot.outputs.stages,
    snapshot.outputs.steps,
    snapshot.outputs.behaviors
  ];
  const names: string[] = [];
  for (const level of levels) {
    for (const name of level.expected) {
      if (!names.includes(name)) {
        names.push(name);
      }
    }
  }
  return names.map(name => {
    const status: IOutputItem['status'] = levels.some(level =>
      level.produced.includes(name)
    )
      ? 'produced'
      : levels.some(level => level.in_progress.includes(name))
        ? 'in_progress'
        : 'missing';
    const check = snapshot.outputChecks?.[name];
    return check
      ? {
          name,
          status,
          check: {
            ok: check.ok,
            reason: check.reason ?? null,
            type: check.type
          }
        }
      : { name, status };
  });
}
