/**
 * How a run is shown: its state in plain words, the progress tree (stages > steps > behaviors), the
 * outputs tracking and which commands apply. Pure functions of a snapshot, so they are tested without
 * a notebook.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import type {
  Artifact,
  Assessment,
  CompletedItem,
  CurrentOutputs,
  PlanningUsage,
  TokenUsage
} from '../protocol';
import {
  type IMessage,
  type IMessageText,
  isMessageId,
  MESSAGES
} from '../engine/messages';
import type { IProgressState } from '../engine/progress';
import type {
  IBehaviorTiming,
  IRunFinished,
  IRunSnapshot,
  ItemStatus
} from '../engine/types';

/** What the view knows beyond the snapshot. */
export interface IRunContext {
  /** Interactive mode: the running behavior waits for the user's approval. */
  awaitingApproval?: boolean;
  /** How the last run of this notebook ended, in this session. */
  finished?: IRunFinished | null;
}

/** An engine message in the user's language; a text from elsewhere (the planner's) as it is. */
export function translateMessage(
  report: IMessageText,
  trans: TranslationBundle
): string {
  return report.text && isTranslatable(report.text)
    ? translateText(report.text, trans)
    : report.message;
}

/** How a planner's requests leave (the transport's label), in the user's language. */
export function translateVia(
  location: { via: string; viaText?: IMessage },
  trans: TranslationBundle
): string {
  return translateMessage(
    { message: location.via, text: location.viaText },
    trans
  );
}

function isTranslatable(text: IMessage): boolean {
  return (
    isMessageId(text.id) &&
    text.params.every(p => typeof p !== 'object' || isTranslatable(p))
  );
}

function translateText(text: IMessage, trans: TranslationBundle): string {
  return trans.__(
    MESSAGES[text.id],
    ...text.params.map(p =>
      typeof p === 'object' ? translateText(p, trans) : p
    )
  );
}

/** A step's name as the panel and dialogs show it; its id only when the run does not name it. */
export function stepNameOf(
  snapshot: Pick<IRunSnapshot, 'stages'>,
  stepId: string | null
): string {
  for (const stage of snapshot.stages) {
    const step = stage.steps.find(s => s.id === stepId);
    if (step) {
      return step.name;
    }
  }
  return stepId ?? '';
}

function stepLabel(snapshot: IRunSnapshot): string {
  return snapshot.step.name ?? snapshot.step.id ?? '?';
}

/** The run's state in one short sentence, e.g. "Running behavior 3 of step Handle missing values". */
export function describeRun(
  snapshot: IRunSnapshot,
  trans: TranslationBundle,
  context: IRunContext = {}
): string {
  if (snapshot.state === 'ERROR' || snapshot.error) {
    switch (snapshot.error?.endpoint) {
      case 'generating':
        return trans.__(
          'Error: the planner could not generate the next actions'
        );
      case 'planning':
        return trans.__('Error: the planner could not plan the next step');
      default:
        return trans.__('Error: the run failed');
    }
  }
  if (snapshot.state === 'WORKFLOW_COMPLETED') {
    return trans.__('Completed');
  }
  if (snapshot.running) {
    if (snapshot.rewinding) {
      return trans.__('Rewinding…');
    }
    if (snapshot.paused) {
      const reason = snapshot.pauseReason;
      switch (reason?.kind ?? 'user') {
        case 'step':
          return trans.__('Paused (step mode)');
        case 'user':
          return trans.__('Paused');
        default:
          return trans.__(
            'Paused: %1',
            reason ? translateMessage(reason, trans) : ''
          );
      }
    }
    if (snapshot.pausing) {
      return trans.__('Pausing after the current action…');
    }
    switch (snapshot.state) {
      case 'WORKFLOW_UPDATE_PENDING':
        return trans.__('Waiting for you to confirm a workflow update');
      case 'STEP_UPDATE_PENDING':
        return trans.__('Updating the steps of stage %1', snapshot.stage.name);
      case 'ACTION_RUNNING':
      case 'ACTION_COMPLETED':
        return trans.__(
          'Running behavior %1 of step %2',
          snapshot.behavior.iteration,
          stepLabel(snapshot)
        );
      case 'BEHAVIOR_RUNNING':
        if (context.awaitingApproval) {
          return trans.__(
            'Waiting for your approval of behavior %1',
            snapshot.behavior.iteration
          );
        }
        return trans.__(
          'Running behavior %1 of step %2',
          snapshot.behavior.iteration,
          stepLabel(snapshot)
        );
      default:
        break;
    }
    return trans.__('Waiting for the planner…');
  }
  if (context.finished?.reason === 'max_steps') {
    return trans.__(
      'Stopped after %1 behaviors (maximum execution steps)',
      snapshot.behaviorsRun
    );
  }
  if (snapshot.task !== null && snapshot.stages.length > 0) {
    return trans.__('Stopped at step %1', stepLabel(snapshot));
  }
  if (snapshot.task !== null) {
    return trans.__('Stopped');
  }
  return trans.__('Not started');
}

