import type { ISessionContext } from '@jupyterlab/apputils';
import { Cell, CodeCell, MarkdownCell } from '@jupyterlab/cells';
import type { ICodeCellModel } from '@jupyterlab/cells';
import {
  INotebookCellExecutor,
  KernelError,
  NotebookPanel,
  runCell
} from '@jupyterlab/notebook';
import type { INotebookModel } from '@jupyterlab/notebook';
import type { Kernel, KernelMessage } from '@jupyterlab/services';
import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import {
  JSONExt,
  PartialJSONObject,
  PartialJSONValue,
  PromiseDelegate
} from '@lumino/coreutils';
import type {
  CellRole,
  IAddCellRequest,
  ICellProvenance,
  IExecRequest,
  IExecResult,
  INotebookDriver,
  INotebookSummary,
  SummarizeRequest
} from '../engine/driver';
import { TRANSLATION_DOMAIN } from '../translation';
import {
  COLLECT_EXPRESSION,
  KERNEL_HELPERS,
  summarizeExpression
} from './kernelCode';
import { CELL_METADATA_KEY, RUN_STATE_METADATA_KEY } from './metadata';
import { outputsToText } from './outputText';

/** How long a save waits for a save it did not start (the user's, the autosave) to end, in ms. */
const OTHER_SAVE_WAIT_MS = 20000;

/** The shortest time between two scrolls to new cells, in ms. */
const SCROLL_INTERVAL_MS = 100;

/** Characters of the last cell's output kept in the notebook summary. */
const SUMMARY_OUTPUT_CAP = 500;

type SharedCell = INotebookModel['sharedModel']['cells'][number];

/** Why an execution ended before its cell finished on its own. */
type Interruption =
  'timeout' | 'aborted' | 'restarted' | 'died' | 'shutdown' | 'changed';

/**
 * The engine's notebook driver for one JupyterLab notebook panel. Everything is pinned to that
 * panel: switching tabs does not matter. Cells are edited through the notebook's shared model (so
 * they sync under real-time collaboration) and always found again by id; code runs through
 * JupyterLab's cell executor in the notebook's own kernel.
 */
export class NotebookDriver implements INotebookDriver {
  constructor(options: NotebookDriver.IOptions) {
    this._panel = options.panel;
    this._executor = options.executor ?? { runCell };
    this._followNewCells = options.followNewCells ?? false;
    this._interruptGraceMs = options.interruptGraceMs ?? 10000;
    this._inspectTimeoutMs = options.inspectTimeoutMs ?? 30000;
    this._saveDelayMs = options.saveDelayMs ?? 1000;
    this._panel.context.saveState.connect(this._onSaveState, this);
    this._panel.disposed.connect(() => {
      clearTimeout(this._saveTimer);
      this._saveTimer = undefined;
    });
    this._translator = options.translator ?? nullTranslator;
    this._trans = this._translator.load(TRANSLATION_DOMAIN);
  }

  /** The notebook this driver works on. */
  get panel(): NotebookPanel {
    return this._panel;
  }

  /** Whether a new cell is scrolled into view (without being activated). */
  get followNewCells(): boolean {
    return this._followNewCells;
  }
  set followNewCells(value: boolean) {
    this._followNewCells = value;
  }

  async addCell(request: IAddCellRequest): Promise<string> {
    const model = this._model();
    const metadata = cellMetadata(request.provenance, request.role, {
      ...request.metadata,
      ...(request.role === 'thinking' ? { thinking: true } : {})
    });
    const restore = this._keepActiveCell();
    const cell = model.sharedModel.insertCell(model.sharedModel.cells.length, {
      cell_type: request.kind,
      source: request.source,
      metadata: { [CELL_METADATA_KEY]: metadata }
    });
    restore();
    this._showNewCell(cell.getId());
    this._scheduleSave();
    return cell.getId();
  }

  async updateCell(
    cellId: string,
    source: string | null,
    metadata?: Record<string, unknown>
  ): Promise<boolean> {
    const cell = this._sharedCell(cellId);
    if (!cell) {
      return false;
    }
    this._model().sharedModel.transact(() => {
      if (source !== null) {
        cell.setSource(source);
      }
      if (metadata) {
        cell.setMetadata(CELL_METADATA_KEY, {
          ...asObject(cell.getMetadata(CELL_METADATA_KEY)),
          ...asObject(toJSON(metadata))
        });
      }
    });
    this._render(cellId);
    this._scheduleSave();
    return true;
  }

