/**
 * Output contracts in a run (docs/protocol.md#output-contracts): which contracts are checked in the
 * kernel now, what the planner is sent of the checks, and how the run ends (its outcome: the steps
 * given up, the deliverables delivered or not). Pure functions of the run's contracts state and its
 * progress; the run loop keeps the state (`RunState.contracts`) and asks the kernel.
 */
import {
  type OutputCheck,
  OutputCheckSchema,
  type OutputContract,
  OutputContractSchema,
  DEFAULT_CONTRACT_FRAME,
  type PlanningResponse,
  progressUpdatesOf,
  type RunContract,
  RunContractSchema,
  type WorkflowStep
} from '../../protocol';
import type { IProgressState } from './progressState';

/** Where the run is, as the contracts see it. */
export interface IContractsLocation {
  stageId: string | null;
  stepId: string | null;
  /** The current step of the template, with its `output_contracts`. */
  step: WorkflowStep | null;
}

/** A check as the run keeps it: with the behavior after which it was made (null: at the end). */
export interface IOutputCheckRecord extends OutputCheck {
  behaviorId: string | null;
}

/** What the run knows of its contracts; saved with it. */
export interface IContractsState {
  /** The task's deliverables, as the planner last sent them (`context_update.contract`). */
  run: RunContract | null;
  /** Contracts of one step sent in a `progress_update` (besides its template's `output_contracts`). */
  step: {
    stageId: string | null;
    stepId: string | null;
    contracts: OutputContract[];
  } | null;
  /** The latest check of each name. */
  checks: Record<string, IOutputCheckRecord>;
}

/** How many names' checks the run keeps (the latest ones). */
export const MAX_KEPT_CHECKS = 100;

export function emptyContracts(): IContractsState {
  return { run: null, step: null, checks: {} };
}

/**
 * The contracts to check now: the current step's (its template's `output_contracts`, then those a
 * `progress_update` sent for it) and the run's deliverables, one per name; a deliverable wins.
 */
export function contractsToCheck(
  state: IContractsState,
  where: IContractsLocation
): OutputContract[] {
  const byName = new Map<string, OutputContract>();
  const add = (contracts: readonly OutputContract[] | undefined) => {
    for (const contract of contracts ?? []) {
      byName.delete(contract.name);
      byName.set(contract.name, contract);
    }
  };
  add(where.step?.output_contracts);
  const step = state.step;
  if (step && step.stageId === where.stageId && step.stepId === where.stepId) {
    add(step.contracts);
  }
  add(state.run?.deliverables);
  return [...byName.values()];
}

/** `observation.context.output_checks`: the latest check of each contract checked now; null for none. */
export function checksToSend(
  state: IContractsState,
  where: IContractsLocation
): Record<string, OutputCheck> | null {
  const sent: Record<string, OutputCheck> = {};
  for (const { name } of contractsToCheck(state, where)) {
    const record = state.checks[name];
    if (record) {
      const { behaviorId, ...check } = record;
      void behaviorId;
      sent[name] = check;
    }
  }
  return Object.keys(sent).length > 0 ? sent : null;
}

/**
 * The reasons of the checks that failed after the latest behavior checked, joined; null when all of them
 * passed (what a rewrite keeps as the replaced code's failure when it raised nothing).
 */
export function latestFailedChecks(state: IContractsState): string | null {
  const records = Object.values(state.checks);
  const latest = records.length ? records[records.length - 1].behaviorId : null;
  const reasons = records
    .filter(r => r.behaviorId === latest && !r.ok)
    .map(r => r.reason ?? '')
    .filter(reason => reason !== '');
  return reasons.length ? reasons.join('; ') : null;
}

/** The state with `results` as the latest checks (`behaviorId`: the behavior after which they ran). */
export function withChecks(
  state: IContractsState,
  results: Record<string, OutputCheck>,
  behaviorId: string | null
): IContractsState {
  const checks = { ...state.checks };
  for (const [name, check] of Object.entries(results)) {
    delete checks[name];
    checks[name] = { ...check, behaviorId };
  }
  const names = Object.keys(checks);
  for (const name of names.slice(
    0,
    Math.max(0, names.length - MAX_KEPT_CHECKS)
  )) {
    delete checks[name];
  }
  return { ...state, checks };
}

