/**
 * The Run dialog of an honest demo: it names the built-in demo planner, will not start a demo run
 * without a CSV file that exists (or one the task names), offers the data file's columns as the target,
 * remembers the last task, files and target, and says where a new run goes.
 */
import {
  acceptDialog,
  dismissDialog,
  waitForDialog
} from '@jupyterlab/testing';
import type { Contents } from '@jupyterlab/services';
import { nullTranslator } from '@jupyterlab/translation';
import { showRunDialog } from '../runDialog';
import {
  continuesBelow,
  ContentsReader,
  filesNamedIn,
  headerColumns,
  IRunDialogMemory,
  IRunDialogMemoryStore,
  readMemory
} from '../runDialogModel';

const trans = nullTranslator.load('notebook_bcc');

const DEMO_LINE =
  'Built-in demo planner: a standard exploratory analysis of one CSV; it does not read your task';

/** A contents manager over `files` (server path -> text); folders are the paths' parents. */
function fakeContents(files: Record<string, string>): ContentsReader & {
  reads: string[];
} {
  const reads: string[] = [];
  const folders = new Set(
    Object.keys(files).flatMap(path => {
      const parts = path.split('/');
      return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('/'));
    })
  );
  folders.add('');
  const model = (path: string, content: unknown, type: string) =>
    ({
      path,
      name: path.split('/').pop(),
      type,
      content,
      size: 10
    }) as unknown as Contents.IModel;
  return {
    reads,
    get: async (path: string, options?: Contents.IFetchOptions) => {
      if (path in files) {
        if (options?.content) {
          reads.push(path);
        }
        return model(path, options?.content ? files[path] : null, 'file');
      }
      if (folders.has(path)) {
        const prefix = path ? `${path}/` : '';
        const children = [...Object.keys(files), ...folders]
          .filter(
            p =>
              p.startsWith(prefix) &&
              p !== path &&
              !p.slice(prefix.length).includes('/')
          )
          .map(p => model(p, null, folders.has(p) ? 'directory' : 'file'));
        return model(path, options?.content ? children : null, 'directory');
      }
      throw new Error(`404: ${path}`);
    }
  };
}

function memoryStore(
  initial: IRunDialogMemory | null = null
): IRunDialogMemoryStore & {
  saved: IRunDialogMemory[];
} {
  const saved: IRunDialogMemory[] = [];
  return {
    saved,
    load: async () => saved[saved.length - 1] ?? initial,
    save: async (_path, memory) => {
      saved.push(memory);
    }
  };
}

const HOUSING = 'Id,Neighborhood,"Sale, Price",SalePrice\n1,A,2,3\n';

function open(
  options: {
    demo?: boolean;
    files?: Record<string, string>;
    memory?: IRunDialogMemoryStore;
    continuesBelow?: boolean;
  } = {}
) {
  return showRunDialog({
    notebookPath: 'work/analysis.ipynb',
    docManager: null,
    translator: nullTranslator,
    trans,
    label: 'analysis.ipynb',
    demo: options.demo ?? true,
    continuesBelow: options.continuesBelow,
    memory: options.memory ?? null,
    contents: fakeContents(options.files ?? {})
  });
}

function dialog(): HTMLElement {
  return document.querySelector<HTMLElement>('.jp-Dialog')!;
}

async function typeTask(text: string): Promise<void> {
  await waitForDialog();
  const task =
    dialog().querySelector<HTMLTextAreaElement>('.jp-bcc-task-input')!;
  task.value = text;
  task.dispatchEvent(new Event('input'));
}

/** Resolves once the target list holds more than its "None" option. */
async function columnsShown(): Promise<string[]> {
  for (let i = 0; i < 100; i++) {
    const options = [
      ...dialog().querySelectorAll<HTMLOptionElement>(
        '.jp-bcc-target-column option'
      )
    ];
    if (options.length > 1) {
      return options.map(option => option.value);
    }
    await new Promise(resolve => setTimeout(resolve, 20));
  }
  throw new Error('no column was listed');
}

function pickTarget(column: string): void {
  const select = dialog().querySelector<HTMLSelectElement>(
    '.jp-bcc-target-column'
  )!;
  select.value = column;
  select.dispatchEvent(new Event('change'));
}