  async setTitle(title: string, provenance: ICellProvenance): Promise<void> {
    const shared = this._model().sharedModel;
    const source = `# ${title}`;
    shared.transact(() => {
      shared.setMetadata('title', title);
      shared.setMetadata(CELL_METADATA_KEY, {
        ...asObject(shared.getMetadata(CELL_METADATA_KEY)),
        title
      });
    });
    const existing = shared.cells.find(
      cell => asObject(cell.getMetadata(CELL_METADATA_KEY)).role === 'title'
    );
    if (existing) {
      existing.setSource(source);
      this._render(existing.getId());
      return;
    }
    const restore = this._keepActiveCell();
    const cell = shared.insertCell(0, {
      cell_type: 'markdown',
      source,
      metadata: {
        [CELL_METADATA_KEY]: cellMetadata(provenance, 'title', {})
      }
    });
    restore();
    this._render(cell.getId());
    this._scheduleSave();
  }

  async execCell(request: IExecRequest): Promise<IExecResult> {
    const { cellId, timeoutMs, signal } = request;
    if (this._panel.isDisposed) {
      return {
        status: 'missing',
        output: '',
        message: this._trans.__('The notebook was closed.')
      };
    }
    const found = this._cellWidget(cellId);
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
    const kernel = await this._ensureKernel();
    if (typeof kernel === 'string') {
      return { status: 'kernel', output: '', message: kernel };
    }
    // Starting a kernel awaited: look the cell up again, the user may have changed the notebook.
    const cell = this._cellWidget(cellId);
    if (!(cell instanceof CodeCell)) {
      return this._missing(cellId);
    }
    try {
      return await this._runCodeCell(cell, kernel, timeoutMs, signal);
    } finally {
      this._scheduleSave();
    }
  }

  async collectVariables(): Promise<Record<string, unknown>> {
    return (await this._evaluateInKernel(COLLECT_EXPRESSION)) ?? {};
  }

  async summarizeVariables(
    request: SummarizeRequest
  ): Promise<Record<string, unknown>> {
    const names = Object.keys(request);
    if (!names.length) {
      return {};
    }
    const result = await this._evaluateInKernel(summarizeExpression(request));
    if (result) {
      return result;
    }
    const unavailable: Record<string, unknown> = {};
    for (const name of names) {
      unavailable[name] =
        `<${request[name]}: not available (no Python kernel)>`;
    }
    return unavailable;
  }

  notebookSummary(): INotebookSummary {
    const shared = this._model().sharedModel;
    const title = shared.getMetadata('title');
    const cells = shared.cells;
    const last = cells.length ? cells[cells.length - 1] : null;
    let lastOutput: string | null = null;
    if (last && last.cell_type === 'code') {
      const outputs = (last as ICodeCellModel['sharedModel']).getOutputs();
      if (outputs.length) {
        const { text } = outputsToText(outputs);
        lastOutput =
          text.length > SUMMARY_OUTPUT_CAP
            ? text.slice(0, SUMMARY_OUTPUT_CAP) + '…'
            : text;
      }
    }
    return {
      title: typeof title === 'string' ? title : null,
      cell_count: cells.length,
      last_cell_type: last?.cell_type ?? null,
      last_output: lastOutput
    };
  }

  async saveRunState(state: unknown): Promise<void> {
    const shared = this._model().sharedModel;
    shared.transact(() => {
      // The saved run refers to cells by id, and only nbformat 4.5+ files keep cell ids.
      if (shared.nbformat === 4 && shared.nbformat_minor < 5) {
        // The shared notebook (YNotebook) has a setter that its interface does not declare.
        (shared as { nbformat_minor: number }).nbformat_minor = 5;
      }
      shared.setMetadata(
        RUN_STATE_METADATA_KEY,
        toJSON(state) as PartialJSONValue
      );
    });
    await this._save();
  }

