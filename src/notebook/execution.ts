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
import type { ITranslator, TranslationBundle } from '@jupyterlab/translation';
import { PromiseDelegate } from '@lumino/coreutils';
import type { IExecRequest, IExecResult } from '../engine/driver';
import type { NotebookCells } from './cells';
import { abortInterruptsKernel } from '../engine/runControl';
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
    this._trans = options.trans;
    this._interruptGraceMs = options.interruptGraceMs;
    this._changed = options.changed;
  }

  async run(request: IExecRequest): Promise<IExecResult> {
    const { cellId, timeoutMs, signal } = request;
    if (this._panel.isDisposed) {
      return {
        status: 'missing',
        output: '',
        message: this._trans.__('The notebook was closed.')
      };
    }
    const found = this._cells.widget(cellId);
    if (!found) {
      return this._missing(cellId);
    }
    if (!(found instanceof CodeCell)) {
      const message = this._trans.__(
        'Cell %1 is a %2 cell; only code cells can be executed.',
        cellId,
        found.model.type
      );
      return { status: 'error', output: message, message };
    }
    if (signal?.aborted) {
      return {
        status: 'aborted',
        output: '',
        message: this._trans.__('Stopped before the cell ran.')
      };
    }
    const kernel = await this._kernel.ensure();
    if (typeof kernel === 'string') {
      return { status: 'kernel', output: '', message: kernel };
    }
    // Starting a kernel awaited: look the cell up again, the user may have changed the notebook.
    const cell = this._cells.widget(cellId);
    if (!(cell instanceof CodeCell)) {
      return this._missing(cellId);
    }
    try {
      return await this._runCodeCell(cell, kernel, timeoutMs, signal);
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
        message: this._why(ended, timeoutMs)
      };
    }
    if (error) {
      return { status: 'error', output: text, ...error };
    }
    if (failure instanceof KernelError) {
      const ename = failure.errorName ?? 'Error';
      const evalue =
        failure.errorValue ??
        this._trans.__(
          'The kernel did not run the cell (an earlier queued cell failed).'
        );
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
        message: this._trans.__('The execution failed: %1', `${failure}`)
      };
    }
    if (!ran) {
      return {
        status: 'kernel',
        output: text,
        message: this._trans.__(
          'The cell was not executed (the kernel canceled it or waits for input).'
        )
      };
    }
    return { status: 'ok', output: text };
  }

  private _why(ended: Interruption, timeoutMs: number): string {
    switch (ended) {
      case 'timeout':
        return this._trans.__(
          'The execution exceeded the time limit of %1 s; the kernel was interrupted.',
          Math.round(timeoutMs / 100) / 10
        );
      case 'aborted':
        return this._trans.__(
          'The execution was stopped; the kernel was interrupted.'
        );
      case 'restarted':
        return this._trans.__(
          'The kernel restarted during execution; all variables were lost. Run the cells that define them again.'
        );
      case 'died':
        return this._trans.__(
          'The kernel died during execution. Restart it, then resume the run.'
        );
      case 'shutdown':
        return this._trans.__('The kernel was shut down during execution.');
      case 'changed':
        return this._trans.__(
          'The notebook switched to another kernel during execution.'
        );
    }
  }

  private _missing(cellId: string): IExecResult {
    return {
      status: 'missing',
      output: '',
      message: this._trans.__('Cell %1 no longer exists (deleted?)', cellId)
    };
  }

  private _panel: NotebookPanel;
  private _executor: INotebookCellExecutor;
  private _cells: NotebookCells;
  private _kernel: NotebookKernel;
  private _translator: ITranslator;
  private _trans: TranslationBundle;
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
    trans: TranslationBundle;
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
