/**
 * Cell execution: a code cell runs through JupyterLab's cell executor in the notebook's own kernel,
 * with a time limit counted from when the kernel starts it, and ends early when the run is stopped
 * or the kernel restarts, dies, shuts down or changes.
 */
import { CodeCell } from '@jupyterlab/cells';
import type { ICodeCellModel } from '@jupyterlab/cells';
import {
  INotebookCellExecutor,
  KernelError,
  NotebookPanel
} from '@jupyterlab/notebook';
import type { Kernel, KernelMessage } from '@jupyterlab/services';
import type { ITranslator } from '@jupyterlab/translation';
import { PromiseDelegate } from '@lumino/coreutils';
import {
  abortInterruptsKernel,
  type IExecRequest,
  type IExecResult
} from '../engine/ports/driver';
import { type INotebookMessageText, say } from '../engine/ports/messages';
import type { NotebookCells } from './cells';
import { settleWithin } from './json';
import type { NotebookKernel } from './kernel';
import { outputsToText } from './outputText';

/** Why an execution ended before its cell finished on its own. */
type Interruption =
  'timeout' | 'aborted' | 'restarted' | 'died' | 'shutdown' | 'changed';

export class CellExecution {
  constructor(options: CellExecution.IOptions) {
    this._panel = options.panel;
    this._executor = options.executor;
    this._cells = options.cells;
    this._kernel = options.kernel;
    this._translator = options.translator;
    this._interruptGraceMs = options.interruptGraceMs;
    this._changed = options.changed;
  }

  async run(request: IExecRequest): Promise<IExecResult> {
    const { cellId, timeoutMs, signal } = request;
    if (this._panel.isDisposed) {
      return {
        status: 'missing',
        output: '',
        ...say('notebookClosed')
      };
    }
    const found = this._cells.widget(cellId);
    if (!found) {
      return this._missing(cellId);
    }
    if (!(found instanceof CodeCell)) {
      const text = say('notACodeCell', cellId, found.model.type);
      return { status: 'error', output: text.message, ...text };
    }
    if (signal?.aborted) {
      return {
        status: 'aborted',
        output: '',
        ...say('stoppedBeforeRun')
      };
    }
    const kernel = await this._kernel.ensure();
    if ('params' in kernel) {
      return {
        status: 'kernel',
        output: '',
        ...say(kernel.id, ...kernel.params)
      };
    }
    // Starting a kernel awaited: look the cell up again, the user may have changed the notebook.
    const cell = this._cells.widget(cellId);
    if (!(cell instanceof CodeCell)) {
      return this._missing(cellId);
    }
    try {
      const result = await this._runCodeCell(cell, kernel, timeoutMs, signal);
      if (result.status !== 'missing') {
        // Saved with the notebook: which cells of the run failed, after a reload too.
        this._cells.markExecError(cellId, result.status !== 'ok');
      }
      return result;
    } finally {
      this._changed();
    }
  }

  private async _runCodeCell(
    cell: CodeCell,
    kernel: Kernel.IKernelConnection,
    timeoutMs: number,
    signal: AbortSignal | undefined
  ): Promise<IExecResult> {
    const cellId = cell.model.id;
    const source = cell.model.sharedModel.getSource();
    const session = this._kernel.sessionContext;
    const interrupted = new PromiseDelegate<void>();
    let interruption: Interruption | null = null;
    const interrupt = (why: Interruption) => {
      if (interruption === null) {
        interruption = why;
        interrupted.resolve();
      }
    };

    // The time limit counts from when the kernel starts this cell, not while it waits in the queue.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const startTimer = () => {
      if (timeoutMs > 0 && timer === undefined) {
        timer = setTimeout(() => interrupt('timeout'), timeoutMs);
      }
    };
    const onIopub = (_: unknown, msg: KernelMessage.IIOPubMessage) => {
      const parentId = (msg.parent_header as Partial<KernelMessage.IHeader>)
        .msg_id;
      const ownId = cell.isDisposed
        ? undefined
        : cell.outputArea.future?.msg.header.msg_id;
      // Another executor (e.g. a server-side one) sends the request itself: recognise it by its code.
      const isOwn =
        (ownId !== undefined && parentId === ownId) ||
        (msg.header.msg_type === 'execute_input' &&
          (msg as KernelMessage.IExecuteInputMsg).content.code === source);
      if (isOwn) {
        startTimer();
      }
    };
    const onStatus = (_: unknown, status: Kernel.Status) => {
      if (status === 'restarting' || status === 'autorestarting') {
        interrupt('restarted');
      } else if (status === 'dead') {
        interrupt('died');
      } else if (status === 'terminating') {
        interrupt('shutdown');
      }
    };
    const onKernelChanged = () => interrupt('changed');
    const onAbort = () => {
      if (signal && abortInterruptsKernel(signal)) {
        interrupt('aborted');
      }
    };

