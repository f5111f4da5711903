/** What the planner decided for the current step; `/planning` announces it, `/generating` carries it out. */
import type { IApproach } from './pandasCode';
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
      /** The target column, checked against the data's columns; null when there is none. */
      target: string | null;
      /** The task asks about a target, and none of the data's (known) columns is the one it names. */
      targetUnmatched: boolean;
    }
  | { kind: 'publish'; step: IStepPlan }
  | {
      kind: 'give_up';
      step: IStepPlan;
      reason: string;
      error: string | null;
      tried: string[];
      /** Nothing after this step can run either (the kernel has no pandas). */
      endsAnalysis?: boolean;
    }
  | { kind: 'given_up'; step: IStepPlan };
