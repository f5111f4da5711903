/**
 * What never reaches the notebook: the values of secret-looking variables (docs/protocol.md#context).
 */
import { isRecord } from '../../protocol';
import { savedContracts } from '../state/contracts';
import type { ISavedRunState } from '../state/runState';

/**
 * A saved run without the values of secret-looking variables: not in the context variables, nor in
 * the planner service's state (a dialect may keep the server's echo of the variables there: v1 echoes
 * its whole `state`), nor in any copy a rewind checkpoint keeps. On resume the planner asks again.
 */
export function withoutSecrets(
  saved: ISavedRunState,
  secret: (name: string) => boolean
): ISavedRunState {
  const variables = (values: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(values).filter(([name]) => !secret(name))
    );
  const maps = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(maps)
      : isRecord(value)
        ? Object.fromEntries(
            Object.entries(value).map(([key, item]) => [
              key,
              key === 'variables' && isRecord(item)
                ? variables(item)
                : maps(item)
            ])
          )
        : value;
  const result: ISavedRunState = {
    ...saved,
    contextVariables: variables(saved.contextVariables)
  };
  if (saved.planner !== undefined) {
    result.planner = maps(saved.planner);
  }
  if (saved.contracts) {
    result.contracts = savedContracts(saved.contracts, secret);
  }
  if (saved.outcome) {
    result.outcome = {
      ...saved.outcome,
      deliverables: saved.outcome.deliverables.map(d =>
        secret(d.name) ? { ...d, value: null } : d
      )
    };
  }
  if (saved.rewind) {
    result.rewind = {
      ...saved.rewind,
      checkpoints: saved.rewind.checkpoints.map(checkpoint => ({
        ...checkpoint,
        contextVariables: variables(checkpoint.contextVariables),
        ...(checkpoint.planner !== undefined
          ? { planner: maps(checkpoint.planner) }
          : {})
      }))
    };
  }
  return result;
}