    kernel.iopubMessage.connect(onIopub);
    session.statusChanged.connect(onStatus);
    session.kernelChanged.connect(onKernelChanged);
    signal?.addEventListener('abort', onAbort);

    let failure: unknown = null;
    let ran = true;
    const model = this._cells.model();
    cell.model.sharedModel.transact(() => cell.model.clearExecution(), false);
    const execution = this._executor
      .runCell({
        cell,
        notebook: model,
        notebookConfig: this._panel.content.notebookConfig,
        sessionContext: session,
        translator: this._translator,
        onCellExecuted: () => undefined,
        onCellExecutionScheduled: () => undefined
      })
      .then(
        result => {
          ran = result;
        },
        reason => {
          failure = reason;
        }
      );
    try {
      await Promise.race([execution, interrupted.promise]);
      if (interruption === 'timeout' || interruption === 'aborted') {
        await this._kernel.interrupt().catch(reason => {
          console.warn('Notebook-BCC: interrupting the kernel failed.', reason);
        });
      }
      if (interruption !== null) {
        await settleWithin(execution, this._interruptGraceMs);
      } else {
        await waitUntilIdle(cell.model, 2000);
      }
    } finally {
      clearTimeout(timer);
      kernel.iopubMessage.disconnect(onIopub);
      session.statusChanged.disconnect(onStatus);
      session.kernelChanged.disconnect(onKernelChanged);
      signal?.removeEventListener('abort', onAbort);
    }

    if (cell.isDisposed || !this._cells.sharedCell(cellId)) {
      return this._missing(cellId);
    }
    const { text, error } = outputsToText(cell.model.outputs.toJSON());
    const ended = interruption as Interruption | null;
    if (ended !== null) {
      return {
        status: statusOf(ended),
        output: text,
        ...this._why(ended, timeoutMs)
      };
    }
    if (error) {
      return { status: 'error', output: text, ...error };
    }
    if (failure instanceof KernelError) {
      const ename = failure.errorName ?? 'Error';
      const evalue =
        failure.errorValue ??
        // For the planner only (an evalue): English.
        'The kernel did not run the cell (an earlier queued cell failed).';
      return {
        status: 'error',
        output: text || `${ename}: ${evalue}`,
        ename,
        evalue
      };
    }
    if (failure !== null) {
      return {
        status: 'kernel',
        output: text,
        ...say('executionFailed', `${failure}`)
      };
    }
    if (!ran) {
      return {
        status: 'kernel',
        output: text,
        ...say('cellNotExecuted')
      };
    }
    return { status: 'ok', output: text };
  }

  private _why(ended: Interruption, timeoutMs: number): INotebookMessageText {
    switch (ended) {
      case 'timeout':
        return say('executionTimedOut', Math.round(timeoutMs / 100) / 10);
      case 'aborted':
        return say('executionStopped');
      case 'restarted':
        return say('kernelRestarted');
      case 'died':
        return say('kernelDied');
      case 'shutdown':
        return say('kernelShutDown');
      case 'changed':
        return say('kernelChanged');
    }
  }

  private _missing(cellId: string): IExecResult {
    return {
      status: 'missing',
      output: '',
      ...say('cellGone', cellId)
    };
  }

  private _panel: NotebookPanel;
  private _executor: INotebookCellExecutor;
  private _cells: NotebookCells;
  private _kernel: NotebookKernel;
  private _translator: ITranslator;
  private _interruptGraceMs: number;
  private _changed: () => void;
}

export namespace CellExecution {
  export interface IOptions {
    panel: NotebookPanel;
    executor: INotebookCellExecutor;
    cells: NotebookCells;
    kernel: NotebookKernel;
    translator: ITranslator;
    /** How long a cell may take to stop after an interrupt or a kernel restart, in ms. */
    interruptGraceMs: number;
    /** The run changed the notebook (it is saved shortly after). */
    changed: () => void;
  }
}

function statusOf(ended: Interruption): IExecResult['status'] {
  return ended === 'timeout' || ended === 'aborted' ? ended : 'kernel';
}

/** Outputs of a server-side executor may arrive just after its request resolves. */
async function waitUntilIdle(model: ICodeCellModel, ms: number): Promise<void> {
  if (model.executionState !== 'running') {
    return;
  }
  const idle = new PromiseDelegate<void>();
  const onChange = () => {
    if (model.executionState !== 'running') {
      idle.resolve();
    }
  };
  model.stateChanged.connect(onChange);
  try {
    await settleWithin(idle.promise, ms);
  } finally {
    model.stateChanged.disconnect(onChange);
  }
}
