/**
 * The run loop (API_PROTOCOL "Planning First Protocol", spec README items 2, 3, 5, 6, 10, 11).
 *
 * Per step: /planning; target achieved -> the step completes and the runner moves on through the
 * workflow template itself; otherwise /generating (streamed), the actions are applied one by one, and
 * /planning is asked again with `behavior_feedback`. The server decides whether more behaviors follow.
 */
import { ISignal, Signal } from '@lumino/signaling';
import { isActionType } from '../protocol';
import type {
  Action,
  BehaviorFeedback,
  ContextFilter,
  GeneratingEvent,
  GeneratingRequestInput,
  ObservationInput,
  PlanningRequestInput,
  PlanningResponse,
  SectionProgress,
  WorkflowStep,
  WorkflowTemplate
} from '../protocol';
import { registerBuiltinActions, unwrapCodeFence } from './actions';
import { CellMap, ICellMapState } from './cells';
import { applyContextFilter } from './contextFilter';
import type { ICellProvenance, INotebookDriver } from './driver';
import { EffectsStore, IEffectsState } from './effects';
import {
  describeTransition,
  IFsmState,
  IFsmTransition,
  WorkflowStateMachine
} from './fsm';
import { buildObservation, fitRequest } from './observation';
import { IProgressState, WorkflowProgress } from './progress';
import {
  ActionRegistry,
  AnyAction,
  errorMessage,
  IActionContext,
  IDisposableLike,
  INewCell,
  unknownActionMessage
} from './registry';
import type { IRunSettings } from './settings';
import { RunTrace } from './trace';
import type {
  IActionApplied,
  IBehaviorTiming,
  ICellAdded,
  IPlannerService,
  IRunError,
  IRunFinished,
  IRunnerHooks,
  IRunSnapshot,
  IRunWarning,
  IStartOptions,
  IStopOptions,
  IWorkflowRunner
} from './types';

/** After this many /planning failures in a row the run stops with an error instead of falling back. */
export const MAX_PLANNING_FAILURES = 3;

type Phase = 'plan' | 'generate' | 'done';

interface IOpenBehavior {
  id: string;
  executed: number;
  succeeded: number;
  sectionsAdded: number;
  lastResult: string;
  /** Index of the next action within the behavior. */
  actionIndex: number;
  /** The previous behavior's effects have been moved to history. */
  rotated: boolean;
}

interface ILegacyContext {
  toDoList?: string[];
  section_progress?: SectionProgress;
}

/** What `saveRunState` stores in the notebook; read back by `resumeFromSaved`. */
export interface ISavedRunState {
  format: 'notebook-bcc-run';
  version: 1;
  savedAt: string;
  task: string | null;
  dataFiles: string[];
  phase: Phase;
  pendingFeedback: BehaviorFeedback | null;
  openBehavior: IOpenBehavior | null;
  endStepRequested: boolean;
  fsm: IFsmState;
  progress: IProgressState;
  effects: IEffectsState;
  /** Variables set by the planner (`context_update.variables`) and the task. */
  contextVariables: Record<string, unknown>;
  /** The last kernel variables seen, for views; collected again on resume. */
  kernelVariables: Record<string, unknown>;
  cells: ICellMapState;
  filter: ContextFilter | null;
  legacy: ILegacyContext;
  timings: IBehaviorTiming[];
  stepMode: boolean;
}

export function isSavedRunState(value: unknown): value is ISavedRunState {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const record = value as Record<string, unknown>;
  return (
    record.format === 'notebook-bcc-run' &&
    record.version === 1 &&
    typeof record.progress === 'object' &&
    typeof record.fsm === 'object'
  );
}

export interface IWorkflowRunnerOptions {
  driver: INotebookDriver;
  client: IPlannerService;
  /** Read before every request and action, so changed settings apply at once. */
  settings: () => IRunSettings;
  hooks?: IRunnerHooks;
  /**
   * A shared registry (e.g. the one behind the extension's token). The caller registers the built-in
   * handlers in it (`registerBuiltinActions`); when absent the runner makes its own with them.
   */
  registry?: ActionRegistry;
  /** Give the same instance to the `PlannerClient` as its `observer`: the trace is recorded from it. */
  trace?: RunTrace;
  now?: () => Date;
}

class RunStopped extends Error {
  constructor() {
    super('The run was stopped');
    this.name = 'RunStopped';
  }
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Whether two templates have the same stages and steps (by id, in order). The documents call for a
 * confirmation of a "major" workflow update without defining it: a change of this structure is major.
 */
function sameStructure(a: WorkflowTemplate, b: WorkflowTemplate): boolean {
  const shape = (t: WorkflowTemplate) =>
    t.stages.map(stage => [stage.id, stage.steps.map(step => step.id)]);
  return sameJson(shape(a), shape(b));
}

function codeOf(action: AnyAction): string | null {
  if (action.action === 'add') {
    const add = action as Extract<Action, { action: 'add' }>;
    return add.shot_type === 'action' ? unwrapCodeFence(add.content) : null;
  }
  return null;
}

export class WorkflowRunner implements IWorkflowRunner {
  constructor(options: IWorkflowRunnerOptions) {
    this._driver = options.driver;
    this._client = options.client;
    this._settings = options.settings;
    this._hooks = options.hooks ?? {};
    this._now = options.now ?? (() => new Date());
    this._trace =
      options.trace ?? new RunTrace({ now: () => this._now().getTime() });
    if (options.registry) {
      this._registry = options.registry;
    } else {
      this._registry = new ActionRegistry();
      this._builtins = registerBuiltinActions(this._registry);
    }
    this._fsm = new WorkflowStateMachine({ now: this._now });
    this._progress = new WorkflowProgress(this._now);
    this._effects = new EffectsStore(() => this._settings().maxHistoryItems);
    this._fsm.changed.connect(this._onTransition, this);
  }