/**
 * What a `/planning` answer changes in the contracts (`where`: the step it speaks for): its
 * `context_update.contract` replaces the run's; the contracts of a `steps` or `behaviors`
 * `progress_update` join the current step's. Null: nothing changes.
 */
export function contractsAfterAnswer(
  state: IContractsState,
  answer: PlanningResponse,
  where: Pick<IContractsLocation, 'stageId' | 'stepId'>
): IContractsState | null {
  const run = answer.context_update?.contract;
  const sent = progressUpdatesOf(answer.context_update).flatMap(update =>
    update.level !== 'stages' ? (update.current_outputs?.contracts ?? []) : []
  );
  if (!run && sent.length === 0) {
    return null;
  }
  let step = state.step;
  if (sent.length > 0) {
    const same =
      step !== null &&
      step.stageId === where.stageId &&
      step.stepId === where.stepId;
    const byName = new Map(
      (same && step ? step.contracts : []).map(c => [c.name, c])
    );
    for (const contract of sent) {
      byName.delete(contract.name);
      byName.set(contract.name, contract);
    }
    step = { ...where, contracts: [...byName.values()] };
  }
  return { ...state, run: run ?? state.run, step };
}

/** A check for every contract whose check in the kernel could not be made (`why`: one sentence). */
export function uncheckedResults(
  contracts: readonly OutputContract[],
  why: string
): Record<string, OutputCheck> {
  return Object.fromEntries(
    contracts.map(contract => [
      contract.name,
      {
        ok: false,
        kind: contract.kind,
        type: null,
        value: null,
        reason: `\`${contract.name}\` could not be checked: ${why}`
      }
    ])
  );
}

/** A step that ended without reaching its target (docs/protocol.md#the-loop). */
export interface IGivenUpStep {
  stageId: string;
  stepId: string;
  /** Its name in the template, else its id. */
  name: string;
  /** The focus text of the answer that gave it up, if any. */
  reason: string | null;
}

/** `delivered`: its check is ok; `failed`: it is not; `unchecked`: no check was made yet. */
export type DeliverableStatus = 'delivered' | 'failed' | 'unchecked';

export interface IDeliverable {
  name: string;
  kind: OutputContract['kind'];
  /** The planner's words for it (`describe`), in the task's language. */
  describe: string | null;
  status: DeliverableStatus;
  /** What the kernel holds (a short repr), when shown. */
  value: string | null;
  type: string | null;
  /** Why it is not delivered. */
  reason: string | null;
  /** What the check holds it to besides its kind, so that the panel can say what was checked. */
  terms: ContractTerms;
}

/** A contract's terms that the check in the kernel holds a value to, besides its kind. */
export type ContractTerms = Pick<
  OutputContract,
  'of_column' | 'frame' | 'index' | 'columns' | 'keys' | 'decimals' | 'one_of'
>;

function termsOf(contract: OutputContract): ContractTerms {
  const { of_column, index, columns, keys, decimals, one_of } = contract;
  // The frame a column is of is named, the default's too: the panel says "a value of df['region']".
  const frame =
    of_column || index ? (contract.frame ?? DEFAULT_CONTRACT_FRAME) : undefined;
  return { of_column, frame, index, columns, keys, decimals, one_of };
}

/** How a run ends, or would end now: problems are said in words (docs/protocol.md#output-contracts). */
export interface IRunOutcome {
  /** Every step reached its target and every deliverable checks ok. */
  ok: boolean;
  givenUp: IGivenUpStep[];
  deliverables: IDeliverable[];
  /** The run contract's own summary (`Deliver: …`), when the planner wrote one. */
  contractSummary: string | null;
  /** In English: `Completed`, or `Finished with problems: 1 step given up; \`answer\` not delivered`. */
  summary: string;
}

function givenUpSteps(progress: IProgressState): IGivenUpStep[] {
  const steps: IGivenUpStep[] = [];
  for (const [stageId, byStep] of Object.entries(progress.givenUp ?? {})) {
    const stage = progress.template?.stages.find(s => s.id === stageId);
    for (const [stepId, given] of Object.entries(byStep)) {
      const name = stage?.steps.find(s => s.id === stepId)?.name ?? stepId;
      steps.push({ stageId, stepId, name, reason: given.reason ?? null });
    }
  }
  return steps;
}

