/**
 * What the Run dialog decides besides its widgets: the data file a demo run reads (picked, or named in
 * the task), the columns of a CSV file's header, where a new run goes, and what is remembered of the
 * last run. Pure functions, and one reader of the Jupyter contents API.
 */
import { PathExt } from '@jupyterlab/coreutils';
import type { Contents } from '@jupyterlab/services';

/** Files the built-in demo planner can read: comma (or otherwise) separated text. */
const TABLE_FILE = /\.(?:csv|tsv)$/i;

export function isTableFile(path: string): boolean {
  return TABLE_FILE.test(path);
}

/** `data/sales.csv` and `housing.csv` in "Forecast ... in data/sales.csv", "housing.csv 中…". */
export function filesNamedIn(task: string): string[] {
  const names = task.match(/[\w\-./\\]*[\w-]\.(?:csv|tsv)\b/gi) ?? [];
  return [...new Set(names.map(name => name.replace(/\\/g, '/')))];
}

/** The fields of a CSV header line, with the separator that splits it most (`,`, `;`, tab or `|`). */
export function headerColumns(text: string): string[] {
  const line = firstRecord(text.replace(/^\uFEFF/, ''));
  let best: string[] = [];
  for (const separator of [',', ';', '\t', '|']) {
    const fields = splitRecord(line, separator);
    if (fields.length > best.length) {
      best = fields;
    }
  }
  return best.filter(name => name !== '');
}

/** The first record: up to the first line end outside quotes. */
function firstRecord(text: string): string {
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '"') {
      quoted = !quoted;
    } else if (!quoted && (char === '\n' || char === '\r')) {
      return text.slice(0, i);
    }
  }
  return text;
}

function splitRecord(line: string, separator: string): string[] {
  const fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const char = line[i];
    if (quoted) {
      if (char === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (char === '"') {
        quoted = false;
      } else {
        field += char;
      }
    } else if (char === '"') {
      quoted = true;
    } else if (char === separator) {
      fields.push(field.trim());
      field = '';
    } else {
      field += char;
    }
  }
  fields.push(field.trim());
  return fields;
}

/**
 * Whether a new run's cells go below cells already there: any cell with content (a notebook holding
 * only its empty starter cell has none).
 */
export function continuesBelow(sources: readonly string[]): boolean {
  return sources.some(source => source.trim() !== '');
}

/** What the Run dialog remembers of the last run it started: files as server paths. */
export interface IRunDialogMemory {
  task: string;
  dataFiles: string[];
  targetColumn: string | null;
}

/** Reads a `IRunDialogMemory` back from storage; null when it is not one. */
export function readMemory(value: unknown): IRunDialogMemory | null {
  if (typeof value !== 'object' || value === null) {
    return null;
  }
  const record = value as Record<string, unknown>;
  if (typeof record.task !== 'string') {
    return null;
  }
  const files = Array.isArray(record.dataFiles)
    ? record.dataFiles.filter((f): f is string => typeof f === 'string')
    : [];
  return {
    task: record.task,
    dataFiles: files,
    targetColumn:
      typeof record.targetColumn === 'string' && record.targetColumn
        ? record.targetColumn
        : null
  };
}

/** Where the dialog's memory is kept (JupyterLab's state database, in the lab). */
export interface IRunDialogMemoryStore {
  /** The memory of this notebook's last run, else of the last run anywhere. */
  load(notebookPath: string): Promise<IRunDialogMemory | null>;
  save(notebookPath: string, memory: IRunDialogMemory): Promise<void>;
}

/** The subset of the contents API the dialog reads files through. */
export type ContentsReader = Pick<Contents.IManager, 'get'>;

/** The server path of `relative` (a path relative to the notebook's directory, where the kernel runs). */
export function serverPath(notebookPath: string, relative: string): string {
  return PathExt.join(PathExt.dirname(notebookPath), relative);
}

/** Does a file exist at this server path? */
export async function fileExists(
  contents: ContentsReader,
  path: string
): Promise<boolean> {
  try {
    const model = await contents.get(path, { content: false });
    return model.type !== 'directory';
  } catch {
    return false;
  }
}

/**
 * The server path of a file the task names: beside the notebook, else in a folder beside it (the demo
 * keeps its data in `data/`). Null when there is none.
 */
export async function findNamedFile(
  contents: ContentsReader,
  notebookPath: string,
  name: string
): Promise<string | null> {
  const direct = serverPath(notebookPath, name);
  if (await fileExists(contents, direct)) {
    return direct;
  }
  if (name.includes('/')) {
    return null;
  }
  try {
    const folder = await contents.get(PathExt.dirname(notebookPath), {
      content: true
    });
    const subfolders = ((folder.content ?? []) as Contents.IModel[])
      .filter(item => item.type === 'directory')
      .slice(0, 20);
    for (const sub of subfolders) {
      const candidate = PathExt.join(sub.path, name);
      if (await fileExists(contents, candidate)) {
        return candidate;
      }
    }
  } catch {
    // An unreadable folder holds no file we can use.
  }
  return null;
}

/** Larger files are not read whole only to show their header. */
export const MAX_HEADER_READ = 25 * 1024 * 1024;

/** A CSV file's columns, from its header; null when it cannot be read (missing, too large, binary). */
export async function csvColumns(
  contents: ContentsReader,
  path: string
): Promise<string[] | null> {
  try {
    const info = await contents.get(path, { content: false });
    if (info.type === 'directory' || (info.size ?? 0) > MAX_HEADER_READ) {
      return null;
    }
    const model = await contents.get(path, {
      content: true,
      type: 'file',
      format: 'text'
    });
    return typeof model.content === 'string'
      ? headerColumns(model.content)
      : null;
  } catch {
    return null;
  }
}