  get stateChanged(): ISignal<IWorkflowRunner, IFsmTransition> {
    return this._stateChanged;
  }

  get progressChanged(): ISignal<IWorkflowRunner, IRunSnapshot> {
    return this._progressChanged;
  }

  get effectsChanged(): ISignal<IWorkflowRunner, IEffectsState> {
    return this._effectsChanged;
  }

  get warning(): ISignal<IWorkflowRunner, IRunWarning> {
    return this._warning;
  }

  get errorOccurred(): ISignal<IWorkflowRunner, IRunError> {
    return this._errorOccurred;
  }

  get cellAdded(): ISignal<IWorkflowRunner, ICellAdded> {
    return this._cellAdded;
  }

  get actionApplied(): ISignal<IWorkflowRunner, IActionApplied> {
    return this._actionApplied;
  }

  get finished(): ISignal<IWorkflowRunner, IRunFinished> {
    return this._finished;
  }

  get registry(): ActionRegistry {
    return this._registry;
  }

  get trace(): RunTrace {
    return this._trace;
  }

  get isRunning(): boolean {
    return this._loop !== null;
  }

  get effects(): IEffectsState {
    return this._effects.toJSON();
  }

  get snapshot(): IRunSnapshot {
    const last = this._fsm.lastTransition;
    return {
      ...this._progress.snapshot(this._fsm.state === 'WORKFLOW_COMPLETED'),
      state: this._fsm.state,
      running: this._loop !== null,
      paused: this._paused,
      pauseReason:
        this._paused || this._pauseRequested ? this._pauseReason : null,
      pausing: this._pauseRequested && !this._paused,
      error: this._error ? { ...this._error } : null,
      task: this._task,
      behaviorsRun: this._behaviorsRun,
      maxExecutionSteps: this._settings().maxExecutionSteps,
      bufferedActions: this._buffer.length,
      lastTransition: last ? describeTransition(last) : null,
      lastTransitionAt: last?.timestamp ?? null,
      timings: this._timings.map(t => ({ ...t }))
    };
  }

  async start(options: IStartOptions): Promise<IRunFinished> {
    this._assertIdle();
    let savedTemplate: WorkflowTemplate | null = null;
    try {
      const saved = await this._driver.loadRunState();
      if (isSavedRunState(saved)) {
        savedTemplate = saved.progress.template;
      }
    } catch (error) {
      this._warn(
        `The saved run state could not be read: ${errorMessage(error)}`,
        'driver'
      );
    }
    this._assertIdle();
    this._resetRun();
    const dataFiles = options.dataFiles ?? [];
    this._task = options.task;
    this._dataFiles = [...dataFiles];
    this._stepMode = options.stepMode ?? false;
    this._contextVariables = { problem_description: options.task };
    if (dataFiles.length > 0) {
      this._contextVariables.csv_file_path = dataFiles[0];
      this._contextVariables.data_files = [...dataFiles];
    }
    this._trace.clear();
    this._fsm.dispatch('START_WORKFLOW');
    const firstStage = savedTemplate?.stages[0] ?? null;
    if (savedTemplate) {
      this._progress.setTemplate(savedTemplate);
    }
    this._progress.startStage(firstStage?.id ?? null);
    this._fsm.dispatch('START_STEP');
    this._progress.startStep(firstStage?.steps[0]?.id ?? null);
    this._phase = this._stepStartPhase();
    return this._launch();
  }

  async resumeFromSaved(): Promise<IRunFinished | null> {
    this._assertIdle();
    const saved = await this._driver.loadRunState();
    if (!isSavedRunState(saved)) {
      if (saved !== null && saved !== undefined) {
        this._warn(
          'The run state saved in this notebook is not readable; start a new run.',
          'driver'
        );
      }
      return null;
    }
    this._assertIdle();
    this._resetRun();
    this._restore(saved);
    if (saved.phase === 'done' || saved.fsm.state === 'WORKFLOW_COMPLETED') {
      const finished: IRunFinished = {
        reason: 'completed',
        message: 'The saved run had already completed.'
      };
      this._finished.emit(finished);
      return finished;
    }
    if (this._behavior) {
      this._closeInterruptedBehavior('interrupted');
    }
    this._fsm.dispatch('RESET');
    this._fsm.dispatch('START_WORKFLOW');
    this._fsm.dispatch('START_STEP');
    this._phase = 'plan';
    return this._launch();
  }

  pause(): void {
    if (this._loop) {
      this._requestPause('Paused by the user');
    }
  }

  resume(): void {
    if (!this._loop || !(this._paused || this._pauseRequested)) {
      return;
    }
    this._pauseRequested = false;
    this._wake();
    this._emitProgress();
  }

  step(): void {
    if (!this._loop) {
      return;
    }
    this._pauseAfterBehavior = true;
    this.resume();
  }

  async stop(options: IStopOptions = {}): Promise<void> {
    const loop = this._loop;
    if (loop) {
      this._stopRequested = true;
      this._abort.abort();
      for (const listener of [...this._stopListeners]) {
        listener();
      }
      this._stopListeners.clear();
      this._wake();
      if (options.interruptKernel) {
        try {
          await this._driver.interruptKernel();
        } catch (error) {
          this._warn(
            `The kernel could not be interrupted: ${errorMessage(error)}`,
            'driver'
          );
        }
      }
      await loop;
      return;
    }
    if (this._fsm.state === 'ERROR') {
      this._finished.emit(await this._settleStopped());
    }
  }

