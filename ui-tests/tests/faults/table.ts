/**
 * The fault suite's table of outcomes: one row per case, each cell of it measured by the test (the
 * message read from the page, the saved state read from the file, cells compared by content, how the
 * run ended). Rows live in a file of the output directory (ui-tests/test-results): a failed test
 * restarts the worker, and the rows must outlive it.
 */
import * as fs from 'fs';
import * as path from 'path';

export interface IFaultRow {
  case: string;
  /** What the user was shown about the fault. */
  message: string;
  /** The run state and the cells made before the fault, as found in the notebook file. */
  saved: string;
  /** Cells made before the fault still there at the end, same id and content. */
  cellsKept: string;
  /** What the test did after the fault, and how the run finished. */
  ended: string;
}

const COLUMNS: Array<[keyof IFaultRow, string]> = [
  ['case', 'case'],
  ['message', 'message shown'],
  ['saved', 'saved at the fault'],
  ['cellsKept', 'cells kept'],
  ['ended', 'ended']
];

/** One file per run of the suite (the runner's pid). */
function rowsFile(outputDir: string): string {
  return path.join(outputDir, `faults-rows-${process.ppid}.jsonl`);
}

export function tableFile(outputDir: string): string {
  return path.join(outputDir, 'faults-table.txt');
}

export function recordRow(outputDir: string, row: IFaultRow): void {
  fs.mkdirSync(outputDir, { recursive: true });
  fs.appendFileSync(rowsFile(outputDir), JSON.stringify(row) + '\n');
}

export function readRows(outputDir: string): IFaultRow[] {
  const file = rowsFile(outputDir);
  if (!fs.existsSync(file)) {
    return [];
  }
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(line => line.trim())
    .map(line => JSON.parse(line) as IFaultRow);
}

export function formatTable(rows: IFaultRow[]): string {
  const header = Object.fromEntries(COLUMNS) as unknown as IFaultRow;
  const keys = COLUMNS.map(([key]) => key);
  const widths = keys.map(k =>
    Math.max(...[header, ...rows].map(r => r[k].length))
  );
  const line = (r: IFaultRow) =>
    keys.map((k, i) => r[k].padEnd(widths[i])).join(' | ');
  return [
    line(header),
    widths.map(w => '-'.repeat(w)).join('-|-'),
    ...rows.map(line)
  ].join('\n');
}

/** Writes the table of this run's rows to faults-table.txt and returns it. */
export function writeTable(outputDir: string): string {
  const table = formatTable(readRows(outputDir));
  fs.mkdirSync(outputDir, { recursive: true });
  fs.writeFileSync(tableFile(outputDir), table + '\n');
  return table;
}
