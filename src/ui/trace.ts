import { PathExt } from '@jupyterlab/coreutils';

/** `work/analysis.ipynb` -> `work/analysis.bcc-trace.jsonl`: the run trace beside its notebook. */
export function tracePath(notebookPath: string): string {
  const directory = PathExt.dirname(notebookPath);
  const name = PathExt.basename(notebookPath, PathExt.extname(notebookPath));
  const file = `${name}.bcc-trace.jsonl`;
  return directory ? PathExt.join(directory, file) : file;
}