  async retry(): Promise<IRunFinished> {
    this._assertIdle();
    if (this._fsm.state !== 'ERROR') {
      throw new Error('There is no failed request to retry.');
    }
    this._error = null;
    this._planningFailures = 0;
    this._variablesDirty = true;
    this._fsm.dispatch('RESUME');
    return this._launch();
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    if (this._loop) {
      void this.stop();
    }
    this._builtins?.dispose();
    Signal.clearData(this);
    this._fsm.changed.disconnect(this._onTransition, this);
  }

  // ------------------------------------------------------------------------------------------
  // The loop
  // ------------------------------------------------------------------------------------------

  private _launch(): Promise<IRunFinished> {
    this._stopRequested = false;
    this._abort = new AbortController();
    const loop = this._drive();
    this._loop = loop;
    return loop;
  }

  private async _drive(): Promise<IRunFinished> {
    // Lets `_launch` record the loop before any of it runs.
    await Promise.resolve();
    this._emitProgress();
    let finished: IRunFinished;
    try {
      finished = await this._run();
    } catch (error) {
      if (this._stopRequested || error instanceof RunStopped) {
        finished = await this._settleStopped();
      } else {
        finished = await this._failWith({
          endpoint: 'engine',
          message: `The run failed: ${errorMessage(error)}`,
          retryable: true
        });
      }
    }
    this._buffer = [];
    this._loop = null;
    this._emitProgress();
    this._finished.emit(finished);
    return finished;
  }

  private async _run(): Promise<IRunFinished> {
    for (;;) {
      if (this._stopRequested) {
        throw new RunStopped();
      }
      if (this._phase === 'done') {
        return this._complete();
      }
      await this._pausePoint();
      const outcome =
        this._phase === 'plan'
          ? await this._planPhase()
          : await this._generatePhase();
      if (outcome) {
        return outcome;
      }
    }
  }

  private async _planPhase(): Promise<IRunFinished | null> {
    await this._refreshVariables();
    const body =
      this._takeRetry('planning') ??
      this._planningRequest(this._pendingFeedback);
    let response: PlanningResponse;
    try {
      response = await this._untilStopped(
        this._client.planning(body, {
          signal: this._abort.signal,
          onWarning: message => this._warn(message, 'planner')
        })
      );
    } catch (error) {
      if (this._stopRequested) {
        throw new RunStopped();
      }
      this._planningFailures++;
      const message = `/planning failed: ${errorMessage(error)}`;
      if (this._planningFailures >= MAX_PLANNING_FAILURES) {
        this._retry = { endpoint: 'planning', body };
        return this._failWith({
          endpoint: 'planning',
          message: `${message} (${this._planningFailures} times in a row)`,
          retryable: true
        });
      }
      this._warn(`${message}; falling back to /generating`, 'planner');
      this._addEffect(
        `⚠️ WARN: ${message}; continuing with /generating without a plan`
      );
      this._pendingFeedback = null;
      this._filter = null;
      this._phase = 'generate';
      return null;
    }
    this._planningFailures = 0;
    this._pendingFeedback = null;
    if (await this._applyPlanning(response)) {
      return null;
    }
    const achieved =
      response.targetAchieved || response.transition?.target_achieved === true;
    if (achieved) {
      await this._completeStep();
    } else if (response.transition?.continue_behaviors === false) {
      const step = this._progress.currentStepId ?? '(unnamed)';
      this._warn(
        `The planner ended step '${step}' without reaching its target; moving on.`,
        'planner'
      );
      await this._completeStep('ended without reaching its target');
    } else {
      this._phase = 'generate';
    }
    return null;
  }

  private async _generatePhase(): Promise<IRunFinished | null> {
    if (!this._behavior) {
      const max = this._settings().maxExecutionSteps;
      if (max > 0 && this._behaviorsRun >= max) {
        return this._stopForMaxSteps(max);
      }
      this._beginBehavior();
    }
    await this._refreshVariables();
    const body =
      this._takeRetry('generating') ?? (await this._generatingRequest());
    const failed = await this._runBehavior(body);
    if (failed) {
      return failed;
    }
    await this._closeBehavior();
    return null;
  }

  private async _runBehavior(
    body: GeneratingRequestInput
  ): Promise<IRunFinished | null> {
    const queue: Extract<GeneratingEvent, { kind: 'action' }>[] = [];
    this._buffer = queue;
    let ended = false;
    let failure: unknown = null;
    const stream = this._client.generating(body, {
      signal: this._abort.signal
    });
    const reader = (async () => {
      try {
        for await (const event of stream) {
          if (this._stopRequested) {
            break;
          }
          if (event.kind === 'action') {
            queue.push(event);
          } else {
            this._warn(event.message, 'planner');
            this._addEffect(`⚠️ WARN: ${event.message}`);
          }
          this._wake();
        }
      } catch (error) {
        failure = error;
      } finally {
        ended = true;
        this._wake();
      }
    })();

    if (this._settings().interactive) {
      while (!ended && !this._stopRequested) {
        await this._waitWake();
      }
      if (this._stopRequested) {
        throw new RunStopped();
      }
      // Nothing of an unapproved or broken behavior is applied; a retry asks again.
      if (failure !== null || !(await this._approve(queue))) {
        queue.length = 0;
      }
    }

    for (;;) {
      await this._pausePoint();
      if (this._stopRequested) {
        throw new RunStopped();
      }
      const next = queue.shift();
      if (next) {
        await this._applyAction(next.action);
        continue;
      }
      if (ended) {
        break;
      }
      await this._waitWake();
    }
    await reader;
    if (failure !== null) {
      if (this._stopRequested) {
        throw new RunStopped();
      }
      const message = `/generating failed: ${errorMessage(failure)}`;
      const applied = (this._behavior as IOpenBehavior).actionIndex;
      if (applied === 0) {
        this._retry = { endpoint: 'generating', body };
      } else {
        // Re-sending the request would replay the actions already applied and add their cells twice:
        // the behavior ends with what it did, and a retry asks /planning what comes next.
        this._addEffect(
          `⚠️ ${message} after ${applied} action(s) were applied; they are kept and the behavior ends here.`
        );
        if (this._fsm.can('COMPLETE_BEHAVIOR')) {
          this._fsm.dispatch('COMPLETE_BEHAVIOR');
        }
        this._closeInterruptedBehavior('error');
        this._phase = 'plan';
      }
      return this._failWith({
        endpoint: 'generating',
        message,
        retryable: true
      });
    }
    return null;
  }

