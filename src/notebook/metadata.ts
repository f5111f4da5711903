/** Where the run writes in a notebook's metadata; a leaf module, read by the notebook adapter and the views. */

/** Cell and notebook metadata key of everything the run writes (provenance, role, title). */
export const CELL_METADATA_KEY = 'notebook_bcc';

/** Notebook metadata key of the saved run state. */
export const RUN_STATE_METADATA_KEY = 'notebook_bcc_run';

/**
 * Set to `true` under `notebook_bcc` in a cell's metadata to let the planner run that cell of yours
 * (docs/protocol.md#actions); the planner may run only the run's own cells otherwise.
 */
export const PLANNER_MAY_RUN_KEY = 'planner_may_run';

/**
 * `true` under `notebook_bcc` in the metadata of a cell whose last `exec` by the run failed (an
 * exception, a timeout, a stop, a lost kernel); removed once it runs without error.
 */
export const EXEC_ERROR_KEY = 'exec_error';

/** Under `notebook_bcc`: `sourceHash` of the source the run last wrote (docs/architecture.md#rewind). */
export const SOURCE_HASH_KEY = 'source_hash';

/** Under `notebook_bcc`: a rewritten cell's earlier attempts (`engine/ports/attempts.ts`). */
export const ATTEMPTS_KEY = 'attempts';