  async loadRunState(): Promise<unknown | null> {
    const state = this._model().sharedModel.getMetadata(RUN_STATE_METADATA_KEY);
    return state === undefined ? null : JSONExt.deepCopy(state);
  }

  async interruptKernel(): Promise<void> {
    await this._sessionContext.session?.kernel?.interrupt();
  }

  /**
   * Saves the notebook shortly after the run changed it, so that a page reload or a crash in the
   * middle of a behavior keeps its cells (the run state itself is saved after each behavior).
   */
  private _scheduleSave(): void {
    if (this._saveDelayMs < 0 || this._saveTimer !== undefined) {
      return;
    }
    this._saveTimer = setTimeout(() => {
      this._saveTimer = undefined;
      if (!this._panel.isDisposed && this._panel.model?.dirty) {
        this._save().catch(reason => {
          console.warn('Notebook-BCC: saving the notebook failed.', reason);
        });
      }
    }, this._saveDelayMs);
  }

  /**
   * Saves the notebook, one save at a time and never while another save (the user's or
   * JupyterLab's autosave) is under way: the second of two overlapping saves would find the file
   * changed on disk and ask the user about a conflict.
   */
  private _save(): Promise<void> {
    clearTimeout(this._saveTimer);
    this._saveTimer = undefined;
    const save = async () => {
      if (this._othersSaving) {
        // A save cancelled in a dialog never says it ended: do not wait for it for ever.
        await settleWithin(this._othersSaving.promise, OTHER_SAVE_WAIT_MS);
        this._othersSaving = null;
      }
      if (this._panel.isDisposed) {
        return;
      }
      this._ownSave = true;
      try {
        await this._panel.context.save();
      } finally {
        this._ownSave = false;
      }
    };
    const next = this._saving.then(save, save);
    this._saving = next.catch(() => undefined);
    return next;
  }

  /** Tracks saves that the driver did not start. */
  private _onSaveState(
    _: unknown,
    state: 'started' | 'completed' | 'failed'
  ): void {
    if (this._ownSave) {
      return;
    }
    if (state === 'started') {
      this._othersSaving ??= new PromiseDelegate<void>();
    } else if (this._othersSaving) {
      this._othersSaving.resolve();
      this._othersSaving = null;
    }
  }

  private get _sessionContext(): ISessionContext {
    return this._panel.sessionContext;
  }

  private _model(): INotebookModel {
    const model = this._panel.isDisposed ? null : this._panel.model;
    if (!model) {
      throw new Error(this._trans.__('The notebook was closed.'));
    }
    return model;
  }

  private _sharedCell(cellId: string): SharedCell | null {
    const model = this._panel.isDisposed ? null : this._panel.model;
    return (
      model?.sharedModel.cells.find(cell => cell.getId() === cellId) ?? null
    );
  }

  private _cellWidget(cellId: string): Cell | null {
    if (this._panel.isDisposed) {
      return null;
    }
    return (
      this._panel.content.widgets.find(cell => cell.model.id === cellId) ?? null
    );
  }

  private _missing(cellId: string): IExecResult {
    return {
      status: 'missing',
      output: '',
      message: this._trans.__('Cell %1 no longer exists (deleted?)', cellId)
    };
  }

  /**
   * Remembers which cell is active; the returned function makes it active again if an insert moved
   * the notebook's active cell. It sets the index only when it changed, so focus stays put.
   */
  private _keepActiveCell(): () => void {
    const notebook = this._panel.content;
    const activeId = notebook.activeCell?.model.id ?? null;
    return () => {
      if (activeId === null || notebook.activeCell?.model.id === activeId) {
        return;
      }
      const index = notebook.widgets.findIndex(
        cell => cell.model.id === activeId
      );
      if (index >= 0) {
        notebook.activeCellIndex = index;
      }
    };
  }

  /**
   * Renders a new markdown cell and, when following new cells, scrolls it into view. The scroll
   * uses the notebook's list (`scrollToItem`): `Notebook.scrollToCell` would also select and
   * activate the cell, which moves the user's cursor into it. No scroll while the user is typing in
   * this notebook: their cell stays where it is. Scrolling forces a layout, so a fast stream scrolls
   * at most every `SCROLL_INTERVAL_MS`, to the newest cell.
   */
  private _showNewCell(cellId: string): void {
    this._render(cellId);
    if (!this._followNewCells) {
      return;
    }
    const pending = this._scrollTarget !== null;
    this._scrollTarget = cellId;
    if (pending) {
      return;
    }
    const wait = Math.max(
      0,
      this._lastScroll + SCROLL_INTERVAL_MS - performance.now()
    );
    setTimeout(() => requestAnimationFrame(() => this._scrollToTarget()), wait);
  }