  /** Interactive mode; false when the behavior is to be skipped. Throws when the user stops the run. */
  private async _approve(
    queue: Extract<GeneratingEvent, { kind: 'action' }>[]
  ): Promise<boolean> {
    const actions = queue.map(event => event.action);
    const codeCells = actions
      .map(codeOf)
      .filter((code): code is string => code !== null);
    const runsCode = actions.some(a => a.action === 'exec');
    const approve = this._hooks.approveBehavior;
    if (!approve || (codeCells.length === 0 && !runsCode)) {
      return true;
    }
    const behavior = this._behavior as IOpenBehavior;
    let decision: string;
    try {
      decision = await this._untilStopped(
        approve.call(this._hooks, {
          behaviorId: behavior.id,
          stageId: this._progress.currentStageId,
          stepId: this._progress.currentStepId,
          codeCells,
          actions
        })
      );
    } catch (error) {
      if (this._stopRequested) {
        throw new RunStopped();
      }
      this._warn(
        `The behavior approval failed (${errorMessage(error)}); the behavior is skipped.`,
        'hook'
      );
      decision = 'skip';
    }
    if (decision === 'stop') {
      this._stopRequested = true;
      this._abort.abort();
      throw new RunStopped();
    }
    if (decision === 'skip') {
      this._addEffect(
        `Behavior ${behavior.id} was skipped by the user: its ${actions.length} actions were not applied.`
      );
      behavior.lastResult = 'skipped';
      return false;
    }
    return true;
  }

  private async _applyAction(action: AnyAction): Promise<void> {
    const behavior = this._behavior as IOpenBehavior;
    this._rotateEffects();
    this._fsm.dispatch(
      this._fsm.state === 'ACTION_COMPLETED' ? 'NEXT_ACTION' : 'START_ACTION'
    );
    const index = behavior.actionIndex++;
    const provenance: ICellProvenance = {
      stage_id: this._progress.currentStageId,
      step_id: this._progress.currentStepId,
      behavior_id: behavior.id,
      action_index: index,
      action: action.action
    };
    if (typeof action.store_id === 'string') {
      provenance.store_id = action.store_id;
    }
    if (!this._registry.has(action.action)) {
      this._warn(unknownActionMessage(action.action), 'action');
    }
    const result = await this._registry.execute(
      action,
      this._actionContext(provenance)
    );
    behavior.executed++;
    if (result.ok) {
      behavior.succeeded++;
    }
    if (result.sectionAdded) {
      behavior.sectionsAdded++;
    }
    behavior.lastResult = result.ok ? 'success' : 'error';
    if (result.summary) {
      this._progress.recordAction(result.summary);
    }
    if (action.action === 'exec' || !isActionType(action.action)) {
      this._variablesDirty = true;
    }
    this._fsm.dispatch('COMPLETE_ACTION');
    this._actionApplied.emit({
      behaviorId: behavior.id,
      index,
      action,
      result
    });
    if (
      this._variablesDirty &&
      action.action === 'exec' &&
      this._tracksOutputs() &&
      !this._stopRequested &&
      !this._pauseRequested
    ) {
      await this._refreshVariables();
    }
  }

  private _actionContext(provenance: ICellProvenance): IActionContext {
    return {
      driver: this._driver,
      settings: this._settings(),
      provenance,
      cells: this._cells,
      effects: { add: text => this._addEffect(text) },
      signal: this._abort.signal,
      run: {
        addCell: cell => this._addCell(cell, provenance),
        updateWorkflow: template => this._proposeWorkflow(template),
        replaceStageSteps: (stageId, steps) =>
          this._replaceStageSteps(stageId, steps),
        endStep: stepId => {
          const current = this._progress.currentStepId;
          if (stepId && current && stepId !== current) {
            this._warn(
              `end_phase names step '${stepId}' but step '${current}' is running; the running step is completed.`,
              'action'
            );
          }
          this._endStepRequested = true;
        },
        pause: reason => {
          this._warn(reason, 'action');
          this._requestPause(reason);
        },
        warn: message => this._warn(message, 'action')
      }
    };
  }

  private async _addCell(
    cell: INewCell,
    provenance: ICellProvenance
  ): Promise<string> {
    const cellProvenance = cell.storeId
      ? { ...provenance, store_id: cell.storeId }
      : provenance;
    const cellId = await this._driver.addCell({
      kind: cell.kind,
      source: cell.source,
      role: cell.role,
      provenance: cellProvenance,
      metadata: cell.metadata
    });
    this._cells.cellAdded(cellId, cell.kind, cell.storeId);
    this._cellAdded.emit({
      cellId,
      kind: cell.kind,
      role: cell.role,
      provenance: cellProvenance,
      follow: this._settings().followNewCells
    });
    return cellId;
  }

  // ------------------------------------------------------------------------------------------
  // Behaviors, steps, stages
  // ------------------------------------------------------------------------------------------