describe('the Run dialog of the built-in demo', () => {
  it('names the demo and what it does not do, and only when the demo will answer', async () => {
    const demo = open({ demo: true });
    await waitForDialog();
    expect(dialog().querySelector('.jp-bcc-demo-note')?.textContent).toBe(
      DEMO_LINE
    );
    await dismissDialog();
    await demo;

    const other = open({ demo: false });
    await waitForDialog();
    expect(dialog().querySelector('.jp-bcc-demo-note')).toBeNull();
    expect(dialog().textContent).toContain('Data files (optional)');
    await dismissDialog();
    await other;
  });

  it('will not start a demo run without a CSV file, and says what to do', async () => {
    const result = open({ files: {} });
    await typeTask('Forecast next quarter revenue for each region');
    await acceptDialog();
    await waitForDialog();
    expect(dialog().querySelector('.jp-bcc-field-error')?.textContent).toBe(
      'The built-in demo planner needs a CSV file: add one with "Add data files…", or name an existing file in the task.'
    );
    // Naming a file that does not exist is no data file either.
    await typeTask('Forecast revenue in nowhere.csv');
    await acceptDialog();
    await waitForDialog();
    expect(dialog().querySelector('.jp-bcc-field-error')).not.toBeNull();
    await dismissDialog();
    expect(await result).toBeNull();
  });

  it('takes the data file from the task when it names one that exists (beside the notebook or in a folder there)', async () => {
    const result = open({
      files: { 'work/data/sales.csv': 'month,region,units\n' }
    });
    await typeTask(
      'Forecast next quarter revenue for each region in sales.csv'
    );
    expect(await columnsShown()).toEqual(['', 'month', 'region', 'units']);
    await acceptDialog();
    expect(await result).toEqual({
      task: 'Forecast next quarter revenue for each region in sales.csv',
      dataFiles: ['data/sales.csv'],
      stepMode: false
    });
  });

  it("lists the columns of the file's header and passes the picked one as the target", async () => {
    const result = open({
      files: { 'work/housing.csv': HOUSING },
      memory: memoryStore({
        task: 'housing.csv 中哪些因素影响房价？',
        dataFiles: ['work/housing.csv'],
        targetColumn: null
      })
    });
    await waitForDialog();
    expect(await columnsShown()).toEqual([
      '',
      'Id',
      'Neighborhood',
      'Sale, Price',
      'SalePrice'
    ]);
    pickTarget('SalePrice');
    await acceptDialog();
    expect(await result).toEqual({
      task: 'housing.csv 中哪些因素影响房价？',
      dataFiles: ['housing.csv'],
      stepMode: false,
      targetColumn: 'SalePrice'
    });
  });

  it('remembers the last task, files and target, and offers them the next time', async () => {
    const memory = memoryStore();
    const files = { 'work/housing.csv': HOUSING };
    const first = open({ files, memory });
    await typeTask('What drives prices in housing.csv?');
    await columnsShown();
    pickTarget('SalePrice');
    await acceptDialog();
    await first;
    expect(memory.saved).toEqual([
      {
        task: 'What drives prices in housing.csv?',
        dataFiles: ['work/housing.csv'],
        targetColumn: 'SalePrice'
      }
    ]);

    const second = open({ files, memory });
    await waitForDialog();
    expect(
      dialog().querySelector<HTMLTextAreaElement>('.jp-bcc-task-input')!.value
    ).toBe('What drives prices in housing.csv?');
    expect(dialog().querySelector('.jp-bcc-file-name')?.textContent).toBe(
      'housing.csv'
    );
    await columnsShown();
    expect(
      dialog().querySelector<HTMLSelectElement>('.jp-bcc-target-column')!.value
    ).toBe('SalePrice');
    await acceptDialog();
    expect(await second).toMatchObject({ targetColumn: 'SalePrice' });
  });

  it('will not start a demo run on a remembered file that is gone', async () => {
    const result = open({
      files: {},
      memory: memoryStore({
        task: 'Explore',
        dataFiles: ['work/old.csv'],
        targetColumn: null
      })
    });
    await waitForDialog();
    await acceptDialog();
    await waitForDialog();
    expect(dialog().querySelector('.jp-bcc-field-error')?.textContent).toBe(
      'old.csv does not exist (any more): remove it and add the data file again.'
    );
    await dismissDialog();
    await result;
  });

  it('says that a new run continues below the existing cells', async () => {
    const result = open({ continuesBelow: true });
    await waitForDialog();
    expect(dialog().querySelector('.jp-bcc-run-destination')?.textContent).toBe(
      'A new run continues below the existing cells.'
    );
    await dismissDialog();
    await result;
    expect(continuesBelow([''])).toBe(false);
    expect(continuesBelow(['', 'x = 1'])).toBe(true);
  });
});

describe('the Run dialog model', () => {
  it('reads a header with quotes, a byte order mark and another separator', () => {
    expect(headerColumns('\uFEFFa,"b, c","d ""e"""\r\n1,2,3')).toEqual([
      'a',
      'b, c',
      'd "e"'
    ]);
    expect(headerColumns('月份;地区;收入\n')).toEqual(['月份', '地区', '收入']);
    expect(headerColumns('x\ty\n')).toEqual(['x', 'y']);
  });

  it('finds the CSV files a task names, in English or Chinese', () => {
    expect(filesNamedIn('housing.csv 中哪些因素影响房价？')).toEqual([
      'housing.csv'
    ]);
    expect(filesNamedIn('Compare data/sales.csv with sales.csv.')).toEqual([
      'data/sales.csv',
      'sales.csv'
    ]);
    expect(filesNamedIn('What drives prices?')).toEqual([]);
  });

  it('reads back only a memory it wrote', () => {
    expect(
      readMemory({ task: 't', dataFiles: ['a.csv', 3], targetColumn: '' })
    ).toEqual({
      task: 't',
      dataFiles: ['a.csv'],
      targetColumn: null
    });
    expect(readMemory('t')).toBeNull();
    expect(readMemory(null)).toBeNull();
  });
});