  private _scrollToTarget(): void {
    this._lastScroll = performance.now();
    const target = this._scrollTarget;
    this._scrollTarget = null;
    const notebook = this._panel.content;
    if (this._panel.isDisposed || !target || this._userIsEditing()) {
      return;
    }
    const index = notebook.widgets.findIndex(cell => cell.model.id === target);
    if (index >= 0) {
      notebook.scrollToItem(index, 'auto').catch(reason => {
        console.debug(
          'Notebook-BCC: could not scroll to the new cell.',
          reason
        );
      });
    }
  }

  /** Whether the user is editing a cell of this notebook right now (edit mode, focus inside). */
  private _userIsEditing(): boolean {
    const notebook = this._panel.content;
    return (
      notebook.mode === 'edit' && notebook.node.contains(document.activeElement)
    );
  }

  /** Shows a markdown cell rendered, unless the user is editing it right now. */
  private _render(cellId: string): void {
    const cell = this._cellWidget(cellId);
    if (!(cell instanceof MarkdownCell)) {
      return;
    }
    const notebook = this._panel.content;
    if (notebook.mode === 'edit' && notebook.activeCell === cell) {
      return;
    }
    cell.rendered = true;
  }

  /** The notebook's kernel, started (the notebook's preferred or the default kernel) if there is none; or why not. */
  private async _ensureKernel(): Promise<Kernel.IKernelConnection | string> {
    const session = this._sessionContext;
    if (session.isDisposed) {
      return this._trans.__('The notebook session was closed.');
    }
    // JupyterLab's executor would open a modal dialog in these two cases.
    if (session.isTerminating) {
      return this._trans.__('The kernel is shutting down.');
    }
    if (session.pendingInput) {
      return this._trans.__(
        'Another cell waits for input; answer it, then resume the run.'
      );
    }
    try {
      await session.initialize();
      if (!session.session?.kernel) {
        const name =
          session.kernelPreference.name ??
          session.specsManager.specs?.default ??
          null;
        if (!name) {
          return this._trans.__(
            'The notebook has no kernel and there is no default kernel to start.'
          );
        }
        await session.changeKernel({ name });
      }
    } catch (reason) {
      return this._trans.__('The kernel could not be started: %1', `${reason}`);
    }
    const kernel = session.session?.kernel;
    if (!kernel) {
      return this._trans.__('The notebook has no kernel.');
    }
    if (kernel.status === 'dead') {
      return this._trans.__(
        'The kernel is dead. Restart it, then resume the run.'
      );
    }
    return kernel;
  }