  private _beginBehavior(): void {
    this._fsm.dispatch(
      this._fsm.state === 'BEHAVIOR_COMPLETED'
        ? 'NEXT_BEHAVIOR'
        : 'START_BEHAVIOR'
    );
    const id = this._progress.startBehavior();
    this._behavior = {
      id,
      executed: 0,
      succeeded: 0,
      sectionsAdded: 0,
      lastResult: 'success',
      actionIndex: 0,
      rotated: false
    };
    this._endStepRequested = false;
    this._timings.push({
      behaviorId: id,
      stageId: this._progress.currentStageId,
      stepId: this._progress.currentStepId,
      startedAt: this._now().toISOString(),
      endedAt: null,
      durationMs: null
    });
    this._trimTimings();
    this._emitProgress();
  }

  private async _closeBehavior(): Promise<void> {
    this._rotateEffects();
    this._fsm.dispatch('COMPLETE_BEHAVIOR');
    await this._refreshVariables();
    const feedback = this._finishBehavior();
    this._behaviorsRun++;
    if (this._endStepRequested) {
      this._endStepRequested = false;
      await this._completeStep();
    } else {
      this._pendingFeedback = feedback;
      this._phase = 'plan';
      await this._saveState();
    }
    if (this._stepMode || this._pauseAfterBehavior) {
      this._pauseAfterBehavior = false;
      this._requestPause('Step mode: paused after one behavior');
    }
    this._emitProgress();
  }

  /** Records the open behavior as completed; returns its feedback. */
  private _finishBehavior(note?: string): BehaviorFeedback {
    const behavior = this._behavior as IOpenBehavior;
    this._progress.completeBehavior(Object.keys(this._kernelVariables), note);
    const timing = this._timings.find(t => t.behaviorId === behavior.id);
    if (timing && timing.endedAt === null) {
      const end = this._now();
      timing.endedAt = end.toISOString();
      timing.durationMs = end.getTime() - Date.parse(timing.startedAt);
    }
    this._behavior = null;
    return {
      behavior_id: behavior.id,
      actions_executed: behavior.executed,
      actions_succeeded: behavior.succeeded,
      sections_added: behavior.sectionsAdded,
      last_action_result: note ?? behavior.lastResult
    };
  }

  /** A behavior cut short (stop, reload): recorded as it is, its feedback kept for the next plan. */
  private _closeInterruptedBehavior(note: string): void {
    this._pendingFeedback = this._finishBehavior(note);
    this._endStepRequested = false;
  }

  private async _completeStep(note?: string): Promise<void> {
    this._fsm.dispatch('COMPLETE_STEP');
    await this._refreshVariables();
    const present = Object.keys(this._kernelVariables);
    this._progress.completeStep(present, note);
    this._pendingFeedback = null;
    const nextStep = this._progress.nextStep();
    if (nextStep) {
      this._fsm.dispatch('NEXT_STEP');
      this._progress.startStep(nextStep.id);
      this._phase = this._stepStartPhase();
    } else {
      this._fsm.dispatch('COMPLETE_STAGE');
      this._progress.completeStage(present);
      const nextStage = this._progress.nextStage();
      if (nextStage) {
        this._enterStage(nextStage.id);
      } else {
        this._fsm.dispatch('COMPLETE_WORKFLOW');
        this._phase = 'done';
      }
    }
    await this._saveState();
    this._emitProgress();
  }

  private _enterStage(stageId: string): void {
    this._fsm.dispatch('NEXT_STAGE');
    this._progress.startStage(stageId);
    this._fsm.dispatch('START_STEP');
    this._progress.startStep(this._progress.currentStage?.steps[0]?.id ?? null);
    this._phase = this._stepStartPhase();
  }

  /** `workflow_update.nextStageId`: leave the current step and stage for another stage. */
  private async _jumpToStage(stageId: string): Promise<boolean> {
    if (
      stageId === this._progress.currentStageId ||
      !this._progress.findStage(stageId)
    ) {
      return false;
    }
    this._fsm.dispatch('COMPLETE_STEP');
    await this._refreshVariables();
    const present = Object.keys(this._kernelVariables);
    this._progress.completeStep(present, `left for stage ${stageId}`);
    this._fsm.dispatch('COMPLETE_STAGE');
    this._progress.completeStage(present);
    this._enterStage(stageId);
    this._pendingFeedback = null;
    await this._saveState();
    this._emitProgress();
    return true;
  }

  private _stepStartPhase(): Phase {
    return this._settings().startMode === 'generation' ? 'generate' : 'plan';
  }

  // ------------------------------------------------------------------------------------------
  // Planner answers
  // ------------------------------------------------------------------------------------------

  /** Applies `context_update` and `context_filter`; true when the run moved to another stage. */
  private async _applyPlanning(response: PlanningResponse): Promise<boolean> {
    const update = response.context_update;
    let jumped = false;
    if (update?.workflow_update) {
      const applied = await this._proposeWorkflow(
        update.workflow_update.workflowTemplate
      );
      const next = update.workflow_update.nextStageId;
      if (applied && next) {
        jumped = await this._jumpToStage(next);
      }
    }
    if (update?.stage_steps_update) {
      await this._replaceStageSteps(
        update.stage_steps_update.stage_id,
        update.stage_steps_update.steps
      );
    }
    if (update?.variables) {
      Object.assign(this._contextVariables, update.variables);
    }
    const progressUpdate = update?.progress_update;
    if (progressUpdate) {
      if (progressUpdate.focus !== undefined) {
        this._progress.setFocus(progressUpdate.level, progressUpdate.focus);
      }
      const expected = progressUpdate.current_outputs?.expected;
      if (expected && expected.length > 0) {
        if (progressUpdate.level === 'behaviors') {
          this._progress.planBehaviorOutputs(expected);
        } else {
          this._progress.setExpected(progressUpdate.level, expected);
        }
      }
    }
    if (update?.effects_update) {
      this._effects.replace(update.effects_update);
      this._effectsChanged.emit(this._effects.toJSON());
    }
    if (update?.todo_list_update) {
      const { operation, items } = update.todo_list_update;
      const list = this._legacy.toDoList ?? [];
      this._legacy.toDoList =
        operation === 'remove'
          ? list.filter(item => !items.includes(item))
          : operation === 'add'
            ? [...list, ...items.filter(item => !list.includes(item))]
            : [...items];
    }
    if (update?.section_progress) {
      this._legacy.section_progress = { ...update.section_progress };
    }
    if (response.behavior?.target) {
      this._progress.setBehaviorGoal(response.behavior.target);
    }
    this._filter = response.context_filter ?? null;
    const expected = this._filter?.outputs_tracking?.expected_variables;
    if (expected) {
      this._progress.planBehaviorOutputs(expected);
    }
    if (response.actions && response.actions.length > 0) {
      this._warn(
        `The /planning answer carried ${response.actions.length} actions; they are ignored (actions come from /generating).`,
        'planner'
      );
    }
    this._emitProgress();
    return jumped;
  }