/** The run has something to resume: it stopped (or the page was reloaded) before completing. */
export function isResumable(snapshot: IRunSnapshot): boolean {
  return (
    !snapshot.running &&
    snapshot.task !== null &&
    snapshot.state !== 'WORKFLOW_COMPLETED' &&
    snapshot.state !== 'ERROR' &&
    snapshot.error === null
  );
}

/** Which run commands apply to a notebook whose run is in this state. */
export interface ICommandAvailability {
  run: boolean;
  pause: boolean;
  resume: boolean;
  step: boolean;
  stop: boolean;
  retry: boolean;
}

export function commandAvailability(
  snapshot: IRunSnapshot | null
): ICommandAvailability {
  if (!snapshot) {
    return {
      run: false,
      pause: false,
      resume: false,
      step: false,
      stop: false,
      retry: false
    };
  }
  const { paused, pausing } = snapshot;
  const failed = snapshot.state === 'ERROR' || snapshot.error !== null;
  // A completed workflow's loop only saves before it ends: nothing is left to pause or step.
  const active = snapshot.running && snapshot.state !== 'WORKFLOW_COMPLETED';
  return {
    run: !snapshot.running,
    pause: active && !paused && !pausing,
    resume: (active && (paused || pausing)) || isResumable(snapshot),
    step: active,
    stop: snapshot.running || failed,
    retry: !snapshot.running && failed && (snapshot.error?.retryable ?? true)
  };
}

// ---------------------------------------------------------------------------------------------
// The progress tree
// ---------------------------------------------------------------------------------------------

export interface IBehaviorNode {
  /** Unique in the tree: `<step>/<behavior>`. */
  key: string;
  id: string;
  iteration: number;
  status: ItemStatus;
  /** Current and the run is active (a current behavior of a stopped run was interrupted). */
  running: boolean;
  /** Running, and the run is paused (or pausing): it holds until Resume. */
  paused: boolean;
  goal: string | null;
  produced: string[];
  durationMs: number | null;
}

export interface IStepNode {
  id: string;
  name: string;
  status: ItemStatus;
  goal: string | null;
  /** The planner's guidance for the current step (markdown). */
  focus: string | null;
  /** The planner's latest assessment of the step, current or not. */
  assessment: Assessment | null;
  produced: string[];
  behaviors: IBehaviorNode[];
}

export interface IStageNode {
  id: string;
  name: string;
  status: ItemStatus;
  goal: string | null;
  focus: string | null;
  assessment: Assessment | null;
  produced: string[];
  steps: IStepNode[];
}

export interface IOutputItem {
  name: string;
  status: 'produced' | 'in_progress' | 'missing';
}

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
    if (levels.some(level => level.produced.includes(name))) {
      return { name, status: 'produced' };
    }
    if (levels.some(level => level.in_progress.includes(name))) {
      return { name, status: 'in_progress' };
    }
    return { name, status: 'missing' };
  });
}

/** `1234` -> `1.2 s`, `75000` -> `1 min 15 s`. */
export function formatDuration(ms: number, trans: TranslationBundle): string {
  if (Math.round(ms) < 1000) {
    return trans.__('%1 ms', Math.round(ms));
  }
  const tenths = Math.round(ms / 100);
  if (tenths < 600) {
    return trans.__('%1 s', (tenths / 10).toFixed(1));
  }
  const seconds = Math.round(ms / 1000);
  return trans.__('%1 min %2 s', Math.floor(seconds / 60), seconds % 60);
}

/** A ticking wait in whole seconds: `12000` -> `12 s`, `72000` -> `1 min 12 s`. */
export function formatElapsed(ms: number, trans: TranslationBundle): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) {
    return trans.__('%1 s', seconds);
  }
  return trans.__('%1 min %2 s', Math.floor(seconds / 60), seconds % 60);
}