  private async _runCodeCell(
    cell: CodeCell,
    kernel: Kernel.IKernelConnection,
    timeoutMs: number,
    signal: AbortSignal | undefined
  ): Promise<IExecResult> {
    const cellId = cell.model.id;
    const source = cell.model.sharedModel.getSource();
    const session = this._sessionContext;
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
    const onAbort = () => interrupt('aborted');

    kernel.iopubMessage.connect(onIopub);
    session.statusChanged.connect(onStatus);
    session.kernelChanged.connect(onKernelChanged);
    signal?.addEventListener('abort', onAbort);

    let failure: unknown = null;
    let ran = true;
    const model = this._model();
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
        await this.interruptKernel().catch(reason => {
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

    if (cell.isDisposed || !this._sharedCell(cellId)) {
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

  /**
   * Runs the helpers silently (no output, no history, no execution count) and evaluates one of them
   * as a user expression. Null when there is no Python kernel; throws when the kernel reports an error.
   */
  private async _evaluateInKernel(
    expression: string
  ): Promise<Record<string, unknown> | null> {
    const kernel = this._panel.isDisposed
      ? null
      : this._sessionContext.session?.kernel;
    if (!kernel || kernel.status === 'dead') {
      return null;
    }
    const info = await kernel.info;
    if (info.language_info.name !== 'python') {
      return null;
    }
    const future = kernel.requestExecute(
      {
        code: KERNEL_HELPERS,
        silent: true,
        store_history: false,
        allow_stdin: false,
        stop_on_error: false,
        user_expressions: { bcc: expression }
      },
      true
    );
    // An interrupt that lands while this silent request runs can leave it without a reply
    // (ipykernel 7): never wait for it longer than the inspection timeout.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<null>(resolve => {
      timer = setTimeout(() => resolve(null), this._inspectTimeoutMs);
    });
    const reply = await Promise.race([future.done, timedOut]).finally(() =>
      clearTimeout(timer)
    );
    if (reply === null) {
      future.dispose();
      throw new Error(
        this._trans.__(
          'The kernel did not answer the variable inspection within %1 s.',
          Math.round(this._inspectTimeoutMs / 1000)
        )
      );
    }
    const content = reply.content;
    if (content.status !== 'ok') {
      const detail =
        content.status === 'error'
          ? `${content.ename}: ${content.evalue}`
          : content.status;
      throw new Error(
        this._trans.__('Inspecting the kernel failed: %1', detail)
      );
    }
    const result = content.user_expressions['bcc'] as
      | { status: 'ok'; data: { 'text/plain'?: string } }
      | { status: 'error'; ename: string; evalue: string }
      | undefined;
    if (!result || result.status !== 'ok') {
      const detail = result ? `${result.ename}: ${result.evalue}` : 'no reply';
      throw new Error(
        this._trans.__('Inspecting the kernel failed: %1', detail)
      );
    }
    return JSON.parse(result.data['text/plain'] ?? '{}');
  }

  private _panel: NotebookPanel;
  private _executor: INotebookCellExecutor;
  private _followNewCells: boolean;
  private _interruptGraceMs: number;
  private _inspectTimeoutMs: number;
  private _saveDelayMs: number;
  private _lastScroll = -Infinity;
  /** The newest cell to scroll to; not null while a scroll is pending. */
  private _scrollTarget: string | null = null;
  private _saveTimer: ReturnType<typeof setTimeout> | undefined;
  private _saving: Promise<void> = Promise.resolve();
  private _ownSave = false;
  private _othersSaving: PromiseDelegate<void> | null = null;
  private _translator: ITranslator;
  private _trans: TranslationBundle;
}

export namespace NotebookDriver {
  export interface IOptions {
    /** The notebook to drive; the driver never looks at any other (e.g. the current one). */
    panel: NotebookPanel;
    /**
     * The application's cell executor (the `INotebookCellExecutor` token, e.g. the server-side one
     * of jupyter-collaboration). Default: JupyterLab's `runCell`.
     */
    executor?: INotebookCellExecutor;
    /** Scroll each new cell into view (it is never activated). Default false. */
    followNewCells?: boolean;
    /** How long a cell may take to stop after an interrupt or a kernel restart, in ms. Default 10 s. */
    interruptGraceMs?: number;
    /** How long a silent variable inspection may wait for the kernel's reply, in ms. Default 30 s. */
    inspectTimeoutMs?: number;
    /**
     * How long after the run changes the notebook it is saved, in ms; negative turns this off (the
     * notebook is then saved only with the run state, after each behavior). Default 1 s.
     */
    saveDelayMs?: number;
    translator?: ITranslator;
  }
}

function statusOf(ended: Interruption): IExecResult['status'] {
  return ended === 'timeout' || ended === 'aborted' ? ended : 'kernel';
}

function cellMetadata(
  provenance: ICellProvenance,
  role: CellRole,
  extra: Record<string, unknown>
): PartialJSONObject {
  return toJSON({ ...provenance, role, ...extra }) as PartialJSONObject;
}

/** A JSON copy: drops `undefined` and anything else JSON cannot hold. */
function toJSON(value: unknown): PartialJSONValue {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}

function asObject(value: PartialJSONValue | undefined): PartialJSONObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? value
    : {};
}

/** Waits for the promise, or for `ms` at most. */
async function settleWithin(promise: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<void>(resolve => {
    timer = setTimeout(resolve, ms);
  });
  try {
    await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
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
