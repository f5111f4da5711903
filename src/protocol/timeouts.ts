/**
 * The default timeouts of a planner request (docs/protocol.md#settings), apart from the exchange that
 * applies them (`exchange.ts`) so that the run settings read them without loading it at startup.
 */

/** Default time from sending a request to the first byte of its answer: an LLM planner thinks for minutes. */
export const DEFAULT_FIRST_BYTE_TIMEOUT_MS = 300_000;
/** Default time a streamed answer may stay silent between two chunks (a long cell is generated at once). */
export const DEFAULT_STALL_TIMEOUT_MS = 600_000;