  /** A template from the planner: the first is taken as is, a different one is confirmed. */
  private async _proposeWorkflow(template: WorkflowTemplate): Promise<boolean> {
    const current = this._progress.template;
    if (current && sameJson(current, template)) {
      return true;
    }
    if (!current) {
      this._adoptTemplate(template);
      return true;
    }
    if (sameStructure(current, template)) {
      // A minor update: the same stages and steps in the same order, only names, goals or expected
      // outputs differ. Nothing the run is in moves, so it is applied without asking.
      this._adoptTemplate(template);
      this._addEffect(
        'The planner updated the names or goals of the workflow (same stages and steps); applied.'
      );
      this._emitProgress();
      return true;
    }
    this._fsm.dispatch('UPDATE_WORKFLOW');
    this._emitProgress();
    let accepted = true;
    const confirm = this._hooks.confirmWorkflowUpdate;
    if (!this._settings().autoAcceptWorkflowUpdates && confirm) {
      try {
        accepted = await this._untilStopped(
          confirm.call(this._hooks, template, current)
        );
      } catch (error) {
        if (this._stopRequested) {
          this._fsm.dispatch('UPDATE_WORKFLOW_REJECTED');
          throw new RunStopped();
        }
        this._warn(
          `Confirming the workflow update failed (${errorMessage(error)}); the current workflow is kept.`,
          'hook'
        );
        accepted = false;
      }
    }
    this._fsm.dispatch(
      accepted ? 'UPDATE_WORKFLOW_CONFIRMED' : 'UPDATE_WORKFLOW_REJECTED'
    );
    if (accepted) {
      this._adoptTemplate(template);
    } else {
      this._addEffect(
        'The workflow update was rejected by the user; the current workflow is kept.'
      );
    }
    this._emitProgress();
    return accepted;
  }

  private _adoptTemplate(template: WorkflowTemplate): void {
    this._progress.setTemplate(template);
    const first = template.stages[0];
    if (this._progress.currentStageId === null && first) {
      this._progress.adoptLocation(first.id, first.steps[0]?.id ?? null);
    }
  }

  private async _replaceStageSteps(
    stageId: string | null,
    steps: WorkflowStep[]
  ): Promise<boolean> {
    const id = stageId ?? this._progress.currentStageId;
    this._fsm.dispatch('UPDATE_STEP');
    const applied = id !== null && this._progress.replaceStageSteps(id, steps);
    this._fsm.dispatch(
      applied ? 'UPDATE_STEP_CONFIRMED' : 'UPDATE_STEP_REJECTED'
    );
    if (
      applied &&
      id === this._progress.currentStageId &&
      this._progress.currentStepId === null &&
      steps[0]
    ) {
      this._progress.adoptLocation(id, steps[0].id);
    }
    this._emitProgress();
    return applied;
  }

  // ------------------------------------------------------------------------------------------
  // Requests
  // ------------------------------------------------------------------------------------------

  private _observation() {
    return buildObservation({
      progress: this._progress,
      variables: { ...this._contextVariables, ...this._kernelVariables },
      effects: this._effects.toJSON(),
      notebook: this._driver.notebookSummary(),
      fsm: this._fsm.toContext(),
      legacy: this._legacy
    });
  }

  private _planningRequest(
    feedback: BehaviorFeedback | null
  ): PlanningRequestInput {
    const request: PlanningRequestInput = {
      observation: this._observation(),
      options: { stream: false }
    };
    if (feedback) {
      request.behavior_feedback = feedback;
    }
    return this._fit(request);
  }

  private async _generatingRequest(): Promise<GeneratingRequestInput> {
    const full = this._observation();
    const filter = this._filter;
    this._filter = null;
    let summaries: Record<string, unknown> = {};
    const toSummarize = filter?.variables_to_summarize;
    if (toSummarize && Object.keys(toSummarize).length > 0) {
      try {
        summaries = await this._untilStopped(
          this._driver.summarizeVariables(toSummarize)
        );
      } catch (error) {
        if (error instanceof RunStopped) {
          throw error;
        }
        this._warn(
          `Summarizing variables in the kernel failed: ${errorMessage(error)}`,
          'driver'
        );
      }
    }
    const { observation, warnings } = applyContextFilter(
      full,
      filter,
      summaries
    );
    for (const warning of warnings) {
      this._warn(warning, 'filter');
      this._addEffect(warning);
    }
    return this._fit({ observation, options: { stream: true } });
  }