/**
 * The planner line of the panel: its dialect once known, and where requests go. `model`: the model the
 * LLM planner said it ran (its `usage`), else its default model is named.
 */
export function describePlanner(
  dialect: string | null,
  location: {
    via: string;
    viaText?: IMessage;
    url?: string;
    source?: string;
    builtin?: boolean;
    llm?: { model: string };
  } | null,
  trans: TranslationBundle,
  model?: string
): { dialect: string; where: string | null } {
  // The documented protocol goes without saying; a v1 or bcc server is what its user chose.
  const name =
    dialect && dialect !== 'dslc'
      ? trans.__('Planner: %1 dialect', dialect)
      : trans.__('Planner');
  if (!location) {
    return { dialect: name, where: null };
  }
  if (location.llm) {
    return {
      dialect: trans.__('LLM planner: %1', model || location.llm.model),
      where: null
    };
  }
  if (location.builtin) {
    return {
      dialect: trans.__('Built-in demo planner'),
      where: trans.__(
        "A fixed pandas analysis. Set your planner's URL in Settings > Notebook-BCC."
      )
    };
  }
  if (!location.url) {
    return { dialect: name, where: translateVia(location, trans) };
  }
  switch (location.source) {
    case 'server':
    case 'overrides':
      return {
        dialect: name,
        where: trans.__(
          '%1 (set by your administrator), through the Jupyter server',
          location.url
        )
      };
    case 'default':
      return {
        dialect: name,
        where: trans.__(
          '%1 (the default URL), through the Jupyter server',
          location.url
        )
      };
    default:
      return {
        dialect: name,
        where: trans.__('%1, through the Jupyter server', location.url)
      };
  }
}

/** `5120` -> `5,120`: the same in every language the panel speaks. */
function formatCount(count: number): string {
  return count.toLocaleString('en-US');
}

/** `0.0123` -> `0.0123 USD`; a tiny cost keeps its first digits. */
function formatCost(cost: number, currency: string | undefined): string {
  const amount = cost.toLocaleString('en-US', {
    maximumFractionDigits: cost > 0 && cost < 0.01 ? 6 : 4
  });
  return currency ? `${amount} ${currency}` : amount;
}

/** The token line of an LLM planner's run: the last behavior's tokens, the run's, and their cost. */
export function describeUsage(
  usage: PlanningUsage,
  trans: TranslationBundle
): {
  behavior: string | null;
  run: string | null;
  cost: string | null;
  /** The model sent no token counts: the planner estimated them from the text. */
  estimated: string | null;
} {
  const tokens = (counts: TokenUsage | undefined) =>
    counts &&
    (counts.prompt_tokens !== undefined ||
      counts.completion_tokens !== undefined)
      ? {
          prompt: formatCount(counts.prompt_tokens ?? 0),
          completion: formatCount(counts.completion_tokens ?? 0)
        }
      : null;
  const behavior = tokens(usage.behavior);
  const run = tokens(usage.run);
  const calls = usage.run?.model_calls;
  // The LLM planner's `estimated` (not in the schema: a loose field it adds).
  const isEstimated = [usage.behavior, usage.run].some(
    counts =>
      (counts as { estimated?: unknown } | undefined)?.estimated === true
  );
  const cost = usage.cost;
  return {
    behavior: behavior
      ? trans.__(
          'Last behavior: %1 prompt + %2 completion tokens',
          behavior.prompt,
          behavior.completion
        )
      : null,
    run: run
      ? calls !== undefined
        ? trans._n(
            'Run: %2 prompt + %3 completion tokens in %1 model call',
            'Run: %2 prompt + %3 completion tokens in %1 model calls',
            calls,
            run.prompt,
            run.completion
          )
        : trans.__(
            'Run: %1 prompt + %2 completion tokens',
            run.prompt,
            run.completion
          )
      : null,
    cost:
      cost?.run !== undefined
        ? cost.behavior !== undefined
          ? trans.__(
              'Cost: %1 (last behavior %2)',
              formatCost(cost.run, cost.currency),
              formatCost(cost.behavior, cost.currency)
            )
          : trans.__('Cost: %1', formatCost(cost.run, cost.currency))
        : null,
    estimated: isEstimated && (behavior || run) ? trans.__('(estimated)') : null
  };
}

// ---------------------------------------------------------------------------------------------
// Focus texts
// ---------------------------------------------------------------------------------------------
