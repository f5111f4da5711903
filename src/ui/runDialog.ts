/**
 * The Run dialog: the task, the data files (typed, picked from the file browser or found in the
 * task), the target column, the LLM planner's model and step mode, remembered per notebook. Untrusted
 * text (names from files) is only ever set as text content.
 */
import { Dialog, Notification, showDialog } from '@jupyterlab/apputils';
import { PathExt } from '@jupyterlab/coreutils';
import type { IDocumentManager } from '@jupyterlab/docmanager';
import { FileDialog } from '@jupyterlab/filebrowser';
import type { ITranslator, TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import type { IConnectionCheck } from '../protocol';
import type { IStartOptions } from '../engine/types';
import { element } from './element';
import { translateMessage } from './present';
import {
  csvColumns,
  ContentsReader,
  fileExists,
  filesNamedIn,
  findNamedFile,
  IRunDialogMemoryStore,
  isTableFile,
  serverPath
} from './runDialogModel';

/** `data/housing.csv` picked from the file browser -> relative to the notebook's directory. */
export function relativeToNotebook(
  notebookPath: string,
  filePath: string
): string {
  const relative = PathExt.relative(PathExt.dirname(notebookPath), filePath);
  return relative || PathExt.basename(filePath);
}

/** The LLM planner's models a run may pick (`notebook-bcc/config`'s `llm`). */
export interface IModelChoice {
  /** The default model. */
  model: string;
  models: readonly string[];
}

interface IRunDialogState {
  task: string;
  dataFiles: string[];
  stepMode: boolean;
  /** The model the LLM planner runs; null when the planner is not the LLM planner. */
  llmModel: string | null;
  error: string | null;
  /** The planner did not answer: what to do about it. */
  plannerError: string | null;
  /** The column the task is about, picked from the data file's header; null for none. */
  targetColumn: string | null;
}

/** What the Run dialog shows besides the state it edits. */
interface IRunDialogContext {
  notebookPath: string;
  /** The built-in demo planner will answer this run. */
  demo: boolean;
  /** The notebook has cells a new run goes below. */
  continuesBelow: boolean;
  /** Reads the data file's header (its columns) and checks that files exist. */
  contents: ContentsReader | null;
}

let modelPickers = 0;

/** The model picker of the Run dialog, and a line saying which model will run. */
function modelPicker(
  state: IRunDialogState,
  choice: IModelChoice,
  trans: TranslationBundle
): HTMLElement[] {
  const id = `jp-bcc-llm-model-${++modelPickers}`;
  const label = element('label', 'jp-bcc-field-label', trans.__('Model'));
  label.htmlFor = id;
  const select = element('select', 'jp-mod-styled jp-bcc-llm-model');
  select.id = id;
  const models = choice.models.includes(choice.model)
    ? choice.models
    : [choice.model, ...choice.models];
  for (const model of models) {
    const option = element('option', '', model);
    option.value = model;
    select.append(option);
  }
  select.value = state.llmModel ?? choice.model;
  select.disabled = models.length < 2;
  const note = element('p', 'jp-bcc-hint jp-bcc-llm-model-note');
  const describe = () => {
    note.textContent = trans.__(
      'The LLM planner runs this workflow with %1.',
      select.value
    );
  };
  describe();
  select.addEventListener('change', () => {
    state.llmModel = select.value;
    describe();
  });
  return [label, select, note];
}

/** The body of the Run Workflow dialog; edits `state` in place. */
class RunDialogBody extends Widget {
  constructor(
    state: IRunDialogState,
    trans: TranslationBundle,
    llm: IModelChoice | null,
    context: IRunDialogContext
  ) {
    super();
    this._state = state;
    this._trans = trans;
    this._context = context;
    this.addClass('jp-bcc-run-dialog');
    const taskId = `jp-bcc-task-${++RunDialogBody._count}`;
    const taskLabel = element('label', 'jp-bcc-field-label', trans.__('Task'));
    taskLabel.htmlFor = taskId;
    const task = element('textarea', 'jp-mod-styled jp-bcc-task-input');
    task.id = taskId;
    task.rows = 4;
    task.required = true;
    task.placeholder = trans.__(
      'What should the analysis find out? e.g. What drives house prices in housing.csv?'
    );
    task.value = state.task;
    task.addEventListener('input', () => {
      state.task = task.value;
      // A data file named in the task gives the target's columns when none is picked.
      if (state.dataFiles.length === 0) {
        window.clearTimeout(this._taskTimer);
        this._taskTimer = window.setTimeout(() => this._loadColumns(), 400);
      }
    });
    this.node.append(taskLabel, task);
    if (context.demo) {
      this.node.append(
        element(
          'p',
          'jp-bcc-hint jp-bcc-demo-note',
          trans.__(
            'Built-in demo planner: a standard exploratory analysis of one CSV; it does not read your task'
          )
        )
      );
    }
    if (context.continuesBelow) {
      this.node.append(
        element(
          'p',
          'jp-bcc-hint jp-bcc-run-destination',
          trans.__('A new run continues below the existing cells.')
        )
      );
    }
    if (llm) {
      this.node.append(...modelPicker(state, llm, trans));
    }
    if (state.plannerError) {
      const error = element(
        'p',
        'jp-bcc-field-error jp-bcc-planner-error',
        state.plannerError
      );
      error.setAttribute('role', 'alert');
      this.node.append(error);
    }
    if (state.error) {
      const error = element('p', 'jp-bcc-field-error', state.error);
      error.setAttribute('role', 'alert');
      this.node.append(error);
    }

    const filesLabel = element(
      'div',
      'jp-bcc-field-label',
      context.demo
        ? trans.__('Data file (a CSV file, required)')
        : trans.__('Data files (optional)')
    );
    const files = element('ul', 'jp-bcc-file-list');
    files.setAttribute('aria-label', trans.__('Data files'));
    const renderFiles = () => {
      files.replaceChildren();
      if (state.dataFiles.length === 0) {
        files.append(
          element(
            'li',
            'jp-bcc-file-empty',
            trans.__('None: use "Add data files…" to pick them.')
          )
        );
      }
      for (const path of state.dataFiles) {
        const item = element('li', 'jp-bcc-file');
        const name = element('span', 'jp-bcc-file-name', path);
        const remove = element('button', 'jp-Button jp-bcc-file-remove', '×');
        remove.type = 'button';
        remove.title = trans.__('Remove %1', path);
        remove.setAttribute('aria-label', trans.__('Remove %1', path));
        remove.addEventListener('click', () => {
          state.dataFiles = state.dataFiles.filter(p => p !== path);
          renderFiles();
          this._loadColumns();
        });
        item.append(name, remove);
        files.append(item);
      }
    };
    renderFiles();
    this.node.append(filesLabel, files);

    const targetId = `jp-bcc-target-${RunDialogBody._count}`;
    const targetLabel = element(
      'label',
      'jp-bcc-field-label',
      trans.__('Target column (optional)')
    );
    targetLabel.htmlFor = targetId;
    this._target.id = targetId;
    this._target.addEventListener('change', () => {
      state.targetColumn = this._target.value || null;
    });
    this.node.append(targetLabel, this._target, this._targetNote);
    this._renderColumns(null);
    this._loadColumns();

    const stepLabel = element('label', 'jp-bcc-checkbox');
    const step = element('input', 'jp-bcc-step-mode');
    step.type = 'checkbox';
    step.checked = state.stepMode;
    step.addEventListener('change', () => {
      state.stepMode = step.checked;
    });
    stepLabel.append(
      step,
      document.createTextNode(
        ' ' + trans.__('Step mode: pause after every behavior')
      )
    );
    this.node.append(stepLabel);
  }

  dispose(): void {
    window.clearTimeout(this._taskTimer);
    super.dispose();
  }

  /** The CSV file whose header lists the columns: the first data file, else one the task names. */
  private async _columnsFile(): Promise<string | null> {
    const { contents, notebookPath } = this._context;
    if (!contents) {
      return null;
    }
    const first = this._state.dataFiles[0];
    if (first !== undefined) {
      return isTableFile(first) ? serverPath(notebookPath, first) : null;
    }
    for (const name of filesNamedIn(this._state.task)) {
      const found = await findNamedFile(contents, notebookPath, name);
      if (found) {
        return found;
      }
    }
    return null;
  }

  /** Fills the target column list from the data file's header (read through the contents API). */
  private _loadColumns(): void {
    const load = ++this._loads;
    void (async () => {
      const path = await this._columnsFile();
      const columns =
        path && this._context.contents
          ? await csvColumns(this._context.contents, path)
          : null;
      if (load === this._loads && !this.isDisposed) {
        this._renderColumns(columns);
      }
    })();
  }

  private _renderColumns(columns: string[] | null): void {
    const trans = this._trans;
    const state = this._state;
    const none = element('option', '', trans.__('None'));
    none.value = '';
    this._target.replaceChildren(none);
    for (const column of columns ?? []) {
      const option = element('option', '', column);
      option.value = column;
      this._target.append(option);
    }
    if (columns !== null && state.targetColumn !== null) {
      // A column remembered from another file is not one of these.
      if (!columns.includes(state.targetColumn)) {
        state.targetColumn = null;
      }
    }
    this._target.value = state.targetColumn ?? '';
    this._target.disabled = columns === null || columns.length === 0;
    this._targetNote.textContent =
      columns === null
        ? trans.__('Pick a CSV data file to choose one of its columns.')
        : trans.__(
            'The column the analysis relates the others to, e.g. the price in "What drives house prices?".'
          );
  }

  private readonly _state: IRunDialogState;
  private readonly _trans: TranslationBundle;
  private readonly _context: IRunDialogContext;
  private readonly _target = element(
    'select',
    'jp-mod-styled jp-bcc-target-column'
  );
  private readonly _targetNote = element('p', 'jp-bcc-hint jp-bcc-target-note');
  private _taskTimer = 0;
  private _loads = 0;
  private static _count = 0;
}

/**
 * Asks for the task, data files and step mode. Resolves null when cancelled. Files are picked from the
 * file browser and given relative to the notebook's directory, where the kernel runs.
 */
export async function showRunDialog(options: {
  notebookPath: string;
  docManager: IDocumentManager | null;
  translator: ITranslator;
  trans: TranslationBundle;
  label: string;
  /** Checked when the user presses Run; the dialog stays open (with the task) while it fails. */
  checkPlanner?: () => Promise<IConnectionCheck>;
  /** The relay serves the LLM planner: the user picks its model (`IStartOptions.llmModel`). */
  llm?: IModelChoice | null;
  /** The built-in demo planner will answer: the dialog says so, and a run needs a CSV file. */
  demo?: boolean;
  /** The notebook has cells: the dialog says that a new run continues below them. */
  continuesBelow?: boolean;
  /** Where the last task, files and target column are remembered. */
  memory?: IRunDialogMemoryStore | null;
  /** Reads the data files (their header, whether they exist); default: the document manager's. */
  contents?: ContentsReader | null;
}): Promise<IStartOptions | null> {
  const { trans, notebookPath } = options;
  const llm = options.llm ?? null;
  const memory = options.memory ?? null;
  const contents =
    options.contents ?? options.docManager?.services.contents ?? null;
  const remembered = await memory?.load(notebookPath).catch(() => null);
  const state: IRunDialogState = {
    task: remembered?.task ?? '',
    dataFiles: (remembered?.dataFiles ?? []).map(path =>
      relativeToNotebook(notebookPath, path)
    ),
    stepMode: false,
    llmModel: llm?.model ?? null,
    error: null,
    plannerError: null,
    targetColumn: remembered?.targetColumn ?? null
  };
  const context: IRunDialogContext = {
    notebookPath,
    demo: options.demo === true,
    continuesBelow: options.continuesBelow === true,
    contents
  };
  const addFiles = Dialog.createButton({
    label: trans.__('Add data files…'),
    caption: trans.__('Pick data files from the file browser'),
    displayType: 'default',
    actions: ['add-files']
  });
  for (;;) {
    const body = new RunDialogBody(state, trans, llm, context);
    const buttons = [
      Dialog.cancelButton({ label: trans.__('Cancel') }),
      ...(options.docManager ? [addFiles] : []),
      Dialog.okButton({
        label: state.plannerError ? trans.__('Retry') : trans.__('Run'),
        caption: state.plannerError
          ? trans.__('Check the planner again, then run')
          : ''
      })
    ];
    const result = await showDialog({
      title: trans.__('Run Workflow in %1', options.label),
      body,
      buttons,
      focusNodeSelector: 'textarea',
      defaultButton: buttons.length - 1
    });
    state.error = null;
    if (result.button.actions.includes('add-files') && options.docManager) {
      const picked = await FileDialog.getOpenFiles({
        manager: options.docManager,
        title: trans.__('Data files for the workflow'),
        defaultPath: PathExt.dirname(options.notebookPath),
        translator: options.translator,
        filter: model => (model.type === 'notebook' ? null : {})
      });
      for (const file of picked.button.accept ? (picked.value ?? []) : []) {
        if (file.type === 'directory') {
          continue;
        }
        const path = relativeToNotebook(options.notebookPath, file.path);
        if (!state.dataFiles.includes(path)) {
          state.dataFiles.push(path);
        }
      }
      continue;
    }
    if (!result.button.accept) {
      return null;
    }
    const task = state.task.trim();
    if (!task) {
      state.error = trans.__('Describe the task before running.');
      continue;
    }
    if (context.demo) {
      state.error = await demoDataProblem(state, context, trans);
      if (state.error) {
        continue;
      }
    }
    await memory
      ?.save(notebookPath, {
        task,
        dataFiles: state.dataFiles.map(path => serverPath(notebookPath, path)),
        targetColumn: state.targetColumn
      })
      .catch(reason =>
        console.warn('Notebook-BCC: the Run dialog could not remember', reason)
      );
    // The dialog has closed: say what happens until the run starts (the check waits up to 10 s).
    const checking = options.checkPlanner
      ? Notification.emit(
          trans.__('Checking the planner for %1…', options.label),
          'in-progress',
          { autoClose: false }
        )
      : null;
    const check = await options.checkPlanner?.().finally(() => {
      if (checking !== null) {
        Notification.dismiss(checking);
      }
    });
    if (check && !check.ok) {
      state.plannerError = trans.__(
        'The planner is not ready. %1',
        translateMessage(check, trans)
      );
      continue;
    }
    return {
      task,
      dataFiles: state.dataFiles,
      stepMode: state.stepMode,
      ...(state.llmModel ? { llmModel: state.llmModel } : {}),
      ...(state.targetColumn ? { targetColumn: state.targetColumn } : {})
    };
  }
}

/**
 * A demo run reads one CSV file: the first data file, else a file the task names (then added to the
 * data files). Why the run cannot start, or null when it can.
 */
async function demoDataProblem(
  state: IRunDialogState,
  context: IRunDialogContext,
  trans: TranslationBundle
): Promise<string | null> {
  const { contents, notebookPath } = context;
  if (state.dataFiles.length === 0 && contents) {
    for (const name of filesNamedIn(state.task)) {
      const found = await findNamedFile(contents, notebookPath, name);
      if (found) {
        state.dataFiles = [relativeToNotebook(notebookPath, found)];
        break;
      }
    }
  }
  const first = state.dataFiles[0];
  if (first === undefined) {
    return trans.__(
      'The built-in demo planner needs a CSV file: add one with "Add data files…", or name an existing file in the task.'
    );
  }
  if (!isTableFile(first)) {
    return trans.__(
      'The built-in demo planner reads a CSV file, and %1 is not one: put a CSV file first.',
      first
    );
  }
  if (
    contents &&
    !(await fileExists(contents, serverPath(notebookPath, first)))
  ) {
    return trans.__(
      '%1 does not exist (any more): remove it and add the data file again.',
      first
    );
  }
  return null;
}
