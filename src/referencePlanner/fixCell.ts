/**
 * Which cell a retry's code rewrites (`rewrite_cell`, our extension, docs/protocol.md#actions): only
 * when the client offers the action in its request (`options.optional_actions`). The step's code cell
 * the observation names in `cell_attempts`, else the name the step's first attempt gave its cell.
 */
import type { GeneratingRequest } from '../protocol';
import { APPROACHES } from './codegen';
import { storeId } from './stepAnswers';
import type { IStepPlan } from './workflow';

export function cellToFix(
  request: Pick<GeneratingRequest, 'observation' | 'options'>,
  step: IStepPlan,
  tried: readonly string[]
): string | null {
  if (!request.options?.optional_actions?.includes('rewrite_cell')) {
    return null;
  }
  const known = request.observation.context?.cell_attempts?.find(
    cell => cell.step_id === step.id
  );
  if (known) {
    return known.store_id ?? known.cell_id;
  }
  const first = (APPROACHES[step.id] ?? []).find(a => a.id === tried[0]);
  return first ? storeId(step, first) : null;
}
