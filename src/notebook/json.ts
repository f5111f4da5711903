/** JSON helpers for what the run writes into cell and notebook metadata. */
import type { PartialJSONObject, PartialJSONValue } from '@lumino/coreutils';

/** A JSON copy: drops `undefined` and anything else JSON cannot hold. */
export function toJSON(value: unknown): PartialJSONValue {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}

export function asObject(
  value: PartialJSONValue | undefined
): PartialJSONObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? value
    : {};
}

/** Waits for the promise, or for `ms` at most. */
export async function settleWithin(
  promise: Promise<void>,
  ms: number
): Promise<void> {
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