  private _fit<T extends { observation: ObservationInput }>(request: T): T {
    const max = this._settings().maxContextLength;
    const { request: fitted, report } = fitRequest(request, max);
    if (!report.fits) {
      this._warn(
        `The request is ${report.finalLength} characters, over the ${max} limit even after trimming; it is sent as it is.`,
        'engine'
      );
    }
    return fitted;
  }

  private _takeRetry(endpoint: 'planning'): PlanningRequestInput | null;
  private _takeRetry(endpoint: 'generating'): GeneratingRequestInput | null;
  private _takeRetry(
    endpoint: 'planning' | 'generating'
  ): PlanningRequestInput | GeneratingRequestInput | null {
    const retry = this._retry;
    if (!retry || retry.endpoint !== endpoint) {
      return null;
    }
    this._retry = null;
    return retry.body;
  }

  // ------------------------------------------------------------------------------------------
  // Pause, stop, errors, completion
  // ------------------------------------------------------------------------------------------

  private _requestPause(reason: string): void {
    this._pauseRequested = true;
    this._pauseReason = reason;
    this._wake();
    this._emitProgress();
  }

  /** An action boundary: a requested pause takes effect here. */
  private async _pausePoint(): Promise<void> {
    if (!this._pauseRequested || this._stopRequested) {
      return;
    }
    this._fsm.dispatch('PAUSE');
    this._paused = true;
    this._emitProgress();
    await this._saveState();
    while (this._pauseRequested && !this._stopRequested) {
      await this._waitWake();
    }
    this._paused = false;
    if (this._stopRequested) {
      throw new RunStopped();
    }
    this._pauseReason = null;
    // The user may have run cells while the run was paused.
    this._variablesDirty = true;
    this._fsm.dispatch('RESUME');
    this._emitProgress();
  }

  private _stopForMaxSteps(max: number): Promise<IRunFinished> {
    const message = `Stopped after ${this._behaviorsRun} behaviors: the maximum number of execution steps (${max}) was reached. Raise it in the settings, or resume the run to go on.`;
    this._warn(message, 'engine');
    return this._settle({ reason: 'max_steps', message });
  }

  private _settleStopped(): Promise<IRunFinished> {
    return this._settle({
      reason: 'stopped',
      message: 'The run was stopped; it can be resumed from the current step.'
    });
  }

  /** Leaves a consistent, saved, resumable state: the current step is planned again on resume. */
  private async _settle(finished: IRunFinished): Promise<IRunFinished> {
    if (this._behavior) {
      this._closeInterruptedBehavior(
        finished.reason === 'stopped' ? 'stopped' : 'interrupted'
      );
    }
    if (this._phase !== 'done') {
      this._phase = 'plan';
    }
    this._retry = null;
    this._error = null;
    this._paused = false;
    this._pauseRequested = false;
    this._pauseReason = null;
    this._pauseAfterBehavior = false;
    if (this._fsm.can('CANCEL')) {
      this._fsm.dispatch('CANCEL');
    }
    await this._saveState();
    return finished;
  }

  private async _failWith(error: IRunError): Promise<IRunFinished> {
    this._error = error;
    if (this._fsm.can('FAIL')) {
      this._fsm.dispatch('FAIL');
    }
    this._errorOccurred.emit({ ...error });
    await this._saveState();
    return { reason: 'error', message: error.message };
  }

  private async _complete(): Promise<IRunFinished> {
    await this._saveState();
    return {
      reason: 'completed',
      message: 'The workflow is complete: every stage and step is done.'
    };
  }

  private _untilStopped<T>(work: Promise<T>): Promise<T> {
    if (this._stopRequested) {
      return Promise.reject(new RunStopped());
    }
    return new Promise<T>((resolve, reject) => {
      const onStop = () => reject(new RunStopped());
      this._stopListeners.add(onStop);
      work.then(
        value => {
          this._stopListeners.delete(onStop);
          resolve(value);
        },
        (error: unknown) => {
          this._stopListeners.delete(onStop);
          reject(error);
        }
      );
    });
  }

  private _wake(): void {
    const wakers = this._wakers;
    this._wakers = [];
    for (const wake of wakers) {
      wake();
    }
  }

  private _waitWake(): Promise<void> {
    return new Promise(resolve => this._wakers.push(resolve));
  }

  // ------------------------------------------------------------------------------------------
  // State
  // ------------------------------------------------------------------------------------------

  private async _refreshVariables(): Promise<void> {
    if (!this._variablesDirty) {
      return;
    }
    try {
      this._kernelVariables = await this._untilStopped(
        this._driver.collectVariables()
      );
    } catch (error) {
      if (error instanceof RunStopped) {
        throw error;
      }
      this._warn(
        `Kernel variables could not be collected: ${errorMessage(error)}`,
        'driver'
      );
    }
    this._variablesDirty = false;
    if (this._progress.observeVariables(Object.keys(this._kernelVariables))) {
      this._emitProgress();
    }
  }

  private _tracksOutputs(): boolean {
    return (['stages', 'steps', 'behaviors'] as const).some(
      level => this._progress.outputs(level).expected.length > 0
    );
  }

  private _addEffect(text: string): void {
    if (this._behavior) {
      this._rotateEffects();
    }
    this._effects.add(text);
    this._effectsChanged.emit(this._effects.toJSON());
  }

  /** The first effect of a behavior moves the previous behavior's effects to history. */
  private _rotateEffects(): void {
    const behavior = this._behavior;
    if (behavior && !behavior.rotated) {
      behavior.rotated = true;
      this._effects.rotate();
      this._effectsChanged.emit(this._effects.toJSON());
    }
  }

  private _warn(message: string, source: IRunWarning['source']): void {
    this._warning.emit({ message, source });
  }

  private _emitProgress(): void {
    this._progressChanged.emit(this.snapshot);
  }

