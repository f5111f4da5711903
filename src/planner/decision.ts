/** What the planner decided for the current step; `/planning` announces it, `/generating` carries it out. */
import type { IApproach } from './codegen';
import type { IStepPlan } from './workflow';

export type Decision =
  | { kind: 'unknown_step'; stepId: string }
  | { kind: 'achieved'; step: IStepPlan }
  | {
      kind: 'attempt';
      step: IStepPlan;
      /** Failed behaviors so far in this step: 0 for the first attempt. */
      failures: number;
      approach: IApproach;
      error: string | null;
      /** Inputs missing from the kernel (e.g. after a restart) are rebuilt first. */
      rebuild: Array<'load' | 'impute'>;
      frame: string;
    }
  | { kind: 'publish'; step: IStepPlan }
  | {
      kind: 'give_up';
      step: IStepPlan;
      reason: string;
      error: string | null;
      tried: string[];
    }
  | { kind: 'given_up'; step: IStepPlan };
