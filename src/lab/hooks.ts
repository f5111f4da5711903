/**
 * The runner hooks of one notebook: interactive approval and workflow update confirmation, shown as
 * dialogs that close when the run stops. The pending approval is observable so the views can say the
 * run waits for the user.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { ISignal, Signal } from '@lumino/signaling';
import type { WorkflowTemplate } from '../protocol';
import type {
  BehaviorDecision,
  IBehaviorApproval,
  IRunSnapshot
} from '../engine/types';
import type { IRunHooks } from '../tokens';
import { showApprovalDialog, showWorkflowUpdateDialog } from './lazy';

export class RunHooks implements IRunHooks {
  constructor(private _options: RunHooks.IOptions) {}

  /** The behavior waiting for the user's approval, or null. */
  get pending(): IBehaviorApproval | null {
    return this._pending;
  }

  get pendingChanged(): ISignal<this, void> {
    return this._pendingChanged;
  }

  async approveBehavior(
    request: IBehaviorApproval,
    signal?: AbortSignal
  ): Promise<BehaviorDecision> {
    const { trans, label, snapshot } = this._options;
    this._setPending(request);
    try {
      return await showApprovalDialog(
        request,
        trans,
        {
          label: label(),
          stepName: snapshot()?.step.name ?? null,
          iteration: snapshot()?.behavior.iteration ?? 0
        },
        signal
      );
    } finally {
      this._setPending(null);
    }
  }

  confirmWorkflowUpdate(
    template: WorkflowTemplate,
    current: WorkflowTemplate | null,
    signal?: AbortSignal
  ): Promise<boolean> {
    const { trans, label } = this._options;
    return showWorkflowUpdateDialog(template, current, trans, label(), signal);
  }

  private _setPending(request: IBehaviorApproval | null): void {
    this._pending = request;
    this._pendingChanged.emit();
  }

  private _pending: IBehaviorApproval | null = null;
  private _pendingChanged = new Signal<this, void>(this);
}

export namespace RunHooks {
  export interface IOptions {
    trans: TranslationBundle;
    /** The notebook's name, read when a dialog opens. */
    label: () => string;
    /** The run's snapshot, for the step name and iteration shown. */
    snapshot: () => IRunSnapshot | null;
  }
}