function deliverableOf(
  contract: OutputContract,
  check: IOutputCheckRecord | undefined
): IDeliverable {
  return {
    name: contract.name,
    kind: contract.kind,
    describe: contract.describe?.trim() || null,
    status: !check ? 'unchecked' : check.ok ? 'delivered' : 'failed',
    value: check?.value ?? null,
    type: check?.type ?? null,
    reason: check && !check.ok ? (check.reason ?? null) : null,
    terms: termsOf(contract)
  };
}

/** An outcome's problems in English: `1 step given up`, `` `answer` not delivered ``. */
export function outcomeProblems(
  givenUp: readonly IGivenUpStep[],
  deliverables: readonly IDeliverable[]
): string[] {
  const problems: string[] = [];
  if (givenUp.length > 0) {
    problems.push(
      `${givenUp.length} step${givenUp.length === 1 ? '' : 's'} given up`
    );
  }
  const missed = deliverables.filter(d => d.status !== 'delivered');
  if (missed.length > 0) {
    problems.push(
      `${missed.map(d => `\`${d.name}\``).join(', ')} not delivered`
    );
  }
  return problems;
}

/** The English summary of an outcome, as the saved run and the trace say it. */
export function outcomeSummary(
  givenUp: readonly IGivenUpStep[],
  deliverables: readonly IDeliverable[]
): string {
  const problems = outcomeProblems(givenUp, deliverables);
  return problems.length === 0
    ? 'Completed'
    : `Finished with problems: ${problems.join('; ')}`;
}

/** How the run stands: its given-up steps and its deliverables as last checked. */
export function runOutcome(
  progress: IProgressState,
  state: IContractsState
): IRunOutcome {
  const givenUp = givenUpSteps(progress);
  const deliverables = (state.run?.deliverables ?? []).map(contract =>
    deliverableOf(contract, state.checks[contract.name])
  );
  return {
    ok:
      givenUp.length === 0 && deliverables.every(d => d.status === 'delivered'),
    givenUp,
    deliverables,
    contractSummary: state.run?.summary?.trim() || null,
    summary: outcomeSummary(givenUp, deliverables)
  };
}

/** A contracts state read back from a saved run: what cannot be read is left out, never a problem. */
export function readContractsState(raw: unknown): IContractsState {
  const state = emptyContracts();
  if (typeof raw !== 'object' || raw === null) {
    return state;
  }
  const saved = raw as Record<string, unknown>;
  const run = RunContractSchema.safeParse(saved.run);
  if (saved.run && run.success) {
    state.run = run.data;
  }
  const step = saved.step as Record<string, unknown> | null | undefined;
  if (step && typeof step === 'object' && Array.isArray(step.contracts)) {
    state.step = {
      stageId: typeof step.stageId === 'string' ? step.stageId : null,
      stepId: typeof step.stepId === 'string' ? step.stepId : null,
      contracts: step.contracts.flatMap(item => {
        const parsed = OutputContractSchema.safeParse(item);
        return parsed.success ? [parsed.data] : [];
      })
    };
  }
  const checks = saved.checks;
  if (checks && typeof checks === 'object') {
    for (const [name, item] of Object.entries(checks)) {
      const parsed = OutputCheckSchema.safeParse(item);
      if (parsed.success) {
        const behaviorId = (item as { behaviorId?: unknown }).behaviorId;
        state.checks[name] = {
          ...parsed.data,
          behaviorId: typeof behaviorId === 'string' ? behaviorId : null
        };
      }
    }
  }
  return state;
}

/** The contracts state as saved: a check's value under a secret-looking name is left out. */
export function savedContracts(
  state: IContractsState,
  secret: (name: string) => boolean
): IContractsState {
  return {
    ...state,
    checks: Object.fromEntries(
      Object.entries(state.checks).map(([name, check]) => [
        name,
        secret(name) ? { ...check, value: null } : check
      ])
    )
  };
}

/**
 * Why an answer gave its step up: its focus text (the `steps` level's, else the `behaviors`', else
 * any level's), or null when it said nothing.
 */
export function givenUpReason(answer: PlanningResponse): string | null {
  const updates = progressUpdatesOf(answer.context_update);
  const said = (level?: string) =>
    updates.find(u => (!level || u.level === level) && u.focus?.trim())?.focus;
  return (said('steps') ?? said('behaviors') ?? said())?.trim() || null;
}
