export { stripAnsi } from './ansi';
export {
  CELL_METADATA_KEY,
  NotebookDriver,
  RUN_STATE_METADATA_KEY
} from './driver';
export { outputsToText } from './outputText';
export type { ICellOutputText } from './outputText';