  private _onTransition(_: WorkflowStateMachine, transition: IFsmTransition) {
    this._stateChanged.emit(transition);
  }

  private _assertIdle(): void {
    if (this._loop) {
      throw new Error('A run is already active in this notebook.');
    }
  }

  private _trimTimings(): void {
    const limit = Math.max(1, this._settings().maxHistoryItems);
    if (this._timings.length > limit) {
      this._timings.splice(0, this._timings.length - limit);
    }
  }

  private _resetRun(): void {
    this._fsm.restore({ state: 'IDLE', returnTo: null, history: [] });
    this._progress.reset();
    this._effects.restore({ current: [], history: [] });
    this._cells.clear();
    this._task = null;
    this._dataFiles = [];
    this._contextVariables = {};
    this._kernelVariables = {};
    this._variablesDirty = true;
    this._legacy = {};
    this._filter = null;
    this._phase = 'plan';
    this._pendingFeedback = null;
    this._behavior = null;
    this._endStepRequested = false;
    this._behaviorsRun = 0;
    this._planningFailures = 0;
    this._retry = null;
    this._error = null;
    this._timings = [];
    this._stepMode = false;
    this._pauseAfterBehavior = false;
    this._pauseRequested = false;
    this._pauseReason = null;
    this._paused = false;
  }

  private _restore(saved: ISavedRunState): void {
    this._task = saved.task;
    this._dataFiles = [...saved.dataFiles];
    this._phase = saved.phase;
    this._pendingFeedback = saved.pendingFeedback;
    this._behavior = saved.openBehavior ? { ...saved.openBehavior } : null;
    this._endStepRequested = saved.endStepRequested;
    this._fsm.restore(saved.fsm);
    this._progress.restore(saved.progress);
    this._effects.restore(saved.effects);
    this._contextVariables = { ...saved.contextVariables };
    this._kernelVariables = { ...saved.kernelVariables };
    this._cells.restore(saved.cells);
    this._filter = saved.filter;
    this._legacy = { ...saved.legacy };
    this._timings = saved.timings.map(t => ({ ...t }));
    this._stepMode = saved.stepMode;
  }

  private _toSaved(): ISavedRunState {
    return {
      format: 'notebook-bcc-run',
      version: 1,
      savedAt: this._now().toISOString(),
      task: this._task,
      dataFiles: [...this._dataFiles],
      phase: this._phase,
      pendingFeedback: this._pendingFeedback,
      openBehavior: this._behavior ? { ...this._behavior } : null,
      endStepRequested: this._endStepRequested,
      fsm: this._fsm.toJSON(),
      progress: this._progress.toJSON(),
      effects: this._effects.toJSON(),
      contextVariables: { ...this._contextVariables },
      kernelVariables: { ...this._kernelVariables },
      cells: this._cells.toJSON(),
      filter: this._filter,
      legacy: { ...this._legacy },
      timings: this._timings.map(t => ({ ...t })),
      stepMode: this._stepMode
    };
  }

  private async _saveState(): Promise<void> {
    try {
      await this._driver.saveRunState(this._toSaved());
    } catch (error) {
      this._warn(
        `The run state could not be saved in the notebook: ${errorMessage(error)}`,
        'driver'
      );
    }
  }

  private readonly _driver: INotebookDriver;
  private readonly _client: IPlannerService;
  private readonly _settings: () => IRunSettings;
  private readonly _hooks: IRunnerHooks;
  private readonly _now: () => Date;
  private readonly _trace: RunTrace;
  private readonly _registry: ActionRegistry;
  private readonly _builtins: IDisposableLike | null = null;
  private readonly _fsm: WorkflowStateMachine;
  private readonly _progress: WorkflowProgress;
  private readonly _effects: EffectsStore;
  private readonly _cells = new CellMap();

  private _task: string | null = null;
  private _dataFiles: string[] = [];
  private _contextVariables: Record<string, unknown> = {};
  private _kernelVariables: Record<string, unknown> = {};
  private _variablesDirty = true;
  private _legacy: ILegacyContext = {};
  private _filter: ContextFilter | null = null;
  private _phase: Phase = 'plan';
  private _pendingFeedback: BehaviorFeedback | null = null;
  private _behavior: IOpenBehavior | null = null;
  private _endStepRequested = false;
  private _behaviorsRun = 0;
  private _planningFailures = 0;
  private _retry:
    | { endpoint: 'planning'; body: PlanningRequestInput }
    | { endpoint: 'generating'; body: GeneratingRequestInput }
    | null = null;
  private _error: IRunError | null = null;
  private _timings: IBehaviorTiming[] = [];
  private _buffer: unknown[] = [];

  private _loop: Promise<IRunFinished> | null = null;
  private _abort = new AbortController();
  private _stopRequested = false;
  private _stopListeners = new Set<() => void>();
  private _pauseRequested = false;
  private _pauseReason: string | null = null;
  private _paused = false;
  private _stepMode = false;
  private _pauseAfterBehavior = false;
  private _wakers: (() => void)[] = [];
  private _disposed = false;

  private _stateChanged = new Signal<IWorkflowRunner, IFsmTransition>(this);
  private _progressChanged = new Signal<IWorkflowRunner, IRunSnapshot>(this);
  private _effectsChanged = new Signal<IWorkflowRunner, IEffectsState>(this);
  private _warning = new Signal<IWorkflowRunner, IRunWarning>(this);
  private _errorOccurred = new Signal<IWorkflowRunner, IRunError>(this);
  private _cellAdded = new Signal<IWorkflowRunner, ICellAdded>(this);
  private _actionApplied = new Signal<IWorkflowRunner, IActionApplied>(this);
  private _finished = new Signal<IWorkflowRunner, IRunFinished>(this);
}
