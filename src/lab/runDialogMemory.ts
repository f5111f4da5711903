/**
 * The Run dialog's memory in JupyterLab's state database: the last task, data files and target column
 * of each notebook, and of the last run anywhere for a notebook that has none yet.
 */
import type { IStateDB } from '@jupyterlab/statedb';
import type { ReadonlyPartialJSONValue } from '@lumino/coreutils';
import {
  IRunDialogMemory,
  IRunDialogMemoryStore,
  readMemory
} from '../ui/runDialogModel';

const PREFIX = 'jupyterlab-notebook-bcc:run-dialog';

export function stateDbMemory(
  state: Pick<IStateDB, 'fetch' | 'save'>
): IRunDialogMemoryStore {
  return {
    async load(notebookPath: string): Promise<IRunDialogMemory | null> {
      return (
        readMemory(await state.fetch(`${PREFIX}:${notebookPath}`)) ??
        readMemory(await state.fetch(PREFIX))
      );
    },
    async save(notebookPath: string, memory: IRunDialogMemory): Promise<void> {
      const value = { ...memory } as unknown as ReadonlyPartialJSONValue;
      await state.save(`${PREFIX}:${notebookPath}`, value);
      await state.save(PREFIX, value);
    }
  };
}
